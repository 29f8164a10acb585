#include "completion.hpp"

#include <mutex>
#include <vector>

#include "error.hpp"

namespace mpix {
namespace {

#ifdef MPIX_SIMULATED
constexpr bool kSwapHandlers = false;  // SMPI: one process for all ranks
#else
constexpr bool kSwapHandlers = true;
#endif

// The one process-wide state of the library: how many threads are inside a
// completion call, and the handlers to restore when the last one leaves.
std::mutex handlers_mutex;
int handlers_depth = 0;
MPI_Errhandler saved_world = MPI_ERRHANDLER_NULL, saved_self = MPI_ERRHANDLER_NULL;

int rank_in(MPI_Comm comm) {
  int rank = -1;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  return rank;
}

bool is_truncation(int mpi_code) {
  int error_class = MPI_SUCCESS;
  if (MPI_Error_class(mpi_code, &error_class) != MPI_SUCCESS) return false;
  return error_class == MPI_ERR_TRUNCATE;
}

// MPI_ERR_IN_STATUS: the first failed status decides.
int completed_all(int mpi_code, int count, const MPI_Status* statuses, MPI_Comm comm, const char* what) {
  if (mpi_code == MPI_SUCCESS) return MPIX_SUCCESS;
  int error_class = MPI_SUCCESS;
  MPI_Error_class(mpi_code, &error_class);
  if (error_class != MPI_ERR_IN_STATUS) return fail_mpi(mpi_code, what);
  for (int i = 0; i < count; ++i) {
    int code = statuses[i].MPI_ERROR;
    if (code == MPI_SUCCESS || code == MPI_ERR_PENDING) continue;
    MPIX_TRY(completed(code, statuses[i], comm, what));
  }
  return MPIX_SUCCESS;
}

}  // namespace

CompletionErrorsReturn::CompletionErrorsReturn() {
  if (!kSwapHandlers) return;
  std::lock_guard<std::mutex> lock(handlers_mutex);
  if (handlers_depth++ > 0) return;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved_world);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &saved_self);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

CompletionErrorsReturn::~CompletionErrorsReturn() {
  if (!kSwapHandlers) return;
  std::lock_guard<std::mutex> lock(handlers_mutex);
  if (--handlers_depth > 0) return;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved_world);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, saved_self);
  MPI_Errhandler_free(&saved_world);
  MPI_Errhandler_free(&saved_self);
}

int completed(int mpi_code, const MPI_Status& status, MPI_Comm comm, const char* what) {
  if (mpi_code == MPI_SUCCESS) return MPIX_SUCCESS;
  if (!is_truncation(mpi_code)) return fail_mpi(mpi_code, what);
  set_pending(MPIX_ERR_ARG,
              format("rank %d received a message from rank %d larger than the receive posted for it "
                     "(truncated): the two ranks' send and receive counts disagree "
                     "(mpix_check_args=true checks them before any data moves)",
                     rank_in(comm), status.MPI_SOURCE));
  return MPIX_SUCCESS;
}

// Open MPI 4.1 under MPI_THREAD_MULTIPLE: an MPI_Waitall that holds a truncated
// receive sometimes never returns (plain MPI reproduces it: a ring of Irecv/Isend
// pairs with one truncation, 4 ranks, hangs in about half the runs; MPI_Wait on
// each request, or MPI_Waitany, does not). There the requests are waited for one
// by one, which completes the same set.
static bool wait_one_by_one() {
#ifdef OPEN_MPI
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level == MPI_THREAD_MULTIPLE;
#else
  return false;
#endif
}

int wait_all(int count, MPI_Request* requests, MPI_Comm comm, MPI_Status* statuses) {
  std::vector<MPI_Status> own;
  if (!statuses) {
    own.resize((std::size_t)count);
    statuses = own.data();
  }
  int rc = MPI_SUCCESS;
  {
    CompletionErrorsReturn errors_return;
    if (wait_one_by_one()) {
      for (int i = 0; i < count; ++i) {
        statuses[i].MPI_ERROR = MPI_Wait(&requests[i], &statuses[i]);
        if (statuses[i].MPI_ERROR != MPI_SUCCESS) rc = MPI_ERR_IN_STATUS;
      }
    } else {
      rc = MPI_Waitall(count, requests, statuses);
    }
  }
  return completed_all(rc, count, statuses, comm, "MPI_Waitall");
}

int wait_any(int count, MPI_Request* requests, int* index, MPI_Comm comm) {
  MPI_Status status;
  int rc;
  {
    CompletionErrorsReturn errors_return;
    rc = MPI_Waitany(count, requests, index, &status);
  }
  return completed(rc, status, comm, "MPI_Waitany");
}

int test_one(MPI_Request* request, int* flag, MPI_Comm comm) {
  MPI_Status status;
  int rc;
  {
    CompletionErrorsReturn errors_return;
    rc = MPI_Test(request, flag, &status);
  }
  return completed(rc, status, comm, "MPI_Test");
}

int test_any(int count, MPI_Request* requests, int* index, int* flag, MPI_Comm comm) {
  MPI_Status status;
  int rc;
  {
    CompletionErrorsReturn errors_return;
    rc = MPI_Testany(count, requests, index, flag, &status);
  }
  return completed(rc, status, comm, "MPI_Testany");
}

int test_all(int count, MPI_Request* requests, int* flag, MPI_Comm comm, MPI_Status* statuses) {
  std::vector<MPI_Status> own;
  if (!statuses) {
    own.resize((std::size_t)count);
    statuses = own.data();
  }
  int rc;
  {
    CompletionErrorsReturn errors_return;
    rc = MPI_Testall(count, requests, flag, statuses);
  }
  return completed_all(rc, count, statuses, comm, "MPI_Testall");
}

}  // namespace mpix
