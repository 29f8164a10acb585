// Sparse dynamic data exchange (MPIX_Alltoall_crs, MPIX_Alltoallv_crs): every
// algorithm on generated patterns and on the SpMV halo exchange of SuiteSparse
// matrices, any datatype, recv_nnz / recv_size known or not, isolation from user
// messages and between calls, the rma window, the inter-node message counts of the
// locality-aware algorithms, and auto. Bad arguments: test_sdde_errors.cpp.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/comm.hpp"
#include "harness.hpp"
#include "sdde_patterns.hpp"

using harness::all_ranks;
using harness::Comm;
using harness::message_has;
using namespace sdde_test;

TEST_CASE("SDDE: generated patterns, every algorithm, both operations", "[sdde]") {
  Comm c;
  const int size = harness::world_size();
  int variant = 0;
  for (const std::string& kind : kPatterns) {
    bool ok = true;
    std::string why;
    for (bool alltoallv : {false, true}) {
      if (!alltoallv && kind == "zero_counts") continue;  // constant counts
      Pattern p = make_pattern(kind, size, alltoallv ? -1 : 2);
      // (auto has its own test case)
      for (const std::string& algorithm : names(alltoallv ? mpix::kAlltoallvCrs : mpix::kAlltoallCrs)) {
        Run run;
        run.alltoallv = alltoallv;
        run.algorithm = algorithm;
        run.known = (variant++ % 3) == 1;  // a third of the runs pass recv_nnz / recv_size in
        if (!run_pattern(p, c.comm, run) && ok) {
          ok = false;
          why = (alltoallv ? "alltoallv_crs " : "alltoall_crs ") + (algorithm.empty() ? "auto" : algorithm) +
                (run.known ? " known: " : ": ") + run.why;
        }
      }
    }
    INFO("pattern " << kind << " P=" << size << ": " << why);
    CHECK(all_ranks(ok));
  }
}

TEST_CASE("SDDE: the SpMV halo exchange of SuiteSparse matrices", "[sdde][suitesparse]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  for (const char* file : {"dwt_162.mtx", "west0132.mtx", "gams10a.mtx", "can_1054.mtx"}) {
    Matrix a = read_matrix_market(std::string(MPIX_TEST_DATA) + "/" + file);
    REQUIRE(a.rows > 0);  // every rank reads the same file
    std::vector<std::map<int, std::vector<int>>> needs = halo(a, size);
    // This rank asks each owner for the columns it needs: dest = owners, sendvals =
    // the column indices; the owner must receive exactly them.
    std::vector<int> dest, counts, displs, indices, column_counts;
    for (const auto& kv : needs[rank]) {
      dest.push_back(kv.first);
      counts.push_back((int)kv.second.size());
      displs.push_back((int)indices.size());
      indices.insert(indices.end(), kv.second.begin(), kv.second.end());
      column_counts.push_back((int)kv.second.size());
    }
    std::map<int, std::vector<int>> expected;  // requester -> my columns it needs
    for (int r = 0; r < size; ++r) {
      auto it = needs[r].find(rank);
      if (it != needs[r].end()) expected[r] = it->second;
    }
    bool ok = true;
    std::string why;
    for (const std::string& algorithm : names(mpix::kAlltoallvCrs)) {
      harness::Info info{{"mpix_alltoallv_crs_algorithm", algorithm}};
      int recv_nnz = -1, recv_size = -1;
      int *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
      void* vals = nullptr;
      int rc = MPIX_Alltoallv_crs((int)dest.size(), (int)indices.size(), dest.data(), counts.data(), displs.data(),
                                  MPI_INT, indices.data(), &recv_nnz, &recv_size, &src, &rcounts, &rdispls, MPI_INT,
                                  &vals, info.info, c.comm);
      std::map<int, std::vector<int>> got;
      if (rc == MPIX_SUCCESS)
        for (int i = 0; i < recv_nnz; ++i) {
          const int* v = static_cast<const int*>(vals) + rdispls[i];
          got[src[i]] = std::vector<int>(v, v + rcounts[i]);
        }
      if ((rc != MPIX_SUCCESS || got != expected) && ok) {
        ok = false;
        why = "alltoallv_crs " + algorithm + (rc ? std::string(": ") + MPIX_Last_error_message() : ": wrong indices");
      }
      MPIX_Free(src);
      MPIX_Free(rcounts);
      MPIX_Free(rdispls);
      MPIX_Free(vals);
    }
    // The constant-size form: each requester sends one int, how many columns it needs.
    for (const std::string& algorithm : names(mpix::kAlltoallCrs)) {
      harness::Info info{{"mpix_alltoall_crs_algorithm", algorithm}};
      int recv_nnz = -1;
      int* src = nullptr;
      void* vals = nullptr;
      int rc = MPIX_Alltoall_crs((int)dest.size(), dest.data(), 1, MPI_INT, column_counts.data(), &recv_nnz, &src, 1,
                                 MPI_INT, &vals, info.info, c.comm);
      std::map<int, int> got, want;
      for (const auto& kv : expected) want[kv.first] = (int)kv.second.size();
      if (rc == MPIX_SUCCESS)
        for (int i = 0; i < recv_nnz; ++i) got[src[i]] = static_cast<const int*>(vals)[i];
      if ((rc != MPIX_SUCCESS || got != want) && ok) {
        ok = false;
        why = "alltoall_crs " + algorithm + (rc ? std::string(": ") + MPIX_Last_error_message() : ": wrong counts");
      }
      MPIX_Free(src);
      MPIX_Free(vals);
    }
    INFO(file << " P=" << size << ": " << why);
    CHECK(all_ranks(ok));
  }
}

// The random pattern with datatypes `types` through every algorithm of both calls
// that `wanted` accepts (optionally from MPI_BOTTOM): empty on this rank when all
// were right, else the first that was not and why. Every call is made on every
// rank whatever failed before: they are collective.
template <class Wanted>
std::string every_algorithm(MPIX_Comm* comm, const char* types, bool bottom, Wanted wanted) {
  std::string why;
  for (bool alltoallv : {false, true}) {
    Pattern p = make_pattern("random", harness::world_size(), alltoallv ? -1 : 3);
    for (const std::string& algorithm : names(alltoallv ? mpix::kAlltoallvCrs : mpix::kAlltoallCrs)) {
      if (!wanted(alltoallv, algorithm)) continue;
      Run run;
      run.units = 3;
      run.alltoallv = alltoallv;
      run.algorithm = algorithm;
      run.types = types;
      run.bottom = bottom;
      if (!run_pattern(p, comm, run) && why.empty())
        why = std::string(alltoallv ? "alltoallv_crs " : "alltoall_crs ") + algorithm + ": " + run.why;
    }
  }
  return why;
}

TEST_CASE("SDDE: any datatype (double, derived with holes or out of order, different send and receive types)",
          "[sdde][types]") {
  Comm c;
  // Derived types through every algorithm; double (a basic type of another size
  // than int) through one algorithm per operation.
  // Not "repeated": the pattern is written into the send type by MPI_Unpack, which
  // a type that repeats an element cannot hold.
  for (const char* types : {"vector", "mixed", "reversed", "double"}) {
    const std::string why = every_algorithm(c.comm, types, false, [&](bool alltoallv, const std::string& algorithm) {
      return std::string(types) != "double" || algorithm == (alltoallv ? "nonblocking_loc" : "rma");
    });
    INFO("types " << types << ": " << why);
    CHECK(all_ranks(why.empty()));
  }
}

// MPI_BOTTOM with absolute addresses, as the dense calls take it (until 2026-11-29
// refused as "sendvals is NULL"): contiguous and with holes, every algorithm.
TEST_CASE("SDDE: sendvals MPI_BOTTOM with an absolute-address send type, every algorithm", "[sdde][types][bottom]") {
  Comm c;
  for (const char* types : {"int", "vector"}) {
    const std::string why =
        every_algorithm(c.comm, types, true, [](bool, const std::string&) { return true; });
    INFO("types " << types << ": " << why);
    CHECK(all_ranks(why.empty()));
  }
}

TEST_CASE("SDDE: recv_nnz / recv_size passed in skip discovery; results equal", "[sdde][known]") {
  Comm c;
  const int size = harness::world_size();
  Pattern p = make_pattern("random", size, -1);
  for (const char* algorithm : {"personalized", "nonblocking"}) {
    for (bool known : {false, true}) {
      Run run;
      run.algorithm = algorithm;
      run.known = known;
      bool ok = run_pattern(p, c.comm, run);
      // Discovery is the reduction (personalized) or the barrier (NBX): one
      // collective unless every rank knows what it receives (then the agreement
      // checks the totals instead, sdde.cpp).
      int collectives = c.comm->sdde_stats.collectives;
      INFO(algorithm << (known ? " known" : " unknown") << ": " << run.why << " collectives=" << collectives);
      CHECK(all_ranks(ok));
      CHECK(all_ranks(collectives == (known ? 0 : 1)));
    }
  }
  // Known on some ranks only: discovery cannot be skipped (it is collective), and
  // the result is still right.
  Run run;
  run.algorithm = "personalized";
  run.known = harness::world_rank() % 2 == 0;
  bool ok = run_pattern(p, c.comm, run);
  INFO(run.why);
  CHECK(all_ranks(ok));
  CHECK(all_ranks(c.comm->sdde_stats.collectives == (size == 1 ? 0 : 1)));  // P = 1: known everywhere
}

TEST_CASE("SDDE: a user's message pending on the communicator is never received by the library",
          "[sdde][isolation]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  // A message to the right neighbour on the user's communicator, with tag 0 (the
  // library's first tag on its own communicator) and an int payload like the SDDE's.
  int out = 7000 + rank, in = -1;
  MPI_Request send;
  MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, &send);
  Pattern p = make_pattern("random", size, 1);
  bool ok = true;
  std::string why;
  for (bool alltoallv : {false, true})
    for (const std::string& algorithm : names(alltoallv ? mpix::kAlltoallvCrs : mpix::kAlltoallCrs)) {
      Run run;
      run.units = 1;
      run.alltoallv = alltoallv;
      run.algorithm = algorithm;
      if (!run_pattern(p, c.comm, run) && ok) {
        ok = false;
        why = algorithm + ": " + run.why;
      }
    }
  INFO(why);
  CHECK(all_ranks(ok));
  MPI_Status status;
  int pending = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pending, &status);
  MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  CHECK(all_ranks(in == 7000 + (rank - 1 + size) % size));
}

TEST_CASE("SDDE: consecutive calls with no synchronisation between them never mix", "[sdde][isolation]") {
  Comm c;
  const int size = harness::world_size();
  // Back-to-back calls with different patterns; a fast rank starts the next call
  // while others still receive in the previous one.
  Pattern a = make_pattern("powerlaw", size, -1), b = make_pattern("random", size, -1),
          d = make_pattern("dense", size, -1);
  bool ok = true;
  std::string why;
  for (const std::string& algorithm : names(mpix::kAlltoallvCrs))
      for (const Pattern* p : {&a, &b, &d}) {
        Run run;
        run.algorithm = algorithm;
        if (!run_pattern(*p, c.comm, run) && ok) {
          ok = false;
          why = algorithm + ": " + run.why;
        }
      }
  INFO(why);
  CHECK(all_ranks(ok));
}

TEST_CASE("SDDE: empty exchanges on all ranks; outputs are never NULL", "[sdde]") {
  Comm c;
  bool ok = true;
  for (const std::string& algorithm : names(mpix::kAlltoallCrs)) {
    harness::Info info{{"mpix_alltoall_crs_algorithm", algorithm}};
    int recv_nnz = -1, *src = nullptr;
    void* vals = nullptr;
    int rc = MPIX_Alltoall_crs(0, nullptr, 4, MPI_INT, nullptr, &recv_nnz, &src, 4, MPI_INT, &vals, info.info,
                               c.comm);
    ok = ok && rc == MPIX_SUCCESS && recv_nnz == 0 && src && vals;
    MPIX_Free(src);
    MPIX_Free(vals);
  }
  for (const std::string& algorithm : names(mpix::kAlltoallvCrs)) {
    harness::Info info{{"mpix_alltoallv_crs_algorithm", algorithm}};
    int recv_nnz = 0, recv_size = 0, *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
    void* vals = nullptr;
    int rc = MPIX_Alltoallv_crs(0, 0, nullptr, nullptr, nullptr, MPI_INT, nullptr, &recv_nnz, &recv_size, &src,
                                &rcounts, &rdispls, MPI_INT, &vals, info.info, c.comm);
    ok = ok && rc == MPIX_SUCCESS && recv_nnz == 0 && recv_size == 0 && src && rcounts && rdispls && vals;
    MPIX_Free(src);
    MPIX_Free(rcounts);
    MPIX_Free(rdispls);
    MPIX_Free(vals);
  }
  CHECK(all_ranks(ok));
  CHECK(MPIX_Free(nullptr) == MPIX_SUCCESS);
}

TEST_CASE("SDDE rma: zero data arrives; the window is kept, reused and grown", "[sdde][rma]") {
  Comm c;
  const int size = harness::world_size();
  Pattern p = make_pattern("random", size, 2);
  Run run;
  run.alltoallv = false;
  run.algorithm = "rma";
  run.zero_data = true;  // the paper's non-zero test would miss every message
  bool ok = run_pattern(p, c.comm, run);
  INFO(run.why);
  CHECK(all_ranks(ok));
  MPI_Win first = c.comm->sdde_window.win;
  MPI_Aint first_bytes = c.comm->sdde_window.bytes;
  CHECK(all_ranks(first != MPI_WIN_NULL && c.comm->sdde_window.epoch == 1));
  // Same size: the same window, next epoch; marks of the first call do not count.
  Pattern q = make_pattern("one_to_all", size, 2);
  run.zero_data = false;
  ok = run_pattern(q, c.comm, run);
  CHECK(all_ranks(ok && c.comm->sdde_window.win == first && c.comm->sdde_window.epoch == 2));
  // Larger messages (160 bytes): a larger window (sizes are rounded to 64 bytes).
  Pattern r = make_pattern("dense", size, 40);
  run.units = 40;
  ok = run_pattern(r, c.comm, run);
  INFO(run.why);
  run.units = 2;
  CHECK(all_ranks(ok && c.comm->sdde_window.bytes > first_bytes && c.comm->sdde_window.epoch == 1));
  // Smaller again: kept.
  ok = run_pattern(q, c.comm, run);
  CHECK(all_ranks(ok && c.comm->sdde_window.epoch == 2));
}

TEST_CASE("SDDE locality-aware: correct on every node layout; fewer inter-node messages", "[sdde][locality]") {
  Comm c;
  const int size = harness::world_size();
  // Node layouts: nodes of 2, nodes of 3 (the last one smaller unless 3 divides P),
  // and the environment's (MPIX_PPN; unset: one node) at the end.
  const char* env = std::getenv("MPIX_PPN");
  const int env_ppn = env && *env ? std::atoi(env) : 0;
  for (int ppn : {2, 3, env_ppn}) {
    REQUIRE(MPIX_Comm_update_locality(c.comm, ppn) == MPIX_SUCCESS);  // same on every rank
    int nodes = 0;
    MPIX_Comm_locality(c.comm, &nodes, nullptr, nullptr, nullptr);
    bool ok = true;
    std::string why;
    for (const char* kind : {"dense", "random"}) {
      Pattern p = make_pattern(kind, size, -1);
      long long direct_max = 0;
      for (const char* algorithm : {"personalized", "personalized_loc", "nonblocking_loc"}) {
        Run run;
        run.algorithm = algorithm;
        run.locality = "node";  // whatever MPIX_LOCALITY says (the region level has its own case)
        if (!run_pattern(p, c.comm, run) && ok) {
          ok = false;
          why = std::string(kind) + " " + algorithm + ": " + run.why;
        }
        long long mine = c.comm->sdde_stats.inter_node_messages, most = 0;
        MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        if (std::string(algorithm) == "personalized") {
          direct_max = most;
        } else if (most > std::min<long long>(direct_max, nodes - 1) && ok) {
          // Aggregated: at most one message per other node, never more than direct.
          ok = false;
          why = std::string(kind) + " " + algorithm + ": " + std::to_string(most) + " inter-node messages";
        }
        if (std::string(kind) == "dense" && nodes > 1 && size / nodes >= 2 && most >= direct_max &&
            std::string(algorithm) != "personalized" && ok) {
          ok = false;  // dense with several ranks per node: aggregation must cut the count
          why = std::string("dense ") + algorithm + ": no fewer inter-node messages than direct";
        }
      }
    }
    INFO("ppn=" << ppn << " nodes=" << nodes << ": " << why);
    CHECK(all_ranks(ok));
  }
}

// mpix_locality=region: the same algorithms aggregate per region. Regions of 2 and
// of 3 ranks on nodes of 4 (3 does not divide 4; the last node smaller unless 4
// divides P), and regions of 1 (every rank its own region). Correct, and at most
// one inter-node message per region of another node from each rank.
TEST_CASE("SDDE locality-aware per region: correct on region layouts that do and do not divide the node",
          "[sdde][locality][regions]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  REQUIRE(MPIX_Comm_update_locality(c.comm, 4) == MPIX_SUCCESS);
  for (int per_region : {2, 3, 1}) {
    REQUIRE(MPIX_Comm_update_regions(c.comm, per_region) == MPIX_SUCCESS);
    // Regions of other nodes: the bound on one rank's inter-node aggregates.
    const mpix::Locality& nodes = c.comm->locality;
    long long far_regions = 0;
    for (int n = 0; n < nodes.num_nodes(); ++n)
      if (n != nodes.node_of(rank)) far_regions += ((long long)nodes.node_ranks(n).size() + per_region - 1) / per_region;
    bool ok = true;
    std::string why;
    for (const char* kind : {"dense", "random", "stencil2d"}) {
      for (bool alltoallv : {true, false}) {
        Pattern p = make_pattern(kind, size, alltoallv ? -1 : 2);
        for (const char* algorithm : {"personalized_loc", "nonblocking_loc"}) {
          Run run;
          run.alltoallv = alltoallv;
          run.algorithm = algorithm;
          run.locality = "region";
          run.known = alltoallv && std::string(kind) == "random";
          if (!run_pattern(p, c.comm, run) && ok) {
            ok = false;
            why = std::string(kind) + " " + algorithm + ": " + run.why;
          }
          if (c.comm->sdde_stats.inter_node_messages > far_regions && ok) {
            ok = false;
            why = std::string(kind) + " " + algorithm + ": " + std::to_string(c.comm->sdde_stats.inter_node_messages) +
                  " inter-node messages for " + std::to_string(far_regions) + " regions on other nodes";
          }
        }
      }
    }
    INFO("ppn=4 ranks_per_region=" << per_region << ": " << why);
    CHECK(all_ranks(ok));
  }
  // Without regions (one per node), region means the node.
  REQUIRE(MPIX_Comm_update_regions(c.comm, 4) == MPIX_SUCCESS);
  CHECK(&mpix::locality_level(c.comm, mpix::Level::region) == &c.comm->locality);
  REQUIRE(MPIX_Comm_update_locality(c.comm, 0) == MPIX_SUCCESS);
  REQUIRE(MPIX_Comm_update_regions(c.comm, 0) == MPIX_SUCCESS);
}
TEST_CASE("SDDE auto: a registered algorithm, chosen alike on every rank", "[sdde][auto]") {
  Comm c;
  const int size = harness::world_size();
  for (const char* kind : {"random", "dense"}) {
    Run run;
    Pattern p = make_pattern(kind, size, -1);
    bool ok = run_pattern(p, c.comm, run);
    std::string chosen = c.comm->sdde_stats.algorithm;
    INFO(kind << ": " << run.why << " chose " << chosen);
    CHECK(all_ranks(ok && mpix::find_algorithm(chosen, mpix::kAlltoallvCrs) != nullptr));
    // Same choice everywhere: compare a hash of the name.
    long long h = (long long)std::hash<std::string>()(chosen) & 0xffffffff, hmax = 0, hmin = 0;
    MPI_Allreduce(&h, &hmax, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hmin, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    CHECK(hmax == hmin);
  }
}

TEST_CASE("SDDE under MPIX_VERBOSE: each distinct decision at 1 and yes; every call at 2", "[sdde][auto]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  Pattern p = make_pattern("random", size, -1);
  // Rank 0's stderr goes to a file for the calls (the lines are printed there).
  auto lines_printed = [&](const char* verbose, int calls) {
    setenv("MPIX_VERBOSE", verbose, 1);
    std::fflush(stderr);
    char path[] = "/tmp/mpix_test_verbose_XXXXXX";
    const int file = mkstemp(path);
    const int saved = dup(2);
    dup2(file, 2);
    bool ok = true;
    for (int call = 0; call < calls; ++call) {
      Run run;
      ok = run_pattern(p, c.comm, run) && ok;
    }
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(file);
    std::ifstream in(path);
    int count = 0;
    for (std::string line; std::getline(in, line);) count += line.rfind("[mpix] alltoallv_crs", 0) == 0;
    std::remove(path);
    unsetenv("MPIX_VERBOSE");
    CHECK(all_ranks(ok));
    return count;
  };
  // A new communicator for each, so that nothing was reported on it before.
  for (const char* verbose : {"1", "yes", "2"}) {
    Comm fresh;
    std::swap(c.comm, fresh.comm);
    const int count = lines_printed(verbose, 2);
    std::swap(c.comm, fresh.comm);
    INFO("MPIX_VERBOSE=" << verbose);
    CHECK(count == (rank != 0 ? 0 : std::string(verbose) == "2" ? 2 : 1));
  }
  CHECK(lines_printed("0", 1) == 0);
}
