// The Catch2 main of every test program: all ranks run the same test cases in the
// same order; the failure count is reduced so that every rank exits with the same
// status, and rank 0 says which ranks failed. Ranks other than 0 write their report
// to a file that is shown only if they failed.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Catch::Session session;
  int rc = session.applyCommandLine(argc, argv);
  std::string log;
  if (rc == 0 && rank != 0) {
    log = "/tmp/mpix-test-" + std::to_string(getpid()) + "-rank" + std::to_string(rank) + ".log";
    session.configData().outputFilename = log;
  }
  int failures = rc == 0 ? session.run() : 1;
  // Catch2 returns how many tests or tags it listed, not failures.
  const Catch::ConfigData& config = session.configData();
  if (rc == 0 && (config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters)) failures = 0;

  int failed = failures != 0;
  std::vector<int> all(size);
  MPI_Gather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any) {
    std::string ranks;
    for (int r = 0; r < size; ++r)
      if (all[r]) ranks += " " + std::to_string(r);
    std::fprintf(stderr, "test failures on %d rank(s) of %d; failing ranks:%s\n", (int)std::count(all.begin(), all.end(), 1),
                 size, ranks.c_str());
  }
  // One rank at a time shows its report when it failed.
  for (int r = 1; r < size; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == rank && failed && !log.empty()) {
      std::ifstream in(log);
      std::cerr << "---- report of rank " << rank << " ----\n" << in.rdbuf() << std::flush;
    }
  }
  if (!log.empty()) std::remove(log.c_str());
  MPI_Finalize();
  return any ? 1 : 0;
}
