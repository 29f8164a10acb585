/* Open MPI's <mpi-ext.h> and <mpix/mpix.h> in one translation unit (GPU codes
 * include <mpi-ext.h> for MPIX_Query_cuda_support): both compile together, and
 * Open MPI's persistent MPIX_Alltoall_init and mpix's MPIX_Alltoall_plan both run
 * and agree. Built in the Open MPI build only. */
#include <mpi.h>
#include <mpi-ext.h>
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, errors = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* send = malloc(size * sizeof(int));
  int* by_mpi = malloc(size * sizeof(int));
  int* by_mpix = malloc(size * sizeof(int));
  for (int i = 0; i < size; ++i) send[i] = 100 * rank + i;

#ifdef OMPI_HAVE_MPI_EXT_CUDA
  int cuda = MPIX_Query_cuda_support();  /* Open MPI's extension */
  if (cuda != 0 && cuda != 1) ++errors;
#endif
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
  MPI_Request mpi_request;  /* Open MPI's pre-MPI-4 persistent collective */
  MPIX_Alltoall_init(send, 1, MPI_INT, by_mpi, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &mpi_request);
  MPI_Start(&mpi_request);
  MPI_Wait(&mpi_request, MPI_STATUS_IGNORE);
  MPI_Request_free(&mpi_request);
#else
  MPI_Alltoall(send, 1, MPI_INT, by_mpi, 1, MPI_INT, MPI_COMM_WORLD);
#endif

  MPIX_Comm* comm;
  MPIX_Request* request;
  errors += MPIX_Comm_init(&comm, MPI_COMM_WORLD) != MPIX_SUCCESS;
  errors += MPIX_Alltoall_plan(send, 1, MPI_INT, by_mpix, 1, MPI_INT, NULL, comm, &request) != MPIX_SUCCESS;
  errors += MPIX_Start(request) != MPIX_SUCCESS;
  for (int done = 0; !done;) errors += MPIX_Test(request, &done, MPI_STATUS_IGNORE) != MPIX_SUCCESS;
  MPIX_Request_free(&request);
  MPIX_Comm_free(&comm);

  for (int i = 0; i < size; ++i) errors += by_mpi[i] != 100 * i + rank || by_mpix[i] != by_mpi[i];
  int total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi-ext and mpix: %s\n", total ? "wrong" : "ok");
  free(send);
  free(by_mpi);
  free(by_mpix);
  MPI_Finalize();
  return total != 0;
}
