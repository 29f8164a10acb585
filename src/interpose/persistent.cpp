// MPI-4's persistent MPI_Alltoall_init / MPI_Alltoallv_init (MPICH 4) as mpix
// plans. The program's MPI_Request is a placeholder that MPI made (an inactive
// MPI_Send_init to MPI_PROC_NULL: a valid handle that MPI itself accepts and
// ignores); the request functions below recognise it and drive the mpix request,
// and hand every other request to PMPI_ untouched. A wait over several requests
// polls: MPIX_Test on the mpix ones, PMPI_Test* on the rest, so that neither kind
// waits for the other to complete first.
//
// Open MPI 4.1 has no MPI_Alltoall(v)_init; its MPIX_Alltoall(v)_init of
// <mpi-ext.h> are left to it, because its Fortran bindings call the PMPI_ request
// functions directly: a Fortran MPI_WAIT on an mpix request could not be caught.
// MPICH's `use mpi_f08` bindings do the same (they create the request through
// MPI_Alltoall(v)_init, then start, wait and free it through PMPI_), so a request
// made by MPICH's Fortran library is left to MPI as well: the caller's return
// address lies in that library.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "interpose.hpp"

namespace mpix_interpose {

#if MPI_VERSION >= 4

namespace {

struct Persistent {
  MPIX_Request* request = nullptr;
  bool active = false;
  // MPI_Request_get_status saw it complete: it stays active (MPI_Start refuses it)
  // until a test or wait completes it for the program.
  bool complete = false;
  MPI_Comm comm = MPI_COMM_NULL;                 // the program's, until it frees it
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;  // comm's when it was freed
};

std::mutex persistent_mutex;
std::unordered_map<MPI_Request, Persistent> persistent_requests;  // by placeholder
std::atomic<int> persistent_count{0};
std::vector<MPIX_Comm*> released_comms;  // MPI freed their communicator; requests remain
// Placeholders of freed requests, kept for the next one until MPI_Finalize rather than
// given back to MPI: MPICH 4.0.2 reuses a freed MPI_Send_init handle for a persistent
// collective made later and never completes that collective (a program that frees
// an MPI_Send_init request and then waits on an MPI_Alltoallv_init on another
// communicator hangs, without mpix too), which is what a collective mpix leaves to
// MPI beside one of its own would meet.
std::vector<MPI_Request> spare_placeholders;
std::atomic<int> spare_count{0};

// The mpix request behind `request`, or nullptr (elements of an unordered_map keep
// their address).
Persistent* find(MPI_Request request) {
  if (persistent_count.load() == 0 || request == MPI_REQUEST_NULL) return nullptr;
  std::lock_guard<std::mutex> lock(persistent_mutex);
  auto it = persistent_requests.find(request);
  return it == persistent_requests.end() ? nullptr : &it->second;
}

bool any_persistent(int count, const MPI_Request requests[]) {
  if (persistent_count.load() == 0) return false;
  for (int i = 0; i < count; ++i)
    if (find(requests[i])) return true;
  return false;
}

// A failure of `p`'s request, raised on the communicator it was made on, whose
// handler the program chose for its operations there (MPICH 4.0.2 itself raises
// MPI_Start's errors on MPI_COMM_WORLD), with mpix's last message.
int fail_request(const Persistent& p, const char* function, int error_class,
                 const std::string& message = MPIX_Last_error_message()) {
  if (p.comm != MPI_COMM_NULL) return raise_error(p.comm, function, error_class, message);
  // The program freed the communicator, which MPI allows while the request lives,
  // and MPI would still call its handler: only a communicator of ours can carry
  // that handler now.
  MPI_Comm self = MPI_COMM_NULL;
  if (PMPI_Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS) return error_class;
  PMPI_Comm_set_errhandler(self, p.handler);
  raise_error(self, function, error_class, message);
  PMPI_Comm_free(&self);
  return error_class;
}

void drop_handler(Persistent& p) {
  if (p.handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&p.handler);
}

// A copy of a handle the program freed: MPI_Start on it is MPI_ERR_REQUEST to MPI,
// but the placeholder is still a valid MPI request (see spare_placeholders).
bool freed_placeholder(MPI_Request request) {
  if (spare_count.load() == 0 || request == MPI_REQUEST_NULL) return false;
  std::lock_guard<std::mutex> lock(persistent_mutex);
  return std::find(spare_placeholders.begin(), spare_placeholders.end(), request) != spare_placeholders.end();
}

MPI_Status* status_at(MPI_Status statuses[], int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// The status of a request with nothing to complete: empty (a wait on an inactive
// mpix request returns at once).
void empty_status(const Persistent& p, MPI_Status* status) { MPIX_Wait(p.request, status); }

// Whether the mpix request of active `p` completed, without completing `p`
// (MPI_Request_get_status).
int poll(Persistent* p, const char* function, MPI_Status* status) {
  if (p->complete) {
    empty_status(*p, status);
    return MPI_SUCCESS;
  }
  int flag = 0, rc = MPIX_Test(p->request, &flag, status);
  p->complete = flag;
  return rc == MPIX_SUCCESS ? MPI_SUCCESS : fail_request(*p, function, mpi_class(rc));
}

// A test of active `p`; *flag when it completed now, and then `p` is inactive.
int test_one(Persistent* p, const char* function, int* flag, MPI_Status* status) {
  *flag = 0;
  if (!p->active) return MPI_SUCCESS;
  const int rc = poll(p, function, status);
  *flag = p->complete;
  if (*flag) p->active = p->complete = false;
  return rc;
}

int make_persistent(MPIX_Request* mpix_request, MPI_Comm comm, MPI_Request* request) {
  std::lock_guard<std::mutex> lock(persistent_mutex);
  if (!spare_placeholders.empty()) {
    *request = spare_placeholders.back();
    spare_placeholders.pop_back();
    --spare_count;
  } else {
    int rc = PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
    if (rc != MPI_SUCCESS) {
      MPIX_Request_free(&mpix_request);
      return rc;
    }
  }
  persistent_requests[*request] = Persistent{mpix_request, false, false, comm, MPI_ERRHANDLER_NULL};
  ++persistent_count;
  return MPI_SUCCESS;
}

void free_released_comms() {
  std::vector<MPIX_Comm*> still_used;
  for (MPIX_Comm* comm : released_comms)
    if (MPIX_Comm_free(&comm) != MPIX_SUCCESS) still_used.push_back(comm);
  released_comms.swap(still_used);
}

// The others of a multiple completion: a copy of `requests` with the mpix ones
// replaced by MPI_REQUEST_NULL, which MPI skips.
struct Split {
  std::vector<MPI_Request> others;
  std::vector<Persistent*> mine;
  std::vector<MPI_Status> statuses;
  Split(int count, const MPI_Request requests[]) : others(requests, requests + count), mine(count), statuses(count) {
    for (int i = 0; i < count; ++i)
      if ((mine[i] = find(requests[i]))) others[i] = MPI_REQUEST_NULL;
  }
  void copy_back(MPI_Request requests[]) const {
    for (std::size_t i = 0; i < others.size(); ++i)
      if (!mine[i]) requests[i] = others[i];
  }
};

// One pass of MPI_Testsome over both kinds: completed indices and statuses appended.
int testsome_pass(Split& split, int* outcount, int indices[], MPI_Status statuses[], bool* any_active) {
  int count = (int)split.others.size(), rc = MPI_SUCCESS, found = 0;
  *any_active = false;
  for (int i = 0; i < count; ++i) {
    if (!split.mine[i] || !split.mine[i]->active) continue;
    *any_active = true;
    int flag = 0;
    int one_rc = test_one(split.mine[i], "MPI_Testsome", &flag, status_at(statuses, found));
    if (one_rc != MPI_SUCCESS) rc = one_rc;
    if (flag) indices[found++] = i;
  }
  int other_count = 0;
  std::vector<int> other_indices(count);
  int one_rc = PMPI_Testsome(count, split.others.data(), &other_count, other_indices.data(), split.statuses.data());
  if (one_rc != MPI_SUCCESS) rc = one_rc;
  if (other_count != MPI_UNDEFINED) {
    *any_active = true;
    for (int k = 0; k < other_count; ++k) {
      if (statuses != MPI_STATUSES_IGNORE) statuses[found] = split.statuses[k];
      indices[found++] = other_indices[k];
    }
  }
  *outcount = found;
  return rc;
}

}  // namespace

void release_comm(MPI_Comm comm, MPIX_Comm* mpix_comm) {
  if (persistent_count.load() != 0) {
    std::lock_guard<std::mutex> lock(persistent_mutex);
    for (auto& entry : persistent_requests) {
      Persistent& p = entry.second;
      if (p.comm != comm) continue;
      PMPI_Comm_get_errhandler(comm, &p.handler);
      p.comm = MPI_COMM_NULL;  // MPI may give the handle to a communicator made later
    }
  }
  if (MPIX_Comm_free(&mpix_comm) == MPIX_SUCCESS) return;
  std::lock_guard<std::mutex> lock(persistent_mutex);
  released_comms.push_back(mpix_comm);  // freed with its last request
}

void free_all_persistent() {
  std::lock_guard<std::mutex> lock(persistent_mutex);
  for (auto& entry : persistent_requests) {
    MPIX_Wait(entry.second.request, MPI_STATUS_IGNORE);
    MPIX_Request_free(&entry.second.request);
    drop_handler(entry.second);
    MPI_Request placeholder = entry.first;
    PMPI_Request_free(&placeholder);
  }
  persistent_requests.clear();
  persistent_count = 0;
  for (MPI_Request& placeholder : spare_placeholders) PMPI_Request_free(&placeholder);
  spare_placeholders.clear();
  spare_count = 0;
  free_released_comms();
}

#else

void release_comm(MPI_Comm, MPIX_Comm* mpix_comm) { MPIX_Comm_free(&mpix_comm); }

void free_all_persistent() {}

#endif

}  // namespace mpix_interpose

#if MPI_VERSION >= 4

using namespace mpix_interpose;

namespace {

// Whether the code at `return_address` (the caller of MPI_Alltoall(v)_init) is
// MPICH's Fortran library (libmpichfort: mpif.h, `use mpi`, `use mpi_f08`).
bool called_by_fortran(const void* return_address, MPI_Comm comm, const char* function) {
  if (!enabled()) return false;  // MPIX_INTERPOSE=0: mpix_comm_of leaves it to MPI, without a word
  Dl_info caller;
  if (!dladdr(return_address, &caller) || !caller.dli_fname || !std::strstr(caller.dli_fname, "libmpichfort"))
    return false;
  report_fallback(comm, function, "called by MPICH's Fortran library (mpif.h, use mpi or use mpi_f08: one library, "
                                  "so not told apart), whose mpi_f08 module starts, waits on and frees persistent "
                                  "requests through PMPI_, past the interposer");
  return true;
}

}  // namespace

extern "C" {

int MPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MPIX_Comm* mpix_comm = called_by_fortran(__builtin_return_address(0), comm, "MPI_Alltoall_init")
                             ? nullptr
                             : mpix_comm_of(comm, "MPI_Alltoall_init");
  if (mpix_comm) {
    MPIX_Request* mpix_request = nullptr;
    const int rc = MPIX_Alltoall_plan(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, nullptr, mpix_comm,
                                      &mpix_request);
    if (rc == MPIX_SUCCESS) {
      report_routed(comm, "MPI_Alltoall_init", "an mpix persistent request");
      return make_persistent(mpix_request, comm, request);
    }
    int error_class = MPI_SUCCESS;
    if (!leave_to_mpi(comm, "MPI_Alltoall_init", rc, &error_class)) {
      if (request) *request = MPI_REQUEST_NULL;
      return error_class;
    }
  }
  return PMPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

int MPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MPIX_Comm* mpix_comm = called_by_fortran(__builtin_return_address(0), comm, "MPI_Alltoallv_init")
                             ? nullptr
                             : mpix_comm_of(comm, "MPI_Alltoallv_init");
  if (mpix_comm) {
    MPIX_Request* mpix_request = nullptr;
    const int rc = MPIX_Alltoallv_plan(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                       nullptr, mpix_comm, &mpix_request);
    if (rc == MPIX_SUCCESS) {
      report_routed(comm, "MPI_Alltoallv_init", "an mpix persistent request");
      return make_persistent(mpix_request, comm, request);
    }
    int error_class = MPI_SUCCESS;
    if (!leave_to_mpi(comm, "MPI_Alltoallv_init", rc, &error_class)) {
      if (request) *request = MPI_REQUEST_NULL;
      return error_class;
    }
  }
  return PMPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                             info, request);
}

int MPI_Start(MPI_Request* request) {
  Persistent* p = find(*request);
  if (!p) {
    // MPICH 4.0.2 raises a start on a freed handle on MPI_COMM_WORLD.
    if (freed_placeholder(*request))
      return raise_error(MPI_COMM_WORLD, "MPI_Start", MPI_ERR_REQUEST,
                         "the request was freed (MPI_Request_free): a copy of its handle cannot be started");
    return PMPI_Start(request);
  }
  const bool was_active = p->active;
  if (p->complete)  // its mpix request is done, and would start
    return fail_request(*p, "MPI_Start", MPI_ERR_REQUEST,
                        "the request is active (complete, but not yet completed by a test or wait)");
  int rc = MPIX_Start(p->request);
  if (rc == MPIX_SUCCESS) {
    p->active = true;
    return MPI_SUCCESS;
  }
  // MPI's class for a start on an active request; mpix's is MPIX_ERR_ARG.
  return fail_request(*p, "MPI_Start", was_active ? MPI_ERR_REQUEST : mpi_class(rc));
}

int MPI_Startall(int count, MPI_Request requests[]) {
  if (!any_persistent(count, requests) &&
      std::none_of(requests, requests + count, [](MPI_Request r) { return freed_placeholder(r); }))
    return PMPI_Startall(count, requests);
  for (int i = 0; i < count; ++i) {
    int rc = MPI_Start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  Persistent* p = find(*request);
  if (!p) return PMPI_Wait(request, status);
  p->active = p->complete = false;
  int rc = MPIX_Wait(p->request, status);
  return rc == MPIX_SUCCESS ? MPI_SUCCESS : fail_request(*p, "MPI_Wait", mpi_class(rc));
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  Persistent* p = find(*request);
  if (!p) return PMPI_Test(request, flag, status);
  if (p->active) return test_one(p, "MPI_Test", flag, status);
  *flag = 1;
  empty_status(*p, status);
  return MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  Persistent* p = find(request);
  if (!p) return PMPI_Request_get_status(request, flag, status);
  // Unlike a test, it leaves the request active until a test or wait completes it.
  if (!p->active) {
    *flag = 1;
    empty_status(*p, status);
    return MPI_SUCCESS;
  }
  const int rc = poll(p, "MPI_Request_get_status", status);
  *flag = p->complete;
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!any_persistent(count, requests)) return PMPI_Testall(count, requests, flag, statuses);
  Split split(count, requests);
  int rc = MPI_SUCCESS, mine_done = 1;
  for (int i = 0; i < count; ++i) {
    if (!split.mine[i] || !split.mine[i]->active) continue;
    int done = 0;
    int one_rc = test_one(split.mine[i], "MPI_Testall", &done, MPI_STATUS_IGNORE);
    if (one_rc != MPI_SUCCESS) rc = one_rc;
    mine_done &= done;
  }
  // All or nothing, as MPI_Testall: the others are only looked at once ours are
  // done, and completed (PMPI_Waitall, which returns at once) only when all are.
  // Not PMPI_Testall: MPICH 4.0.2's fails a completed persistent collective with
  // MPI_ERR_IN_STATUS, fatal under the default handler, and one that mpix left to
  // MPI (an intercommunicator, a hint it cannot follow) sits beside ours here.
  int others_done = 0;
  if (mine_done) {
    others_done = 1;
    for (int i = 0; i < count && others_done; ++i) {
      int done = 1;
      if (!split.mine[i] && split.others[i] != MPI_REQUEST_NULL) {
        int one_rc = PMPI_Request_get_status(split.others[i], &done, MPI_STATUS_IGNORE);
        if (one_rc != MPI_SUCCESS) rc = one_rc;
      }
      others_done &= done;
    }
    if (others_done) {
      int one_rc = PMPI_Waitall(count, split.others.data(), split.statuses.data());
      if (one_rc != MPI_SUCCESS) rc = one_rc;
    }
  }
  *flag = mine_done && others_done;
  if (*flag) {
    split.copy_back(requests);
    for (int i = 0; i < count && statuses != MPI_STATUSES_IGNORE; ++i) {
      if (split.mine[i])
        empty_status(*split.mine[i], &statuses[i]);
      else
        statuses[i] = split.statuses[i];
    }
  }
  return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!any_persistent(count, requests)) return PMPI_Waitall(count, requests, statuses);
  for (;;) {
    int flag = 0, rc = MPI_Testall(count, requests, &flag, statuses);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!any_persistent(incount, requests)) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  Split split(incount, requests);
  bool any_active = false;
  int rc = testsome_pass(split, outcount, indices, statuses, &any_active);
  split.copy_back(requests);
  if (!any_active) *outcount = MPI_UNDEFINED;
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!any_persistent(incount, requests)) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  for (;;) {
    int rc = MPI_Testsome(incount, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;
  }
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!any_persistent(count, requests)) return PMPI_Testany(count, requests, index, flag, status);
  Split split(count, requests);
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (!split.mine[i] || !split.mine[i]->active) continue;
    any_active = true;
    int rc = test_one(split.mine[i], "MPI_Testany", flag, status);
    if (rc != MPI_SUCCESS || *flag) {
      *index = i;
      return rc;
    }
  }
  int rc = PMPI_Testany(count, split.others.data(), index, flag, status);
  split.copy_back(requests);
  // No active request of either kind: MPI_Testany's flag with MPI_UNDEFINED.
  if (*flag && *index == MPI_UNDEFINED && any_active) *flag = 0;
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!any_persistent(count, requests)) return PMPI_Waitany(count, requests, index, status);
  for (;;) {
    int flag = 0, rc = MPI_Testany(count, requests, index, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}

int MPI_Request_free(MPI_Request* request) {
  Persistent* p = find(*request);
  if (!p) {
    // PMPI_Request_free would free a placeholder still kept for the next request.
    if (freed_placeholder(*request))
      return raise_error(MPI_COMM_WORLD, "MPI_Request_free", MPI_ERR_REQUEST,
                         "the request was freed already (a copy of its handle)");
    return PMPI_Request_free(request);
  }
  // MPI lets an active request be freed; the exchange completes first.
  if (p->active) MPIX_Wait(p->request, MPI_STATUS_IGNORE);
  Persistent gone = *p;
  {
    std::lock_guard<std::mutex> lock(persistent_mutex);
    persistent_requests.erase(*request);
    --persistent_count;
  }
  int rc = MPIX_Request_free(&gone.request);
  if (rc != MPIX_SUCCESS) rc = fail_request(gone, "MPI_Request_free", mpi_class(rc));
  drop_handler(gone);
  std::lock_guard<std::mutex> lock(persistent_mutex);
  spare_placeholders.push_back(*request);  // see spare_placeholders
  ++spare_count;
  *request = MPI_REQUEST_NULL;
  free_released_comms();
  return rc;
}

}  // extern "C"

#endif  // MPI_VERSION >= 4
