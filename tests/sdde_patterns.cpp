// The SDDE tests' patterns and the runner of one exchange (sdde_patterns.hpp).
#include "sdde_patterns.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "harness.hpp"

using mpix::workload::block_owner;

namespace sdde_test {

namespace {

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

// Byte k of the packed data of the message s -> d.
unsigned char content(int s, int d, long long k) { return (unsigned char)(mix(((std::uint64_t)s << 40) ^ ((std::uint64_t)d << 20) ^ (std::uint64_t)k) & 0xff); }

}  // namespace

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
  MPI_Datatype send_type = tc.send;
  void* sendvals = sendbuf.data();
  if (run.bottom) {
    int one = 1;
    MPI_Aint at = 0;
    MPI_Get_address(sendbuf.data(), &at);
    MPI_Type_create_struct(1, &one, &at, &tc.send, &send_type);
    MPI_Type_commit(&send_type);
    sendvals = MPI_BOTTOM;
  }
  if (run.alltoallv) {
    run.rc = MPIX_Alltoallv_crs(n, (int)cursor, dest.data(), counts.data(), displs.data(), send_type, sendvals,
                                &recv_nnz, &recv_size, &src, &rcounts, &rdispls, tc.recv, &rvals, info.info, comm);
  } else {
    run.rc = MPIX_Alltoall_crs(n, dest.data(), constant * tc.send_per_unit, send_type, sendvals, &recv_nnz, &src,
                               recvcount, tc.recv, &rvals, info.info, comm);
  }
  if (run.bottom) MPI_Type_free(&send_type);
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

}  // namespace sdde_test
