/* The public header is valid C99: this program includes it, is compiled as C,
 * and calls the API. */
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, errors = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPIX_Comm* comm = NULL;
  MPIX_Info* info = NULL;
  MPIX_Request* request = NULL;
  if (MPIX_Comm_init(&comm, MPI_COMM_WORLD) != MPIX_SUCCESS) errors++;
  if (MPIX_Info_init(&info) != MPIX_SUCCESS) errors++;
  if (MPIX_Info_set(info, "mpix_alltoallv_algorithm", "pairwise") != MPIX_SUCCESS) errors++;
  if (MPIX_Info_set(info, "mpix_bogus", "1") != MPIX_ERR_INFO_KEY) errors++;

  int* send = malloc(sizeof(int) * size);
  int* recv = malloc(sizeof(int) * size);
  int* counts = malloc(sizeof(int) * size);
  int* displs = malloc(sizeof(int) * size);
  for (int j = 0; j < size; ++j) {
    send[j] = rank * 1000 + j;
    counts[j] = 1;
    displs[j] = j;
  }
  if (MPIX_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, info, comm) != MPIX_SUCCESS)
    errors++;
  for (int i = 0; i < size; ++i)
    if (recv[i] != i * 1000 + rank) errors++;

  if (MPIX_Alltoall_plan(send, 1, MPI_INT, recv, 1, MPI_INT, NULL, comm, &request) != MPIX_SUCCESS) errors++;
  if (MPIX_Start(request) != MPIX_SUCCESS) errors++;
  if (MPIX_Wait(request, MPI_STATUS_IGNORE) != MPIX_SUCCESS) errors++;
  if (MPIX_Request_free(&request) != MPIX_SUCCESS || request != NULL) errors++;

  /* The large-count forms. */
  MPI_Count* wide_counts = malloc(sizeof(MPI_Count) * size);
  MPI_Aint* wide_displs = malloc(sizeof(MPI_Aint) * size);
  for (int j = 0; j < size; ++j) {
    wide_counts[j] = 1;
    wide_displs[j] = size - 1 - j;
    recv[j] = -1;
  }
  if (MPIX_Alltoallv_c(send, wide_counts, wide_displs, MPI_INT, recv, wide_counts, wide_displs, MPI_INT, NULL,
                       comm) != MPIX_SUCCESS)
    errors++;
  for (int i = 0; i < size; ++i)
    if (recv[size - 1 - i] != i * 1000 + (size - 1 - rank)) errors++;
  if (MPIX_Alltoall_c(send, (MPI_Count)1, MPI_INT, recv, (MPI_Count)1, MPI_INT, NULL, comm) != MPIX_SUCCESS) errors++;
  if (MPIX_Alltoallv_plan_c(send, wide_counts, wide_displs, MPI_INT, recv, wide_counts, wide_displs, MPI_INT, NULL,
                            comm, &request) != MPIX_SUCCESS ||
      MPIX_Start(request) != MPIX_SUCCESS || MPIX_Wait(request, MPI_STATUS_IGNORE) != MPIX_SUCCESS ||
      MPIX_Request_free(&request) != MPIX_SUCCESS)
    errors++;
  if (MPIX_Alltoall_plan_c(send, 1, MPI_INT, recv, 1, MPI_INT, NULL, comm, &request) != MPIX_SUCCESS ||
      MPIX_Start(request) != MPIX_SUCCESS || MPIX_Wait(request, MPI_STATUS_IGNORE) != MPIX_SUCCESS ||
      MPIX_Request_free(&request) != MPIX_SUCCESS)
    errors++;
  for (int i = 0; i < size; ++i)
    if (recv[i] != i * 1000 + rank) errors++;
  free(wide_counts);
  free(wide_displs);

  int nodes = 0, node = 0, local_size = 0, local_rank = 0;
  if (MPIX_Comm_locality(comm, &nodes, &node, &local_size, &local_rank) != MPIX_SUCCESS) errors++;
  if (MPIX_Comm_update_locality(comm, 1) != MPIX_SUCCESS) errors++;
  if (MPIX_Comm_mpi(comm) != MPI_COMM_WORLD) errors++;

  counts[0] = -1;
  if (MPIX_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, NULL, comm) != MPIX_ERR_ARG)
    errors++;
  if (MPIX_Error_string(MPIX_ERR_ARG) == NULL || MPIX_Last_error_message()[0] == '\0') errors++;

  int recv_nnz = -1;
  int* src = NULL;
  void* vals = NULL;
  (void)MPIX_Alltoall_crs(0, NULL, 1, MPI_INT, NULL, &recv_nnz, &src, 1, MPI_INT, &vals, NULL, comm);
  MPIX_Free(src);
  MPIX_Free(vals);

  MPIX_Info_free(&info);
  MPIX_Comm_free(&comm);
  free(send);
  free(recv);
  free(counts);
  free(displs);

  int total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("C API: %s (%d errors)\n", total ? "FAILED" : "passed", total);
  MPI_Finalize();
  return total ? 1 : 0;
}
