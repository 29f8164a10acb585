/* A program that links libmpix and is run with libmpix_interpose.so preloaded as
 * well (a solver library using mpix inside an application preloaded for the rest):
 * the library's own MPI_Alltoall(v) calls (pmpi's, ipc_hybrid's exposures,
 * mpix_check_args's counts) go to MPI, not through the interposer's mpix again.
 * Each rank prints one line per algorithm: its name and whether the result is
 * right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpix/mpix.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPIX_Comm* comm = NULL;
  if (MPIX_Comm_init(&comm, MPI_COMM_WORLD) != MPIX_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
  int* send = malloc(size * sizeof(int));
  int* recv = malloc(size * sizeof(int));
  int* counts = malloc(size * sizeof(int));
  int* displs = malloc(size * sizeof(int));
  for (int i = 0; i < size; ++i) {
    send[i] = rank * 100 + i;
    counts[i] = 1;
    displs[i] = i;
  }
  const char* algorithms[] = {"pmpi", "ipc_hybrid", "pairwise"};
  for (int a = 0; a < 3; ++a) {
    MPIX_Info* info = NULL;
    MPIX_Info_init(&info);
    int rc = MPIX_Info_set(info, "mpix_alltoallv_algorithm", algorithms[a]);
    if (rc == MPIX_SUCCESS && a == 2) rc = MPIX_Info_set(info, "mpix_check_args", "true");
    if (rc == MPIX_SUCCESS) rc = MPIX_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, info, comm);
    int right = rc == MPIX_SUCCESS;
    for (int i = 0; i < size; ++i) right = right && recv[i] == i * 100 + rank;
    printf("rank %d %s %s\n", rank, algorithms[a], right ? "right" : "wrong");
    MPIX_Info_free(&info);
  }
  MPIX_Comm_free(&comm);
  free(send);
  free(recv);
  free(counts);
  free(displs);
  MPI_Finalize();
  return 0;
}
