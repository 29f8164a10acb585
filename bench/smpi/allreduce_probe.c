/* The agreement's MPI_Allreduce in isolation (bench/allreduce-probe runs it under
 * SMPI): how far apart the ranks leave an MPI_Barrier, and the slowest rank's time
 * of one MPI_Allreduce of a 152-byte record (mpix's agreement: 19 long longs) right
 * after a barrier, as mpix-bench times a call. The allreduce's algorithm is SMPI's
 * choice (--cfg=smpi/allreduce:NAME). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double left = MPI_Wtime();
  double first = 0, last = 0;
  MPI_Reduce(&left, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&left, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  long long record[19] = {0}, agreed[19];
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  MPI_Allreduce(record, agreed, 19, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  const double elapsed = MPI_Wtime() - start;
  double slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%.2f %.2f\n", (last - first) * 1e6, slowest * 1e6);
  MPI_Finalize();
  return 0;
}
