// mpix-bench: the sparse dynamic data exchanges (--op alltoall_crs | alltoallv_crs).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/comm.hpp"
#include "core/info.hpp"
#include "output.hpp"

namespace bench {

using mpix::workload::block_owner;

// --- sparse dynamic data exchange (--op alltoall_crs | alltoallv_crs) -------------

// A whole SDDE pattern, built alike on every rank: sends[s] lists the messages of
// rank s, each a destination and its ints.
struct SddePattern {
  std::string name;
  std::vector<std::vector<std::pair<int, std::vector<int>>>> sends;
};


// The SpMV pattern of a Matrix Market file: rank r asks the owner of each column it
// needs (x split like the rows) for it; alltoallv_crs sends the column indices,
// alltoall_crs their number (paper 001, section V). Empty `error` on success.
SddePattern matrix_pattern(const std::string& path, mpix::Op op, int size, std::string* error) {
  SddePattern p;
  std::size_t slash = path.find_last_of('/');
  p.name = slash == std::string::npos ? path : path.substr(slash + 1);
  p.sends.resize(size);
  std::ifstream in(path);
  if (!in) {
    *error = "--matrix " + path + ": cannot open it (" + std::strerror(errno) + ")";
    return p;
  }
  const mpix::workload::SpmvNeeds needs = mpix::workload::read_spmv_needs(in, size, error);
  if (!error->empty()) {
    *error = "--matrix " + path + ": " + *error;
    return p;
  }
  for (int r = 0; r < size; ++r)
    for (const auto& kv : needs[r]) {
      std::vector<int> columns = kv.second;
      if (op == mpix::kAlltoallCrs) columns = {(int)columns.size()};
      p.sends[r].push_back({kv.first, columns});
    }
  return p;
}

// A generated pattern with messages of up to S bytes of ints.
SddePattern generated_pattern(const std::string& kind, mpix::Op op, long long S, int size, unsigned long long seed) {
  SddePattern p;
  p.name = kind + " S=" + std::to_string(S);
  p.sends.resize(size);
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + (unsigned long long)size);
  const int max_ints = (int)std::max(1LL, S / 4);
  auto add = [&](int s, int d) {
    int count = op == mpix::kAlltoallCrs ? max_ints : 1 + (int)(rng() % (unsigned long long)max_ints);
    std::vector<int> values(count);
    for (int k = 0; k < count; ++k) values[k] = s * 7919 + d * 104729 + k;
    p.sends[s].push_back({d, values});
  };
  auto distinct = [&](int s, int k) {
    std::vector<int> all(size);
    for (int d = 0; d < size; ++d) all[d] = d;
    for (int i = 0; i < k; ++i) std::swap(all[i], all[i + (int)(rng() % (unsigned long long)(size - i))]);
    for (int i = 0; i < k; ++i) add(s, all[i]);
  };
  if (kind == "stencil2d" || kind == "stencil3d") {
    const int dims = kind == "stencil2d" ? 2 : 3;
    int g[3] = {1, 1, 1}, rest = size;
    for (int k = 0; k < dims; ++k) {
      int f = std::max(1, (int)std::lround(std::pow((double)rest, 1.0 / (dims - k))));
      while (f > 1 && rest % f) --f;
      g[k] = f;
      rest /= f;
    }
    g[dims - 1] *= rest;
    for (int r = 0; r < size; ++r) {
      int x = r % g[0], y = (r / g[0]) % g[1], z = r / (g[0] * g[1]);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            int nx = x + dx, ny = y + dy, nz = z + dz;
            if ((dx || dy || dz) && nx >= 0 && ny >= 0 && nz >= 0 && nx < g[0] && ny < g[1] && nz < g[2])
              add(r, nx + g[0] * (ny + g[1] * nz));
          }
    }
  } else if (kind == "random") {
    int k = std::min(size, 2 * (int)std::ceil(std::log2(std::max(2, size))));
    for (int s = 0; s < size; ++s) distinct(s, k);
  } else if (kind == "powerlaw") {
    for (int s = 0; s < size; ++s) distinct(s, std::min(size, std::max(1, size / (s + 1))));
  } else if (kind == "all_to_one") {
    for (int s = 0; s < size; ++s) add(s, 0);
  } else if (kind == "one_to_all") {
    for (int d = 0; d < size; ++d) add(0, d);
  }
  return p;
}

struct SddeRow {
  std::string error, check;
  double median = 0, min = 0, max = 0;
  long long messages = 0, inter_max = 0, inter_total = 0, bytes = 0, collectives = 0, mismatches = 0;
};

// Runs `p` with `algorithm` ("auto": the library's choice, shown as auto:NAME).
SddeRow run_sdde(const Options& o, MPIX_Comm* comm, const SddePattern& p, std::string* algorithm) {
  SddeRow row;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const auto& mine = p.sends[rank];
  std::vector<int> dest, counts, displs, values;
  for (const auto& message : mine) {
    dest.push_back(message.first);
    counts.push_back((int)message.second.size());
    displs.push_back((int)values.size());
    values.insert(values.end(), message.second.begin(), message.second.end());
  }
  // alltoall_crs: every rank passes the same count, also ranks that send nothing.
  int constant = 1;
  for (const auto& sends : p.sends)
    if (!sends.empty()) {
      constant = (int)sends[0].second.size();
      break;
    }
  MPIX_Info* info = nullptr;
  MPIX_Info_init(&info);
  const std::string key = std::string("mpix_") + mpix::op_name(o.op) + "_algorithm";
  int rc = MPIX_Info_set(info, key.c_str(), algorithm->c_str());
  if (!all_succeeded(rc, MPI_COMM_WORLD, &row.error)) {
    MPIX_Info_free(&info);
    return row;
  }
  std::map<int, std::vector<int>> received;
  std::vector<double> times;
  for (int it = 0; it < o.warmup + o.iters; ++it) {
    int recv_nnz = -1, recv_size = -1, *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
    void* vals = nullptr;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (o.op == mpix::kAlltoallCrs)
      rc = MPIX_Alltoall_crs((int)dest.size(), dest.data(), constant, MPI_INT, values.data(), &recv_nnz, &src,
                             constant, MPI_INT, &vals, info, comm);
    else
      rc = MPIX_Alltoallv_crs((int)dest.size(), (int)values.size(), dest.data(), counts.data(), displs.data(),
                              MPI_INT, values.data(), &recv_nnz, &recv_size, &src, &rcounts, &rdispls, MPI_INT,
                              &vals, info, comm);
    double t1 = MPI_Wtime();
    if (rc == MPIX_SUCCESS && it + 1 == o.warmup + o.iters) {
      received.clear();
      for (int i = 0; i < recv_nnz; ++i) {
        const int* v = static_cast<const int*>(vals) + (rdispls ? rdispls[i] : (long long)i * constant);
        received[src[i]] = std::vector<int>(v, v + (rcounts ? rcounts[i] : constant));
      }
    }
    MPIX_Free(src);
    MPIX_Free(rcounts);
    MPIX_Free(rdispls);
    MPIX_Free(vals);
    double local[2] = {t1 - t0, rc != MPIX_SUCCESS ? 1.0 : 0.0}, global[2] = {0, 0};
    MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (global[1] != 0) {
      all_succeeded(rc, MPI_COMM_WORLD, &row.error);
      MPIX_Info_free(&info);
      return row;
    }
    if (it >= o.warmup) times.push_back(global[0] * 1e6);
  }
  MPIX_Info_free(&info);
  std::sort(times.begin(), times.end());
  std::size_t n = times.size();
  row.median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  row.min = times.front();
  row.max = times.back();
  // Counters of the last call (this rank's part), over ranks.
  const mpix::SddeStats& stats = comm->sdde_stats;
  long long most[4] = {stats.messages, stats.inter_node_messages, stats.bytes, stats.collectives}, top[4];
  MPI_Allreduce(most, top, 4, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  long long total = stats.inter_node_messages;
  MPI_Allreduce(&total, &row.inter_total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  row.messages = top[0];
  row.inter_max = top[1];
  row.bytes = top[2];
  row.collectives = top[3];
  if (*algorithm == "auto") *algorithm = "auto:" + stats.algorithm;
  if (o.check) {
    std::map<int, std::vector<int>> expected;
    for (int s = 0; s < (int)p.sends.size(); ++s)
      for (const auto& message : p.sends[s])
        if (message.first == rank) expected[s] = message.second;
    long long bad = received != expected ? 1 : 0;
    MPI_Allreduce(&bad, &row.mismatches, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    row.check = row.mismatches ? "MISMATCH(" + std::to_string(row.mismatches) + " ranks)" : "ok";
  }
  return row;
}

int sdde_main(const Options& o, MPIX_Comm* comm, int nodes, int ppn) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<std::string> names = o.all_algorithms ? mpix::algorithm_names(o.op) : o.algorithms;
  if (rank == 0 && (o.dist_given || !o.sweeps.empty()))
    std::fprintf(stderr, "mpix-bench: note: --dist and --set do not apply to %s\n", mpix::op_name(o.op));

  std::vector<std::string> header = {"op",          "algorithm",   "ranks",  "nodes",  "ppn",    "pattern",
                                     "max_send_nnz", "median_us",  "min_us", "max_us", "messages",
                                     "inter_node_max", "inter_node_total", "bytes", "collectives", "speedup"};
  if (o.check) header.push_back("check");

  // Every rank reads the same files: all reach the same verdict.
  std::vector<SddePattern> patterns;
  for (const std::string& file : o.matrices) {
    std::string error;
    patterns.push_back(matrix_pattern(file, o.op, size, &error));
    if (!error.empty()) {
      if (rank == 0) std::fprintf(stderr, "mpix-bench: %s\n", error.c_str());
      return 2;
    }
  }
  for (const std::string& kind : o.patterns)
    for (long long S : o.sizes) patterns.push_back(generated_pattern(kind, o.op, S, size, o.seed));

  Output out(header, o.csv, rank == 0);
  if (rank == 0 && !o.csv)
    std::printf("# mpix-bench %s: %d ranks, %d nodes, %d iterations (+%d warmup); times in us: per-iteration "
                "max over ranks, then median/min/max over iterations; counters of one call, max over ranks "
                "(inter_node_total: sum)\n",
                mpix::op_name(o.op), size, nodes, o.iters, o.warmup);

  bool mismatch = false;
  std::string baseline_error;  // personalized's, where it failed
  for (const SddePattern& p : patterns) {
    long long max_nnz = 0;
    for (const auto& sends : p.sends) max_nnz = std::max(max_nnz, (long long)sends.size());
    // Rows wait for the whole pattern, so that those run before `personalized` get its speedup too.
    double baseline = -1;
    std::vector<std::pair<std::string, SddeRow>> rows;
    for (const std::string& name : names) {
      std::string shown = name;
      SddeRow row = run_sdde(o, comm, p, &shown);
      if (name == "personalized" && row.error.empty()) baseline = row.median;
      if (name == "personalized" && !row.error.empty() && baseline_error.empty()) baseline_error = row.error;
      mismatch = mismatch || row.mismatches > 0;
      rows.emplace_back(shown, row);
    }
    for (const auto& [shown, row] : rows) {
      std::vector<std::string> cells = {mpix::op_name(o.op), shown,  std::to_string(size), std::to_string(nodes),
                                        std::to_string(ppn), p.name, std::to_string(max_nnz)};
      std::vector<std::string> rest = {fixed(row.median),          fixed(row.min),
                                       fixed(row.max),             std::to_string(row.messages),
                                       std::to_string(row.inter_max), std::to_string(row.inter_total),
                                       std::to_string(row.bytes),  std::to_string(row.collectives),
                                       baseline > 0 && row.median > 0 ? fixed(baseline / row.median) : "-"};
      if (o.check) rest.push_back(row.check);
      out.add(cells, rest, row.error);
    }
  }
  out.finish();
  return mismatch || baseline_failed("personalized", baseline_error, rank) ? 1 : 0;
}

}  // namespace bench
