/* A first program with mpix: a non-uniform exchange where rank i sends i + j + 1
 * doubles to rank j, once with the library's choice and once persistently with an
 * algorithm named through a hint.
 *
 *   mpicc.mpich alltoallv_basic.c $(pkg-config --cflags --libs mpix) -o alltoallv_basic
 *   mpiexec.mpich -n 4 ./alltoallv_basic
 *
 * With mpix installed outside the loader's default path, add
 * -Wl,-rpath,$(pkg-config --variable=libdir mpix) to the first line (or set
 * LD_LIBRARY_PATH).
 */
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int *sendcounts = malloc(size * sizeof(int)), *sdispls = malloc(size * sizeof(int));
  int *recvcounts = malloc(size * sizeof(int)), *rdispls = malloc(size * sizeof(int));
  int send_total = 0, recv_total = 0;
  for (int j = 0; j < size; ++j) {
    sendcounts[j] = rank + j + 1;
    recvcounts[j] = j + rank + 1;
    sdispls[j] = send_total;
    rdispls[j] = recv_total;
    send_total += sendcounts[j];
    recv_total += recvcounts[j];
  }
  double* sendbuf = malloc(send_total * sizeof(double));
  double* recvbuf = malloc(recv_total * sizeof(double));
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < sendcounts[j]; ++k) sendbuf[sdispls[j] + k] = rank * 1000 + j;

  MPIX_Comm* comm;
  MPIX_Comm_init(&comm, MPI_COMM_WORLD);

  /* info = NULL: the library chooses. */
  int rc = MPIX_Alltoallv(sendbuf, sendcounts, sdispls, MPI_DOUBLE, recvbuf, recvcounts, rdispls,
                          MPI_DOUBLE, NULL, comm);
  if (rc != MPIX_SUCCESS)
    fprintf(stderr, "rank %d: %s: %s\n", rank, MPIX_Error_string(rc), MPIX_Last_error_message());

  /* Persistent, with a named algorithm: plan once, run many times. */
  MPIX_Info* info;
  MPIX_Info_init(&info);
  MPIX_Info_set(info, "mpix_alltoallv_algorithm", "multipair_waitany");
  MPIX_Info_set(info, "mpix_stride", "4");
  MPIX_Request* request;
  MPIX_Alltoallv_plan(sendbuf, sendcounts, sdispls, MPI_DOUBLE, recvbuf, recvcounts, rdispls, MPI_DOUBLE,
                      info, comm, &request);
  for (int iteration = 0; iteration < 3; ++iteration) {
    MPIX_Start(request);
    /* ... independent work may go here ... */
    MPIX_Wait(request, MPI_STATUS_IGNORE);
  }
  MPIX_Request_free(&request);
  MPIX_Info_free(&info);

  int errors = 0;
  for (int i = 0; i < size; ++i)
    for (int k = 0; k < recvcounts[i]; ++k) errors += recvbuf[rdispls[i] + k] != i * 1000 + rank;
  int total;
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("alltoallv_basic: %s\n", total ? "wrong data" : "ok");

  MPIX_Comm_free(&comm);
  free(sendbuf); free(recvbuf); free(sendcounts); free(sdispls); free(recvcounts); free(rdispls);
  MPI_Finalize();
  return total != 0;
}
