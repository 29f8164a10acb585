// Completing requests without MPI's fatal handler, and errors that must not stop
// an exchange half-way.
//
// MPICH 4.0 raises the errors of MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Test,
// MPI_Testany, MPI_Testall and MPI_Mrecv not on the request's communicator but on
// MPI_COMM_WORLD (MPICH 4.1 and later: MPI_COMM_SELF; pmodels/mpich pull request
// 6452), whose handler is MPI_ERRORS_ARE_FATAL unless the user changed it, so
// MPI_ERRORS_RETURN on the library's duplicate does not help: a truncated receive
// aborts the job. Open MPI 4.1 raises them on the request's communicator for
// point-to-point requests, but on MPI_COMM_WORLD for its nonblocking collectives
// (libnbc: MPI_Ialltoallv's truncation). These calls are therefore made with
// MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF for their duration
// (CompletionErrorsReturn).
//
// A message larger than its receive (send and receive counts that disagree between
// two ranks) does not stop the exchange: the rank records it as this thread's
// pending error, completes every request and posts every later round that the
// other ranks expect from it, and the API call returns the error at its end
// (finish_call in error.hpp). So no rank is left waiting for a rank that stopped.
#pragma once
#include <mpi.h>

namespace mpix {

// While one exists (in any thread), MPI_COMM_WORLD and MPI_COMM_SELF have
// MPI_ERRORS_RETURN on MPICH; the handlers the user had are restored when the last
// one ends. Does nothing in the simulated build.
class CompletionErrorsReturn {
 public:
  CompletionErrorsReturn();
  ~CompletionErrorsReturn();
  CompletionErrorsReturn(const CompletionErrorsReturn&) = delete;
  CompletionErrorsReturn& operator=(const CompletionErrorsReturn&) = delete;
};

// As MPI_Waitall, MPI_Waitany, MPI_Test, MPI_Testany, MPI_Testall on requests of
// `comm`: MPIX_SUCCESS also after a truncated receive (recorded as pending), an
// MPIX error with MPI's reason in words otherwise.
// wait_all and test_all fill `statuses` (count of them) when it is not null.
int wait_all(int count, MPI_Request* requests, MPI_Comm comm, MPI_Status* statuses = nullptr);
int wait_any(int count, MPI_Request* requests, int* index, MPI_Comm comm);
int test_one(MPI_Request* request, int* flag, MPI_Comm comm);
int test_any(int count, MPI_Request* requests, int* index, int* flag, MPI_Comm comm);
int test_all(int count, MPI_Request* requests, int* flag, MPI_Comm comm, MPI_Status* statuses = nullptr);

// Interprets the code and status of a completed receive on `comm`: a truncation
// becomes the pending error; any other failure an MPIX error naming `what`.
int completed(int mpi_code, const MPI_Status& status, MPI_Comm comm, const char* what);

}  // namespace mpix
