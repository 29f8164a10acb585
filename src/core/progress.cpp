#include "progress.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "completion.hpp"
#include "error.hpp"
#include "request.hpp"

#ifdef MPIX_SIMULATED
#include <simgrid/actor.h>

#include <map>
#endif

namespace mpix {

namespace {

// The started requests of this process; of this simulated rank in the simulated
// build, where SMPI runs every rank in one OS thread (as error.cpp's messages).
#ifdef MPIX_SIMULATED
std::vector<MPIX_Request_s*>& started() {
  static std::map<aid_t, std::vector<MPIX_Request_s*>> by_rank;
  return by_rank[sg_actor_self_get_pid()];
}
#else
std::vector<MPIX_Request_s*>& started() {
  static std::vector<MPIX_Request_s*> list;
  return list;
}
#endif
ProgressMutex registry_mutex;

bool others_started(const MPIX_Request_s* own) {
  std::lock_guard<ProgressMutex> registry(registry_mutex);
  const std::vector<MPIX_Request_s*>& list = started();
  return std::any_of(list.begin(), list.end(), [own](const MPIX_Request_s* r) { return r != own; });
}

// One test of every started request but `own`, the registry locked throughout so
// that no request leaves it (and is freed) meanwhile.
void progress_others(const MPIX_Request_s* own) {
  std::lock_guard<ProgressMutex> registry(registry_mutex);
  std::vector<MPIX_Request_s*>& list = started();
  for (std::size_t i = 0; i < list.size();) {
    MPIX_Request_s* other = list[i];
    if (other == own || !other->progress_mutex.try_lock()) {
      ++i;
      continue;
    }
    bool done = false;
    std::string message;
    const int code = run_apart([&] { return other->plan->test(&done); }, &message);
    if (done || code != MPIX_SUCCESS) {
      other->apart = FinishedApart{true, code, message};
      list.erase(list.begin() + (std::ptrdiff_t)i);
    } else {
      ++i;
    }
    other->progress_mutex.unlock();
  }
}

// The result of a request that completed inside another's wait or test.
int apart_result(const FinishedApart& apart) {
  return apart.code == MPIX_SUCCESS ? MPIX_SUCCESS : fail(apart.code, apart.message);
}

}  // namespace

void progress_started(MPIX_Request_s* request) {
  std::lock_guard<ProgressMutex> registry(registry_mutex);
  started().push_back(request);
}

void progress_completed(MPIX_Request_s* request) {
  std::lock_guard<ProgressMutex> registry(registry_mutex);
  std::vector<MPIX_Request_s*>& list = started();
  list.erase(std::remove(list.begin(), list.end(), request), list.end());
  request->apart = FinishedApart{};
}

int progress_wait(MPIX_Request_s* request) {
  std::unique_lock<ProgressMutex> own(request->progress_mutex);
  int code = MPIX_SUCCESS;
  if (!request->apart.finished) {
    if (!others_started(request)) {
      code = request->plan->wait();
    } else {
      for (bool done = false; !request->apart.finished;) {
        code = request->plan->test(&done);
        if (done || code != MPIX_SUCCESS) break;
        own.unlock();
        progress_others(request);
        own.lock();
      }
    }
  }
  const FinishedApart apart = request->apart;
  // Off the registry before the request is unlocked: another thread's test of an
  // exchange that is over would run its last steps again (ipc_hybrid's copies and
  // its done messages, which the next start's peers would take for theirs).
  progress_completed(request);
  return apart.finished ? apart_result(apart) : code;
}

int progress_test(MPIX_Request_s* request, bool* done) {
  *done = false;
  std::unique_lock<ProgressMutex> own(request->progress_mutex);
  int code = request->apart.finished ? MPIX_SUCCESS : request->plan->test(done);
  if (request->apart.finished) {
    *done = true;
    code = apart_result(request->apart);
  }
  if (*done || code != MPIX_SUCCESS) {
    progress_completed(request);  // before the unlock, as in progress_wait
    return code;
  }
  own.unlock();
  progress_others(request);
  return code;
}

int wait_all_progressing(int count, MPI_Request* requests, MPI_Comm comm, MPI_Status* statuses) {
  if (!others_started(nullptr)) return wait_all(count, requests, comm, statuses);
  for (;;) {
    int flag = 0;
    MPIX_TRY(test_all(count, requests, &flag, comm, statuses));
    if (flag) return MPIX_SUCCESS;
    progress_others(nullptr);
  }
}

namespace {

// `blocking`, or `start` and wait_all_progressing; MPIX codes.
int blocking_or_started(bool nonblocking, MPI_Comm comm, const char* what, const std::function<int()>& blocking,
                        const std::function<int(std::vector<MPI_Request>*)>& start) {
  if (!nonblocking) {
    const int rc = blocking();
    return rc == MPI_SUCCESS ? MPIX_SUCCESS : fail_mpi(rc, what);
  }
  std::vector<MPI_Request> requests;
  const int rc = start(&requests);
  if (rc != MPI_SUCCESS) return fail_mpi(rc, what);
  return wait_all_progressing((int)requests.size(), requests.data(), comm);
}

}  // namespace

int call_progressing(MPI_Comm comm, const char* what, const std::function<int()>& blocking,
                     const std::function<int(std::vector<MPI_Request>*)>& start) {
  return blocking_or_started(others_started(nullptr), comm, what, blocking, start);
}

int collective_progressing(MPI_Comm comm, const char* what, const std::function<int()>& blocking,
                           const std::function<int(MPI_Request*)>& start) {
#ifdef MPIX_SIMULATED
  const bool nonblocking = false;
#else
  const bool nonblocking = true;
#endif
  return blocking_or_started(nonblocking, comm, what, blocking, [&](std::vector<MPI_Request>* requests) {
    requests->emplace_back();
    return start(&requests->back());
  });
}

int sendrecv_progressing(const long long* out, int out_count, int to, long long* in, int in_count, int from,
                         int tag, MPI_Comm comm) {
  return call_progressing(
      comm, "MPI_Sendrecv",
      [&] {
        return MPI_Sendrecv(out, out_count, MPI_LONG_LONG, to, tag, in, in_count, MPI_LONG_LONG, from, tag, comm,
                            MPI_STATUS_IGNORE);
      },
      [&](std::vector<MPI_Request>* requests) {
        requests->resize(2);
        const int rc = MPI_Irecv(in, in_count, MPI_LONG_LONG, from, tag, comm, &(*requests)[0]);
        return rc != MPI_SUCCESS ? rc : MPI_Isend(out, out_count, MPI_LONG_LONG, to, tag, comm, &(*requests)[1]);
      });
}

int allreduce_progressing(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return collective_progressing(
      comm, "MPI_Allreduce", [&] { return MPI_Allreduce(in, out, count, type, op, comm); },
      [&](MPI_Request* request) { return MPI_Iallreduce(in, out, count, type, op, comm, request); });
}

int alltoall_progressing(const long long* sent, long long* arriving, MPI_Comm comm) {
  return collective_progressing(
      comm, "MPI_Alltoall", [&] { return MPI_Alltoall(sent, 1, MPI_LONG_LONG, arriving, 1, MPI_LONG_LONG, comm); },
      [&](MPI_Request* request) {
        return MPI_Ialltoall(sent, 1, MPI_LONG_LONG, arriving, 1, MPI_LONG_LONG, comm, request);
      });
}

int barrier_progressing(MPI_Comm comm) {
  return collective_progressing(
      comm, "MPI_Barrier", [&] { return MPI_Barrier(comm); },
      [&](MPI_Request* request) { return MPI_Ibarrier(comm, request); });
}

bool any_started() { return others_started(nullptr); }

void progress_all_started() { progress_others(nullptr); }

}  // namespace mpix
