// Progress of started persistent requests in any order of completion.
//
// MPI lets each rank complete its started collectives in its own order: a rank may
// wait for request B while its peers wait for A, each started before B everywhere
// (MPI-4.0's persistent collectives: only the order of starts is prescribed). mpix's plans
// move to their next rounds only inside MPIX_Wait and MPIX_Test, so each of these
// also moves every other started request of the process on, by one test each; a
// request that completes there keeps its result for its own MPIX_Wait or
// MPIX_Test. Where the waited request is the only one started, MPIX_Wait blocks
// in it alone, as before (no polling where nothing else needs it).
//
// Under MPI_THREAD_MULTIPLE a request is progressed by one thread at a time (its
// `progress_mutex`); a request another thread is progressing is skipped.
#pragma once
#include <mpi.h>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

struct MPIX_Request_s;

namespace mpix {

// A request's and the registry's lock. The simulated build runs every rank in the
// one OS thread of SimGrid, switching ranks inside MPI calls: a lock held across
// one would be taken again by the same thread. Its ranks have no threads of their
// own, so there it locks nothing.
#ifdef MPIX_SIMULATED
struct ProgressMutex {
  void lock() {}
  void unlock() {}
  bool try_lock() { return true; }
};
#else
using ProgressMutex = std::mutex;
#endif

// The outcome of a request that completed inside another request's wait or test.
struct FinishedApart {
  bool finished = false;
  int code = 0;
  std::string message;
};

// After a successful start; until completed() the request is progressed from the
// waits and tests of the process's other requests.
void progress_started(MPIX_Request_s* request);
void progress_completed(MPIX_Request_s* request);

// Waits for `request` (started, its own wait): blocking where it is the only
// started request, else testing it and the others in turn. Its code and message,
// as its plan's wait gives them.
int progress_wait(MPIX_Request_s* request);
// Tests `request` once and every other started request once; *done when it has
// completed (now or inside another request's wait or test).
int progress_test(MPIX_Request_s* request, bool* done);

// The library's own waits inside an API call: an agreement's messages and
// allreduce, a plan's metadata. MPI lets a peer complete a started request before
// it makes this call (rank 0 waits for A, then calls X; the others call X, then
// wait for A): while this rank waits here, the process's started requests move on
// too, one test each in turn, or that peer would wait for this rank's part of A
// for ever. Where none is started, the blocking MPI call itself, as before.
//
// As wait_all (completion.hpp).
int wait_all_progressing(int count, MPI_Request* requests, MPI_Comm comm, MPI_Status* statuses = nullptr);
// A blocking point-to-point call of the library's (`blocking`, an MPI_Sendrecv),
// or, where some request is started, its nonblocking form (`start`, which appends
// its requests) and wait_all_progressing. `what` names the call in an error. Both
// return MPI codes.
int call_progressing(MPI_Comm comm, const char* what, const std::function<int()>& blocking,
                     const std::function<int(std::vector<MPI_Request>*)>& start);
// The same for a collective (`start` makes its one request). Its two forms do not
// match each other (MPI-4.0 section 6.12), so its ranks, which cannot know whether
// the others have requests started, all take the nonblocking form; but the
// simulated build, whose figures time the blocking one and whose benchmark starts
// no request across such calls.
int collective_progressing(MPI_Comm comm, const char* what, const std::function<int()>& blocking,
                           const std::function<int(MPI_Request*)>& start);
// Whether some request is started, and one test of each (the library's own
// polling loops: SDDE's probes).
bool any_started();
void progress_all_started();
// MPI_Sendrecv of long longs (`out` to rank `to`, `in` from rank `from`) through
// call_progressing; an MPI code.
int sendrecv_progressing(const long long* out, int out_count, int to, long long* in, int in_count, int from,
                         int tag, MPI_Comm comm);
// MPI_Allreduce through collective_progressing; an MPIX code.
int allreduce_progressing(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
// MPI_Alltoall of one long long per rank (`sent[i]` to rank i, `arriving[i]`
// from it) the same way; an MPIX code.
int alltoall_progressing(const long long* sent, long long* arriving, MPI_Comm comm);
// MPI_Barrier the same way: before a blocking collective that synchronises
// (MPI_Win_free), so that every rank is inside the call first.
int barrier_progressing(MPI_Comm comm);

}  // namespace mpix
