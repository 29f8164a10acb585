// The C++-only consumer of tests/packaging/consumer: an alltoall of one int.
#include <mpix/mpix.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPIX_Comm* comm = nullptr;
  int rc = MPIX_Comm_init(&comm, MPI_COMM_WORLD);
  std::vector<int> send(size), recv(size, -1);
  for (int j = 0; j < size; ++j) send[j] = 100 * rank + j;
  if (rc == MPIX_SUCCESS) rc = MPIX_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, nullptr, comm);
  bool right = rc == MPIX_SUCCESS;
  for (int j = 0; j < size; ++j) right = right && recv[j] == 100 * j + rank;
  if (comm) MPIX_Comm_free(&comm);
  if (!right) std::printf("rank %d: wrong (rc %d)\n", rank, rc);
  MPI_Finalize();
  return right ? 0 : 1;
}
