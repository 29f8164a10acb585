/* What the library's nonblocking collectives cost over the blocking ones on real MPI:
 * MPI_Allreduce against MPI_Iallreduce + MPI_Wait of 168 bytes (the agreement record
 * of a _plan call), 20000 calls, 7 runs. Since commit fe4e9b7 the MPI build makes its
 * collectives in the nonblocking form, waited for while started requests move on
 * (src/core/progress.hpp). Its output is in bench/results/iallreduce-cost.txt:
 *   mpicc.mpich -O2 bench/iallreduce-cost.c -o /tmp/iac && mpiexec.mpich -n 2 /tmp/iac
 *   mpicc.openmpi -O2 bench/iallreduce-cost.c -o /tmp/iac && mpirun.openmpi -n 2 /tmp/iac */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return x < y ? -1 : x > y; }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long long in[21], out[21];
  for (int i = 0; i < 21; ++i) in[i] = rank + i;
  enum { N = 20000, RUNS = 7 };
  double blocking[RUNS], nonblocking[RUNS];
  for (int run = 0; run < RUNS; ++run) {
    for (int mode = 0; mode < 2; ++mode) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      for (int i = 0; i < N; ++i) {
        if (mode == 0) MPI_Allreduce(in, out, 21, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        else { MPI_Request r; MPI_Iallreduce(in, out, 21, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
      }
      t = (MPI_Wtime() - t) / N * 1e6;
      if (mode == 0) blocking[run] = t; else nonblocking[run] = t;
    }
  }
  qsort(blocking, RUNS, sizeof(double), cmp); qsort(nonblocking, RUNS, sizeof(double), cmp);
  if (rank == 0) printf("us per call, median of %d runs of %d [min, max]: MPI_Allreduce %.2f [%.2f, %.2f]; MPI_Iallreduce+MPI_Wait %.2f [%.2f, %.2f]\n",
                        RUNS, N, blocking[RUNS/2], blocking[0], blocking[RUNS-1], nonblocking[RUNS/2], nonblocking[0], nonblocking[RUNS-1]);
  MPI_Finalize();
  return 0;
}
