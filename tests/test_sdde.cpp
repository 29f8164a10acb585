// Sparse dynamic data exchange (MPIX_Alltoall_crs, MPIX_Alltoallv_crs): every
// algorithm on generated patterns and on the SpMV halo exchange of SuiteSparse
// matrices, any datatype, recv_nnz / recv_size known or not, isolation from user
// messages and between calls, errors agreed between ranks, the rma window, and the
// inter-node message counts of the locality-aware algorithms.
//
// Every rank computes the whole pattern (P is small), so each knows exactly what
// it must receive; the order of received messages is not specified, so results are
// compared by source.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/comm.hpp"
#include "core/registry.hpp"
#include "harness.hpp"

using harness::all_ranks;
using harness::Comm;
using harness::message_has;
using mpix::workload::block_owner;

namespace {


std::vector<std::string> names(mpix::Op op) { return mpix::algorithm_names(op); }

// --- patterns ---------------------------------------------------------------------

struct Msg {
  int dest;
  int units;  // units of data (a unit: send_per_unit / recv_per_unit elements of a TypeCase)
};
using Pattern = std::vector<std::vector<Msg>>;  // [source] -> its messages

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x9e3779b97f4a7c15ull;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 32);
}

// Units of the message s -> d: constant for alltoall_crs, else 1..5 (0..4 with
// `zeros`, where a message may carry no data and is still a message).
int units_of(int s, int d, int constant, bool zeros) {
  if (constant >= 0) return constant;
  std::uint64_t h = mix((std::uint64_t)s * 1000003u + (std::uint64_t)d);
  return zeros ? (int)(h % 5) : 1 + (int)(h % 5);
}

// Near-square factorizations of P for the stencils.
std::vector<int> grid(int size, int dims) {
  std::vector<int> g(dims, 1);
  int rest = size;
  for (int k = 0; k < dims; ++k) {
    int target = (int)std::lround(std::pow((double)rest, 1.0 / (dims - k)));
    int f = std::max(1, target);
    while (f > 1 && rest % f) --f;
    g[k] = f;
    rest /= f;
  }
  g[dims - 1] *= rest;
  return g;
}

Pattern stencil(int size, int dims, int constant) {
  std::vector<int> g = grid(size, dims);
  while ((int)g.size() < 3) g.push_back(1);
  Pattern p(size);
  for (int r = 0; r < size; ++r) {
    int x = r % g[0], y = (r / g[0]) % g[1], z = r / (g[0] * g[1]);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (!dx && !dy && !dz) continue;
          int nx = x + dx, ny = y + dy, nz = z + dz;
          if (nx < 0 || ny < 0 || nz < 0 || nx >= g[0] || ny >= g[1] || nz >= g[2]) continue;
          int d = nx + g[0] * (ny + g[1] * nz);
          p[r].push_back({d, units_of(r, d, constant, false)});
        }
  }
  return p;
}

// `kind` names a generated pattern; every rank builds the same one.
Pattern make_pattern(const std::string& kind, int size, int constant) {
  Pattern p(size);
  std::mt19937 rng(12345u + (unsigned)size);
  auto add = [&](int s, int d, bool zeros = false) { p[s].push_back({d, units_of(s, d, constant, zeros)}); };
  if (kind == "empty") return p;
  if (kind == "self") {
    for (int r = 0; r < size; ++r) add(r, r);
  } else if (kind == "stencil2d") {
    return stencil(size, 2, constant);
  } else if (kind == "stencil3d") {
    return stencil(size, 3, constant);
  } else if (kind == "random" || kind == "zero_counts") {
    // Up to 4 distinct destinations (self included at times); some ranks send nothing.
    for (int s = 0; s < size; ++s) {
      int k = (int)(rng() % (unsigned)(std::min(size, 4) + 1));
      std::vector<int> all(size);
      for (int d = 0; d < size; ++d) all[d] = d;
      std::shuffle(all.begin(), all.end(), rng);
      for (int i = 0; i < k; ++i) add(s, all[i], kind == "zero_counts");
    }
  } else if (kind == "powerlaw") {
    // Rank r sends to about P / (r + 1) ranks: a few senders of high degree.
    for (int s = 0; s < size; ++s) {
      int k = std::min(size, size / (s + 1));
      std::vector<int> all(size);
      for (int d = 0; d < size; ++d) all[d] = d;
      std::shuffle(all.begin(), all.end(), rng);
      for (int i = 0; i < k; ++i) add(s, all[i]);
    }
  } else if (kind == "all_to_one") {
    for (int s = 0; s < size; ++s) add(s, size - 1);
  } else if (kind == "one_to_all") {
    for (int d = 0; d < size; ++d) add(0, d);
  } else if (kind == "dense") {
    for (int s = 0; s < size; ++s)
      for (int d = 0; d < size; ++d) add(s, (s + d) % size);
  } else {
    FAIL("unknown pattern " << kind);
  }
  return p;
}

const std::vector<std::string> kPatterns = {"empty", "self", "stencil2d", "stencil3d", "random",
                                            "zero_counts", "powerlaw", "all_to_one", "one_to_all", "dense"};

// Byte k of the packed data of the message s -> d.
unsigned char content(int s, int d, long long k) { return (unsigned char)(mix(((std::uint64_t)s << 40) ^ ((std::uint64_t)d << 20) ^ (std::uint64_t)k) & 0xff); }

// --- running one exchange -------------------------------------------------------

struct Run {
  bool alltoallv = true;
  std::string algorithm;     // empty: auto
  std::string types = "int"; // a harness::TypeCase
  bool known = false;        // pass recv_nnz (and recv_size) in
  bool zero_data = false;    // every byte of data is 0 (rma must still see the messages)
  int units = 2;             // alltoall_crs: units of every message (as in make_pattern)
  std::string locality;      // mpix_locality; empty: the environment's (MPIX_LOCALITY)
  int rc = MPIX_SUCCESS;
  std::string why;           // first problem on this rank
};

// Runs pattern `p` on `comm`; true on this rank when the call succeeded and the
// received messages are exactly those of the pattern, byte for byte.
bool run_pattern(const Pattern& p, MPIX_Comm* comm, Run& run) {
  const int rank = harness::world_rank(), size = harness::world_size();
  const harness::TypeCase& tc = harness::type_case(run.types);
  MPI_Aint lb, sext, rext;
  MPI_Type_get_extent(tc.send, &lb, &sext);
  MPI_Type_get_extent(tc.recv, &lb, &rext);
  const std::vector<Msg>& mine = p[rank];
  const int n = (int)mine.size();

  // Send side: messages laid out in reverse order with a gap element between them,
  // so that sdispls matter (alltoall_crs: packed in order, as its API implies).
  std::vector<int> dest(n), counts(n), displs(n);
  long long cursor = 0;
  for (int k = 0; k < n; ++k) {
    int i = run.alltoallv ? n - 1 - k : k;
    dest[i] = mine[i].dest;
    counts[i] = mine[i].units * tc.send_per_unit;
    if (run.alltoallv) cursor += 1;
    displs[i] = (int)cursor;
    cursor += counts[i];
  }
  std::vector<char> sendbuf((std::size_t)(cursor + 1) * sext + 64, 0);
  for (int i = 0; i < n; ++i) {
    std::vector<unsigned char> packed((std::size_t)mine[i].units * tc.unit_bytes);
    if (packed.empty()) continue;  // Open MPI refuses MPI_Unpack from a NULL buffer
    for (std::size_t k = 0; k < packed.size(); ++k) packed[k] = run.zero_data ? 0 : content(rank, dest[i], (long long)k);
    int position = 0;
    MPI_Unpack(packed.data(), (int)packed.size(), &position, sendbuf.data() + (MPI_Aint)displs[i] * sext, counts[i],
               tc.send, MPI_COMM_WORLD);
  }

  // What must arrive.
  std::map<int, int> expected;  // source -> units
  long long expected_elements = 0;
  for (int s = 0; s < size; ++s)
    for (const Msg& m : p[s])
      if (m.dest == rank) {
        expected[s] = m.units;
        expected_elements += (long long)m.units * tc.recv_per_unit;
      }

  harness::Info info;
  if (!run.algorithm.empty())
    info.set(run.alltoallv ? "mpix_alltoallv_crs_algorithm" : "mpix_alltoall_crs_algorithm", run.algorithm);
  if (!run.locality.empty()) info.set("mpix_locality", run.locality);
  if (run.known) info.set("mpix_recv_counts_known", "true");
  // Outputs only unless known: what MPI Advance's callers pass (nothing set).
  int recv_nnz = run.known ? (int)expected.size() : 32000;
  int recv_size = run.known ? (int)expected_elements : 32000;
  int *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
  void* rvals = nullptr;
  const int constant = run.units;
  const int recvcount = constant * tc.recv_per_unit;
  if (run.alltoallv) {
    run.rc = MPIX_Alltoallv_crs(n, (int)cursor, dest.data(), counts.data(), displs.data(), tc.send,
                                sendbuf.data(), &recv_nnz, &recv_size, &src, &rcounts, &rdispls, tc.recv, &rvals,
                                info.info, comm);
  } else {
    run.rc = MPIX_Alltoall_crs(n, dest.data(), constant * tc.send_per_unit, tc.send, sendbuf.data(), &recv_nnz,
                               &src, recvcount, tc.recv, &rvals, info.info, comm);
  }
  bool ok = true;
  auto problem = [&](const std::string& why) {
    if (ok) run.why = why;
    ok = false;
  };
  if (run.rc != MPIX_SUCCESS) {
    problem(std::string("error: ") + MPIX_Last_error_message());
    return false;
  }
  if (!src || !rvals || (run.alltoallv && (!rcounts || !rdispls))) problem("an output is NULL");
  if (ok && recv_nnz != (int)expected.size())
    problem("recv_nnz=" + std::to_string(recv_nnz) + ", expected " + std::to_string(expected.size()));
  if (ok && run.alltoallv && recv_size != (int)expected_elements)
    problem("recv_size=" + std::to_string(recv_size) + ", expected " + std::to_string(expected_elements));
  std::set<int> seen;
  std::vector<std::pair<long long, long long>> ranges;
  for (int i = 0; ok && i < recv_nnz; ++i) {
    int s = src[i];
    if (!expected.count(s) || !seen.insert(s).second) {
      problem("unexpected or repeated source " + std::to_string(s));
      break;
    }
    int count = run.alltoallv ? rcounts[i] : recvcount;
    long long displ = run.alltoallv ? rdispls[i] : (long long)i * recvcount;
    if (count != expected[s] * tc.recv_per_unit) {
      problem("count from " + std::to_string(s) + " is " + std::to_string(count));
      break;
    }
    if (displ < 0 || displ + count > expected_elements) {
      problem("rdispls out of range");
      break;
    }
    ranges.push_back({displ, displ + count});
    std::vector<unsigned char> packed((std::size_t)expected[s] * tc.unit_bytes + 1);
    int position = 0;
    MPI_Pack(static_cast<char*>(rvals) + displ * rext, count, tc.recv, packed.data(), (int)packed.size(), &position,
             MPI_COMM_WORLD);
    for (int k = 0; k < position; ++k)
      if (packed[k] != (run.zero_data ? 0 : content(s, rank, k))) {
        problem("data from " + std::to_string(s) + " differs at byte " + std::to_string(k));
        break;
      }
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; ok && i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) problem("received messages overlap in recvvals");
  MPIX_Free(src);
  MPIX_Free(rcounts);
  MPIX_Free(rdispls);
  MPIX_Free(rvals);
  return ok;
}

// --- SuiteSparse: the SpMV halo exchange -----------------------------------------

struct Matrix {
  int rows = 0, cols = 0;
  std::vector<std::pair<int, int>> entries;  // (row, col), 0-based, symmetric ones mirrored
};

Matrix read_matrix_market(const std::string& path) {
  Matrix m;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const bool symmetric = line.find("symmetric") != std::string::npos;
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  long long nnz = 0;
  std::istringstream(line) >> m.rows >> m.cols >> nnz;
  for (long long k = 0; k < nnz && std::getline(in, line); ++k) {
    int i = 0, j = 0;
    std::istringstream(line) >> i >> j;
    m.entries.push_back({i - 1, j - 1});
    if (symmetric && i != j) m.entries.push_back({j - 1, i - 1});
  }
  return m;
}


// needs[r][q]: the columns (entries of x) owned by q that rank r's rows use, sorted.
std::vector<std::map<int, std::vector<int>>> halo(const Matrix& a, int size) {
  std::vector<std::map<int, std::set<int>>> sets(size);
  for (const auto& e : a.entries) {
    int r = block_owner(a.rows, size, e.first), q = block_owner(a.cols, size, e.second);
    if (q != r) sets[r][q].insert(e.second);
  }
  std::vector<std::map<int, std::vector<int>>> needs(size);
  for (int r = 0; r < size; ++r)
    for (auto& kv : sets[r]) needs[r][kv.first] = std::vector<int>(kv.second.begin(), kv.second.end());
  return needs;
}

}  // namespace

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

TEST_CASE("SDDE: any datatype (double, derived with holes or out of order, different send and receive types)",
          "[sdde][types]") {
  Comm c;
  const int size = harness::world_size();
  // Derived types through every algorithm; double (a basic type of another size
  // than int) through one algorithm per operation.
  // Not "repeated": the pattern is written into the send type by MPI_Unpack, which
  // a type that repeats an element cannot hold.
  for (const char* types : {"vector", "mixed", "reversed", "double"}) {
    bool ok = true;
    std::string why;
    for (bool alltoallv : {false, true}) {
      Pattern p = make_pattern("random", size, alltoallv ? -1 : 3);
      for (const std::string& algorithm : names(alltoallv ? mpix::kAlltoallvCrs : mpix::kAlltoallCrs)) {
        if (std::string(types) == "double" && algorithm != (alltoallv ? "nonblocking_loc" : "rma")) continue;
        Run run;
        run.units = 3;
        run.alltoallv = alltoallv;
        run.algorithm = algorithm;
        run.types = types;
        if (!run_pattern(p, c.comm, run) && ok) {
          ok = false;
          why = std::string(alltoallv ? "alltoallv_crs " : "alltoall_crs ") + algorithm + ": " + run.why;
        }
      }
    }
    INFO("types " << types << ": " << why);
    CHECK(all_ranks(ok));
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

TEST_CASE("SDDE: invalid arguments fail on every rank; the communicator stays usable", "[sdde][errors]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  int value = rank, recv_nnz = -1, recv_size = -1;
  int *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
  void* vals = nullptr;
  int self = rank;
  auto crs = [&](int send_nnz, const int* dest, int sendcount, MPI_Datatype type, int* nnz, int** s, void** v,
                 int recvcount) {
    return MPIX_Alltoall_crs(send_nnz, dest, sendcount, type, &value, nnz, s, recvcount, MPI_INT, v, nullptr,
                             c.comm);
  };
  // Each case is wrong on one rank only (the last): that rank gets the precise
  // error, the others "another rank rejected its arguments", and nobody hangs.
  const int last = size - 1;
  auto check_case = [&](const char* what, const char* says, int rc, int code = MPIX_ERR_ARG) {
    INFO(what);
    bool good = rank == last ? rc == code && message_has(says)
                             : rc == code && message_has("another rank rejected");  // the same code everywhere
    CHECK(all_ranks(good));
  };
  int bad_dest = size;
  check_case("send_nnz < 0", "send_nnz=-1",
             crs(rank == last ? -1 : 1, &self, 1, MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("dest out of range", "dest[0]", crs(1, rank == last ? &bad_dest : &self, 1, MPI_INT, &recv_nnz, &src,
                                                  &vals, 1));
  check_case("NULL dest", "dest is NULL", crs(1, rank == last ? nullptr : &self, 1, MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("NULL recv_nnz", "recv_nnz is NULL",
             crs(1, &self, 1, MPI_INT, rank == last ? nullptr : &recv_nnz, &src, &vals, 1));
  check_case("NULL src", "src is NULL", crs(1, &self, 1, MPI_INT, &recv_nnz, rank == last ? nullptr : &src, &vals, 1));
  check_case("NULL recvvals", "recvvals is NULL",
             crs(1, &self, 1, MPI_INT, &recv_nnz, &src, rank == last ? nullptr : &vals, 1));
  check_case("negative sendcount", "sendcount=-1",
             crs(1, &self, rank == last ? -1 : 1, MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("MPI_DATATYPE_NULL", "sendtype",
             crs(1, &self, 1, rank == last ? MPI_DATATYPE_NULL : MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("sendcount and recvcount disagree", "differ from recvcount",
             crs(1, &self, 1, MPI_INT, &recv_nnz, &src, &vals, rank == last ? 2 : 1));
  if (size > 1) {
    int twice[2] = {0, 0};
    check_case("a destination listed twice", "twice",
               MPIX_Alltoall_crs(rank == last ? 2 : 1, rank == last ? twice : &self, 0, MPI_INT, nullptr, &recv_nnz,
                                 &src, 0, MPI_INT, &vals, nullptr, c.comm));
  }
  int counts[1] = {rank == last ? -2 : 1}, displs[1] = {0};
  check_case("negative sendcounts", "sendcounts[0]=-2",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, &value, &recv_nnz, &recv_size, &src, &rcounts,
                                &rdispls, MPI_INT, &vals, nullptr, c.comm));
  counts[0] = 1;
  displs[0] = rank == last ? 1 : 0;
  check_case("a message beyond send_size", "send_size=1",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, &value, &recv_nnz, &recv_size, &src, &rcounts,
                                &rdispls, MPI_INT, &vals, nullptr, c.comm));
  displs[0] = 0;
  check_case("NULL sendvals with data", "sendvals is NULL",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, rank == last ? nullptr : &value, &recv_nnz,
                                &recv_size, &src, &rcounts, &rdispls, MPI_INT, &vals, nullptr, c.comm));
  check_case("MPI_IN_PLACE as sendvals", "sendvals is MPI_IN_PLACE",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, rank == last ? MPI_IN_PLACE : &value, &recv_nnz,
                                &recv_size, &src, &rcounts, &rdispls, MPI_INT, &vals, nullptr, c.comm));
  check_case("MPI_IN_PLACE as sendvals (alltoall_crs)", "sendvals is MPI_IN_PLACE",
             MPIX_Alltoall_crs(1, &self, 1, MPI_INT, rank == last ? MPI_IN_PLACE : &value, &recv_nnz, &src, 1,
                               MPI_INT, &vals, nullptr, c.comm));
  // Refused by the sender before anything is read or sent; every rank fails with its code.
  const int huge = rank == last ? 1 << 29 : 1;  // 2 GiB of ints
  check_case("a message of 2 GiB", "2 GiB or more",
             crs(1, &self, huge, MPI_INT, &recv_nnz, &src, &vals, huge), MPIX_ERR_UNSUPPORTED);
  check_case("NULL rdispls", "rdispls is NULL",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, &value, &recv_nnz, &recv_size, &src, &rcounts,
                                rank == last ? nullptr : &rdispls, MPI_INT, &vals, nullptr, c.comm));
  // Different algorithms on different ranks.
  {
    harness::Info info{{"mpix_alltoall_crs_algorithm", rank == last ? "nonblocking" : "personalized"}};
    int rc = MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, info.info, c.comm);
    CHECK(all_ranks(size == 1 ? rc == MPIX_SUCCESS : rc == MPIX_ERR_ARG && message_has("different algorithms")));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(vals);
    }
  }
  // rma exists for alltoall_crs only; unknown names are refused by MPIX_Info_set.
  {
    harness::Info info;
    CHECK(MPIX_Info_set(info.info, "mpix_alltoallv_crs_algorithm", "rma") == MPIX_ERR_INFO_VALUE);
    CHECK(MPIX_Info_set(info.info, "mpix_alltoall_crs_algorithm", "rma") == MPIX_SUCCESS);
    CHECK(MPIX_Info_set(info.info, "mpix_alltoall_crs_algorithm", "pairwise") == MPIX_ERR_INFO_VALUE);
  }
  CHECK(MPIX_Alltoall_crs(0, nullptr, 0, MPI_INT, nullptr, &recv_nnz, &src, 0, MPI_INT, &vals, nullptr, nullptr) ==
        MPIX_ERR_ARG);

  // The communicator still works: a ring exchange.
  int right = (rank + 1) % size;
  recv_nnz = -1;
  int rc = MPIX_Alltoall_crs(1, &right, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, nullptr, c.comm);
  bool ok = rc == MPIX_SUCCESS && recv_nnz == 1 && src[0] == (rank - 1 + size) % size &&
            static_cast<int*>(vals)[0] == (rank - 1 + size) % size;
  CHECK(all_ranks(ok));
  if (rc == MPIX_SUCCESS) {
    MPIX_Free(src);
    MPIX_Free(vals);
  }
}

TEST_CASE("SDDE: a message larger than announced is an error on the receiver, not an overflow",
          "[sdde][errors]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  // alltoall_crs: rank 0 sends and receives 2 ints per message, the others 1. Its
  // right neighbour gets 2 ints where it expects 1 (with size 1: its own, fine).
  std::vector<int> data = {rank, rank};
  const int count = rank == 0 ? 2 : 1;
  for (const std::string& algorithm : names(mpix::kAlltoallCrs)) {
    harness::Info info{{"mpix_alltoall_crs_algorithm", algorithm}};
    int recv_nnz = -1, *src = nullptr;
    void* vals = nullptr;
    int rc = MPIX_Alltoall_crs(1, &right, count, MPI_INT, data.data(), &recv_nnz, &src, count, MPI_INT, &vals,
                               info.info, c.comm);
    INFO(algorithm << ": rc=" << rc << " " << MPIX_Last_error_message());
    bool good;
    if (size == 1)
      good = rc == MPIX_SUCCESS;
    else if (algorithm == "rma")  // the window's slot size is agreed: all ranks refuse
      good = rc == MPIX_ERR_ARG && message_has("different message sizes");
    else if (rank == 1 % size)  // receives 2 ints, recvcount 1
      good = rc == MPIX_ERR_ARG && message_has("recvcount is 1") && src == nullptr && vals == nullptr;
    else if (rank == 0)  // receives 1 int, recvcount 2
      good = rc == MPIX_ERR_ARG && message_has("recvcount is 2");
    else
      good = rc == MPIX_SUCCESS && recv_nnz == 1 && src[0] == left;
    CHECK(all_ranks(good));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(vals);
    }
  }
  // alltoallv_crs: recv_size passed in (mpix_recv_counts_known) smaller than what
  // arrives on rank 0 and larger on rank 1, so that the totals still agree: the
  // weighted sums of the known counts' check find it before any message, on every
  // rank, and the two name their own values.
  std::vector<int> three = {1, 2, 3};
  int counts = 3, displs = 0;
  for (const std::string& algorithm : names(mpix::kAlltoallvCrs)) {
    if (size == 1) break;
    harness::Info info{{"mpix_alltoallv_crs_algorithm", algorithm}, {"mpix_recv_counts_known", "true"}};
    int recv_nnz = 1, recv_size = rank == 0 ? 2 : rank == 1 ? 4 : 3;
    int *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
    void* vals = nullptr;
    int rc = MPIX_Alltoallv_crs(1, 3, &right, &counts, &displs, MPI_INT, three.data(), &recv_nnz, &recv_size, &src,
                                &rcounts, &rdispls, MPI_INT, &vals, info.info, c.comm);
    INFO(algorithm << ": rc=" << rc << " " << MPIX_Last_error_message());
    bool good = rank == 0   ? rc == MPIX_ERR_ARG && message_has("recv_size=2") && vals == nullptr
                : rank == 1 ? rc == MPIX_ERR_ARG && message_has("recv_size=4") && vals == nullptr
                            : rc == MPIX_ERR_ARG && message_has("on another rank differ from what is sent to it");
    CHECK(all_ranks(good));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(rcounts);
      MPIX_Free(rdispls);
      MPIX_Free(vals);
    }
  }
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

// A bad mpix_locality fails on every rank, naming the hint and the value; ranks that
// disagree fail on every rank too.
TEST_CASE("SDDE: a bad or disagreeing mpix_locality fails on every rank", "[sdde][errors][regions]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  int value = rank, self = rank, recv_nnz = -1;
  int* src = nullptr;
  void* vals = nullptr;
  harness::Info refused;
  CHECK(MPIX_Info_set(refused.info, "mpix_locality", "socket") == MPIX_ERR_INFO_VALUE);
  CHECK(message_has("mpix_locality=socket"));
  CHECK(message_has("expected node or region"));
  // Through the environment on one rank: that rank names it, the others learn of it.
  const int last = size - 1;
  const char* before = std::getenv("MPIX_LOCALITY");  // the meson suite 'regions' sets it
  const std::string saved = before ? before : "";
  if (rank == last) setenv("MPIX_LOCALITY", "sockets", 1);
  int rc = MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, nullptr, c.comm);
  const bool named = rank == last ? rc == MPIX_ERR_INFO_VALUE && message_has("MPIX_LOCALITY") &&
                                        message_has("=sockets") && message_has("expected node or region")
                                  : rc == MPIX_ERR_INFO_VALUE && message_has("another rank rejected");
  if (rank == last && before) setenv("MPIX_LOCALITY", saved.c_str(), 1);
  if (rank == last && !before) unsetenv("MPIX_LOCALITY");
  CHECK(all_ranks(named));
  if (size > 1) {
    harness::Info info{{"mpix_locality", rank == last ? "region" : "node"}};
    rc = MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, info.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG && message_has("mpix_locality")));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(vals);
    }
  }
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
