// The hybrid IPC exchange (paper 004, section III): blocks between ranks of one
// node are copied directly between the processes' buffers (src/gpu: CMA for host
// memory, CUDA IPC for device memory), overlapped with the messages of the blocks
// between nodes.
//
// Plan (collective): the pairs of a node whose block has at least
// mpix_ipc_threshold bytes are "direct" where one engine reaches both ends on one
// machine (agreed on the communicator: CMA, permitted and working, where every
// buffer is host memory; CUDA IPC where every one is device memory); every other
// block is a message. One side of each
// direct pair exposes where the block is: with CMA's default direction (write) the
// receiver exposes where the block lands and the sender copies into it; with
// MPIX_CMA=read the sender exposes the block and the receiver copies out of it. A
// non-contiguous block is exposed through a staging buffer (packed at start,
// unpacked at the end of wait). The exposures are gathered inside the node once,
// at plan time (III-C): when every rank's exposures are evenly spaced by local rank
// with equal sizes (alltoall, or an alltoallv that is uniform: one allreduce finds
// it, as in III-C) an allgather of (first, stride) suffices; otherwise each rank
// sends each node peer its own exposure (an alltoall of records).
//
// Start: the inter-node and below-threshold receives and sends are posted first
// (III-B); then, for each direct pair, the exposing side sends a zero-byte "ready"
// (it has entered the call: its buffer may now be written or read) and posts the
// receive of the "done". Wait: the own block is copied first, then the copies
// in the paper's order (III-A): step i goes to local rank + i (write) or comes from
// local rank - i (read), so that at any time each rank is the target of one peer;
// each waits for its peer's "ready" and is followed by "done", which carries the
// copy's outcome (a failed copy fails both sides of the pair). Then everything
// completes. So no rank touches a peer's buffer before the peer has entered the
// call, nor after it has left it (it leaves only once every "done" arrived).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "../core/algorithms.hpp"
#include "../core/comm.hpp"
#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/schedule.hpp"
#include "../gpu/device.hpp"
#include "../gpu/direct_copy.hpp"
#include "../gpu/staging.hpp"
#include "bruck.hpp"

namespace mpix {
namespace {

enum IpcTag : int { kTagBlock = 0, kTagReady = 1, kTagDone = 2 };

// What a rank sends each node peer when its exposures are evenly spaced (III-C).
struct Regular {
  Exposure base;
  std::int64_t stride;
  std::int64_t present;
};

class IpcHybrid : public Plan {
 public:
  int init(const PlanContext& context) {
    ex_ = context.exchange;
    comm_ = context.mpi_comm;
    tag_ = context.tag;
    info_ = context.info;
    memcpy_threshold_ = context.params.memcpy_threshold;
    MPIX_Comm_s* comm = context.comm;
    Locality& loc = comm->locality;
    const int me = ex_.rank;
    members_ = loc.node_ranks(loc.node_of(me));
    local_ = loc.local_rank_of(me);
    const int q = (int)members_.size();

    // Memory types, once per plan; the copy engine follows them.
    send_type_ = memory_type(ex_.send.buf);
    recv_type_ = memory_type(ex_.recv.buf);
    MPIX_TRY(comm->direct_copy.setup(comm->lib_comm));
    direct_copy_ = &comm->direct_copy;
    const bool device = send_type_ == MemoryType::device || recv_type_ == MemoryType::device;
    const bool host = send_type_ == MemoryType::host || recv_type_ == MemoryType::host;

    // Agreed on the whole communicator before a pair is chosen: what this rank
    // refuses to move (device buffers it cannot copy), and the memory kinds. A pair
    // is copied by one engine, chosen alike on both sides: CUDA IPC where every
    // buffer of every rank is device memory, CMA where every one is host memory.
    // Kinds that differ between ranks or within one (device to host) leave every
    // block to messages: a rank that decided alone would copy with an engine that
    // cannot reach its peer's memory, or expose a buffer nobody copies.
    int code = MPIX_SUCCESS;
    std::string why;
    if (device) check_device_buffers(&code, &why);
    int local_facts[3] = {code, device ? 1 : 0, host ? 1 : 0}, facts[3];
    MPIX_CHECK_MPI(MPI_Allreduce(local_facts, facts, 3, MPI_INT, MPI_MAX, comm_));
    if (code != MPIX_SUCCESS) return fail(code, why);
    if (facts[0] != MPIX_SUCCESS)
      return fail(facts[0], "ipc_hybrid: another rank refused the exchange (device memory it cannot move)");
    const bool all_device = facts[1] && !facts[2], all_host = !facts[1];
    // Device memory is reachable by CUDA IPC, always in the write direction.
    direction_ = all_device ? CopyDirection::write : direct_copy_->direction();

    // Which node pairs copy directly: the same decision on both sides, from the
    // block's size (equal on both sides in a correct call; checked below) and the
    // agreed kinds. CUDA IPC, like CMA, reaches processes of one machine only,
    // whatever node MPIX_PPN or mpix_locality emulates.
    const long long threshold = std::max(1LL, context.params.ipc_threshold);
    auto reachable = [&](int peer) {
      return all_device ? direct_copy_->same_machine(me, peer) : all_host && direct_copy_->host_reachable(me, peer);
    };
    direct_out_.assign(q, false);
    direct_in_.assign(q, false);
    for (int j = 0; j < q; ++j) {
      int peer = members_[j];
      if (peer == me || !reachable(peer)) continue;
      direct_out_[j] = ex_.send.block_bytes(peer) >= threshold;
      direct_in_[j] = ex_.recv.block_bytes(peer) >= threshold;
    }

    // Staging for non-contiguous blocks that are copied directly; the side that
    // exposes a block and the side that copies one both need a run of bytes.
    ScratchPool& pool = comm->scratch;
    std::vector<bool> out_used(ex_.size, false), in_used(ex_.size, false);
    for (int j = 0; j < q; ++j) {
      out_used[members_[j]] = direct_out_[j];
      in_used[members_[j]] = direct_in_[j];
    }
    send_runs_.init(ex_.send, out_used, pool);
    recv_runs_.init(ex_.recv, in_used, pool);
    own_staging_ = pool.acquire(copy_staging_bytes(ex_.send.block(me), ex_.recv.block(me)));

    // This rank's exposures: what each node peer j reaches here.
    const bool write = direction_ == CopyDirection::write;
    const ByteSide& exposed_side = write ? recv_runs_ : send_runs_;
    const std::vector<bool>& exposed_pairs = write ? direct_in_ : direct_out_;
    const MemoryType exposed_type = write ? recv_type_ : send_type_;
    std::vector<Exposure> mine(q);
    // A rank that cannot expose a block (CUDA IPC refuses some allocations) still
    // takes part in the gathering and the agreement below, so that no rank is
    // left waiting; its exposure is marked as refused (bytes -1).
    for (int j = 0; j < q && code == MPIX_SUCCESS; ++j) {
      if (!exposed_pairs[j]) continue;
      code = run_apart(
          [&] {
            return direct_copy_->expose(exposed_side.addr(members_[j]),
                                        write ? ex_.recv.block_bytes(members_[j]) : ex_.send.block_bytes(members_[j]),
                                        exposed_type, &mine[j]);
          },
          &why);
      if (code != MPIX_SUCCESS)
        for (Exposure& exposure : mine) exposure = Exposure{0, -1};
    }
    MPI_Comm node_comm = MPI_COMM_NULL;
    MPIX_TRY(loc.node_comm(&node_comm));
    MPIX_TRY(gather_exposures(node_comm, mine, code != MPIX_SUCCESS));

    // The messages: every block that is not copied (other nodes, small blocks,
    // unreachable peers), inter-node ones first.
    std::vector<int> order;
    for (int i = 1; i < ex_.size; ++i) order.push_back((me + i) % ex_.size);
    std::stable_partition(order.begin(), order.end(), [&](int peer) { return loc.node_of(peer) != loc.node_of(me); });
    for (int peer : order) {
      bool same_node = loc.node_of(peer) == loc.node_of(me);
      int j = same_node ? loc.local_rank_of(peer) : -1;
      if (!(same_node && direct_in_[j]) && ex_.recv.block_bytes(peer) > 0) recv_peers_.push_back(peer);
      if (!(same_node && direct_out_[j]) && ex_.send.block_bytes(peer) > 0) send_peers_.push_back(peer);
    }

    // Before anything is copied, on the whole communicator (a node that gave up
    // would leave the others waiting for its messages), so that all ranks fail
    // together: every direct pair's sizes agree (a copy trusts the exposed length),
    // and device memory is something this rank can move.
    for (int j = 0; j < q && code == MPIX_SUCCESS; ++j) {
      if (!(write ? direct_out_[j] : direct_in_[j])) continue;
      const int peer = members_[j];
      if (peer_exposure_[j].bytes < 0) continue;  // refused there: that rank says why
      long long bytes = write ? ex_.send.block_bytes(peer) : ex_.recv.block_bytes(peer);
      if (peer_exposure_[j].bytes != bytes) {
        code = MPIX_ERR_ARG;
        why = format("ipc_hybrid: rank %d %s %lld bytes for rank %d, which %s %lld", me, write ? "sends" : "receives",
                     bytes, peer, write ? "expects" : "sends", (long long)peer_exposure_[j].bytes);
      }
    }
    if (code == MPIX_SUCCESS && device) MPIX_TRY(check_device_messages(&code, &why));
    int all_code = 0;
    MPIX_CHECK_MPI(MPI_Allreduce(&code, &all_code, 1, MPI_INT, MPI_MAX, comm_));
    if (code != MPIX_SUCCESS) return fail(code, why);
    if (all_code != MPIX_SUCCESS)
      return fail(all_code, "ipc_hybrid: another rank refused the exchange (block sizes of a node pair disagree, "
                            "a buffer it could not expose, or device memory it cannot move)");
    device_ = device;
    init_stats.scratch_bytes = send_runs_.staging_bytes() + recv_runs_.staging_bytes() + own_staging_.size();
    return MPIX_SUCCESS;
  }

  int start() override {
    stats = PlanStats{};
    stats.scratch_bytes = init_stats.scratch_bytes;
    stats.rounds = ex_.size > 1 ? 1 : 0;
    requests_.clear();
    ready_.assign(members_.size(), MPI_REQUEST_NULL);
    done_status_.assign(members_.size(), MPIX_SUCCESS);
    copy_status_.assign(members_.size(), MPIX_SUCCESS);
    MPIX_TRY(send_runs_.pack(comm_));
    Traffic traffic(comm_, tag_);
    for (int peer : recv_peers_) {
      requests_.emplace_back();
      MPIX_TRY(traffic.irecv(Message{ex_.recv.block(peer), peer}, &requests_.back(), kTagBlock));
    }
    for (int peer : send_peers_) {
      requests_.emplace_back();
      MPIX_TRY(traffic.isend(Message{ex_.send.block(peer), peer}, &requests_.back(), stats, kTagBlock));
    }
    const bool write = direction_ == CopyDirection::write;
    for (int j = 0; j < (int)members_.size(); ++j) {
      const int peer = members_[j];
      if (write ? direct_in_[j] : direct_out_[j]) {  // exposes to peer
        requests_.emplace_back();
        MPIX_CHECK_MPI(MPI_Isend(nullptr, 0, MPI_BYTE, peer, tag_ + kTagReady, comm_, &requests_.back()));
        requests_.emplace_back();
        MPIX_CHECK_MPI(MPI_Irecv(&done_status_[j], 1, MPI_INT, peer, tag_ + kTagDone, comm_, &requests_.back()));
        stats.metadata_messages += 1;
      }
      if (write ? direct_out_[j] : direct_in_[j])  // copies with peer
        MPIX_CHECK_MPI(MPI_Irecv(nullptr, 0, MPI_BYTE, peer, tag_ + kTagReady, comm_, &ready_[j]));
    }
    return MPIX_SUCCESS;
  }

  int wait() override {
    bool done = false;
    return progress(true, &done);
  }

  int test(bool* done) override { return progress(false, done); }

 private:
  // The own block first, then the direct copies in the paper's order, each once its
  // peer is ready, then the messages. Blocking, to the end; else as far as it can
  // go without waiting (MPIX_Test), resuming at the next copy.
  int progress(bool blocking, bool* done) {
    *done = false;
    const bool write = direction_ == CopyDirection::write;
    const int q = (int)members_.size();
    if (next_copy_ == 0) {
      copy_rc_ = run_apart(
          [&] {
            return device_ ? device_memcpy(ex_.recv.block(ex_.rank).first_byte(), ex_.send.block(ex_.rank).first_byte(),
                                           (std::size_t)ex_.send.block_bytes(ex_.rank))
                           : copy_block(ex_.send.block(ex_.rank), ex_.recv.block(ex_.rank), own_staging_.data(), comm_);
          },
          &copy_message_);
      next_copy_ = 1;
    }
    for (; next_copy_ < std::max(q, 1); ++next_copy_) {
      const int i = next_copy_;
      const int j = write ? (local_ + i) % q : (local_ - i + q) % q;
      if (!(write ? direct_out_[j] : direct_in_[j])) continue;
      const int peer = members_[j];
      if (blocking) {
        MPIX_TRY(wait_all(1, &ready_[j], comm_));
      } else {
        int ready = 0;
        MPIX_TRY(test_one(&ready_[j], &ready, comm_));
        if (!ready) return MPIX_SUCCESS;
      }
      // Every pair is copied, also after a failed one, so that a failure fails its own
      // pair and no other: the rank keeps the first failure's message.
      char* local = write ? send_runs_.addr(peer) : recv_runs_.addr(peer);
      long long bytes = write ? ex_.send.block_bytes(peer) : ex_.recv.block_bytes(peer);
      std::string why;
      const int pair_rc = run_apart(
          [&] {
            MPIX_TRY(direct_copy_->copy(peer, local, peer_exposure_[j], 0, bytes, direction_, memcpy_threshold_));
            return direct_copy_->complete_device_copies();
          },
          &why);
      if (pair_rc != MPIX_SUCCESS && copy_rc_ == MPIX_SUCCESS) {
        copy_rc_ = pair_rc;
        copy_message_ = why;
      }
      // "done" even after a failed copy, so that the peer is not left waiting; it
      // carries the copy's outcome, so that both sides of a failed pair fail.
      copy_status_[j] = pair_rc;
      requests_.emplace_back();
      MPIX_CHECK_MPI(MPI_Isend(&copy_status_[j], 1, MPI_INT, peer, tag_ + kTagDone, comm_, &requests_.back()));
      stats.metadata_messages += 1;
      stats.metadata_bytes += (long long)sizeof(int);
      // MPICH moves large messages only inside MPI calls: keep them going.
      int flag = 0;
      MPIX_TRY(test_all((int)requests_.size(), requests_.data(), &flag, comm_));
    }
    if (blocking) {
      MPIX_TRY(wait_all((int)requests_.size(), requests_.data(), comm_));
    } else {
      int flag = 0;
      MPIX_TRY(test_all((int)requests_.size(), requests_.data(), &flag, comm_));
      if (!flag) return MPIX_SUCCESS;
    }
    requests_.clear();
    next_copy_ = 0;
    *done = true;
    for (int j = 0; j < q && copy_rc_ == MPIX_SUCCESS; ++j)
      if ((write ? direct_in_[j] : direct_out_[j]) && done_status_[j] != MPIX_SUCCESS) {
        copy_rc_ = done_status_[j];
        copy_message_ = format("ipc_hybrid: rank %d could not copy its block %s this rank's buffer (its message "
                               "names why)", members_[j], write ? "into" : "out of");
      }
    if (copy_rc_ != MPIX_SUCCESS) return fail(copy_rc_, copy_message_);
    return recv_runs_.unpack(comm_);
  }

  // Device memory is copied as runs of bytes, so the datatypes must be
  // contiguous, and needs a device in this process.
  void check_device_buffers(int* code, std::string* why) const {
    for (int peer = 0; peer < ex_.size; ++peer) {
      if ((ex_.send.block_bytes(peer) > 0 && !ex_.send.block(peer).contiguous()) ||
          (ex_.recv.block_bytes(peer) > 0 && !ex_.recv.block(peer).contiguous())) {
        *code = MPIX_ERR_UNSUPPORTED;
        *why = "ipc_hybrid: device buffers with a non-contiguous datatype (packing device memory is not "
               "implemented; the other algorithms stage such buffers through host memory)";
        return;
      }
    }
    if (!device_available()) {
      *code = MPIX_ERR_DEVICE;
      *why = "ipc_hybrid: device buffers but " + device_unavailable_reason();
    }
  }

  // Blocks of device memory that go by messages (between nodes, below the
  // threshold, or all of them where the ranks' memory kinds differ) need a
  // CUDA-aware MPI.
  int check_device_messages(int* code, std::string* why) {
    bool aware = false;
    MPIX_TRY(mpi_cuda_aware(info_, &aware));
    if ((!send_peers_.empty() || !recv_peers_.empty()) && !aware) {
      *code = MPIX_ERR_UNSUPPORTED;
      *why = "ipc_hybrid: device buffers and blocks that go by messages (between nodes, below "
             "mpix_ipc_threshold, or host memory on other ranks), but the MPI library is not CUDA-aware "
             "(MPIX_Query_cuda_support; mpix_cuda_aware=true overrides)";
    }
    return MPIX_SUCCESS;
  }

  // Fills peer_exposure_[j]: what this rank reaches at node peer j.
  // `refused`: this rank could not expose its blocks; every peer gets its record.
  int gather_exposures(MPI_Comm node_comm, const std::vector<Exposure>& mine, bool refused) {
    const int q = (int)members_.size();
    // Evenly spaced: exposure j = exposure 0 + j * stride, all of one size and one
    // allocation (a uniform exchange into one buffer).
    // The second exposure sets the stride, which may be 0 (one block for all).
    const Exposure* first = nullptr;
    int first_index = 0;
    long long stride = 0;
    bool stride_known = false, regular = true;
    for (int j = 0; j < q && regular; ++j) {
      if (!mine[j].address) continue;
      if (!first) {
        first = &mine[j];
        first_index = j;
        continue;
      }
      long long step = (long long)(mine[j].address - first->address);
      if (!stride_known) {
        if (step % (j - first_index) != 0) regular = false;
        stride = step / (j - first_index);
        stride_known = true;
      }
      regular = regular && step == stride * (j - first_index) && mine[j].bytes == first->bytes &&
                mine[j].device == first->device &&
                !std::memcmp(mine[j].ipc_handle, first->ipc_handle, sizeof first->ipc_handle);
    }
    int local_regular = regular && !refused ? 1 : 0, all_regular = 0;
    MPIX_CHECK_MPI(MPI_Allreduce(&local_regular, &all_regular, 1, MPI_INT, MPI_MIN, node_comm));
    peer_exposure_.assign(q, Exposure{});
    if (all_regular) {
      // The alltoall path: each rank sends one record, its exposure for local rank 0.
      Regular card{};
      if (first) {
        card.base = *first;
        card.base.address -= (std::uint64_t)(stride * first_index);
        card.base.alloc_offset -= (std::uint64_t)(stride * first_index);
        card.stride = stride;
        card.present = 1;
      }
      std::vector<Regular> cards(q);
      MPIX_CHECK_MPI(MPI_Allgather(&card, (int)sizeof card, MPI_BYTE, cards.data(), (int)sizeof card, MPI_BYTE,
                                   node_comm));
      for (int j = 0; j < q; ++j) {
        if (!cards[j].present) continue;
        // The peer's exposure for this rank: its base + local_ * stride.
        peer_exposure_[j] = cards[j].base;
        peer_exposure_[j].address += (std::uint64_t)(cards[j].stride * local_);
        peer_exposure_[j].alloc_offset += (std::uint64_t)(cards[j].stride * local_);
      }
      init_stats.metadata_messages += q - 1;
      init_stats.metadata_bytes += (long long)(q - 1) * (long long)sizeof(Regular);
      return MPIX_SUCCESS;
    }
    MPIX_CHECK_MPI(MPI_Alltoall(mine.data(), (int)sizeof(Exposure), MPI_BYTE, peer_exposure_.data(),
                                (int)sizeof(Exposure), MPI_BYTE, node_comm));
    init_stats.metadata_messages += q - 1;
    init_stats.metadata_bytes += (long long)(q - 1) * (long long)sizeof(Exposure);
    return MPIX_SUCCESS;
  }

  Exchange ex_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int tag_ = 0, local_ = 0;
  long long memcpy_threshold_ = 0;
  std::vector<int> members_;
  MemoryType send_type_ = MemoryType::host, recv_type_ = MemoryType::host;
  DirectCopy* direct_copy_ = nullptr;
  CopyDirection direction_ = CopyDirection::write;
  bool device_ = false;
  const MPIX_Info_s* info_ = nullptr;  // the call's hints (mpix_cuda_aware), during init
  std::vector<bool> direct_out_, direct_in_;  // by local rank
  ByteSide send_runs_, recv_runs_;
  ScratchBuffer own_staging_;
  std::vector<Exposure> peer_exposure_;
  std::vector<int> recv_peers_, send_peers_;
  int next_copy_ = 0;           // the next direct copy of a wait or test in progress
  int copy_rc_ = MPIX_SUCCESS;  // the first failed copy of this start, and its message
  std::string copy_message_;
  std::vector<int> copy_status_, done_status_;  // by local rank: "done" sent, "done" received
  std::vector<MPI_Request> requests_, ready_;
};

}  // namespace

int create_ipc_hybrid(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  auto made = std::make_unique<IpcHybrid>();
  MPIX_TRY(made->init(context));
  *plan = std::move(made);
  return MPIX_SUCCESS;
}

// ---------------------------------------------------------------- cost model

// The blocks that go by messages make one round, as in `nonblocking`; each block of
// a node pair at or above ipc_threshold is copied once, by one side, at the copy
// bandwidth, where a message would make profile.intra_copies copies of it (the
// gain of paper 004, III-A), with a ready and a done notice; at init the exposures
// are gathered in the node (III-C) between three small allreduces. The copies are
// priced after the messages, not overlapped with them: III-B's overlap is a gain
// the model leaves out. Which blocks reach the threshold the facts do not say: all
// when the smallest block does, none when the largest is below it, else the share
// of blocks spread evenly between the two. Without direct copies (no CMA) every
// block is a message, as in the plan.
Cost cost_ipc_hybrid(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  Cost cost;
  if (facts.ranks < 2) return cost;
  const double ranks = facts.ranks, q = ranks / facts.nodes;  // q: ranks of the average node
  const double threshold = (double)std::max(1LL, params.ipc_threshold);
  double block_share = 0, byte_share = 0;
  if (facts.direct_copy && facts.intra_node_bytes > 0 && facts.max_block >= threshold) {
    if (facts.min_block >= threshold) {
      block_share = byte_share = 1;
    } else {
      const double lo = (double)facts.min_block, hi = (double)facts.max_block;
      block_share = (hi - threshold) / (hi - lo);
      byte_share = (hi * hi - threshold * threshold) / (hi * hi - lo * lo);
    }
  }
  // Per rank: blocks to node peers (non-empty ones), those copied, their bytes.
  const double intra_share = facts.nodes > 1 ? (q - 1) / (ranks - 1) : 1.0;
  const double blocks = (double)facts.nonempty_blocks / ranks;
  const double copied = blocks * intra_share * block_share;
  const double copied_bytes = (double)facts.intra_node_bytes * byte_share / ranks;

  ExchangeFacts sent = facts;  // what goes by messages
  sent.nonempty_blocks = std::llround((blocks - copied) * ranks);
  sent.total_bytes = std::llround((double)facts.total_bytes - copied_bytes * ranks);
  sent.intra_node_bytes = std::llround((double)facts.intra_node_bytes - copied_bytes * ranks);
  sent.max_rank_messages = std::max(0LL, facts.max_rank_messages - std::llround(copied));
  sent.max_rank_send = std::max(0LL, facts.max_rank_send - std::llround(copied_bytes));
  const double messages = blocks - copied;
  RoundCost round = linear_round(sent, messages, messages > 0 ? (double)sent.total_bytes / sent.nonempty_blocks : 0);
  round.intra.messages = std::max(0.0, blocks * intra_share - copied);
  round.inter.messages = messages - round.intra.messages;
  cost.rounds.push_back(round);
  cost.copy_bytes = copied_bytes;
  if (copied > 0) {
    RoundCost notices;  // a ready from the exposing side, a done from the copying one
    notices.intra = LevelCounts{2 * copied, copied * (double)sizeof(int)};  // "done" carries the outcome
    cost.sync_rounds.push_back(notices);
  }
  const int ppn = (int)std::llround(q);
  RoundCost exposures;
  const bool regular = copied == 0 || facts.uniform || facts.min_block == facts.max_block;
  exposures.intra = LevelCounts{q - 1, (q - 1) * (double)(regular ? sizeof(Regular) : sizeof(Exposure))};
  if (q > 1) cost.init_rounds.push_back(exposures);
  cost.init_sync_rounds = allreduce_rounds(facts.ranks, ppn, 3 * sizeof(int));  // memory kinds, refused?
  for (const RoundCost& r : allreduce_rounds(ppn, ppn, sizeof(int)))  // evenly spaced exposures?
    cost.init_sync_rounds.push_back(r);
  for (const RoundCost& r : allreduce_rounds(facts.ranks, ppn, sizeof(int)))  // refused anywhere?
    cost.init_sync_rounds.push_back(r);
  cost.init_collectives = 4;  // the three allreduces and the gather of exposures (on a node of one rank too)
  return cost;
}

}  // namespace mpix
