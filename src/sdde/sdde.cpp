// MPIX_Alltoall_crs and MPIX_Alltoallv_crs: argument checks, the one agreement
// between ranks, the choice of algorithm, and the outputs. The algorithms are in
// direct.cpp, rma.cpp and locality.cpp (see sdde.hpp).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "../core/algorithms.hpp"
#include "../core/agreement.hpp"
#include "../core/dense_args.hpp"
#include "../core/error.hpp"
#include "../core/handles.hpp"
#include "../core/info.hpp"
#include "../core/progress.hpp"
#include "sdde.hpp"

namespace mpix {
namespace {

struct SddeArgs {
  const char* name;
  Op op;
  int send_nnz;
  int send_size;  // alltoallv_crs
  const int* dest;
  int sendcount;  // alltoall_crs
  const int* sendcounts;
  const int* sdispls;
  MPI_Datatype sendtype;
  const void* sendvals;
  int* recv_nnz;
  int* recv_size;  // alltoallv_crs
  int** src;
  int recvcount;  // alltoall_crs
  int** recvcounts;
  int** rdispls;
  MPI_Datatype recvtype;
  void** recvvals;
};

// What one rank knows of the call's shape, for the agreement and the choice.
// "Node" here is a unit of the locality level the *_loc algorithms would use
// (mpix_locality: the nodes, or the regions of all nodes).
struct Shape {
  Level locality = Level::node;   // mpix_locality
  long long messages = 0;         // send_nnz
  long long remote_messages = 0;  // to ranks on other nodes
  long long remote_nodes = 0;     // distinct other nodes sent to: inter-node messages once aggregated
  long long largest_aggregate = 0;  // bytes of the largest phase-1 aggregate of the *_loc algorithms
};

int check_outputs(const SddeArgs& a) {
  if (!a.recv_nnz) return fail(MPIX_ERR_ARG, format("%s: recv_nnz is NULL", a.name));
  if (!a.src) return fail(MPIX_ERR_ARG, format("%s: src is NULL", a.name));
  if (!a.recvvals) return fail(MPIX_ERR_ARG, format("%s: recvvals is NULL", a.name));
  if (a.op == kAlltoallvCrs) {
    if (!a.recv_size) return fail(MPIX_ERR_ARG, format("%s: recv_size is NULL", a.name));
    if (!a.recvcounts) return fail(MPIX_ERR_ARG, format("%s: recvcounts is NULL", a.name));
    if (!a.rdispls) return fail(MPIX_ERR_ARG, format("%s: rdispls is NULL", a.name));
  }
  return MPIX_SUCCESS;
}

// Local checks; fills `call`, `shape` and the algorithm asked for. Everything that
// can fail on one rank alone is checked here, before the agreement.
int check_local(const SddeArgs& a, const MPIX_Info* info, MPIX_Comm_s* comm, SddeCall* call, Shape* shape,
                const Algorithm** asked) {
  call->name = a.name;
  call->op = a.op;
  call->size = comm->size;
  call->rank = comm->rank;
  MPIX_TRY(check_call_info(info, a.name));
  MPIX_TRY(check_outputs(a));
  // recv_nnz / recv_size are outputs (code written for MPI Advance leaves them
  // unset) unless the hint says that the values passed in are the truth.
  bool known = false;
  std::string setting;
  MPIX_TRY(boolean_hint(info, "mpix_recv_counts_known", &known, &setting));
  if (known) {
    if (*a.recv_nnz < 0)
      return fail(MPIX_ERR_ARG, format("%s: %s but recv_nnz=%d: must be >= 0", a.name, setting.c_str(), *a.recv_nnz));
    if (a.op == kAlltoallvCrs && *a.recv_size < 0)
      return fail(MPIX_ERR_ARG,
                  format("%s: %s but recv_size=%d: must be >= 0", a.name, setting.c_str(), *a.recv_size));
    call->known_nnz = *a.recv_nnz;
    if (a.op == kAlltoallvCrs) call->known_size = *a.recv_size;
  }

  const int n = a.send_nnz;
  if (n < 0) return fail(MPIX_ERR_ARG, format("%s: send_nnz=%d: must be >= 0", a.name, n));
  if (n > 0 && !a.dest) return fail(MPIX_ERR_ARG, format("%s: dest is NULL but send_nnz=%d", a.name, n));
  MPIX_TRY(describe_type(a.sendtype, "sendtype", &call->send_layout));
  MPIX_TRY(check_committed(a.sendtype, "sendtype", comm->lib_comm));
  MPIX_TRY(describe_type(a.recvtype, "recvtype", &call->recv_layout));
  MPIX_TRY(check_committed(a.recvtype, "recvtype", comm->lib_comm));
  const TypeLayout& rl = call->recv_layout;
  if (rl.size <= 0)
    return fail(MPIX_ERR_ARG, format("%s: recvtype has size 0: received counts cannot be told", a.name));
  // The library allocates recvvals: element k of it is at k * extent, and the
  // buffer starts at element 0's first byte.
  if (rl.true_lb < 0)
    return fail(MPIX_ERR_UNSUPPORTED, format("%s: recvtype has a negative true lower bound (%lld); the library "
                                             "cannot lay out recvvals for it", a.name, (long long)rl.true_lb));
  if (rl.true_extent > rl.extent)
    return fail(MPIX_ERR_UNSUPPORTED,
                format("%s: recvtype's elements overlap (true extent %lld > extent %lld); the library cannot lay "
                       "out recvvals for it", a.name, (long long)rl.true_extent, (long long)rl.extent));

  if (a.op == kAlltoallCrs) {
    if (a.sendcount < 0) return fail(MPIX_ERR_ARG, format("%s: sendcount=%d: must be >= 0", a.name, a.sendcount));
    if (a.recvcount < 0) return fail(MPIX_ERR_ARG, format("%s: recvcount=%d: must be >= 0", a.name, a.recvcount));
    call->recvcount = a.recvcount;
    if (n > 0 && (long long)a.sendcount * call->send_layout.size != (long long)a.recvcount * rl.size)
      return fail(MPIX_ERR_ARG, format("%s: sendcount=%d elements of sendtype (%lld bytes) differ from "
                                       "recvcount=%d elements of recvtype (%lld bytes)",
                                       a.name, a.sendcount, (long long)a.sendcount * call->send_layout.size,
                                       a.recvcount, (long long)a.recvcount * rl.size));
  } else {
    if (a.send_size < 0) return fail(MPIX_ERR_ARG, format("%s: send_size=%d: must be >= 0", a.name, a.send_size));
    if (n > 0 && !a.sendcounts) return fail(MPIX_ERR_ARG, format("%s: sendcounts is NULL but send_nnz=%d", a.name, n));
    if (n > 0 && !a.sdispls) return fail(MPIX_ERR_ARG, format("%s: sdispls is NULL but send_nnz=%d", a.name, n));
  }

  // The library allocates recvvals, so there is no buffer to exchange in place;
  // refused before the messages' addresses are computed from it.
  if (a.sendvals == MPI_IN_PLACE)
    return fail(MPIX_ERR_ARG, format("%s: sendvals is MPI_IN_PLACE; an SDDE has no in-place form (the library "
                                     "allocates recvvals)", a.name));
  call->sends.resize((std::size_t)n);
  long long send_bytes = 0;
  for (int i = 0; i < n; ++i) {
    SddeMessage& m = call->sends[i];
    m.dest = a.dest[i];
    if (m.dest < 0 || m.dest >= comm->size)
      return fail(MPIX_ERR_ARG, format("%s: dest[%d]=%d: must be 0..%d", a.name, i, m.dest, comm->size - 1));
    long long displ = 0;
    if (a.op == kAlltoallCrs) {
      m.count = a.sendcount;
      displ = (long long)i * a.sendcount;
    } else {
      m.count = a.sendcounts[i];
      displ = a.sdispls[i];
      if (m.count < 0)
        return fail(MPIX_ERR_ARG, format("%s: sendcounts[%d]=%d: must be >= 0", a.name, i, m.count));
      if (displ < 0 || displ + m.count > a.send_size)
        return fail(MPIX_ERR_ARG, format("%s: message %d (sdispls[%d]=%lld, sendcounts[%d]=%d) lies outside "
                                         "the send_size=%d elements of sendvals",
                                         a.name, i, i, displ, i, m.count, a.send_size));
    }
    m.buf = static_cast<const char*>(a.sendvals) + displ * call->send_layout.extent;
    // Refused here, before any message, rather than by the receiver, which could
    // only drop it (inbox.cpp) while this rank waits for its send.
    if (call->send_bytes(m) > INT_MAX)
      return fail(MPIX_ERR_UNSUPPORTED, format("%s: the message to rank %d (dest[%d]) has %lld bytes; messages "
                                               "of 2 GiB or more are not supported", a.name, m.dest, i,
                                               (long long)call->send_bytes(m)));
    send_bytes += call->send_bytes(m);
  }
  if (!a.sendvals && send_bytes > 0) {
    // MPI_BOTTOM with absolute addresses, as the dense calls take it.
    const TypeLayout& layout = call->send_layout;
    long long lowest = LLONG_MAX, highest = LLONG_MIN;
    for (const SddeMessage& m : call->sends) {
      if (call->send_bytes(m) == 0) continue;
      const long long base = (long long)reinterpret_cast<uintptr_t>(m.buf);
      lowest = std::min(lowest, base + (long long)layout.span_lo(m.count));
      highest = std::max(highest, base + (long long)layout.span_hi(m.count) - 1);
    }
    if (!bottom_addresses_mapped(lowest, highest))
      return fail(MPIX_ERR_ARG, format("%s: sendvals is NULL but %lld bytes are to be sent (as MPI_BOTTOM its data "
                                       "would start at address %lld; MPI_BOTTOM takes absolute addresses)",
                                       a.name, send_bytes, lowest));
  }
  // A destination listed twice would be two messages from one source.
  std::vector<int> sorted(a.dest, a.dest + n);
  std::sort(sorted.begin(), sorted.end());
  auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end())
    return fail(MPIX_ERR_ARG, format("%s: dest lists rank %d twice; a destination is listed at most once",
                                     a.name, *twice));

  // The shape, for the choice and the *_loc algorithms.
  std::string level_value, level_source;
  if (lookup(info, "mpix_locality", &level_value, &level_source)) {
    MPIX_TRY(check_value(*find_key("mpix_locality"), level_value, level_source));
    shape->locality = level_value == "region" ? Level::region : Level::node;
  }
  const Locality& loc = locality_level(comm, shape->locality);
  std::vector<long long> aggregate(loc.num_nodes(), 0);
  for (const SddeMessage& m : call->sends) {
    const int node = loc.node_of(m.dest);
    if (node == loc.node()) continue;
    ++shape->remote_messages;
    if (aggregate[node] == 0) ++shape->remote_nodes;
    aggregate[node] += 8 + call->send_bytes(m);  // a record (locality.cpp)
  }
  shape->messages = n;
  for (long long bytes : aggregate) shape->largest_aggregate = std::max(shape->largest_aggregate, bytes);

  const char* key = a.op == kAlltoallCrs ? "mpix_alltoall_crs_algorithm" : "mpix_alltoallv_crs_algorithm";
  std::string value = "auto", source;
  if (lookup(info, key, &value, &source)) MPIX_TRY(check_value(*find_key(key), value, source));
  *asked = value == "auto" ? nullptr : find_algorithm(value, a.op);
  return MPIX_SUCCESS;
}

// The `auto` choice, from what every rank agrees on (API.md: message count, P,
// nodes). A documented rule from paper 001's results (docs/sdde.md); the selection
// issue replaces it with a cost model.
//
// - Aggregate (the *_loc algorithms) when there are several nodes and aggregation
//   at least halves the inter-node messages of the busiest rank (the paper's
//   speedups come from cutting inter-node message counts; with few messages per
//   node pair it only adds a hop and a copy).
// - Personalized when the messages are dense: the busiest rank sends to at least a
//   quarter of its possible peers (ranks, or nodes once aggregated); the reduction
//   is then cheap next to the messages, and the paper finds personalized ahead for
//   large message counts. Otherwise NBX, which avoids the reduction (the paper:
//   few messages among many ranks).
// - rma is never chosen: the paper finds it ahead only at very large scale, and it
//   costs a window of P slots per rank.
// - No aggregation where some node's aggregate would pass 2^31-1 bytes, the most
//   one message of the *_loc algorithms carries: the direct algorithm decides.
//
// With mpix_locality=region, "nodes" are the regions of all nodes (`unit` names them).
const Algorithm* select_sdde(Op op, int size, int nodes, long long max_messages, long long max_remote,
                             long long max_remote_nodes, long long largest_aggregate, const char* unit,
                             std::string* reason) {
  const char* name = nullptr;
  const bool aggregate_fits = largest_aggregate <= INT_MAX;
  if (nodes > 1 && max_remote >= 2 && max_remote >= 2 * max_remote_nodes && aggregate_fits) {
    const bool dense = 4 * max_remote_nodes >= nodes;
    name = dense ? "personalized_loc" : "nonblocking_loc";
    *reason = format("%s; aggregation cuts the busiest rank's inter-%s messages from %lld to <= %lld; "
                     "%s%ss: %s (<= %lld of %d other %ss per rank)", counted(nodes, unit).c_str(), unit, max_remote,
                     max_remote_nodes, dense ? "dense between " : "sparse between ", unit,
                     dense ? "reduction" : "NBX", max_remote_nodes, nodes - 1, unit);
  } else {
    const bool dense = 4 * max_messages >= size;
    name = dense ? "personalized" : "nonblocking";
    *reason = format("%sup to %lld messages per rank of P=%d: %s",
                     aggregate_fits ? "" : "no aggregation (an aggregate past 2^31-1 bytes); ", max_messages, size,
                     dense ? "dense (>= P/4): reduction" : "sparse (< P/4): NBX");
  }
  return find_algorithm(name, op);
}

void report(MPIX_Comm_s* comm, Op op, const std::string& algorithm, const std::string& reason) {
  if (comm->rank != 0 || verbose_level() == 0) return;
  const std::string line = format("[mpix] %s on %s (%s): %s (%s)\n", op_name(op), counted(comm->size, "rank").c_str(),
                                  counted(comm->locality.num_nodes(), "node").c_str(), algorithm.c_str(),
                                  reason.c_str());
  if (reports(comm, line)) std::fputs(line.c_str(), stderr);
}

// mpix_recv_counts_known=true on every rank: discovery is skipped, so a recv_nnz
// too large would wait for ever and one too small would leave messages behind.
// One reduction, in place of the discovery's, checks them: the totals over all
// ranks, and the same sums weighted by the receiving rank (the odd pair_weight(j, j)
// of rank j: senders add it per message and per byte to j, rank j times its
// recv_nnz and its recv_size in bytes), which differ whenever any rank's values are
// wrong (always for one rank; for several, unless their weighted errors cancel,
// chance about 2^-64). Only then are the true counts summed to each rank
// (MPI_Reduce_scatter_block) to name the rank whose values are wrong.
int check_known_totals(const SddeArgs& a, const SddeCall& call, MPI_Comm comm) {
  int size = 0, rank = 0;
  MPIX_CHECK_MPI(MPI_Comm_size(comm, &size));
  MPIX_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  const bool sizes = a.op == kAlltoallvCrs;
  const unsigned long long known_bytes = sizes ? (unsigned long long)(call.known_size * (long long)call.recv_layout.size) : 0;
  unsigned long long mine[6] = {(unsigned long long)call.sends.size(), (unsigned long long)call.known_nnz, 0, known_bytes,
                                0, 0};
  const unsigned long long weight = pair_weight(rank, rank);
  for (const SddeMessage& m : call.sends) {
    const unsigned long long bytes = sizes ? (unsigned long long)call.send_bytes(m) : 0;
    mine[2] += bytes;
    mine[4] += pair_weight(m.dest, m.dest);
    mine[5] += bytes * pair_weight(m.dest, m.dest);
  }
  mine[4] -= (unsigned long long)call.known_nnz * weight;
  mine[5] -= known_bytes * weight;
  unsigned long long all[6];
  MPIX_TRY(allreduce_progressing(mine, all, 6, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
  const bool totals_agree = all[0] == all[1] && all[2] == all[3];
  if (totals_agree && all[4] == 0 && all[5] == 0) return MPIX_SUCCESS;
  // The error path (on every rank alike): what is sent to each rank, summed there,
  // so that a rank whose values are wrong says so.
  std::vector<long long> to(2 * (std::size_t)size, 0);
  for (const SddeMessage& m : call.sends) {
    to[2 * (std::size_t)m.dest] += 1;
    to[2 * (std::size_t)m.dest + 1] += sizes ? call.send_bytes(m) : 0;
  }
  long long arriving[2] = {0, 0};
  MPIX_CHECK_MPI(MPI_Reduce_scatter_block(to.data(), arriving, 2, MPI_LONG_LONG, MPI_SUM, comm));
  if (arriving[0] != call.known_nnz)
    return fail(MPIX_ERR_ARG, format("%s: mpix_recv_counts_known=true, but recv_nnz=%lld was passed in, and this "
                                     "rank is sent %s", a.name, call.known_nnz,
                                     counted(arriving[0], "message").c_str()));
  if (sizes && arriving[1] != (long long)known_bytes) {
    // recv_size counts elements of the receive type; what arrives is counted in
    // bytes, so both are given in both units (16 elements beside "16 bytes" reads
    // as no error at all).
    const long long element = std::max(1LL, (long long)call.recv_layout.size);
    const std::string elements = arriving[1] % element
                                     ? format("%.1f elements", (double)arriving[1] / element)
                                     : counted(arriving[1] / element, "element");
    return fail(MPIX_ERR_ARG, format("%s: mpix_recv_counts_known=true, but recv_size=%lld (%s) was passed in, and "
                                     "this rank is sent %s (%s of %s)",
                                     a.name, call.known_size, counted((long long)known_bytes, "byte").c_str(),
                                     counted(arriving[1], "byte").c_str(), elements.c_str(),
                                     counted(element, "byte").c_str()));
  }
  if (all[0] != all[1])
    return fail(MPIX_ERR_ARG, format("%s: mpix_recv_counts_known=true, but the recv_nnz passed in add up to %s, "
                                     "and %lld are sent (another rank's differ from what is sent to it)",
                                     a.name, counted((long long)all[1], "message").c_str(), (long long)all[0]));
  if (all[2] != all[3])
    return fail(MPIX_ERR_ARG, format("%s: mpix_recv_counts_known=true, but the recv_size passed in add up to %lld "
                                     "bytes where %lld are sent (another rank's differ from what is sent to it)",
                                     a.name, (long long)all[3], (long long)all[2]));
  return fail(MPIX_ERR_ARG, format("%s: mpix_recv_counts_known=true, but the recv_nnz or recv_size passed in on "
                                   "another rank differ from what is sent to it", a.name));
}

// The pointer outputs are NULL after any failure (nothing to free).
void clear_outputs(const SddeArgs& a) {
  for (int** out : {a.src, a.recvcounts, a.rdispls})
    if (out) *out = nullptr;
  if (a.recvvals) *a.recvvals = nullptr;
}

int run(const SddeArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm) {
  clear_outputs(a);
  MPIX_TRY(check_handle(comm, a.name, "comm"));
  SddeCall call;
  Shape shape;
  const Algorithm* asked = nullptr;
  int local_rc = check_local(a, info, comm, &call, &shape, &asked);
  std::string local_message = MPIX_Last_error_message();

  // One agreement, before any message: whether any rank failed its checks (so that
  // no rank waits for a rank that returned), the algorithm asked for, whether every
  // rank passed recv_nnz (only then may discovery be skipped: the reduction and the
  // barrier are collective), the shape for the choice, and, for alltoall_crs, the
  // message size (rma lays out its window by it). Pairs (x, -x) under MPI_MAX give
  // the maximum and the minimum at once.
  const long long index = asked ? (long long)(asked - algorithms().data()) : -1;
  const long long message_bytes =
      a.op == kAlltoallCrs && local_rc == MPIX_SUCCESS ? (long long)a.recvcount * call.recv_layout.size : 0;
  const long long known = call.known_nnz >= 0 ? 1 : 0;
  const long long level = shape.locality == Level::region ? 1 : 0;
  long long mine[12] = {local_rc, index, -index, -known,
                        shape.messages, shape.remote_messages, shape.remote_nodes, shape.largest_aggregate,
                        message_bytes, -message_bytes, level, -level};
  long long all[12];
  MPIX_TRY(allreduce_progressing(mine, all, 12, MPI_LONG_LONG, MPI_MAX, comm->lib_comm));
  if (all[0]) return fail_agreed(local_rc, local_message, (int)all[0], a.name);
  if (all[1] != -all[2])
    return fail(MPIX_ERR_ARG, format("%s: ranks asked for different algorithms (info or environment differ)", a.name));
  if (all[10] != -all[11])
    return fail(MPIX_ERR_ARG, format("%s: ranks gave different mpix_locality (node on some, region on others; info "
                                     "or environment differ)", a.name));
  call.all_know_nnz = all[3] == -1;
  if (call.all_know_nnz) MPIX_TRY(check_known_totals(a, call, comm->lib_comm));
  call.message_bytes = all[8] == -all[9] ? all[8] : -1;

  std::string reason = "asked for";
  const Algorithm* algorithm = asked;
  if (!algorithm)
    algorithm = select_sdde(a.op, comm->size, locality_level(comm, shape.locality).num_nodes(), all[4], all[5],
                            all[6], all[7], &locality_level(comm, shape.locality) == &comm->locality ? "node" : "region",
                            &reason);
  const std::string name = algorithm->name;
  const std::string unavailable = unavailable_reason(*algorithm);  // the same on every rank
  if (!unavailable.empty())
    return fail(MPIX_ERR_UNSUPPORTED, format("%s: algorithm %s: %s", a.name, algorithm->name, unavailable.c_str()));
  if (name == "rma" && call.message_bytes < 0)
    return fail(MPIX_ERR_ARG, format("%s: algorithm rma: ranks give different message sizes (recvcount x size "
                                     "of recvtype, %lld to %lld bytes)", a.name, -all[9], all[8]));
  if (name == "rma" && call.message_bytes > INT_MAX)
    return fail(MPIX_ERR_UNSUPPORTED, format("%s: algorithm rma: messages of %lld bytes; at most 2^31-1",
                                             a.name, call.message_bytes));
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "_loc") == 0 && all[7] > INT_MAX)
    return fail(MPIX_ERR_UNSUPPORTED, format("%s: algorithm %s: an aggregate of %lld bytes; at most 2^31-1",
                                             a.name, algorithm->name, all[7]));

  SddeContext context;
  context.comm = comm;
  context.mpi_comm = comm->lib_comm;
  context.tag = comm->next_plan_tag(false);
  context.call = &call;
  context.locality = shape.locality;
  Inbox inbox(call, comm->lib_comm);
  context.inbox = &inbox;
  comm->sdde_stats = SddeStats();
  comm->sdde_stats.algorithm = name;
  context.stats = &comm->sdde_stats;
  report(comm, a.op, name, reason);

  MPIX_TRY(algorithm->sdde(context));
  SddeResult result;
  MPIX_TRY(inbox.finish(&result));
  *a.recv_nnz = result.nnz;
  *a.src = result.src;
  *a.recvvals = result.vals;
  result.src = nullptr;
  result.vals = nullptr;
  if (a.op == kAlltoallvCrs) {
    *a.recv_size = (int)result.size;
    *a.recvcounts = result.counts;
    *a.rdispls = result.displs;
    result.counts = nullptr;
    result.displs = nullptr;
  }
  return MPIX_SUCCESS;
}

}  // namespace
}  // namespace mpix

using namespace mpix;

extern "C" int MPIX_Alltoall_crs(int send_nnz, const int* dest, int sendcount, MPI_Datatype sendtype,
                                 const void* sendvals, int* recv_nnz, int** src, int recvcount,
                                 MPI_Datatype recvtype, void** recvvals, MPIX_Info* info, MPIX_Comm* comm) {
  SddeArgs a{"MPIX_Alltoall_crs", kAlltoallCrs, send_nnz, 0, dest, sendcount, nullptr, nullptr, sendtype,
             sendvals, recv_nnz, nullptr, src, recvcount, nullptr, nullptr, recvtype, recvvals};
  return guarded(a.name, [&] { return run(a, info, comm); });
}

extern "C" int MPIX_Alltoallv_crs(int send_nnz, int send_size, const int* dest, const int* sendcounts,
                                  const int* sdispls, MPI_Datatype sendtype, const void* sendvals,
                                  int* recv_nnz, int* recv_size, int** src, int** recvcounts, int** rdispls,
                                  MPI_Datatype recvtype, void** recvvals, MPIX_Info* info, MPIX_Comm* comm) {
  SddeArgs a{"MPIX_Alltoallv_crs", kAlltoallvCrs, send_nnz, send_size, dest, 0, sendcounts, sdispls,
             sendtype, sendvals, recv_nnz, recv_size, src, 0, recvcounts, rdispls, recvtype, recvvals};
  return guarded(a.name, [&] { return run(a, info, comm); });
}
