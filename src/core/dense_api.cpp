// The C entry points of the dense calls: MPIX_Alltoall(v)[_plan][_c], MPIX_Start,
// MPIX_Wait, MPIX_Test, MPIX_Request_free. The int forms are widened to the
// large-count form; the work is dense.cpp's.
#include <vector>

#include "dense.hpp"
#include "error.hpp"
#include "handles.hpp"

using namespace mpix;

static DenseArgs alltoall_args(const char* name, const void* sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                               MPI_Datatype recvtype) {
  DenseArgs a{name, kAlltoall, sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype};
  a.sendcount = sendcount;
  a.recvcount = recvcount;
  return a;
}

// An int form's counts or displacements as the large-count form's (one entry per
// rank of `comm`, NULL where it is not a live handle: the call says why); NULL
// stays NULL so that the checks name it.
template <class Wide>
static const Wide* widen(const int* values, const MPIX_Comm* comm, std::vector<Wide>* out) {
  if (!values || !comm) return nullptr;
  out->assign(values, values + comm->size);
  return out->data();
}

static DenseArgs alltoallv_args(const char* name, const void* sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                const MPIX_Comm* comm, std::vector<MPI_Count> counts[2],
                                std::vector<MPI_Aint> displs[2]) {
  return DenseArgs{name, kAlltoallv, sendbuf, widen(sendcounts, comm, &counts[0]), widen(sdispls, comm, &displs[0]),
                   sendtype, recvbuf, widen(recvcounts, comm, &counts[1]), widen(rdispls, comm, &displs[1]),
                   recvtype};
}

extern "C" int MPIX_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype,
                             MPIX_Info* info, MPIX_Comm* comm) {
  DenseArgs a = alltoall_args("MPIX_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return guarded(a.name, [&] { return dense_blocking(a, info, comm); });
}

extern "C" int MPIX_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               MPIX_Info* info, MPIX_Comm* comm) {
  DenseArgs a = alltoall_args("MPIX_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return guarded(a.name, [&] { return dense_blocking(a, info, comm); });
}

extern "C" int MPIX_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPIX_Info* info,
                              MPIX_Comm* comm) {
  return guarded("MPIX_Alltoallv", [&] {
    std::vector<MPI_Count> unkept_counts[2];
    std::vector<MPI_Aint> unkept_displs[2];
    MPIX_Comm* live = handle_live(comm) ? comm : nullptr;
    DenseArgs a = alltoallv_args("MPIX_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, live, live ? live->widened_counts : unkept_counts,
                                 live ? live->widened_displs : unkept_displs);
    return dense_blocking(a, info, comm);
  });
}

extern "C" int MPIX_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], MPI_Datatype recvtype, MPIX_Info* info,
                                MPIX_Comm* comm) {
  DenseArgs a{"MPIX_Alltoallv_c", kAlltoallv, sendbuf, sendcounts, sdispls, sendtype,
              recvbuf, recvcounts, rdispls, recvtype};
  return guarded(a.name, [&] { return dense_blocking(a, info, comm); });
}

extern "C" int MPIX_Alltoall_plan(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPIX_Info* info, MPIX_Comm* comm, MPIX_Request** request) {
  DenseArgs a = alltoall_args("MPIX_Alltoall_plan", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return guarded(a.name, [&] { return dense_persistent(a, info, comm, request); });
}

extern "C" int MPIX_Alltoall_plan_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                    MPIX_Info* info, MPIX_Comm* comm, MPIX_Request** request) {
  DenseArgs a = alltoall_args("MPIX_Alltoall_plan_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  return guarded(a.name, [&] { return dense_persistent(a, info, comm, request); });
}

extern "C" int MPIX_Alltoallv_plan(const void* sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPIX_Info* info, MPIX_Comm* comm,
                                   MPIX_Request** request) {
  return guarded("MPIX_Alltoallv_plan", [&] {
    std::vector<MPI_Count> counts[2];
    std::vector<MPI_Aint> displs[2];
    DenseArgs a = alltoallv_args("MPIX_Alltoallv_plan", sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                 recvcounts, rdispls, recvtype, handle_live(comm) ? comm : nullptr, counts, displs);
    return dense_persistent(a, info, comm, request);
  });
}

extern "C" int MPIX_Alltoallv_plan_c(const void* sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                     MPI_Datatype recvtype, MPIX_Info* info, MPIX_Comm* comm,
                                     MPIX_Request** request) {
  DenseArgs a{"MPIX_Alltoallv_plan_c", kAlltoallv, sendbuf, sendcounts, sdispls, sendtype,
              recvbuf, recvcounts, rdispls, recvtype};
  return guarded(a.name, [&] { return dense_persistent(a, info, comm, request); });
}

extern "C" int MPIX_Start(MPIX_Request* request) {
  MPIX_TRY(check_handle(request, "MPIX_Start", "request"));
  if (request->active) return fail(MPIX_ERR_ARG, "MPIX_Start: request is already active");
  return guarded("MPIX_Start", [&] { return start_request(request); });
}

// An empty status, as MPI gives for a completed collective.
static void set_empty_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
}

// MPICH's MPI_STATUS_IGNORE is not NULL (Open MPI's is): a NULL status there is a
// mistake, refused before the exchange rather than written through.
static bool status_is_null(const MPI_Status* status) {
  return status == nullptr && status != MPI_STATUS_IGNORE;
}

extern "C" int MPIX_Wait(MPIX_Request* request, MPI_Status* status) {
  MPIX_TRY(check_handle(request, "MPIX_Wait", "request"));
  if (status_is_null(status)) return fail(MPIX_ERR_ARG, "MPIX_Wait: status is NULL (pass MPI_STATUS_IGNORE)");
  int rc = MPIX_SUCCESS;
  if (request->active) rc = guarded("MPIX_Wait", [&] { return wait_request(request); });
  set_empty_status(status);
  return rc;
}

extern "C" int MPIX_Test(MPIX_Request* request, int* flag, MPI_Status* status) {
  MPIX_TRY(check_handle(request, "MPIX_Test", "request"));
  if (!flag) return fail(MPIX_ERR_ARG, "MPIX_Test: flag is NULL");
  if (status_is_null(status)) return fail(MPIX_ERR_ARG, "MPIX_Test: status is NULL (pass MPI_STATUS_IGNORE)");
  *flag = 0;
  bool done = true;
  int rc = MPIX_SUCCESS;
  if (request->active) {
    done = false;
    rc = guarded("MPIX_Test", [&] { return test_request(request, &done); });
    // A failed exchange is over, as after a failed MPIX_Wait; also where the error
    // came after the test (a pending one), which left the request started.
    if (done || rc != MPIX_SUCCESS) request->active = false;
    if (!done && rc != MPIX_SUCCESS) progress_completed(request);
  }
  if (done || rc != MPIX_SUCCESS) {
    *flag = 1;
    set_empty_status(status);
  }
  return rc;
}

extern "C" int MPIX_Request_free(MPIX_Request** request) {
  if (!request) return fail(MPIX_ERR_ARG, "MPIX_Request_free: request is NULL");
  MPIX_TRY(check_handle(*request, "MPIX_Request_free", "request"));
  if ((*request)->active) return fail(MPIX_ERR_ARG, "MPIX_Request_free: request is active; MPIX_Wait first");
  LibraryEntry entry("MPIX_Request_free");  // its MPI objects: see MPIX_Comm_free
  MPIX_TRY(entry.rc());
  handle_freed(*request);
  delete *request;
  *request = nullptr;
  return MPIX_SUCCESS;
}
