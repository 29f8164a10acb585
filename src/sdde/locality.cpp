// personalized_loc and nonblocking_loc (paper 001 algorithms 4 and 5): locality-
// aware aggregation. Inter-node messages are what limits the SDDE at scale (their
// latency, injection limits and matching costs), so each rank sends at most one
// message per destination node.
//
// Phase 1 (inter-node). Everything this rank sends to the ranks of node m travels
// in one aggregate to its proxy there: the rank of node m with the same local rank
// (with unequal nodes, local rank mod the size of node m, as node_aware does; the
// paper's region * region_size + local_rank assumes equal nodes). The proxies
// discover their aggregates with the personalized protocol (a reduction over the
// P ranks) or with NBX. Messages for this rank's own node skip phase 1.
//
// Phase 2 (intra-node). Each rank regroups what it holds for its node (its own
// messages and the records of the aggregates it received) by local destination and
// sends one message per local rank, discovered with the personalized protocol over
// the node communicator, as in the paper (nodes are small and redistribution dense
// within them). What is for the rank itself is delivered without a message.
//
// Records. An aggregate is a sequence of records, each an 8-byte header
// {int32 rank, int32 bytes} followed by the message's packed bytes (no padding: the
// headers are read with memcpy): in phase 1 `rank` is the final destination (the
// source is the aggregate's sender), in phase 2 the original source. A record is
// never larger than its aggregate, which the agreement keeps below 2 GiB. Data is packed with the send type
// (MPI_Pack, or a copy when contiguous) and unpacked with the receive type at the
// destination, so any datatypes with matching signatures work. Only whole
// messages are concatenated; duplicates are not removed (the paper: not worth it
// for a single exchange).
//
// mpix_locality=region: the same algorithms with the regions of all nodes in place
// of the nodes (locality_level(); paper 001: "region, such as a socket or a node"):
// one aggregate per destination region, redistribution inside the region. Regions
// never cross nodes, so phase 2 stays inside a node.
//
// recv_nnz and recv_size passed in cannot skip any discovery here (both phases
// carry aggregates, whose number the caller does not know); they are checked at
// the end.
#include <climits>
#include <cstdint>
#include <cstring>

#include "../core/algorithms.hpp"
#include "../core/error.hpp"
#include "sdde.hpp"

namespace mpix {
namespace {

struct RecordHeader {
  std::int32_t rank;
  std::int32_t bytes;  // -1: the aggregate was too large to send (see phase 2)
};
static_assert(sizeof(RecordHeader) == 8, "record header layout");

std::size_t payload(long long bytes) { return bytes > 0 ? (std::size_t)bytes : 0; }

// Appends a record whose data is `bytes` bytes produced by `fill` (the vector grows
// geometrically).
template <class Fill>
int append_record(std::vector<char>& out, int rank, long long bytes, Fill&& fill) {
  std::size_t at = out.size();
  out.resize(at + sizeof(RecordHeader) + payload(bytes));
  RecordHeader header{rank, (std::int32_t)bytes};
  charge_copy(sizeof header);
  std::memcpy(out.data() + at, &header, sizeof header);
  return fill(out.data() + at + sizeof(RecordHeader));
}

// Calls `each(rank, data, bytes)` for every record of an aggregate; false if the
// aggregate is malformed.
template <class Each>
bool for_each_record(const std::vector<char>& in, Each&& each) {
  std::size_t at = 0;
  while (at < in.size()) {
    RecordHeader header;
    if (in.size() - at < sizeof header) return false;
    charge_copy(sizeof header);
    std::memcpy(&header, in.data() + at, sizeof header);
    at += sizeof header;
    if (header.bytes < -1 || payload(header.bytes) > in.size() - at) return false;
    if (!each(header.rank, in.data() + at, (long long)header.bytes)) return false;
    at += payload(header.bytes);
  }
  return true;
}

int receive_bytes(ProbedMessage* message, const MPI_Status& status, std::vector<char>* buffer) {
  int bytes = 0;
  MPIX_CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &bytes));
  buffer->resize((std::size_t)bytes);
  MPIX_CHECK_MPI(receive_probed(buffer->data(), bytes, MPI_BYTE, message, MPI_STATUS_IGNORE));
  return MPIX_SUCCESS;
}

// Phase 1 at a proxy: files each record of an aggregate under its local destination.
class Forwarder : public Receiver {
 public:
  Forwarder(const SddeContext& context, std::vector<std::vector<char>>* to_local)
      : context_(context), to_local_(to_local) {}

  int receive(ProbedMessage* message, const MPI_Status& status) override {
    std::vector<char> aggregate;
    MPIX_TRY(receive_bytes(message, status, &aggregate));
    const Locality& loc = locality_level(context_.comm, context_.locality);
    const int size = context_.call->size, node = loc.node();
    bool ok = for_each_record(aggregate, [&](int dest, const char* data, long long bytes) {
      if (dest < 0 || dest >= size || loc.node_of(dest) != node || bytes < 0) return false;
      append_record((*to_local_)[loc.local_rank_of(dest)], status.MPI_SOURCE, bytes, [&](char* out) {
        charge_copy(bytes);
        if (bytes > 0) std::memcpy(out, data, (std::size_t)bytes);
        return MPIX_SUCCESS;
      });
      return true;
    });
    if (!ok)
      context_.inbox->note(MPIX_ERR_MPI, format("%s: a malformed aggregate from rank %d (internal error)",
                                                context_.call->name, status.MPI_SOURCE));
    return MPIX_SUCCESS;
  }

 private:
  const SddeContext& context_;
  std::vector<std::vector<char>>* to_local_;
};

// Phase 2 at the destination: every record is a message for this rank.
int deliver(const SddeContext& context, std::vector<char>&& aggregate, int sender) {
  Inbox& inbox = *context.inbox;
  int rc = MPIX_SUCCESS;
  bool ok = for_each_record(aggregate, [&](int source, const char* data, long long bytes) {
    if (bytes < 0) {
      inbox.note(MPIX_ERR_UNSUPPORTED, format("%s: local rank %d had 2 GiB or more to forward to this "
                                              "rank; aggregates are limited to 2 GiB",
                                              context.call->name, sender));
      return true;
    }
    if (source < 0 || source >= context.call->size) return false;
    rc = inbox.add_packed(source, data, bytes);
    return rc == MPIX_SUCCESS;
  });
  MPIX_TRY(rc);
  if (!ok)
    inbox.note(MPIX_ERR_MPI, format("%s: a malformed aggregate from rank %d (internal error)",
                                    context.call->name, sender));
  inbox.keep(std::move(aggregate));
  return MPIX_SUCCESS;
}

class Delivery : public Receiver {
 public:
  explicit Delivery(const SddeContext& context) : context_(context) {}
  int receive(ProbedMessage* message, const MPI_Status& status) override {
    std::vector<char> aggregate;
    MPIX_TRY(receive_bytes(message, status, &aggregate));
    return deliver(context_, std::move(aggregate), status.MPI_SOURCE);
  }

 private:
  const SddeContext& context_;
};

int run_locality_aware(SddeContext& context, bool nbx) {
  const SddeCall& call = *context.call;
  Locality& loc = locality_level(context.comm, context.locality);
  const int me = call.rank, node = loc.node(), local = loc.local_rank();
  const int nodes = loc.num_nodes();
  const std::vector<int>& members = loc.node_ranks(node);
  const int local_size = (int)members.size();

  // Sort this rank's messages: other nodes' into their aggregates, this node's
  // straight into the phase-2 buffers.
  std::vector<std::vector<char>> to_node(nodes), to_local(local_size);
  for (const SddeMessage& m : call.sends) {
    const long long bytes = call.send_bytes(m);
    const int dest_node = loc.node_of(m.dest);
    std::vector<char>& out = dest_node == node ? to_local[loc.local_rank_of(m.dest)] : to_node[dest_node];
    const int rank = dest_node == node ? me : m.dest;
    MPIX_TRY(append_record(out, rank, bytes, [&](char* data) {
      return pack_block(Block{const_cast<char*>(m.buf), m.count, &call.send_layout}, data, context.mpi_comm);
    }));
  }

  // Phase 1. Aggregates above INT_MAX bytes were refused in the agreement.
  std::vector<Outgoing> phase1;
  for (int m = 0; m < nodes; ++m) {
    if (m == node || to_node[m].empty()) continue;
    const std::vector<int>& there = loc.node_ranks(m);
    const int proxy = there[local % (int)there.size()];
    phase1.push_back(Outgoing{proxy, proxy, to_node[m].data(), (int)to_node[m].size(), MPI_BYTE,
                              (long long)to_node[m].size()});
  }
  count_sends(context, phase1, context.stats);
  Forwarder forwarder(context, &to_local);
  const int tag1 = context.tag + kTagInterNode;
  if (nbx)
    MPIX_TRY(nbx_exchange(context.mpi_comm, tag1, phase1, -1, forwarder, context.stats));
  else
    MPIX_TRY(personalized_exchange(context.mpi_comm, tag1, phase1, context.mpi_comm, -1, false, forwarder,
                                   context.stats));
  to_node.clear();

  // Phase 2, over the node communicator (ranks in local-rank order).
  MPI_Comm node_comm = MPI_COMM_NULL;
  MPIX_TRY(loc.node_comm(&node_comm));
  std::vector<Outgoing> phase2;
  for (int j = 0; j < local_size; ++j) {
    if (j == local || to_local[j].empty()) continue;
    if (to_local[j].size() > (std::size_t)INT_MAX) {
      // Cannot be sent as one message: the receiver expects one, so it gets a
      // marker record instead, and both ranks fail the call.
      context.inbox->note(MPIX_ERR_UNSUPPORTED, format("%s: 2 GiB or more to forward to local rank %d; "
                                                       "aggregates are limited to 2 GiB", call.name, j));
      to_local[j].clear();
      append_record(to_local[j], me, -1, [](char*) { return MPIX_SUCCESS; });
    }
    phase2.push_back(Outgoing{members[j], j, to_local[j].data(), (int)to_local[j].size(), MPI_BYTE,
                              (long long)to_local[j].size()});
  }
  count_sends(context, phase2, context.stats);
  Delivery delivery(context);
  MPIX_TRY(personalized_exchange(context.mpi_comm, context.tag + kTagIntraNode, phase2, node_comm, -1, false,
                                 delivery, context.stats));
  // What this rank holds for itself: no message.
  return deliver(context, std::move(to_local[local]), me);
}

}  // namespace

int run_sdde_personalized_loc(SddeContext& context) { return run_locality_aware(context, false); }
int run_sdde_nonblocking_loc(SddeContext& context) { return run_locality_aware(context, true); }

}  // namespace mpix
