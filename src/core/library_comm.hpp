// The communicators mpix makes for itself (the duplicate of the user's, the node
// and group sub-communicators) carry a name, so that the interposer of a process
// that also links libmpix leaves the library's own MPI_Alltoall(v) calls to MPI:
// `pmpi`'s call, mpix_check_args's count exchange and ipc_hybrid's exposures,
// which would otherwise be planned by mpix a second time (src/interpose/interpose.cpp).
#pragma once
#include <mpi.h>

namespace mpix {

constexpr const char kLibraryCommPrefix[] = "mpix: ";

// Names `comm` kLibraryCommPrefix + `what`; a name MPI refuses changes nothing.
void name_library_comm(MPI_Comm comm, const char* what);

}  // namespace mpix
