// MPIX_Alltoall(v)[_plan], MPIX_Start, MPIX_Wait, MPIX_Request_free: argument
// checks, the one agreement between ranks, algorithm choice, and the plan.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "comm.hpp"
#include "error.hpp"
#include "info.hpp"
#include "registry.hpp"
#include "request.hpp"
#include "select.hpp"

namespace mpix {
namespace {

struct DenseArgs {
  const char* name;  // of the API function, for messages
  Op op;
  const void* sendbuf;
  const int* sendcounts;
  const int* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* rdispls;
  MPI_Datatype recvtype;
  int sendcount = 0, recvcount = 0;  // alltoall
};

int check_side(const DenseArgs& a, bool send, int size, BufferSide* side) {
  const char* counts_name = send ? (a.op == kAlltoall ? "sendcount" : "sendcounts") : (a.op == kAlltoall ? "recvcount" : "recvcounts");
  const char* displs_name = send ? "sdispls" : "rdispls";
  const void* buf = send ? a.sendbuf : a.recvbuf;
  MPIX_TRY(describe_type(send ? a.sendtype : a.recvtype, send ? "sendtype" : "recvtype", &side->layout));
  side->counts.resize(size);
  side->displs.resize(size);
  if (a.op == kAlltoall) {
    int count = send ? a.sendcount : a.recvcount;
    if (count < 0) return fail(MPIX_ERR_ARG, format("%s: %s=%d: must be >= 0", a.name, counts_name, count));
    for (int i = 0; i < size; ++i) {
      side->counts[i] = count;
      side->displs[i] = 0;
    }
    // Block i starts i*count elements in; displacements are kept in elements as
    // ints, so a buffer beyond INT_MAX elements is refused rather than wrapped.
    if ((long long)count * size > INT_MAX)
      return fail(MPIX_ERR_UNSUPPORTED, format("%s: %s=%d times %d ranks exceeds INT_MAX elements",
                                               a.name, counts_name, count, size));
    for (int i = 0; i < size; ++i) side->displs[i] = i * count;
  } else {
    const int* counts = send ? a.sendcounts : a.recvcounts;
    const int* displs = send ? a.sdispls : a.rdispls;
    if (!counts) return fail(MPIX_ERR_ARG, format("%s: %s is NULL", a.name, counts_name));
    if (!displs) return fail(MPIX_ERR_ARG, format("%s: %s is NULL", a.name, displs_name));
    for (int i = 0; i < size; ++i) {
      if (counts[i] < 0)
        return fail(MPIX_ERR_ARG, format("%s: %s[%d]=%d: must be >= 0", a.name, counts_name, i, counts[i]));
      side->counts[i] = counts[i];
      side->displs[i] = displs[i];
    }
  }
  long long bytes = 0;
  for (int i = 0; i < size; ++i) bytes += side->block_bytes(i);
  if (!buf && bytes > 0)
    return fail(MPIX_ERR_ARG, format("%s: %s is NULL but %lld bytes are to be %s", a.name,
                                     send ? "sendbuf" : "recvbuf", bytes, send ? "sent" : "received"));
  side->buf = (char*)buf;
  return MPIX_SUCCESS;
}

// Hints of one call, resolved on this rank.
struct Hints {
  const Algorithm* asked = nullptr;  // nullptr: auto
  Params params;
  std::string params_text;           // every parameter the call may use, for the agreement
  bool check_args = false;
  const TuningTable* tuning = nullptr;  // auto with a tuning file
};

// FNV-1a: the same 62-bit value for the same text on every rank.
long long text_hash(const std::string& text) {
  unsigned long long hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return (long long)(hash >> 2);
}

// Local checks; fills the exchange and the hints. Everything that can fail on one
// rank alone is checked here, before the agreement.
int check_local(const DenseArgs& a, const MPIX_Info* info, MPIX_Comm_s* comm, Exchange* ex, Hints* hints) {
  ex->size = comm->size;
  ex->rank = comm->rank;
  ex->uniform = a.op == kAlltoall;
  if (a.recvbuf == MPI_IN_PLACE) return fail(MPIX_ERR_ARG, format("%s: recvbuf is MPI_IN_PLACE", a.name));
  MPIX_TRY(check_side(a, false, comm->size, &ex->recv));
  if (a.sendbuf == MPI_IN_PLACE) {
    ex->send = ex->recv;  // pointed at the copy once the plan is made
  } else {
    MPIX_TRY(check_side(a, true, comm->size, &ex->send));
  }
  for (int i = 0; i < comm->size; ++i)
    ex->max_block_bytes = std::max({ex->max_block_bytes, ex->send.block_bytes(i), ex->recv.block_bytes(i)});
  if (ex->send.block_bytes(comm->rank) != ex->recv.block_bytes(comm->rank))
    return fail(MPIX_ERR_ARG, format("%s: own block: sending %lld bytes to self but receiving %lld",
                                     a.name, ex->send.block_bytes(comm->rank), ex->recv.block_bytes(comm->rank)));

  const char* key = a.op == kAlltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm";
  std::string value = "auto", source;
  if (lookup(info, key, &value, &source)) MPIX_TRY(check_value(*find_key(key), value, source));
  hints->asked = value == "auto" ? nullptr : find_algorithm(value, a.op);
  // Auto may choose any of its candidates: their parameters are all resolved now.
  std::vector<const Algorithm*> possible = {hints->asked};
  if (!hints->asked) possible = auto_candidates(a.op);
  for (const Algorithm* algorithm : possible) {
    MPIX_TRY(resolve_params(info, algorithm->params, comm->size, &hints->params));
    hints->params_text += describe_params(algorithm->params, hints->params) + ";";
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
    for (const TuningRule& rule : hints->tuning->rules) {
      if (rule.op != a.op) continue;
      MPIX_Info_s merged = with_rule_hints(info, rule);
      Params params;
      MPIX_TRY(resolve_params(&merged, rule.algorithm->params, comm->size, &params));
    }
  }
  if (lookup(info, "mpix_check_args", &value, &source)) {
    MPIX_TRY(check_value(*find_key("mpix_check_args"), value, source));
    hints->check_args = value == "true";
  }
  return MPIX_SUCCESS;
}

// mpix_check_args=true: every rank learns how many bytes each peer sends it and
// compares them with what it expects to receive.
int check_counts_agree(const DenseArgs& a, const Exchange& ex, MPI_Comm comm, int* mismatch_peer) {
  std::vector<long long> sent(ex.size), arriving(ex.size);
  for (int i = 0; i < ex.size; ++i) sent[i] = ex.send.block_bytes(i);
  MPIX_CHECK_MPI(MPI_Alltoall(sent.data(), 1, MPI_LONG_LONG, arriving.data(), 1, MPI_LONG_LONG, comm));
  *mismatch_peer = -1;
  for (int i = 0; i < ex.size && *mismatch_peer < 0; ++i)
    if (arriving[i] != ex.recv.block_bytes(i)) *mismatch_peer = i;
  int local = *mismatch_peer >= 0, any = 0;
  MPIX_CHECK_MPI(MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm));
  if (local)
    return fail(MPIX_ERR_ARG, format("%s: rank %d sends %lld bytes to rank %d, which expects %lld",
                                     a.name, *mismatch_peer, arriving[*mismatch_peer], ex.rank,
                                     ex.recv.block_bytes(*mismatch_peer)));
  if (any) return fail(MPIX_ERR_ARG, format("%s: counts disagree between other ranks (mpix_check_args)", a.name));
  return MPIX_SUCCESS;
}

void report(MPIX_Comm_s* comm, Op op, const std::string& algorithm, const std::string& params,
            const std::string& reason) {
  const char* verbose = std::getenv("MPIX_VERBOSE");
  if (comm->rank != 0 || !verbose || std::strcmp(verbose, "1") != 0) return;
  if (!comm->verbose_reported.insert(op_name(op)).second) return;
  std::fprintf(stderr, "[mpix] %s on %d ranks (%d nodes): %s%s%s (%s)\n", op_name(op), comm->size,
               comm->locality.num_nodes(), algorithm.c_str(), params.empty() ? "" : " ", params.c_str(),
               reason.c_str());
}

int plan_dense(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm,
               std::unique_ptr<MPIX_Request_s>* out) {
  if (!comm) return fail(MPIX_ERR_ARG, format("%s: comm is NULL", a.name));
  PlanContext context;
  context.comm = comm;
  context.mpi_comm = comm->lib_comm;
  context.info = info;
  Hints hints;
  int local_rc = check_local(a, info, comm, &context.exchange, &hints);
  std::string local_message = MPIX_Last_error_message();

  // One agreement for the whole call: whether any rank failed its checks (so that
  // no rank is left waiting in an exchange the others refused), whether all ranks
  // asked for the same algorithm with the same parameters (schedules derive from
  // them), and the largest block anywhere. Pairs (x, -x) under MPI_MAX give the
  // maximum and the minimum at once.
  long long index = hints.asked ? (long long)(hints.asked - algorithms().data()) : -1;
  long long hash = text_hash(hints.params_text) ^ (hints.check_args ? 1 : 0);
  long long mine[6] = {local_rc != MPIX_SUCCESS, context.exchange.max_block_bytes, index, -index, hash, -hash};
  long long all[6];
  MPIX_CHECK_MPI(MPI_Allreduce(mine, all, 6, MPI_LONG_LONG, MPI_MAX, comm->lib_comm));
  if (local_rc != MPIX_SUCCESS) return fail(local_rc, local_message);
  if (all[0]) return fail(MPIX_ERR_ARG, format("%s: another rank rejected its arguments", a.name));
  if (all[2] != -all[3])
    return fail(MPIX_ERR_ARG, format("%s: ranks asked for different algorithms (info or environment differ)", a.name));
  if (all[4] != -all[5])
    return fail(MPIX_ERR_ARG, format("%s: ranks gave different algorithm parameters or mpix_check_args "
                                     "(info or environment differ)", a.name));
  context.exchange.max_block_bytes = all[1];
  context.params = hints.params;

  int peer = -1;
  if (hints.check_args) MPIX_TRY(check_counts_agree(a, context.exchange, comm->lib_comm, &peer));

  std::string reason = "asked for";
  const Algorithm* algorithm = hints.asked;
  const TuningRule* rule = hints.tuning ? hints.tuning->match(a.op, comm->size, context.exchange.max_block_bytes) : nullptr;
  if (rule) {
    algorithm = rule->algorithm;
    reason = format("tuning file %s:%d", hints.tuning->path.c_str(), rule->line);
    MPIX_Info_s merged = with_rule_hints(info, *rule);
    MPIX_TRY(resolve_params(&merged, algorithm->params, comm->size, &context.params));
  } else if (!algorithm) {
    algorithm = select_dense(a.op, context, &reason);
  }
  std::string why = inapplicable_reason(*algorithm, context);
  if (!why.empty())
    return fail(MPIX_ERR_UNSUPPORTED, format("%s: algorithm %s: %s", a.name, algorithm->name, why.c_str()));

  auto request = std::make_unique<MPIX_Request_s>(comm);
  request->algorithm = algorithm->name;
  request->params = describe_params(algorithm->params, context.params);
  MPIX_TRY(prepare_device_buffers(info, algorithm->name, a.sendbuf == MPI_IN_PLACE, &context.exchange,
                                  &request->device_staging));
  if (a.sendbuf == MPI_IN_PLACE) {
    // Copy the byte span of the receive blocks; the copy keeps their layout, so the
    // send side is the receive side moved onto the copy.
    MPI_Aint lo = 0, hi = 0;
    bool any = false;
    for (int i = 0; i < comm->size; ++i) {
      if (context.exchange.recv.block_bytes(i) == 0) continue;
      MPI_Aint start = (MPI_Aint)context.exchange.recv.displs[i] * context.exchange.recv.layout.extent;
      MPI_Aint block_lo = start + context.exchange.recv.layout.span_lo(context.exchange.recv.counts[i]);
      MPI_Aint block_hi = start + context.exchange.recv.layout.span_hi(context.exchange.recv.counts[i]);
      lo = any ? std::min(lo, block_lo) : block_lo;
      hi = any ? std::max(hi, block_hi) : block_hi;
      any = true;
    }
    // The copy's offset 0 stands for the receive buffer's offset min(lo, 0), so
    // that every block address stays inside the copy.
    MPI_Aint origin = std::min<MPI_Aint>(lo, 0);
    request->in_place_copy = comm->scratch.acquire(any ? (std::size_t)(hi - origin) : 0);
    request->in_place_source = context.exchange.recv.buf + lo;
    context.exchange.send.buf = request->in_place_copy.data() - origin;
    request->in_place_copy_offset = lo - origin;
    request->in_place_bytes = any ? hi - lo : 0;
  }
  context.tag = comm->next_plan_tag();
  MPIX_TRY(algorithm->create(context, &request->plan));
  request->plan->init_stats.scratch_bytes += request->in_place_copy.size();
  report(comm, a.op, algorithm->name, request->params, reason);
  *out = std::move(request);
  return MPIX_SUCCESS;
}

int start(MPIX_Request_s* request) {
  if (request->device_staging) MPIX_TRY(request->device_staging->copy_in());
  if (request->in_place_bytes > 0) {
    charge_copy(request->in_place_bytes);
    std::memcpy(request->in_place_copy.data() + request->in_place_copy_offset,
                request->in_place_source, request->in_place_bytes);
  }
  request->active = true;
  int rc = request->plan->start();
  if (rc != MPIX_SUCCESS) request->active = false;
  return rc;
}

int wait(MPIX_Request_s* request) {
  request->active = false;
  MPIX_TRY(request->plan->wait());
  return request->device_staging ? request->device_staging->copy_out() : MPIX_SUCCESS;
}

int blocking(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm) {
  std::unique_ptr<MPIX_Request_s> request;
  MPIX_TRY(plan_dense(a, info, comm, &request));
  MPIX_TRY(start(request.get()));
  return wait(request.get());
}

int persistent(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm, MPIX_Request_s** out) {
  if (!out) return fail(MPIX_ERR_ARG, format("%s: request is NULL", a.name));
  *out = nullptr;
  std::unique_ptr<MPIX_Request_s> request;
  MPIX_TRY(plan_dense(a, info, comm, &request));
  *out = request.release();
  return MPIX_SUCCESS;
}

}  // namespace
}  // namespace mpix

using namespace mpix;

static DenseArgs alltoall_args(const char* name, const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype) {
  DenseArgs a{name, kAlltoall, sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype};
  a.sendcount = sendcount;
  a.recvcount = recvcount;
  return a;
}

extern "C" int MPIX_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype,
                             MPIX_Info* info, MPIX_Comm* comm) {
  DenseArgs a = alltoall_args("MPIX_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return guarded(a.name, [&] { return blocking(a, info, comm); });
}

extern "C" int MPIX_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPIX_Info* info,
                              MPIX_Comm* comm) {
  DenseArgs a{"MPIX_Alltoallv", kAlltoallv, sendbuf, sendcounts, sdispls, sendtype,
              recvbuf, recvcounts, rdispls, recvtype};
  return guarded(a.name, [&] { return blocking(a, info, comm); });
}

extern "C" int MPIX_Alltoall_plan(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPIX_Info* info, MPIX_Comm* comm, MPIX_Request** request) {
  DenseArgs a = alltoall_args("MPIX_Alltoall_plan", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return guarded(a.name, [&] { return persistent(a, info, comm, request); });
}

extern "C" int MPIX_Alltoallv_plan(const void* sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPIX_Info* info, MPIX_Comm* comm,
                                   MPIX_Request** request) {
  DenseArgs a{"MPIX_Alltoallv_plan", kAlltoallv, sendbuf, sendcounts, sdispls, sendtype,
              recvbuf, recvcounts, rdispls, recvtype};
  return guarded(a.name, [&] { return persistent(a, info, comm, request); });
}

extern "C" int MPIX_Start(MPIX_Request* request) {
  if (!request) return fail(MPIX_ERR_ARG, "MPIX_Start: request is NULL");
  if (request->active) return fail(MPIX_ERR_ARG, "MPIX_Start: request is already active");
  return guarded("MPIX_Start", [&] { return start(request); });
}

extern "C" int MPIX_Wait(MPIX_Request* request, MPI_Status* status) {
  if (!request) return fail(MPIX_ERR_ARG, "MPIX_Wait: request is NULL");
  int rc = MPIX_SUCCESS;
  if (request->active) rc = guarded("MPIX_Wait", [&] { return wait(request); });
  if (status != MPI_STATUS_IGNORE) {
    // An empty status, as MPI gives for a completed collective.
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
  }
  return rc;
}

extern "C" int MPIX_Request_free(MPIX_Request** request) {
  if (!request || !*request) return fail(MPIX_ERR_ARG, "MPIX_Request_free: request is NULL");
  if ((*request)->active) return fail(MPIX_ERR_ARG, "MPIX_Request_free: request is active; MPIX_Wait first");
  delete *request;
  *request = nullptr;
  return MPIX_SUCCESS;
}
