// Open MPI's Fortran bindings (mpif.h, use mpi: mpi_alltoallv_ and its other
// spellings; use mpi_f08: ompi_alltoallv_f) call PMPI_Alltoallv directly, so a C
// MPI_Alltoallv never sees them: here they are defined, with Fortran's handles and
// MPI_IN_PLACE translated. MPICH's Fortran bindings call the C MPI_Alltoallv,
// which already catches them (ARCHITECTURE.md): nothing is defined for MPICH, as
// a second definition would route every call twice.
#include <mpi.h>

#include "interpose.hpp"

#if defined(OPEN_MPI)

// Open MPI's Fortran MPI_IN_PLACE and MPI_BOTTOM: the addresses of its common
// blocks (weak: C programs load no Fortran library).
extern "C" int mpi_fortran_in_place_ __attribute__((weak));
extern "C" int mpi_fortran_bottom_ __attribute__((weak));

namespace {

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER counts are passed on as C int arrays");

const void* c_buffer(char* fortran_buffer) {
  if (&mpi_fortran_in_place_ && fortran_buffer == (char*)&mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (&mpi_fortran_bottom_ && fortran_buffer == (char*)&mpi_fortran_bottom_) return MPI_BOTTOM;
  return fortran_buffer;
}

void fortran_alltoall(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf,
                      MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {
  int rc = mpix_interpose::alltoall(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype),
                                    (void*)c_buffer(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype),
                                    PMPI_Comm_f2c(*comm));
  if (ierr) *ierr = rc;
}

void fortran_alltoallv(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype,
                       char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype,
                       MPI_Fint* comm, MPI_Fint* ierr) {
  int rc = mpix_interpose::alltoallv(c_buffer(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype),
                                     (void*)c_buffer(recvbuf), recvcounts, rdispls,
                                     PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
  if (ierr) *ierr = rc;
}

}  // namespace

// Every spelling Open MPI's libmpi_mpifh exports, and ompi_*_f behind use mpi_f08.
#define MPIX_FORTRAN_ALIASES(name, target, args, call) \
  extern "C" void name args { target call; }

#define ALLTOALL_ARGS                                                                               \
  (char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,   \
   MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr)
#define ALLTOALL_CALL (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr)
#define ALLTOALLV_ARGS                                                                              \
  (char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, char* recvbuf,    \
   MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr)
#define ALLTOALLV_CALL \
  (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, ierr)

MPIX_FORTRAN_ALIASES(mpi_alltoall, fortran_alltoall, ALLTOALL_ARGS, ALLTOALL_CALL)
MPIX_FORTRAN_ALIASES(mpi_alltoall_, fortran_alltoall, ALLTOALL_ARGS, ALLTOALL_CALL)
MPIX_FORTRAN_ALIASES(mpi_alltoall__, fortran_alltoall, ALLTOALL_ARGS, ALLTOALL_CALL)
MPIX_FORTRAN_ALIASES(MPI_ALLTOALL, fortran_alltoall, ALLTOALL_ARGS, ALLTOALL_CALL)
MPIX_FORTRAN_ALIASES(ompi_alltoall_f, fortran_alltoall, ALLTOALL_ARGS, ALLTOALL_CALL)
MPIX_FORTRAN_ALIASES(mpi_alltoallv, fortran_alltoallv, ALLTOALLV_ARGS, ALLTOALLV_CALL)
MPIX_FORTRAN_ALIASES(mpi_alltoallv_, fortran_alltoallv, ALLTOALLV_ARGS, ALLTOALLV_CALL)
MPIX_FORTRAN_ALIASES(mpi_alltoallv__, fortran_alltoallv, ALLTOALLV_ARGS, ALLTOALLV_CALL)
MPIX_FORTRAN_ALIASES(MPI_ALLTOALLV, fortran_alltoallv, ALLTOALLV_ARGS, ALLTOALLV_CALL)
MPIX_FORTRAN_ALIASES(ompi_alltoallv_f, fortran_alltoallv, ALLTOALLV_ARGS, ALLTOALLV_CALL)

#endif  // OPEN_MPI
