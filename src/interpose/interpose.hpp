// What the interposer's files share: the MPIX_Comm cached on each MPI
// communicator, the run-time switch, and the fallback reports.
#pragma once
#include <mpi.h>

#include <string>

#include "mpix/mpix.h"

namespace mpix_interpose {

// MPIX_INTERPOSE=0 in the environment turns the interposer off (same on all ranks).
bool enabled();

// After MPI_Init(_thread) returned `init_rc`: the finalize callback is set on
// MPI_COMM_SELF first, so that it runs last. Returns `init_rc`.
int initialized(int init_rc);

// The MPIX_Comm for `comm`, made on first use (collective: call it from a
// collective on `comm`); nullptr when mpix does not handle `comm`, reported under
// MPIX_VERBOSE with `function`'s name. Freed with `comm` or in MPI_Finalize.
MPIX_Comm* mpix_comm_of(MPI_Comm comm, const char* function);

// Under MPIX_VERBOSE, on rank 0 of `comm` and once per reason, and without it on
// rank 0 of MPI_COMM_WORLD once per reason where `rc` says a hint of the user's is
// malformed: `function` goes to its PMPI_ version because of `reason`.
void report_fallback(MPI_Comm comm, const char* function, const std::string& reason, int rc = MPIX_SUCCESS);

// Under MPIX_VERBOSE, on rank 0 of `comm`, once per function: `what` mpix did.
void report_routed(MPI_Comm comm, const char* function, const std::string& what);

// An error of an interposed call on `comm`, as MPI reports its own: `comm`'s error
// handler is called with `error_class` (an MPI error class, which is also a code),
// which is returned for the call to return. `message` (mpix's) goes to stderr, once
// per process and text, where that handler is fatal, where `say`, and under
// MPIX_VERBOSE.
int raise_error(MPI_Comm comm, const char* function, int error_class, const std::string& message,
                bool say = false);

// The class MPI gives the same failure where it has one; MPIX_ERR_MPI's own code is
// gone by now (its text is in the message), so it is MPI_ERR_OTHER with the rest.
int mpi_class(int mpix_code);

// mpix refused `function` on `comm` with `rc` (collective: mpix's refusals are agreed,
// every rank has one). True where the call is to go to its PMPI_ version, as a
// fallback reported by report_fallback: MPI does what mpix cannot (MPIX_ERR_UNSUPPORTED,
// hints that differ between ranks), and where every rank's own arguments are wrong it
// reports the error as it would have (MPICH's MPI_ERR_BUFFER for aliased buffers; Open
// MPI 4.1 takes them). False where only some ranks' arguments are wrong: MPI's checks
// are local, it would fail the call on those ranks and leave the others waiting for
// them in its exchange, so every rank has raised mpix's error (raise_error; the wrong
// ranks print their message), and *error_class is the class to return.
bool leave_to_mpi(MPI_Comm comm, const char* function, int rc, int* error_class);

// `comm` is being freed: frees its MPIX_Comm `mpix_comm` now or, while persistent
// requests still use it, when the last of them is freed; those requests keep
// `comm`'s error handler for their errors (persistent.cpp).
void release_comm(MPI_Comm comm, MPIX_Comm* mpix_comm);

// In MPI_Finalize, before the communicators: frees every persistent request left.
void free_all_persistent();

// The C entry points, also called by the Fortran ones.
int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm);
int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
              MPI_Comm comm);

}  // namespace mpix_interpose
