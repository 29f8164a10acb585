// Every registered dense algorithm against MPI_Alltoallv, byte for byte with
// canaries: alltoall and alltoallv, blocking and persistent, every distribution
// and datatype, in place, ranks that send or receive nothing. Run at 1, 2, 3, 4,
// 5, 8 ranks and at 16 ranks with emulated nodes (MPIX_PPN).
#include <catch2/catch.hpp>

#include "core/registry.hpp"
#include "harness.hpp"

using harness::DenseCase;
using harness::Mode;
using mpix::workload::Distribution;

namespace {

struct CommGuard {
  MPIX_Comm* comm = nullptr;
  CommGuard() { MPIX_Comm_init(&comm, MPI_COMM_WORLD); }
  ~CommGuard() { MPIX_Comm_free(&comm); }
};

// Small batches, queues and segments, so that batching, queue waits, several
// segments and trailing remainders all happen even at a few ranks. Keys an
// algorithm does not take are ignored.
const std::vector<std::pair<const char*, std::string>> kSmallParameters = {
    {"mpix_block_count", "3"}, {"mpix_stride", "3"}, {"mpix_max_queue", "4"}, {"mpix_segment_bytes", "40"}};

// At 16 oversubscribed ranks a collective costs tens of milliseconds: there
// persistent requests run two starts on fewer cases, and the datatype sweep keeps
// the types that differ most (holes, mixed signatures, 8-byte elements).
bool large_run() { return harness::world_size() >= 16; }

void check(const DenseCase& c, MPIX_Comm* comm) {
  std::string why;
  bool ok = harness::run_dense_case(c, comm, &why);
  INFO(c.describe() << (why.empty() ? "" : ": " + why));
  CHECK(ok);
}

void run_all(bool alltoall, const std::string& algorithm, MPIX_Comm* comm) {
  const bool large = large_run();
  const int starts = large ? 2 : 3;
  for (Mode mode : {Mode::blocking, Mode::persistent}) {
    const bool full = mode == Mode::blocking || !large;
    // Distributions (alltoall blocks are constant; a few sizes instead).
    if (alltoall) {
      for (long long bytes : {0LL, 4LL, 200LL})
        if (full || bytes == 200)
          check(DenseCase{true, Distribution::constant, bytes, "int", mode, false, starts, algorithm,
                          kSmallParameters},
                comm);
    } else {
      for (Distribution dist : mpix::workload::all_distributions())
        if (full || dist == Distribution::uniform)
          check(DenseCase{false, dist, 200, "int", mode, false, starts, algorithm, kSmallParameters}, comm);
      // Whole exchange empty.
      if (full)
        check(DenseCase{false, Distribution::constant, 0, "int", mode, false, starts, algorithm, kSmallParameters},
              comm);
    }
    // Datatypes.
    for (const auto& types : harness::type_cases()) {
      bool kept = types.name == "vector" || types.name == "mixed" || types.name == "double";
      if (mode == Mode::blocking && (!large || kept))
        check(DenseCase{alltoall, Distribution::uniform, 120, types.name, mode, false, starts, algorithm,
                        kSmallParameters},
              comm);
    }
    if (mode == Mode::persistent && !large)
      check(DenseCase{alltoall, Distribution::uniform, 120, "vector", mode, false, starts, algorithm,
                      kSmallParameters},
            comm);
    // In place, also with holes in the datatype.
    for (const char* types : {"int", "vector"})
      if (!large || std::string(types) == (mode == Mode::blocking ? "vector" : "int"))
        check(DenseCase{alltoall, Distribution::uniform, 96, types, mode, true, starts, algorithm, kSmallParameters},
              comm);
  }
  // Default parameters once.
  check(DenseCase{alltoall, Distribution::uniform, 300, "double", Mode::blocking, false, 1, algorithm, {}}, comm);
}

}  // namespace

TEST_CASE("alltoallv: every registered algorithm equals MPI_Alltoallv", "[alltoallv]") {
  CommGuard guard;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
    SECTION(name) { run_all(false, name, guard.comm); }
  }
}

TEST_CASE("alltoall: every registered algorithm equals MPI_Alltoall", "[alltoall]") {
  CommGuard guard;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
    SECTION(name) { run_all(true, name, guard.comm); }
  }
}

TEST_CASE("auto selection equals MPI_Alltoallv", "[auto]") {
  CommGuard guard;
  for (long long bytes : {16LL, 2000LL, 40000LL}) {
    check(DenseCase{false, Distribution::uniform, bytes, "byte", Mode::blocking, false, 1, "", {}}, guard.comm);
    check(DenseCase{true, Distribution::constant, bytes, "byte", Mode::persistent, false, 2, "", {}}, guard.comm);
  }
}
