// mpix-bench: the dense exchanges (--op alltoall | alltoallv).
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/breakdown.hpp"
#include "core/comm.hpp"
#include "core/info.hpp"
#include "core/request.hpp"
#include "output.hpp"

namespace bench {

// --- one run ---------------------------------------------------------------------

// A send or receive buffer. In the simulated build (SMPI, MPIX_SIMULATED) without
// --check it is SMPI_SHARED_MALLOC memory: SMPI maps the same few physical pages
// under every such allocation of every rank, so that a thousand simulated ranks
// do not need a thousand real buffers (and SMPI skips the copies of messages
// between shared buffers). Its contents are then meaningless, which is why
// --check always uses private memory.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }

  void allocate(std::size_t bytes, bool shared) {
    release();
    bytes = std::max<std::size_t>(bytes, 1);
#ifdef MPIX_SIMULATED
    shared_ = shared;
    if (shared_) {
      data_ = static_cast<char*>(SMPI_SHARED_MALLOC(bytes));
      size_ = bytes;
      return;
    }
#else
    (void)shared;
#endif
    data_ = static_cast<char*>(std::malloc(bytes));
    if (!data_) throw std::bad_alloc();
    size_ = bytes;
  }
  char* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool shared() const { return shared_; }

 private:
  void release() {
    if (!data_) return;
#ifdef MPIX_SIMULATED
    if (shared_) SMPI_SHARED_FREE(data_);
    else std::free(data_);
#else
    std::free(data_);
#endif
    data_ = nullptr;
    size_ = 0;
    shared_ = false;
  }
  char* data_ = nullptr;
  std::size_t size_ = 0;
  bool shared_ = false;
};

#ifdef MPIX_SIMULATED
constexpr bool kSimulated = true;
#else
constexpr bool kSimulated = false;
#endif

// The buffers of one (distribution, size): MPI_BYTE blocks, packed.
struct Workload {
  std::string dist;
  long long max_block = 0;  // S, or the real largest block for fixed distributions
  int block = 0;            // alltoall: bytes per block
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  Buffer send, recv;  // shared between ranks in the simulated build unless --check
  std::vector<char> reference;
  bool have_reference = false;
};

// Byte k of the block from `source` to `dest`: never 0xA5 (the fill of receive
// buffers), and different between blocks, so that a misplaced block shows.
char pattern(int source, int dest, long long k) {
  std::uint64_t x = (std::uint64_t)(source + 1) * 0x9e3779b97f4a7c15ull ^
                    (std::uint64_t)(dest + 1) * 0xc2b2ae3d27d4eb4full ^ (std::uint64_t)k * 0x165667b19e3779f9ull;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 32;
  return (char)(x & 0x7f);
}

void build_workload(const Options& o, Distribution dist, long long S, int rank, int size, Workload* w) {
  w->dist = mpix::workload::distribution_name(dist);
  const bool uniform = o.op == mpix::kAlltoall;
  auto bytes = [&](int source, int dest) -> long long {
    if (uniform) return S;
    return mpix::workload::block_bytes(dist, S, source, dest, size, o.seed);
  };
  w->max_block = S;
  if (!uniform && mpix::workload::fixed_sizes(dist)) {
    w->max_block = 0;
    for (int s = 0; s < size; ++s)
      for (int d = 0; d < size; ++d) w->max_block = std::max(w->max_block, bytes(s, d));
  }
  w->block = (int)S;
  w->scounts.assign(size, 0);
  w->sdispls.assign(size, 0);
  w->rcounts.assign(size, 0);
  w->rdispls.assign(size, 0);
  long long stotal = 0, rtotal = 0;
  for (int peer = 0; peer < size; ++peer) {
    w->scounts[peer] = (int)bytes(rank, peer);
    w->rcounts[peer] = (int)bytes(peer, rank);
    w->sdispls[peer] = (int)stotal;
    w->rdispls[peer] = (int)rtotal;
    stotal += w->scounts[peer];
    rtotal += w->rcounts[peer];
  }
  const bool shared = kSimulated && !o.check;
  w->send.allocate((std::size_t)stotal, shared);
  w->recv.allocate((std::size_t)rtotal, shared);
  if (!shared) {  // shared buffers hold no meaningful data: not filled
    std::memset(w->recv.data(), 0xA5, w->recv.size());
    for (int peer = 0; peer < size; ++peer)
      for (long long k = 0; k < w->scounts[peer]; ++k) w->send.data()[w->sdispls[peer] + k] = pattern(rank, peer, k);
  }
  w->reference.clear();
  w->have_reference = false;
  // --check keeps pmpi's result: allocated here, inside the agreed allocation.
  if (o.check) w->reference.reserve(w->recv.size());
}


struct Row {
  std::string algorithm, params;
  std::string error;  // non-empty: the run failed
  double median = 0, min = 0, max = 0;
  double persistent_median = 0;  // Start+Wait of a persistent plan
  double predicted = 0;          // the cost model's blocking time, us (0: none)
  long long rounds = 0, messages = 0, payload = 0, metadata = 0, scratch = 0;
  std::string check;
  long long mismatch_bytes = 0, mismatch_ranks = 0;
  // MPIX_BREAKDOWN: seconds per phase of the last timed call on its slowest rank.
  std::vector<double> breakdown;
};

// The breakdown (core/breakdown.hpp) of the rank whose call took longest
// (`seconds` on this rank): its phases add up to the call's reported time.
std::vector<double> critical_breakdown(double seconds, MPI_Comm comm) {
  struct {
    double seconds;
    int rank;
  } mine{seconds, 0}, slowest{0, 0};
  MPI_Comm_rank(comm, &mine.rank);
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  const mpix::Breakdown local = mpix::breakdown_read();
  std::vector<double> phases(local.seconds, local.seconds + mpix::kTimePhaseCount);
  MPI_Bcast(phases.data(), mpix::kTimePhaseCount, MPI_DOUBLE, slowest.rank, comm);
  return phases;
}

std::set<std::string> declared_keys(const Options& o, const std::string& algorithm);

class Bench {
 public:
  Bench(const Options& o, MPIX_Comm* comm) : o_(o), comm_(comm), world_(MPIX_Comm_mpi(comm)) {
    MPI_Comm_rank(world_, &rank_);
    MPI_Comm_size(world_, &size_);
  }

  // Blocking call with `info`.
  int call(Workload& w, MPIX_Info* info) {
    if (o_.op == mpix::kAlltoall)
      return MPIX_Alltoall(w.send.data(), w.block, MPI_BYTE, w.recv.data(), w.block, MPI_BYTE, info, comm_);
    return MPIX_Alltoallv(w.send.data(), w.scounts.data(), w.sdispls.data(), MPI_BYTE, w.recv.data(),
                          w.rcounts.data(), w.rdispls.data(), MPI_BYTE, info, comm_);
  }

  int init(Workload& w, MPIX_Info* info, MPIX_Request** request) {
    if (o_.op == mpix::kAlltoall)
      return MPIX_Alltoall_plan(w.send.data(), w.block, MPI_BYTE, w.recv.data(), w.block, MPI_BYTE, info,
                                comm_, request);
    return MPIX_Alltoallv_plan(w.send.data(), w.scounts.data(), w.sdispls.data(), MPI_BYTE, w.recv.data(),
                               w.rcounts.data(), w.rdispls.data(), MPI_BYTE, info, comm_, request);
  }

  // The algorithm `auto` chooses with `settings` (from a persistent request that
  // is freed again), or "" if the request fails.
  std::string chosen(Workload& w, const KeyValues& settings) {
    MPIX_Info* info = nullptr;
    int rc = MPIX_Info_init(&info);
    for (const auto& kv : settings)
      if (rc == MPIX_SUCCESS) rc = MPIX_Info_set(info, kv.first.c_str(), kv.second.c_str());
    MPIX_Request* request = nullptr;
    if (rc == MPIX_SUCCESS) rc = init(w, info, &request);
    MPIX_Info_free(&info);
    std::string error, name;
    if (all_succeeded(rc, world_, &error)) name = request->algorithm;
    if (request) MPIX_Request_free(&request);
    return name;
  }

  // Bytes of the receive buffer that differ from pmpi's (0 without a reference).
  long long compare(const Workload& w) const {
    if (!w.have_reference) return 0;
    long long differ = 0;
    for (std::size_t i = 0; i < w.recv.size(); ++i) differ += w.recv.data()[i] != w.reference[i];
    return differ;
  }

  // A peer (peers.cpp): the same timing, the MPI calls made by the benchmark itself.
  Row run_peer_row(Workload& w, const std::string& name) {
    Row row;
    row.algorithm = name;
    const PeerCall call{w.send.data(), w.scounts.data(), w.sdispls.data(), w.recv.data(), w.rcounts.data(),
                        w.rdispls.data(), o_.op == mpix::kAlltoall, w.block, world_};
    if (o_.check) std::memset(w.recv.data(), 0xA5, w.recv.size());
    std::vector<double> times;
    for (int it = 0; it < o_.warmup + o_.iters; ++it) {
      MPI_Barrier(world_);
      double t0 = MPI_Wtime();
      int rc = run_peer(name, call);
      double t1 = MPI_Wtime();
      double local[2] = {t1 - t0, rc != MPI_SUCCESS ? 1.0 : 0.0}, global[2] = {0, 0};
      MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, world_);
      if (global[1] != 0) {
        row.error = name + ": an MPI call failed";
        return row;
      }
      if (it >= o_.warmup) times.push_back(global[0] * 1e6);
    }
    row.median = median(times);
    row.min = *std::min_element(times.begin(), times.end());
    row.max = *std::max_element(times.begin(), times.end());
    const PeerCounts counts = peer_counts(name, call);
    long long mine[3] = {counts.rounds, counts.messages, counts.payload_bytes}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_MAX, world_);
    row.rounds = all[0];
    row.messages = all[1];
    row.payload = all[2];
    if (o_.check) {
      long long mismatch = compare(w);
      long long local[2] = {mismatch, mismatch > 0}, global[2] = {0, 0};
      MPI_Allreduce(local, global, 2, MPI_LONG_LONG, MPI_SUM, world_);
      row.mismatch_bytes = global[0];
      row.mismatch_ranks = global[1];
      if (!w.have_reference) row.check = "-";
      else if (global[0] == 0) row.check = "ok";
      else row.check = "MISMATCH(" + std::to_string(global[0]) + " bytes on " + std::to_string(global[1]) + " ranks)";
    }
    return row;
  }

  Row run(Workload& w, const std::string& algorithm, const KeyValues& settings) {
    if (is_peer(algorithm)) return run_peer_row(w, algorithm);
    Row row;
    row.algorithm = algorithm;
    for (const auto& kv : settings) row.params += (row.params.empty() ? "" : " ") + kv.first.substr(5) + "=" + kv.second;
    const bool is_reference = algorithm == "pmpi";

    MPIX_Info* info = nullptr;
    int rc = MPIX_Info_init(&info);
    const std::string key = std::string("mpix_") + mpix::op_name(o_.op) + "_algorithm";
    if (rc == MPIX_SUCCESS) rc = MPIX_Info_set(info, key.c_str(), algorithm.c_str());
    for (const auto& kv : settings)
      if (rc == MPIX_SUCCESS) rc = MPIX_Info_set(info, kv.first.c_str(), kv.second.c_str());
    if (!all_succeeded(rc, world_, &row.error)) {
      MPIX_Info_free(&info);
      return row;
    }

    // Timed blocking calls.
    if (o_.check) std::memset(w.recv.data(), 0xA5, w.recv.size());
    std::vector<double> times;
    const bool breakdown = mpix::breakdown_enabled();
    for (int it = 0; it < o_.warmup + o_.iters; ++it) {
      MPI_Barrier(world_);
      if (breakdown) mpix::breakdown_reset();
      double t0 = MPI_Wtime();
      rc = call(w, info);
      double t1 = MPI_Wtime();
      double local[2] = {t1 - t0, rc != MPIX_SUCCESS ? 1.0 : 0.0}, global[2] = {0, 0};
      MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, world_);
      if (global[1] != 0) {
        all_succeeded(rc, world_, &row.error);
        MPIX_Info_free(&info);
        return row;
      }
      if (it >= o_.warmup) times.push_back(global[0] * 1e6);
      if (breakdown && it + 1 == o_.warmup + o_.iters) row.breakdown = critical_breakdown(t1 - t0, world_);
    }
    row.median = median(times);
    row.min = *std::min_element(times.begin(), times.end());
    row.max = *std::max_element(times.begin(), times.end());
    const mpix::DenseChoice blocking = comm_->blocking_choices[o_.op == mpix::kAlltoall ? 0 : 1];
    long long mismatch = 0;
    if (o_.check) {
      if (is_reference) {
        w.reference.assign(w.recv.data(), w.recv.data() + w.recv.size());
        w.have_reference = true;
      } else {
        mismatch += compare(w);
      }
    }

    // Counters: one persistent request, started and waited once. For `auto`, of the
    // blocking call's choice: a persistent request left to choose may plan another
    // algorithm (its starts pay no agreement or planning), and the row compares the
    // two ways of running one algorithm.
    // The parameters the algorithm has: a first call carried in lane groups
    // names its group size too (lane_group), which tuna_hier_coalesced takes, so
    // that the persistent column runs the carried call's schedule as a plan.
    if (algorithm == "auto") {
      rc = MPIX_Info_set(info, key.c_str(), blocking.algorithm.c_str());
      const std::set<std::string> keys = declared_keys(o_, blocking.algorithm);
      std::istringstream params(blocking.params);
      for (std::string param; rc == MPIX_SUCCESS && params >> param;) {
        const std::size_t equals = param.find('=');
        const std::string param_key = "mpix_" + param.substr(0, equals);
        if (keys.count(param_key)) rc = MPIX_Info_set(info, param_key.c_str(), param.substr(equals + 1).c_str());
      }
    }
    MPIX_Request* request = nullptr;
    if (rc == MPIX_SUCCESS) rc = init(w, info, &request);
    MPIX_Info_free(&info);
    if (!all_succeeded(rc, world_, &row.error)) return row;
    if (o_.check) std::memset(w.recv.data(), 0xA5, w.recv.size());
    // Start+Wait only: what a persistent plan costs per call, without the
    // agreement and planning every blocking call makes.
    std::vector<double> persistent_times;
    for (int it = 0; it < std::max(1, o_.warmup + o_.iters); ++it) {
      MPI_Barrier(world_);
      double t0 = MPI_Wtime();
      rc = MPIX_Start(request);
      if (rc == MPIX_SUCCESS) rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
      double local = MPI_Wtime() - t0, global = 0;
      if (!all_succeeded(rc, world_, &row.error)) {
        MPIX_Wait(request, MPI_STATUS_IGNORE);
        MPIX_Request_free(&request);
        return row;
      }
      MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, world_);
      if (it >= o_.warmup || o_.warmup + o_.iters == 0) persistent_times.push_back(global * 1e6);
    }
    row.persistent_median = median(persistent_times);
    // Where the last timed call's blocks arrived with its agreement, the counters
    // are that exchange's (the agreement's records and sizes as metadata), not
    // those of a plan of the algorithm it is named after.
    const mpix::PlanStats none;
    const bool carried = algorithm == "auto" && blocking.carried_blocks;
    const mpix::PlanStats& start = carried ? blocking.carried : request->plan->stats;
    const mpix::PlanStats& setup = carried ? none : request->plan->init_stats;
    long long mine[5] = {start.rounds, start.messages, start.payload_bytes,
                         start.metadata_bytes + setup.metadata_bytes,
                         (long long)std::max(start.scratch_bytes, setup.scratch_bytes)};
    long long all[5];
    MPI_Allreduce(mine, all, 5, MPI_LONG_LONG, MPI_MAX, world_);
    row.rounds = all[0];
    row.messages = all[1];
    row.payload = all[2];
    row.metadata = all[3];
    row.scratch = all[4];
    row.params = request->params;
    row.predicted = blocking.predicted_seconds * 1e6;  // of the blocking call, agreement included
    if (algorithm == "auto") {
      row.algorithm = "auto:" + blocking.algorithm;
      row.params = blocking.params;  // the blocking call's choice, lane_group included
    }
    MPIX_Request_free(&request);

    if (o_.check) {
      if (!is_reference) mismatch += compare(w);
      long long local[2] = {mismatch, mismatch > 0}, global[2] = {0, 0};
      MPI_Allreduce(local, global, 2, MPI_LONG_LONG, MPI_SUM, world_);
      row.mismatch_bytes = global[0];
      row.mismatch_ranks = global[1];
      if (is_reference) row.check = "ref";
      else if (!w.have_reference) row.check = "-";
      else if (global[0] == 0) row.check = "ok";
      else row.check = "MISMATCH(" + std::to_string(global[0]) + " bytes on " + std::to_string(global[1]) + " ranks)";
    }
    return row;
  }

 private:
  const Options& o_;
  MPIX_Comm* comm_;
  MPI_Comm world_;
  int rank_ = 0, size_ = 0;
};

// Every combination of the swept values: [[(k1,v1a),(k2,v2a)], [(k1,v1a),(k2,v2b)], ...].
std::vector<KeyValues> combinations(const Options& o) {
  std::vector<KeyValues> result(1);
  for (const auto& sweep : o.sweeps) {
    std::vector<KeyValues> next;
    for (const KeyValues& partial : result)
      for (const std::string& value : sweep.second) {
        KeyValues extended = partial;
        extended.emplace_back(sweep.first, value);
        next.push_back(extended);
      }
    result = next;
  }
  return result;
}

// The parameter keys that `algorithm` declares in the registry (for auto: those
// of every algorithm of the operation, since any of them may be chosen).
std::set<std::string> declared_keys(const Options& o, const std::string& algorithm) {
  std::set<std::string> keys;
  for (const mpix::Algorithm& entry : mpix::algorithms())
    if ((entry.ops & o.op) && (algorithm == "auto" || algorithm == entry.name))
      for (mpix::Param p : entry.params) keys.insert(mpix::param_key(p));
  return keys;
}

KeyValues restrict_to(const KeyValues& combo, const std::set<std::string>& keys) {
  KeyValues settings;
  for (const auto& kv : combo)
    if (keys.count(kv.first)) settings.push_back(kv);
  return settings;
}

int dense_main(const Options& o, MPIX_Comm* comm, int nodes, int ppn) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // The algorithms: pmpi first, then the registry's (or the given) order.
  std::vector<std::string> names = o.all_algorithms ? mpix::algorithm_names(o.op) : o.algorithms;
  if (o.all_algorithms) names.push_back("auto");
  names.erase(std::remove(names.begin(), names.end(), "pmpi"), names.end());
  // bench/simulate sets MPIX_BENCH_PMPI=skip where it drops the pmpi rows: SMPI's
  // linear exchange of 1024 simulated ranks costs minutes of simulation.
  const char* pmpi_mode = std::getenv("MPIX_BENCH_PMPI");
  if (o.check || !pmpi_mode || std::strcmp(pmpi_mode, "skip") != 0) names.insert(names.begin(), "pmpi");

  // Distributions: alltoall has equal blocks only.
  std::vector<Distribution> dists = o.dists;
  if (o.op == mpix::kAlltoall) {
    if (rank == 0 && o.dist_given && (dists.size() != 1 || dists[0] != Distribution::constant))
      std::fprintf(stderr, "mpix-bench: note: --op alltoall sends S bytes per block; --dist is ignored\n");
    dists = {Distribution::constant};
  }
  if (rank == 0) {
    std::set<std::string> used;
    for (const std::string& name : names)
      for (const std::string& key : declared_keys(o, name)) used.insert(key);
    for (const auto& sweep : o.sweeps)
      if (!used.count(sweep.first))
        std::fprintf(stderr, "mpix-bench: note: no algorithm run takes %s; it is not applied\n",
                     sweep.first.c_str());
  }

  const std::vector<KeyValues> combos = combinations(o);
  Bench bench(o, comm);
  Output out(o.csv, o.check, rank == 0, mpix::breakdown_enabled());
  if (rank == 0 && !o.csv)
    std::printf("# mpix-bench %s: %d ranks, %d nodes, %d iterations (+%d warmup), seed %llu; times in us: "
                "per-iteration max over ranks, then median/min/max over iterations\n",
                mpix::op_name(o.op), size, nodes, o.iters, o.warmup, o.seed);
  bool any_mismatch = false;
  std::string baseline_error;  // pmpi's, where it failed: see the end
  // Progress on a terminal only, so that logs and captured output stay clean.
  const bool progress = !o.csv && isatty(fileno(stderr));
  Workload w;
  for (Distribution dist : dists) {
    std::vector<long long> sizes = o.sizes;
    if (o.op == mpix::kAlltoallv && mpix::workload::fixed_sizes(dist)) sizes = {0};
    for (long long S : sizes) {
      // Agreed, so that a rank that cannot hold its buffers stops every rank, none waits.
      // Not in the simulated build, whose buffers are shared (SMPI_SHARED_MALLOC) and
      // where one more collective before the timed calls moves their simulated times
      // (smpi:mpich of bench/demo-simulated by 0.4 us): main() reports it there.
      int built = 1, all_built = 1;
      try {
        build_workload(o, dist, S, rank, size, &w);
      } catch (const std::bad_alloc&) {
        if (kSimulated) throw;
        built = 0;
      }
      if (!kSimulated) MPI_Allreduce(&built, &all_built, 1, MPI_INT, MPI_MIN, MPIX_Comm_mpi(comm));
      if (!all_built) {
        if (rank == 0)
          std::fprintf(stderr, "\nmpix-bench: out of memory for the send and receive buffers%s of %s S=%lld on %s "
                       "rank; try smaller --sizes\n", o.check ? " (and --check's copy of pmpi's result)" : "",
                       w.dist.c_str(), S, built ? "another" : "this");
        return 1;
      }
      double reference_median = -1;
      // The group's rows wait until it is done, so that the fastest can be marked;
      // meanwhile rank 0 shows progress on stderr.
      std::vector<std::pair<std::vector<std::string>, Row>> group;
      int run_index = 0;
      for (const std::string& name : names) {
        std::set<std::string> keys = declared_keys(o, name);
        std::set<KeyValues> done;
        std::set<std::pair<std::string, KeyValues>> done_auto;
        for (const KeyValues& combo : combos) {
          KeyValues settings = restrict_to(combo, keys);
          if (!done.insert(settings).second) continue;
          if (name == "auto" && combos.size() > 1) {
            // Once per distinct parameters of the algorithm auto chooses.
            std::string choice = bench.chosen(w, settings);
            if (!choice.empty() &&
                !done_auto.insert({choice, restrict_to(settings, declared_keys(o, choice))}).second)
              continue;
          }
          if (rank == 0 && progress)
            std::fprintf(stderr, "\rmpix-bench: %s S=%lld: run %d (%s)\033[K", w.dist.c_str(), w.max_block,
                         ++run_index, name.c_str());
          Row row = bench.run(w, name, settings);
          if (name == "pmpi" && row.error.empty()) reference_median = row.median;
          if (name == "pmpi" && !row.error.empty() && baseline_error.empty()) baseline_error = row.error;
          any_mismatch = any_mismatch || row.mismatch_bytes > 0;
          std::vector<std::string> cells = {mpix::op_name(o.op), row.algorithm,
                                            row.params.empty() ? "-" : row.params,
                                            std::to_string(size), std::to_string(nodes), std::to_string(ppn),
                                            w.dist, std::to_string(w.max_block)};
          group.emplace_back(cells, row);
        }
      }
      if (rank == 0 && progress) std::fprintf(stderr, "\r\033[K");
      double fastest = -1;
      for (const auto& entry : group)
        if (entry.second.error.empty() && (fastest < 0 || entry.second.median < fastest)) fastest = entry.second.median;
      for (auto& entry : group) {
        const Row& row = entry.second;
        std::vector<std::string> rest = {fixed(row.median), fixed(row.min), fixed(row.max),
                                         is_peer(row.algorithm) ? std::string("-") : fixed(row.persistent_median),
                                         std::to_string(row.rounds),
                                         std::to_string(row.messages), std::to_string(row.payload),
                                         std::to_string(row.metadata), std::to_string(row.scratch),
                                         reference_median > 0 && row.median > 0 ? fixed(reference_median / row.median)
                                                                                : std::string("-"),
                                         row.error.empty() && row.median == fastest ? "*" : "",
                                         row.predicted > 0 ? fixed(row.predicted) : std::string("-")};
        if (o.check) rest.push_back(row.check);
        if (mpix::breakdown_enabled())
          for (int phase = 0; phase < mpix::kTimePhaseCount; ++phase)
            rest.push_back(row.breakdown.empty() ? std::string("-") : fixed(row.breakdown[phase] * 1e6));
        out.add(entry.first, rest, row.error);
      }
    }
  }
  out.finish();
  return any_mismatch || baseline_failed("pmpi", baseline_error, rank) ? 1 : 0;
}

}  // namespace bench
