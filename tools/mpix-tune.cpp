// mpix-tune: measures on the running job what the selection model predicts, and
// writes what it found in the files the library reads (docs/tuning.md):
//
//   mpiexec.mpich -n P mpix-tune --profile --out machine.txt
//       latencies, per-message overheads and bandwidths inside and between nodes,
//       the copy bandwidth, the copies an intra-node message makes and a small
//       collective's software cost: a machine file for mpix_machine_file
//   mpiexec.mpich -n P mpix-tune --sizes 16,1k,64k --dist uniform,powerlaw --out tuning.txt
//       every algorithm with a cost model, over its parameter ranges, on each
//       (distribution, size): the fastest becomes a rule of a tuning file where it
//       beat `auto` by more than --margin, and the table shows it beside what the
//       blocking calls of `auto` ran, their time and the model's prediction
//
// The tuning file is rewritten after every cell, so a run that is stopped leaves a
// file that loads. Every rank parses the same command line.
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "core/comm.hpp"
#include "core/info.hpp"
#include "core/model.hpp"
#include "core/request.hpp"
#include "core/select.hpp"
#include "tune/profile.hpp"
#include "workload.hpp"

namespace {

const char* const kUsage = R"(Usage: mpiexec.mpich -n P mpix-tune [options]

  --profile              measure the machine (latency, per-message overhead and
                         bandwidth inside a node and between nodes, copy bandwidth,
                         copies per intra-node message, a collective's overhead,
                         the rate of an exchange between all nodes)
                         and write a machine file (mpix_machine_file); otherwise
                         measure the algorithms and write a tuning file
  --out FILE             where to write (default machine.txt or tuning.txt)
  --op alltoall|alltoallv          (default alltoallv)
  --sizes S1,S2,...      largest block sizes, suffixes k and m (default 16,256,4k,64k);
                         S times the number of ranks is at most 2^31-1 bytes
  --dist D1,D2,...       distributions as in mpix-bench (default uniform)
  --iters N              timed calls per candidate (default 5; the median counts)
  --ppn N                emulate nodes of N consecutive ranks
  --margin PCT           write a cell's rule only where its best beat auto by more
                         than PCT percent of the best's time (default 5; -100:
                         in every cell)
  --help

The tuning file's rules hold for this rank count and node layout (nodes, ranks
per node); each names the largest-block range and the mean-block range of its
cell, so that other distributions of the same largest block fall to the next rule
or to the model. A fixed distribution (fft_n1, fft_n2) is one cell.
)";

using mpix::workload::Distribution;

struct Options {
  bool profile = false, help = false;
  bool dists_given = false;
  std::string out;
  mpix::Op op = mpix::kAlltoallv;
  std::vector<long long> sizes = {16, 256, 4096, 65536};
  std::vector<Distribution> dists = {Distribution::uniform};
  int iters = 5, ppn = 0;
  // Closer than a few percent, the best and auto are the same within the noise of a
  // median of a few calls, and a rule would cost what it turns off for the calls it
  // matches (auto's carried first call) for nothing.
  int margin = 5;
  bool ppn_given = false;
};

std::string parse(int argc, char** argv, Options* o) {
  std::vector<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    std::size_t eq = arg.find('=');
    bool has_value = false;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    long long number = 0;
    // The last of two values was taken silently; a list goes in one option.
    if (std::find(seen.begin(), seen.end(), arg) != seen.end())
      return arg + " given twice" +
             (arg == "--sizes" || arg == "--dist" ? " (several values go in one list: " + arg + " A,B)" : "");
    seen.push_back(arg);
    if ((arg == "--help" || arg == "-h" || arg == "--profile") && has_value)
      return arg + " takes no value (" + arg + "=" + value + ")";
    if (arg == "--help" || arg == "-h") {
      o->help = true;
    } else if (arg == "--profile") {
      o->profile = true;
    } else if (arg == "--out") {
      if (!next() || value.empty()) return "--out needs a file name";
      o->out = value;
    } else if (arg == "--op") {
      if (!next()) return "--op needs a value";
      if (value == "alltoall") o->op = mpix::kAlltoall;
      else if (value == "alltoallv") o->op = mpix::kAlltoallv;
      else return "--op: '" + value + "' is not alltoall or alltoallv";
    } else if (arg == "--sizes") {
      if (!next()) return "--sizes needs a value";
      o->sizes.clear();
      for (const std::string& part : bench::split(value, ',')) {
        long long bytes = 0;
        if (!bench::parse_size(part, &bytes))
          return "--sizes: '" + part + "' is not a size (bytes >= 0, suffix k or m, at most 2^31-1)";
        o->sizes.push_back(bytes);
      }
      std::sort(o->sizes.begin(), o->sizes.end());
      o->sizes.erase(std::unique(o->sizes.begin(), o->sizes.end()), o->sizes.end());
    } else if (arg == "--dist") {
      if (!next()) return "--dist needs a value";
      o->dists.clear();
      o->dists_given = true;
      for (const std::string& part : bench::split(value, ',')) {
        Distribution d;
        if (!mpix::workload::parse_distribution(part, &d)) return "--dist: unknown distribution '" + part + "'";
        if (std::find(o->dists.begin(), o->dists.end(), d) == o->dists.end()) o->dists.push_back(d);
      }
    } else if (arg == "--iters") {
      if (!next() || !mpix::parse_integer(value, &number) || number < 1 || number > 100000)
        return "--iters needs an integer from 1 to 100000";
      o->iters = (int)number;
    } else if (arg == "--margin") {
      if (!next() || !mpix::parse_integer(value, &number) || number < -100 || number > 100000)
        return "--margin needs an integer from -100 to 100000 (percent)";
      o->margin = (int)number;
    } else if (arg == "--ppn") {
      if (!next() || !mpix::parse_integer(value, &number) || number < 0 || number > 1 << 30)
        return "--ppn needs an integer >= 0";
      o->ppn = (int)number;
      o->ppn_given = true;
    } else {
      return "unknown option '" + arg + "'";
    }
  }
  if (o->profile)
    for (const char* tuning_only : {"--op", "--sizes", "--dist", "--iters", "--margin"})
      if (std::find(seen.begin(), seen.end(), tuning_only) != seen.end())
        return std::string(tuning_only) + " applies to the tuning of algorithms, not to --profile";
  if (o->out.empty()) o->out = o->profile ? "machine.txt" : "tuning.txt";
  return "";
}

// --- the tuning file --------------------------------------------------------------

struct Cell {
  Distribution dist;
  long long S;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<char> send, recv;
};

void build_cell(Cell* c, int rank, int size, mpix::Op op) {
  c->scounts.assign(size, 0);
  c->rcounts.assign(size, 0);
  c->sdispls.assign(size, 0);
  c->rdispls.assign(size, 0);
  long long st = 0, rt = 0;
  for (int p = 0; p < size; ++p) {
    c->scounts[p] = op == mpix::kAlltoall ? (int)c->S : (int)mpix::workload::block_bytes(c->dist, c->S, rank, p, size, 1);
    c->rcounts[p] = op == mpix::kAlltoall ? (int)c->S : (int)mpix::workload::block_bytes(c->dist, c->S, p, rank, size, 1);
    c->sdispls[p] = (int)st;
    c->rdispls[p] = (int)rt;
    st += c->scounts[p];
    rt += c->rcounts[p];
  }
  c->send.assign(st + 1, 1);
  c->recv.assign(rt + 1, 0);
}

struct Measured {
  std::string algorithm, params;  // params as info key=value words of a tuning rule
  std::string described;          // as the library describes them
  std::string error;              // (rank 0) why it was not measured
  long long size = 0;             // the cell's largest block, S (fixed distributions: their own)
  double seconds = -1;
  double predicted = 0;
  mpix::ExchangeFacts facts;
  // A cell where auto was not beaten by the margin has no rule, but still bounds the
  // ranges of the other cells' rules, which would otherwise cover it.
  bool rule = true;
};

// Median over `iters` blocking calls (maximum over ranks per call); -1 if it failed,
// with the reason in `error`. `described` and `predicted` are of what the timed
// calls ran, not of a persistent plan's choice: that one pays no agreement or
// planning per call and carries no first call, so `auto` may choose otherwise. Where
// the calls did not all run the same (a carried first call, then the plan kept for
// the calls that repeat it), every choice is named, in order; the prediction is the
// last call's.
Measured measure(const Options& o, MPIX_Comm* comm, Cell& c, const std::string& algorithm,
                 const std::vector<std::pair<std::string, std::string>>& keys) {
  Measured m;
  m.algorithm = algorithm;
  MPIX_Info* info = nullptr;
  MPIX_Info_init(&info);
  MPIX_Info_set(info, o.op == mpix::kAlltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm",
                algorithm.c_str());
  for (const auto& kv : keys) {
    MPIX_Info_set(info, kv.first.c_str(), kv.second.c_str());
    m.params += (m.params.empty() ? "" : " ") + kv.first + "=" + kv.second;
  }
  MPI_Comm world = MPIX_Comm_mpi(comm);
  auto call = [&](MPIX_Request** request) {
    if (request)
      return o.op == mpix::kAlltoall
                 ? MPIX_Alltoall_plan(c.send.data(), (int)c.S, MPI_BYTE, c.recv.data(), (int)c.S, MPI_BYTE, info, comm,
                                      request)
                 : MPIX_Alltoallv_plan(c.send.data(), c.scounts.data(), c.sdispls.data(), MPI_BYTE, c.recv.data(),
                                       c.rcounts.data(), c.rdispls.data(), MPI_BYTE, info, comm, request);
    return o.op == mpix::kAlltoall
               ? MPIX_Alltoall(c.send.data(), (int)c.S, MPI_BYTE, c.recv.data(), (int)c.S, MPI_BYTE, info, comm)
               : MPIX_Alltoallv(c.send.data(), c.scounts.data(), c.sdispls.data(), MPI_BYTE, c.recv.data(),
                                c.rcounts.data(), c.rdispls.data(), MPI_BYTE, info, comm);
  };
  MPIX_Request* request = nullptr;
  std::string error;
  if (bench::all_succeeded(call(&request), world, &error)) {
    m.facts = request->facts;
    MPIX_Request_free(&request);
    std::vector<double> times;
    std::vector<std::string> ran;
    for (int it = 0; it < o.iters + 1; ++it) {
      MPI_Barrier(world);
      double t0 = MPI_Wtime();
      int rc = call(nullptr);
      double local[2] = {MPI_Wtime() - t0, rc != MPIX_SUCCESS ? 1.0 : 0.0}, all[2];
      MPI_Allreduce(local, all, 2, MPI_DOUBLE, MPI_MAX, world);
      if (all[1] != 0) {
        times.clear();
        m.error = "a timed call failed on some rank";
        break;
      }
      if (it == 0) continue;
      times.push_back(all[0]);
      const mpix::DenseChoice& choice = comm->blocking_choices[o.op == mpix::kAlltoall ? 0 : 1];
      const std::string described = choice.algorithm + (choice.params.empty() ? "" : " " + choice.params);
      if (std::find(ran.begin(), ran.end(), described) == ran.end()) ran.push_back(described);
      m.predicted = choice.predicted_seconds;
    }
    for (const std::string& described : ran) m.described += (m.described.empty() ? "" : ", ") + described;
    if (!times.empty()) m.seconds = bench::median(times);
  } else {
    m.error = error;
  }
  MPIX_Info_free(&info);
  return m;
}

int tune_main(const Options& o, MPIX_Comm* comm) {
  MPI_Comm world = MPIX_Comm_mpi(comm);
  int rank = 0, size = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  const bool tty = isatty(fileno(stderr));
  std::vector<std::string> rules;
  std::vector<Measured> bests;
  const std::vector<Distribution> dists =
      o.op == mpix::kAlltoall ? std::vector<Distribution>{Distribution::constant} : o.dists;
  // Lane groups apply up to min(Q, N - 1) ranks, on nodes of one size (every rank
  // the same candidates: the node sizes are reduced over all ranks).
  int nodes = 1, local_size = 1;
  MPIX_Comm_locality(comm, &nodes, nullptr, &local_size, nullptr);
  int node_sizes[2] = {-local_size, local_size};
  MPI_Allreduce(MPI_IN_PLACE, node_sizes, 2, MPI_INT, MPI_MAX, world);
  const int largest_lane_group = -node_sizes[0] == node_sizes[1] ? std::max(1, std::min(local_size, nodes - 1)) : 1;
  int cell_index = 0, cells = 0;
  for (Distribution dist : dists) cells += mpix::workload::fixed_sizes(dist) ? 1 : (int)o.sizes.size();
  // The table compares the best with the model's choice, which the new file's rules
  // will be added to: a tuning file already in the environment would make auto
  // follow its rules instead, and judge the new file against the old one.
  if (const char* inherited = std::getenv("MPIX_TUNING_FILE")) {
    if (rank == 0)
      std::fprintf(stderr, "mpix-tune: note: MPIX_TUNING_FILE=%s is ignored: auto is measured on the model\n",
                   inherited);
    unsetenv("MPIX_TUNING_FILE");
  }
  if (rank == 0 && o.op == mpix::kAlltoall && o.dists_given)
    std::fprintf(stderr, "mpix-tune: note: --op alltoall sends S bytes per block; --dist is ignored\n");
  const std::string partial = o.out + ".partial";
  bool written = false, unwritable = false;
  int failed_cells = 0;
  if (rank == 0)
    std::printf("%-10s %8s %-28s %12s   %-28s %12s %12s   %s\n", "dist", "S", "measured best", "time_us",
                "auto (model)", "time_us", "predicted_us", "rule");
  for (Distribution dist : dists) {
    for (long long S : o.sizes) {
      // A fixed distribution's blocks do not depend on S: one cell, at the first size.
      if (mpix::workload::fixed_sizes(dist) && S != o.sizes.front()) continue;
      ++cell_index;
      Cell c{dist, S, {}, {}, {}, {}, {}, {}};
      build_cell(&c, rank, size, o.op);
      // Candidates: every algorithm with a cost model, over its parameter ranges.
      std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> candidates;
      for (const mpix::Algorithm& a : mpix::algorithms()) {
        if (!(a.ops & o.op) || !a.cost) continue;
        std::vector<std::vector<std::pair<std::string, std::string>>> combos = {{}};
        for (mpix::Param p : a.params) {
          // A parameter the model does not choose (seed, locality, ipc_hybrid's
          // thresholds: parameter_range gives none) keeps its default.
          if (p == mpix::Param::seed || mpix::parameter_range(p, size).empty()) continue;
          std::vector<std::vector<std::pair<std::string, std::string>>> next;
          for (const auto& combo : combos)
            for (long long v : mpix::parameter_range(p, size)) {
              if (p == mpix::Param::radix && v > size) continue;
              if (p == mpix::Param::lane_group && v > largest_lane_group) continue;
              auto extended = combo;
              extended.emplace_back(mpix::param_key(p), v == INT_MAX ? "unlimited" : std::to_string(v));
              next.push_back(extended);
            }
          combos = next;
        }
        for (const auto& combo : combos) candidates.emplace_back(a.name, combo);
      }
      Measured best;
      std::string first_error;
      for (std::size_t k = 0; k < candidates.size(); ++k) {
        if (rank == 0 && tty)
          std::fprintf(stderr, "\rmpix-tune: cell %d/%d (%s, S=%lld): candidate %zu/%zu %s\033[K", cell_index, cells,
                       mpix::workload::distribution_name(dist), S, k + 1, candidates.size(),
                       candidates[k].first.c_str());
        Measured m = measure(o, comm, c, candidates[k].first, candidates[k].second);
        if (m.seconds >= 0 && (best.seconds < 0 || m.seconds < best.seconds)) best = m;
        if (m.seconds < 0 && first_error.empty()) first_error = candidates[k].first + ": " + m.error;
      }
      Measured chosen = measure(o, comm, c, "auto", {});
      if (rank == 0 && tty) std::fprintf(stderr, "\r\033[K");
      const char* dist_name = mpix::workload::distribution_name(dist);
      if (best.seconds < 0) {
        ++failed_cells;
        if (rank == 0)
          std::fprintf(stderr, "mpix-tune: cell %s S=%lld: no candidate ran (%s)\n", dist_name, S,
                       first_error.empty() ? "there are none" : first_error.c_str());
        continue;
      }
      best.size = mpix::workload::fixed_sizes(dist) ? best.facts.max_block : S;
      // -100 writes every rule, also where a call was below the clock's resolution.
      best.rule = chosen.seconds < 0 || o.margin <= -100 || best.seconds * (1 + o.margin / 100.0) < chosen.seconds;
      bests.push_back(best);
      if (rank == 0) {
        if (chosen.seconds < 0) {
          std::printf("%-10s %8lld %-28s %12.2f   %-28s %12s %12s   %s\n", dist_name, best.size,
                      best.described.c_str(), best.seconds * 1e6, "error", "-", "-", "best");
          std::fprintf(stderr, "mpix-tune: cell %s S=%lld: auto failed: %s\n", dist_name, best.size,
                       chosen.error.c_str());
        } else {
          std::printf("%-10s %8lld %-28s %12.2f   %-28s %12.2f %12.2f   %s\n", dist_name, best.size,
                      best.described.c_str(), best.seconds * 1e6, chosen.described.c_str(), chosen.seconds * 1e6,
                      chosen.predicted * 1e6, best.rule ? "best" : "none (auto)");
        }
        std::fflush(stdout);
        // Rules for this rank count, each for its largest-block range (up to the
        // next size) and a mean-block range around its cell (geometric midpoints to
        // the other cells' means), written anew after every cell.
        std::vector<Measured> sorted = bests;
        std::ofstream out(partial);
        const long long ruled = std::count_if(sorted.begin(), sorted.end(), [](const Measured& m) { return m.rule; });
        out << "# mpix tuning file, measured by mpix-tune on " << size << " ranks ("
            << comm->locality.num_nodes() << " nodes); " << sorted.size() << " of " << cells << " cells, "
            << sorted.size() - ruled << " left to auto (not beaten by more than " << o.margin << "%)\n";
        for (std::size_t i = 0; i < sorted.size(); ++i) {
          const Measured& m = sorted[i];
          if (!m.rule) continue;
          double lo = 0, hi = HUGE_VAL;
          for (std::size_t j = 0; j < sorted.size(); ++j) {
            if (j == i || sorted[j].size != m.size) continue;
            double mid = std::sqrt(std::max(1.0, sorted[j].facts.mean_block()) * std::max(1.0, m.facts.mean_block()));
            if (sorted[j].facts.mean_block() < m.facts.mean_block()) lo = std::max(lo, mid);
            else hi = std::min(hi, mid);
          }
          // Largest blocks in (the next smaller cell's size, this cell's]; the
          // largest cell's rule is open above. The measured layout is a condition:
          // a parameter measured best on these nodes may not fit others.
          long long below = 0, largest = 0;
          for (const Measured& other : sorted) {
            if (other.size < m.size) below = std::max(below, other.size + 1);
            largest = std::max(largest, other.size);
          }
          out << mpix::op_name(o.op) << " " << size << " " << size << " " << below << " "
              << (m.size == largest ? std::string("*") : std::to_string(m.size)) << " " << m.algorithm
              << (m.params.empty() ? "" : " " + m.params) << " nodes=" << m.facts.nodes << ".." << m.facts.nodes
              << " ppn=" << m.facts.max_ppn << ".." << m.facts.max_ppn << " mean_block=" << lo << ".."
              << (std::isinf(hi) ? std::string("*") : std::to_string(hi)) << "\n";
        }
        out.close();
        if (!out || std::rename(partial.c_str(), o.out.c_str()) != 0) {
          if (!unwritable) std::fprintf(stderr, "mpix-tune: cannot write %s\n", o.out.c_str());
          unwritable = true;
        } else {
          written = true;
        }
      }
    }
  }
  if (rank == 0) {
    if (written && !unwritable)
      std::fprintf(stderr, "mpix-tune: wrote %s (use it with MPIX_TUNING_FILE=%s)%s\n", o.out.c_str(), o.out.c_str(),
                   failed_cells ? "; it has no rule for the cells that failed" : "");
    else if (!unwritable)
      std::fprintf(stderr, "mpix-tune: no cell was measured; %s not written\n", o.out.c_str());
    if (failed_cells) std::fprintf(stderr, "mpix-tune: %d of %d cells failed\n", failed_cells, cells);
    if (written && std::none_of(bests.begin(), bests.end(), [](const Measured& m) { return m.rule; }))
      std::fprintf(stderr, "mpix-tune: no rule: auto was within --margin %d%% of the best in every cell; the file "
                   "changes nothing\n", o.margin);
  }
  int status = written && !unwritable && !failed_cells ? 0 : 1;  // rank 0 writes
  MPI_Bcast(&status, 1, MPI_INT, 0, world);
  return status;
}

int tune(int argc, char** argv) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Options o;
  std::string error = parse(argc, argv, &o);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (error.empty() && !o.profile) error = bench::sizes_fit(o.sizes, size);
  if (o.help) {
    if (rank == 0) std::fputs(kUsage, stdout);
    return 0;
  }
  if (!error.empty()) {
    if (rank == 0) std::fprintf(stderr, "mpix-tune: %s\nTry 'mpix-tune --help'.\n", error.c_str());
    return 2;
  }
  MPIX_Comm* comm = nullptr;
  int rc = MPIX_Comm_init(&comm, MPI_COMM_WORLD);
  if (rc == MPIX_SUCCESS && o.ppn_given) rc = MPIX_Comm_update_locality(comm, o.ppn);
  if (!bench::all_succeeded(rc, MPI_COMM_WORLD, &error)) {
    if (rank == 0) std::fprintf(stderr, "mpix-tune: %s\n", error.c_str());
    if (comm) MPIX_Comm_free(&comm);
    return 1;
  }
  // The file is written at the end (a profile) or after every cell (a tuning file,
  // through FILE.partial): a place it cannot go stops the run before any measuring,
  // on every rank.
  int writable = 1;
  if (rank == 0) {
    struct stat info;
    const std::string probe = o.out + ".partial";
    const bool directory = stat(o.out.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
    writable = !directory && std::ofstream(probe) ? 1 : 0;
    std::remove(probe.c_str());
    if (!writable)
      std::fprintf(stderr, "mpix-tune: --out %s: %s\n", o.out.c_str(),
                   directory ? "is a directory" : ("cannot write " + probe).c_str());
  }
  MPI_Bcast(&writable, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int status = 1;
  if (writable) status = o.profile ? profile_main(o.out, comm) : tune_main(o, comm);
  MPIX_Comm_free(&comm);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = tune(argc, argv);
  MPI_Finalize();
  return status;
}
