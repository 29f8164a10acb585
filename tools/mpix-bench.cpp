// mpix-bench: times MPIX_Alltoall / MPIX_Alltoallv over the algorithms of the
// registry, message sizes and block-size distributions, and prints a table or CSV
// with the times and the plan counters (rounds, messages, bytes, scratch) of each.
// With --op alltoall_crs / alltoallv_crs it times the sparse dynamic data exchange
// on the SpMV pattern of a matrix or on generated patterns, with the inter-node
// message counts of each algorithm.
//
//   mpiexec.mpich -n 4 mpix-bench --op alltoallv --algorithms all
//       --sizes 16,256,4k --dist uniform --iters 20 --ppn 2
//   mpiexec.mpich -n 16 mpix-bench --op alltoallv_crs --matrix tests/data/can_1054.mtx --ppn 4
//
// Every rank parses the same command line, so every rank reaches the same verdict
// on bad options and all of them exit (after MPI_Finalize) with the same status.
// The parts: bench/options.cpp (command line), bench/dense.cpp, bench/sdde.cpp
// (the runs), bench/output.cpp (table, CSV, agreement on failures).
#include <mpi.h>

#include <cstdio>
#include <new>
#include <string>

#include "bench/bench.hpp"
#include "core/dense_args.hpp"

namespace {

int bench_main(int argc, char** argv) {
  using namespace bench;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Options o;
  std::string error = parse_options(argc, argv, &o);
  // Every rank must run the same benchmark: ranks given other options would wait
  // for ever in each other's collectives. Compared as a hash of the arguments; not
  // in the simulated build, where smpirun gives every rank the same command line
  // and a collective more would move the simulated times (see dense.cpp).
  std::string arguments;
  for (int i = 1; i < argc; ++i) arguments.append(argv[i]).push_back('\0');
  const long long hash = mpix::text_hash(arguments);
  const long long mine[2] = {hash, -hash};
  long long all[2] = {mine[0], mine[1]};
#ifndef MPIX_SIMULATED
  MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
#endif
  if (all[0] != -all[1]) {
    if (rank == 0) std::fprintf(stderr, "mpix-bench: the ranks were given different options; give every rank the same\n");
    return 2;
  }
  if (o.help) {
    if (rank == 0) std::fputs(kUsage, stdout);
    return 0;
  }
  if (error.empty()) error = sizes_fit(o.sizes, size);
  if (!error.empty()) {
    if (rank == 0) std::fprintf(stderr, "mpix-bench: %s\nTry 'mpix-bench --help'.\n", error.c_str());
    return 2;
  }

  MPIX_Comm* comm = nullptr;
  int rc = MPIX_Comm_init(&comm, MPI_COMM_WORLD);
  if (rc == MPIX_SUCCESS && o.ppn_given) rc = MPIX_Comm_update_locality(comm, o.ppn);
  if (!all_succeeded(rc, MPI_COMM_WORLD, &error)) {
    if (rank == 0) std::fprintf(stderr, "mpix-bench: %s\n", error.c_str());
    if (comm) MPIX_Comm_free(&comm);
    return 1;
  }
  int nodes = 0, local_size = 0, ppn = 0;
  MPIX_Comm_locality(comm, &nodes, nullptr, &local_size, nullptr);
  MPI_Allreduce(&local_size, &ppn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int status = is_sdde(o.op) ? sdde_main(o, comm, nodes, ppn) : dense_main(o, comm, nodes, ppn);
  MPIX_Comm_free(&comm);
  return status;
}


}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    status = bench_main(argc, argv);
  } catch (const std::bad_alloc&) {
    // Out of memory past the agreed buffer allocation: the other ranks may be
    // inside a collective, so the job ends here, with a message rather than a core.
    std::fprintf(stderr, "mpix-bench: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
