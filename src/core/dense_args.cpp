// A dense call's arguments: the checks one rank makes alone, the hints it resolves,
// and the comparisons plan reuse makes (dense_args.hpp).
#include "dense_args.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>

#include "breakdown.hpp"
#include "error.hpp"
#include "info.hpp"
#include "progress.hpp"

namespace mpix {

namespace {

constexpr long long kLowestMappedAddress = 65536;

// The class MPI gives a receive buffer of MPI_IN_PLACE (the interposer returns it).
#ifdef OPEN_MPI
constexpr int kInPlaceRecvClass = MPI_ERR_ARG;
#else
constexpr int kInPlaceRecvClass = MPI_ERR_BUFFER;
#endif

// Whether the page of `address` is mapped in this process (mincore fails with
// ENOMEM on an unmapped one).
bool mapped(long long address) {
  const long page = sysconf(_SC_PAGESIZE);
  unsigned char resident = 0;
  void* start = reinterpret_cast<void*>((uintptr_t)address & ~(uintptr_t)(page - 1));
  return mincore(start, 1, &resident) == 0 || errno != ENOMEM;
}

}  // namespace

// NULL is MPI_BOTTOM in MPICH and Open MPI: legal where the displacements or the
// datatype hold absolute addresses (MPI_Get_address). Data that would lie in the
// first 64 KiB, which Linux never maps (vm.mmap_min_addr), or whose first or last
// byte is in no mapped page, is a NULL by mistake: refused rather than written.
bool bottom_addresses_mapped(long long lowest, long long highest) {
  return lowest >= kLowestMappedAddress && mapped(lowest) && mapped(highest);
}

namespace {

// Checks one side (send or receive) of the call and describes it.
int check_side(const DenseArgs& a, bool send, int size, MPI_Comm lib_comm, BufferSide* side) {
  const char* counts_name = send ? (a.op == kAlltoall ? "sendcount" : "sendcounts") : (a.op == kAlltoall ? "recvcount" : "recvcounts");
  const char* displs_name = send ? "sdispls" : "rdispls";
  const void* buf = send ? a.sendbuf : a.recvbuf;
  MPIX_TRY(describe_type(send ? a.sendtype : a.recvtype, send ? "sendtype" : "recvtype", &side->layout));
  MPIX_TRY(check_committed(side->layout.type, send ? "sendtype" : "recvtype", lib_comm));
  side->counts.resize(size);
  side->displs.resize(size);
  // Byte counts and offsets are 64-bit: counts and displacements whose bytes could
  // overflow them (summed over the ranks) are refused, not wrapped.
  const long long element = std::max<long long>({side->layout.size, std::llabs((long long)side->layout.extent), 1});
  const long long limit = LLONG_MAX / 4 / element / size;
  if (a.op == kAlltoall) {
    MPI_Count count = send ? a.sendcount : a.recvcount;
    if (count < 0)
      return fail_as(MPI_ERR_COUNT, MPIX_ERR_ARG,
                     format("%s: %s=%lld: must be >= 0", a.name, counts_name, (long long)count));
    if (count > limit)
      return fail_as(MPI_ERR_COUNT, MPIX_ERR_ARG,
                     format("%s: %s=%lld: more bytes than 64-bit offsets hold", a.name, counts_name, (long long)count));
    // Block i starts i*count elements in, an offset in MPI_Aint: a buffer beyond
    // INT_MAX elements is fine (MPI_Alltoall accepts it too).
    for (int i = 0; i < size; ++i) {
      side->counts[i] = count;
      side->displs[i] = (MPI_Aint)i * count;
    }
  } else {
    const MPI_Count* counts = send ? a.sendcounts : a.recvcounts;
    const MPI_Aint* displs = send ? a.sdispls : a.rdispls;
    if (!counts) return fail(MPIX_ERR_ARG, format("%s: %s is NULL", a.name, counts_name));
    if (!displs) return fail(MPIX_ERR_ARG, format("%s: %s is NULL", a.name, displs_name));
    for (int i = 0; i < size; ++i) {
      if (counts[i] < 0)
        return fail_as(MPI_ERR_COUNT, MPIX_ERR_ARG,
                       format("%s: %s[%d]=%lld: must be >= 0", a.name, counts_name, i, (long long)counts[i]));
      if (counts[i] > limit || displs[i] > limit || displs[i] < -limit)
        return fail_as(MPI_ERR_COUNT, MPIX_ERR_ARG,
                       format("%s: %s[%d]=%lld at %s[%d]=%lld: more bytes than 64-bit offsets hold", a.name,
                              counts_name, i, (long long)counts[i], displs_name, i, (long long)displs[i]));
      side->counts[i] = counts[i];
      side->displs[i] = displs[i];
    }
  }
  MPI_Aint lowest = 0, highest = 0;
  if (!buf && side->byte_span(&lowest, &highest) && !bottom_addresses_mapped(lowest, highest - 1)) {
    long long bytes = 0;
    for (int i = 0; i < size; ++i) bytes += side->block_bytes(i);
    return fail_as(MPI_ERR_BUFFER, MPIX_ERR_ARG,
                   format("%s: %s is NULL but %lld bytes are to be %s (as MPI_BOTTOM its data would start at "
                          "address %lld; MPI_BOTTOM takes absolute addresses)",
                          a.name, send ? "sendbuf" : "recvbuf", bytes, send ? "sent" : "received", (long long)lowest));
  }
  side->buf = (char*)buf;
  return MPIX_SUCCESS;
}

// A block of one side of a call, as addresses (MPI_BOTTOM's blocks are absolute).
struct Piece {
  std::intptr_t lo, hi;
  int peer;
  bool sent;
};

std::intptr_t address(const BufferSide& side, MPI_Aint offset) { return (std::intptr_t)side.buf + offset; }

// The non-empty blocks of `side`, or false where one is not contiguous: blocks of
// derived types with holes may interleave legally (the even elements sent, the odd
// received), so only contiguous ones are compared.
bool add_pieces(const BufferSide& side, bool sent, std::vector<Piece>* pieces) {
  for (int i = 0; i < (int)side.counts.size(); ++i) {
    if (side.block_bytes(i) == 0) continue;
    if (!side.layout.contiguous(side.counts[i])) return false;
    const std::intptr_t lo = address(side, side.displs[i] * side.layout.extent + side.layout.true_lb);
    pieces->push_back(Piece{lo, lo + (std::intptr_t)side.block_bytes(i), i, sent});
  }
  return true;
}

void sort_pieces(std::vector<Piece>* pieces) {
  const auto by_start = [](const Piece& x, const Piece& y) { return x.lo < y.lo; };
  if (!std::is_sorted(pieces->begin(), pieces->end(), by_start))  // rank order mostly is
    std::sort(pieces->begin(), pieces->end(), by_start);
}

// MPI's send and receive buffers share no byte (only MPI_IN_PLACE exchanges in
// place): an algorithm would send bytes it had already overwritten. MPICH refuses
// the same pointer alone; the byte spans of the two sides are compared here (O(P),
// on a call that plans), and where they meet, block against block, where every
// one is contiguous.
int check_disjoint(const char* name, const BufferSide& send, const BufferSide& recv) {
  MPI_Aint send_lo = 0, send_hi = 0, recv_lo = 0, recv_hi = 0;
  if (!send.byte_span(&send_lo, &send_hi) || !recv.byte_span(&recv_lo, &recv_hi)) return MPIX_SUCCESS;
  if (address(send, send_hi) <= address(recv, recv_lo) || address(recv, recv_hi) <= address(send, send_lo))
    return MPIX_SUCCESS;
  std::vector<Piece> pieces;
  if (!add_pieces(send, true, &pieces) || !add_pieces(recv, false, &pieces)) return MPIX_SUCCESS;
  sort_pieces(&pieces);
  // Sweeping by start: a piece that starts below the end of the other side's
  // furthest-reaching piece so far shares bytes with it.
  const Piece* furthest[2] = {nullptr, nullptr};
  for (const Piece& piece : pieces) {
    const Piece* other = furthest[!piece.sent];
    if (other && other->hi > piece.lo) {
      const Piece& sent = piece.sent ? piece : *other;
      const Piece& received = piece.sent ? *other : piece;
      return fail_as(MPI_ERR_BUFFER, MPIX_ERR_ARG,
                     format("%s: sendbuf and recvbuf overlap: the block sent to rank %d and the block "
                            "received from rank %d share bytes (MPI_IN_PLACE exchanges in place)",
                            name, sent.peer, received.peer));
    }
    if (!furthest[piece.sent] || piece.hi > furthest[piece.sent]->hi) furthest[piece.sent] = &piece;
  }
  return MPIX_SUCCESS;
}

// MPI writes no location twice: receive blocks that share bytes are erroneous.
// MPI libraries do not check it (the last block written wins, or a mix); checked
// under mpix_check_args only, so that a program they run runs under mpix (and its
// interposer) too. O(P) where the blocks lie in rank order, O(P log P) otherwise.
int check_receive_blocks(const char* name, const BufferSide& recv) {
  std::vector<Piece> pieces;
  if (!add_pieces(recv, false, &pieces)) return MPIX_SUCCESS;
  sort_pieces(&pieces);
  const Piece* furthest = nullptr;
  for (const Piece& piece : pieces) {
    if (furthest && furthest->hi > piece.lo)
      return fail_as(MPI_ERR_BUFFER, MPIX_ERR_ARG,
                     format("%s: the blocks received from rank %d and from rank %d share bytes (MPI writes no "
                            "location twice; mpix_check_args=true)",
                            name, std::min(furthest->peer, piece.peer), std::max(furthest->peer, piece.peer)));
    if (!furthest || piece.hi > furthest->hi) furthest = &piece;
  }
  return MPIX_SUCCESS;
}

const MachineProfile& default_profile() {
  static const MachineProfile profile;
  return profile;
}

// The machine profile of the call: mpix_machine_file, read once per communicator.
int resolve_profile(const MPIX_Info* info, MPIX_Comm_s* comm, Hints* hints) {
  std::string value, source;
  hints->profile = &default_profile();
  if (!lookup(info, "mpix_machine_file", &value, &source)) return MPIX_SUCCESS;
  MPIX_TRY(check_value(*find_key("mpix_machine_file"), value, source));
  auto cached = comm->machine_profiles.find(value);
  if (cached == comm->machine_profiles.end()) {
    MachineProfile profile;
    MPIX_TRY(load_machine_profile(value, &profile));
    cached = comm->machine_profiles.emplace(value, profile).first;
  }
  hints->profile = &cached->second;
  hints->params_text += machine_profile_text(cached->second) + ";";
  return MPIX_SUCCESS;
}

}  // namespace

int check_local(const DenseArgs& a, const MPIX_Info* info, MPIX_Comm_s* comm, Exchange* ex, Hints* hints) {
  EnvironmentScope environment;
  ex->size = comm->size;
  ex->rank = comm->rank;
  ex->uniform = a.op == kAlltoall;
  MPIX_TRY(check_call_info(info, a.name));
  if (a.recvbuf == MPI_IN_PLACE)
    return fail_as(kInPlaceRecvClass, MPIX_ERR_ARG, format("%s: recvbuf is MPI_IN_PLACE", a.name));
  MPIX_TRY(check_side(a, false, comm->size, comm->lib_comm, &ex->recv));
  if (a.sendbuf == MPI_IN_PLACE) {
    ex->send = ex->recv;  // pointed at the copy once the plan is made
  } else {
    MPIX_TRY(check_side(a, true, comm->size, comm->lib_comm, &ex->send));
    // Erroneous in MPI (MPICH reports it); the interposer relies on the refusal.
    if (a.sendbuf && a.sendbuf == a.recvbuf)
      return fail_as(MPI_ERR_BUFFER, MPIX_ERR_ARG,
                     format("%s: sendbuf and recvbuf are the same buffer (MPI_IN_PLACE exchanges in place)", a.name));
    MPIX_TRY(check_disjoint(a.name, ex->send, ex->recv));
  }
  // The own block is copied, never sent: buffers sized by the largest block (TuNA's
  // temporary slots, the carried rounds) need not hold it, nor does the carried
  // agreement's limit apply to it. At P = 1 it is the only block.
  for (int i = 0; i < comm->size; ++i)
    if (i != comm->rank || comm->size == 1)
      ex->max_block_bytes = std::max({ex->max_block_bytes, ex->send.block_bytes(i), ex->recv.block_bytes(i)});
  // MPI_ERR_TRUNCATE: MPI's class where more is sent than received, and Open MPI's
  // for the opposite too (MPICH takes that).
  const long long own_sent = ex->send.block_bytes(comm->rank), own_received = ex->recv.block_bytes(comm->rank);
  if (own_sent != own_received)
    return fail_as(
        MPI_ERR_TRUNCATE, MPIX_ERR_ARG,
        format("%s: own block: sending %lld bytes to self but receiving %lld", a.name, own_sent, own_received));

  const char* key = a.op == kAlltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm";
  std::string value = "auto", source;
  if (lookup(info, key, &value, &source)) MPIX_TRY(check_value(*find_key(key), value, source));
  hints->asked = value == "auto" ? nullptr : find_algorithm(value, a.op);
  if (hints->asked) {
    MPIX_TRY(resolve_params(info, hints->asked->params, comm->size, &hints->params));
    hints->params_text += describe_params(hints->asked->params, hints->params) + ";";
  } else {
    // Auto may choose any algorithm: every parameter is read and checked now. A
    // radix above P fails the call, as it does for a named algorithm (API.md: a
    // value wrong for the call); one that fits P but not an algorithm (above the
    // ranks per node, for hierarchical TuNA) rules that algorithm out (select.cpp).
    const std::vector<Param> all = {Param::radix,         Param::block_count,   Param::stride,
                                    Param::max_queue,     Param::segment_bytes, Param::seed,
                                    Param::ipc_threshold, Param::memcpy_threshold, Param::locality,
                                    Param::lane_group};
    MPIX_TRY(resolve_params(info, all, comm->size, &hints->params));
    hints->params.seed = hints->params.is_given(Param::seed) ? hints->params.seed : (unsigned long long)comm->size;
    // Compared between ranks as a hash: the values' bytes serve as well as their text.
    const Params& p = hints->params;
    const long long values[] = {p.radix,         p.radix_auto,       p.block_count, p.stride,
                                p.max_queue,     p.segment_bytes,    (long long)p.seed, p.given,
                                p.ipc_threshold, p.memcpy_threshold, (long long)p.locality, p.lane_group};
    hints->params_text.append(reinterpret_cast<const char*>(values), sizeof values);
  }
  if (!hints->asked && lookup(info, "mpix_tuning_file", &value, &source)) {
    MPIX_TRY(check_value(*find_key("mpix_tuning_file"), value, source));
    auto cached = comm->tuning_tables.find(value);
    if (cached == comm->tuning_tables.end()) {
      TuningTable table;
      MPIX_TRY(load_tuning_table(value, &table));
      cached = comm->tuning_tables.emplace(value, std::move(table)).first;
    }
    hints->tuning = &cached->second;
    hints->params_text += std::to_string(hints->tuning->content_hash) + ";";
    // The rules that may match on this communicator: their hints must fit its P (a
    // rule for 8 ranks may well have mpix_radix=8); a rule for other rank counts is
    // not this call's.
    for (const TuningRule& rule : hints->tuning->rules) {
      if (rule.op != a.op || comm->size < rule.min_ranks || comm->size > rule.max_ranks) continue;
      MPIX_Info_s merged = with_rule_hints(info, rule);
      Params params;
      if (resolve_params(&merged, rule.algorithm->params, comm->size, &params) != MPIX_SUCCESS)
        return fail(MPIX_ERR_TUNING_FILE, format("tuning file %s:%d: %s", hints->tuning->path.c_str(), rule.line,
                                                 MPIX_Last_error_message()));
    }
  }
  MPIX_TRY(resolve_profile(info, comm, hints));
  MPIX_TRY(boolean_hint(info, "mpix_check_args", &hints->check_args));
  if (hints->check_args) MPIX_TRY(check_receive_blocks(a.name, ex->recv));
  MPIX_TRY(boolean_auto_hint(info, "mpix_early_start", &hints->early_start));
  return boolean_hint(info, "mpix_plan_reuse", &hints->plan_reuse);
}

bool same_layout(const TypeLayout& a, const TypeLayout& b) {
  return a.type == b.type && a.lb == b.lb && a.extent == b.extent && a.true_lb == b.true_lb &&
         a.true_extent == b.true_extent && a.size == b.size && a.in_order == b.in_order;
}

bool same_side(const BufferSide& a, const BufferSide& b) {
  return a.buf == b.buf && a.counts == b.counts && a.displs == b.displs && same_layout(a.layout, b.layout);
}

long long asked_index(const Hints& hints) { return hints.asked ? (long long)(hints.asked - algorithms().data()) : -1; }
long long text_hash(const std::string& text) {
  unsigned long long hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return (long long)(hash >> 2);
}

long long hints_hash(const Hints& hints) { return text_hash(hints.params_text) ^ (hints.check_args ? 1 : 0); }

bool same_raw_side(const DenseArgs& a, bool send, const BufferSide& kept, MPI_Comm lib_comm) {
  const MPI_Datatype type = send ? a.sendtype : a.recvtype;
  if ((send ? a.sendbuf : a.recvbuf) != kept.buf || type != kept.layout.type) return false;
  // A handle may have been freed and made again as another type: its layout decides.
  TypeLayout layout;
  if (describe_type(type, "", &layout) != MPIX_SUCCESS || !same_layout(layout, kept.layout) ||
      check_committed(type, "", lib_comm) != MPIX_SUCCESS)
    return false;
  const int size = (int)kept.counts.size();
  if (a.op == kAlltoall) return size > 0 && (send ? a.sendcount : a.recvcount) == kept.counts[0];
  const MPI_Count* counts = send ? a.sendcounts : a.recvcounts;
  const MPI_Aint* displs = send ? a.sdispls : a.rdispls;
  if (!counts || !displs) return false;
  for (int i = 0; i < size; ++i)
    if (counts[i] != kept.counts[i] || displs[i] != kept.displs[i]) return false;
  return true;
}

bool host_buffers(const Exchange& ex) {
  return memory_type(ex.send.buf) == MemoryType::host && memory_type(ex.recv.buf) == MemoryType::host;
}

int check_counts_agree(const DenseArgs& a, const Exchange& ex, MPI_Comm comm, int* mismatch_peer) {
  TimeScope agreeing(TimePhase::agreement);
  std::vector<long long> sent(ex.size), arriving(ex.size);
  for (int i = 0; i < ex.size; ++i) sent[i] = ex.send.block_bytes(i);
  MPIX_TRY(alltoall_progressing(sent.data(), arriving.data(), comm));
  *mismatch_peer = -1;
  bool truncated = false;  // a block larger than its receiver expects
  for (int i = 0; i < ex.size; ++i) {
    if (arriving[i] == ex.recv.block_bytes(i)) continue;
    if (*mismatch_peer < 0) *mismatch_peer = i;
    truncated = truncated || arriving[i] > ex.recv.block_bytes(i);
  }
  // 2: some block is larger than its receiver expects, which MPI fails on that
  // receiver (MPI_ERR_TRUNCATE) and may leave its peers waiting for (Open MPI 4.1
  // does): the error is every rank's, so that the interposer raises it on all of
  // them. 1: only smaller blocks, which MPI takes; the interposer leaves the call
  // to MPI, as a program without it would run.
  int local = truncated ? 2 : *mismatch_peer >= 0 ? 1 : 0, any = 0;
  MPIX_TRY(allreduce_progressing(&local, &any, 1, MPI_INT, MPI_MAX, comm));
  if (any == 2) mark_agreed(local > 0);
  if (local)
    return fail_as(truncated ? MPI_ERR_TRUNCATE : MPI_ERR_ARG, MPIX_ERR_ARG,
                   format("%s: rank %d sends %lld bytes to rank %d, which expects %lld", a.name, *mismatch_peer,
                          arriving[*mismatch_peer], ex.rank, ex.recv.block_bytes(*mismatch_peer)));
  if (any)
    return fail(MPIX_ERR_ARG, format("%s: send and receive counts disagree between ranks (the receiving rank's "
                                     "message names the pair)", a.name));
  return MPIX_SUCCESS;
}

}  // namespace mpix
