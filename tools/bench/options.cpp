// mpix-bench: the command line (--help text and parsing).
#include <mpi.h>

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

#include "bench.hpp"
#include "core/info.hpp"

namespace bench {

extern const char* const kUsage;
const char* const kUsage = R"(Usage: mpiexec.mpich -n P mpix-bench [options]
       smpirun -np P -platform PLATFORM.xml [-hostfile FILE] \
           --cfg=smpi/simulate-computation:no build-smpi/tools/mpix-bench [options]
           for the simulated build: see docs/user-guide.md, section Simulation

Times MPIX_Alltoall or MPIX_Alltoallv for each algorithm of the library's registry,
each message size and each block-size distribution, and prints one row per run.

Options (a value may follow as the next argument or after '='):
  --op OP                    alltoall, alltoallv (default), or the sparse dynamic
                             data exchanges alltoall_crs, alltoallv_crs (see
                             "Sparse dynamic data exchange" below)
  --algorithms all|A,B,...   algorithms to run (default all: every algorithm the
                             registry has for --op, then 'auto', the library's own
                             choice, shown as auto:NAME). pmpi (the MPI library's
                             MPI_Alltoall(v), behind mpix's agreement) is always
                             run first, as the baseline of 'speedup' (but for
                             MPIX_BENCH_PMPI=skip in the environment without
                             --check, which bench/simulate sets where SMPI's
                             pmpi would take minutes). The peers are run only when named:
                               peer:alltoallv    MPI_Alltoall(v), the blocking call
                               peer:ialltoallv   MPI_Ialltoall(v) + MPI_Wait
                               peer:scattered32  MPICH's scattered exchange, 32
                                                 requests per batch (its default)
                               peer:linear       Open MPI's basic linear exchange
                                                 (all receives, all sends, waitall)
                             each as plain MPI calls of the benchmark, not through
                             MPIX_Alltoall(v): no agreement, no plan.
  --sizes S1,S2,...          largest block size S in bytes; suffixes k (1024) and
                             m (1048576) are accepted: 16,256,4k,1m (default 16,256,4k);
                             S x ranks at most 2^31-1 (int displacements)
  --dist D1,D2,...           block-size distribution(s) of alltoallv (default uniform):
                               constant  every block S bytes
                               uniform   uniform in [0, S]
                               normal    mean S/2, sd 0.24*S/2, clipped to [0, S]
                               powerlaw  S*u^20, u uniform in [0,1): large blocks rare
                               fft_n1    FFT N1 (TuNA paper): the first ceil(0.625 P)
                                         ranks send 64 B to each of the first
                                         ceil(0.78125 P) ranks, nothing else
                               fft_n2    FFT N2: 512 B per block, 128 B from the last rank
                             fft_n1 and fft_n2 fix their own sizes: they ignore
                             --sizes, run once, and show their real largest block.
                             alltoall always sends S bytes per block (constant).
  --iters N                  timed iterations per run (default 10)
  --warmup N                 untimed iterations before them (default 2)
  --ppn N                    emulate nodes of N consecutive ranks
                             (MPIX_Comm_update_locality); 0 = detect the real nodes.
                             Without --ppn the MPIX_PPN environment variable applies.
  --set KEY=V1,V2,...        sweep an algorithm parameter (repeatable; several --set
                             sweep all combinations). KEY is an info key of an
                             algorithm parameter, with or without the mpix_ prefix:
                             mpix_radix, mpix_block_count, mpix_stride,
                             mpix_max_queue, mpix_segment_bytes, mpix_seed,
                             mpix_ipc_threshold, mpix_memcpy_threshold,
                             mpix_locality, mpix_lane_group.
                             A key is applied only to the algorithms whose registry
                             entry declares it; each algorithm runs once per
                             distinct combination of the keys it takes.
  --format table|csv         output (default table); only rank 0 prints
  --check                    compare every algorithm's receive buffer, byte for
                             byte, with pmpi's (after the timed calls and after the
                             persistent run) and report it in a 'check' column;
                             the exit status is 1 if any run mismatched.
                             The exit status is also 1 where the baseline
                             (pmpi; personalized for the _crs operations)
                             failed: then every row's environment is broken
                             (a malformed MPIX_MACHINE_FILE, a hint).
                             In the simulated build (SMPI), send and receive
                             buffers are SMPI_SHARED_MALLOC memory that all ranks
                             share (so that 1024 simulated ranks fit in memory),
                             and hold no meaningful data, unless --check is given:
                             then every rank has its own, filled and compared
  --seed N                   seed of the block sizes of the distributions (default 1;
                             the seed of the randomized algorithms is mpix_seed)
  --help                     this text

Timing: each iteration is MPI_Barrier, then one blocking MPIX_Alltoall(v) with an
MPIX_Info that sets mpix_<op>_algorithm and the swept keys; the iteration's time
is the maximum over ranks (MPI_Allreduce MAX). Buffers are MPI_BYTE blocks packed
one after the other. Under SMPI, MPI_Wtime is the simulated clock: times are
simulated microseconds, and every byte the library copies is charged at
MPIX_SIM_COPY_BANDWIDTH bytes/s (default 10e9).

Columns:
  op               alltoall or alltoallv
  algorithm        registry name (auto:NAME: what the blocking call chose)
  params           the algorithm's resolved parameters (info > environment > default)
  ranks nodes ppn  communicator size, number of nodes, ranks on the largest node
  dist             block-size distribution
  max_block_bytes  S (for fft_n1/fft_n2: the largest block that occurs)
  median_us min_us max_us
                   median, minimum and maximum over the timed iterations, in
                   microseconds, of the per-iteration maximum over ranks, of the
                   blocking call (agreement, planning and exchange; a call that
                   repeats the one before runs its plan again, so with --warmup 1
                   or more this is the repeated call, and --warmup 0 --iters 1
                   times a call that plans: user guide, "Plan reuse")
  persistent_us    the same median for Start + Wait of a persistent plan (the
                   exchange alone: the difference to median_us is what the
                   agreement and planning cost per blocking call); for auto, a
                   plan of the algorithm its blocking call chose
  rounds           communication rounds of one persistent start (a wait between
                   two rounds; for the sliding-window multipair variants: completions)
  messages         payload messages sent to other ranks
  payload_bytes    payload bytes sent to other ranks
  metadata_bytes   bytes of block-size/offset metadata, at init plus at start
  scratch_bytes    scratch memory the plan holds
                   (rounds..scratch_bytes: maximum over ranks, read from a
                   persistent request, MPIX_Alltoall(v)_plan + Start + Wait)
  speedup          pmpi's median / this median
  fastest          * on the row with the smallest median of its size and
                   distribution
  predicted_us     the selection model's time for one blocking call of the
                   algorithm with these parameters (docs/tuning.md), on the
                   machine profile in force (MPIX_MACHINE_FILE or defaults)
  check            with --check: ref (pmpi), ok, or MISMATCH(bytes, ranks)
  t_PHASE_us       with MPIX_BREAKDOWN=1 in the environment: the microseconds of
                   the last timed call spent in each phase (other, agreement,
                   planning, metadata, intra_node, inter_node, exchange,
                   local_copy; src/core/breakdown.hpp) on the rank whose call
                   took longest, so that they add up to its time; '-' for peers
An algorithm that fails (for example MPIX_ERR_UNSUPPORTED) prints its error instead
of the numbers; CSV has an 'error' column for it.

Sparse dynamic data exchange (--op alltoall_crs | alltoallv_crs):
  --matrix F1,F2,...         Matrix Market files: rows and x split in contiguous
                             blocks over the ranks; each rank sends every owner of
                             columns it needs the list of those column indices
                             (alltoallv_crs) or their number, one int
                             (alltoall_crs): the SpMV pattern, as in paper 001
  --pattern P1,P2,...        generated patterns: stencil2d, stencil3d (9- and 27-point
                             stencils on a near-square grid of ranks), random (each
                             rank sends to 2 log2(P) random ranks), powerlaw (rank r
                             sends to about P/(r+1) ranks), all_to_one, one_to_all;
                             all: every one of them.
                             Default: stencil2d,random unless --matrix is given.
                             Message sizes: --sizes S (bytes; default 16): S/4 ints
                             per message for alltoall_crs, 1..S/4 for alltoallv_crs
  --algorithms, --iters, --warmup, --ppn, --format, --check as above; the
  algorithms are the registry's for the operation (no pmpi; personalized is the
  baseline of 'speedup'); --check compares what every rank received with the
  pattern. --dist and --set do not apply (the SDDE algorithms take no parameters).
  Columns:
    pattern          matrix file name or pattern (with S for generated ones)
    max_send_nnz     the most messages a rank sends
    median_us min_us max_us   as above (blocking MPIX_Alltoall(v)_crs)
    messages         point-to-point messages (or puts) to other ranks, at most
                     over ranks, of one call
    inter_node_max   inter-node messages of the rank that sends most of them
    inter_node_total inter-node messages of all ranks together
    bytes            bytes sent to other ranks, at most over ranks
    collectives      reductions, barriers, fences of the call (not counting the
                     one agreement every call makes)
    speedup          personalized's median / this median
)";


bool is_sdde(mpix::Op op) { return op == mpix::kAlltoallCrs || op == mpix::kAlltoallvCrs; }

const char* const kSddePatterns[] = {"stencil2d", "stencil3d", "random", "powerlaw", "all_to_one", "one_to_all"};

// A list option names each value once, in the order first given.
template <class T>
void append_once(std::vector<T>* values, const T& value) {
  if (std::find(values->begin(), values->end(), value) == values->end()) values->push_back(value);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    std::size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

bool parse_int(const std::string& text, long long low, long long high, long long* value) {
  return mpix::parse_integer(text, value) && *value >= low && *value <= high;
}

std::string sizes_fit(const std::vector<long long>& sizes, int ranks) {
  for (long long S : sizes)
    if (S > INT_MAX / ranks)
      return "--sizes: " + std::to_string(S) + " bytes per block times " + std::to_string(ranks) +
             " ranks exceeds 2^31-1 bytes per buffer";
  return "";
}

// "4k" -> 4096, "1m" -> 1048576.
bool parse_size(const std::string& text, long long* bytes) {
  if (text.empty()) return false;
  long long unit = 1;
  std::string digits = text;
  char last = text.back();
  if (last == 'k' || last == 'K') unit = 1024;
  if (last == 'm' || last == 'M') unit = 1024 * 1024;
  if (unit != 1) digits.pop_back();
  long long value = 0;
  if (!parse_int(digits, 0, INT_MAX, &value) || value > INT_MAX / unit) return false;
  *bytes = value * unit;
  return true;
}

// The info keys of algorithm parameters, from the registry's Param enumeration.
std::vector<std::string> parameter_keys() {
  std::vector<std::string> keys;
  for (int i = 0; i < 64; ++i) {
    const char* key = mpix::param_key(static_cast<mpix::Param>(i));
    if (std::strcmp(key, "?") == 0) break;
    keys.push_back(key);
  }
  return keys;
}

// Empty on success, else what is wrong with the command line.
std::string parse_options(int argc, char** argv, Options* o) {
  // A valued option given twice was the last one silently; --set is per key.
  std::set<std::string> given;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto flag = [&](bool* target) -> std::string {
      if (has_value) return arg + " takes no value";
      *target = true;
      return "";
    };
    auto need = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      o->help = true;
      continue;
    }
    if (arg == "--check") {
      std::string error = flag(&o->check);
      if (!error.empty()) return error;
      continue;
    }
    static const char* const valued[] = {"--op",    "--algorithms", "--sizes", "--dist",   "--iters", "--warmup",
                                         "--ppn",   "--set",        "--format", "--seed", "--matrix", "--pattern"};
    if (std::find_if(std::begin(valued), std::end(valued), [&](const char* v) { return arg == v; }) ==
        std::end(valued))
      return "unknown option '" + std::string(argv[i]) + "'";
    if (!need()) return arg + " needs a value";
    if (arg != "--set" && !given.insert(arg).second) {
      bool list = arg == "--algorithms" || arg == "--sizes" || arg == "--dist" || arg == "--matrix" || arg == "--pattern";
      return arg + " given twice" + (list ? " (several values go in one list: " + arg + " A,B)" : "");
    }
    long long number = 0;
    if (arg == "--op") {
      if (value == "alltoall") o->op = mpix::kAlltoall;
      else if (value == "alltoallv") o->op = mpix::kAlltoallv;
      else if (value == "alltoall_crs") o->op = mpix::kAlltoallCrs;
      else if (value == "alltoallv_crs") o->op = mpix::kAlltoallvCrs;
      else return "--op " + value + ": expected alltoall, alltoallv, alltoall_crs or alltoallv_crs";
    } else if (arg == "--matrix") {
      o->matrices = split(value, ',');
      for (const std::string& file : o->matrices)
        if (file.empty()) return "--matrix: an empty file name";
    } else if (arg == "--pattern") {
      o->patterns.clear();
      for (const std::string& name : split(value, ',')) {
        if (name == "all") {
          for (const char* known : kSddePatterns)
            append_once(&o->patterns, std::string(known));
          continue;
        }
        if (std::find_if(std::begin(kSddePatterns), std::end(kSddePatterns),
                         [&](const char* known) { return name == known; }) == std::end(kSddePatterns))
          return "--pattern: unknown pattern '" + name +
                 "' (known: stencil2d,stencil3d,random,powerlaw,all_to_one,one_to_all, or all)";
        append_once(&o->patterns, name);
      }
    } else if (arg == "--algorithms") {
      o->all_algorithms = value == "all";
      o->algorithms = split(value, ',');
    } else if (arg == "--sizes") {
      o->sizes.clear();
      o->sizes_given = true;
      for (const std::string& part : split(value, ',')) {
        long long bytes = 0;
        if (!parse_size(part, &bytes))
          return "--sizes: '" + part + "' is not a size (bytes >= 0, suffix k or m, at most 2^31-1)";
        append_once(&o->sizes, bytes);
      }
    } else if (arg == "--dist") {
      o->dists.clear();
      o->dist_given = true;
      for (const std::string& part : split(value, ',')) {
        Distribution d;
        if (!mpix::workload::parse_distribution(part, &d)) {
          std::string known;
          for (Distribution k : mpix::workload::all_distributions())
            known += std::string(known.empty() ? "" : ",") + mpix::workload::distribution_name(k);
          return "--dist: unknown distribution '" + part + "' (known: " + known + ")";
        }
        append_once(&o->dists, d);
      }
    } else if (arg == "--iters") {
      if (!parse_int(value, 1, INT_MAX, &number)) return "--iters " + value + ": expected an integer 1..2147483647";
      o->iters = (int)number;
    } else if (arg == "--warmup") {
      if (!parse_int(value, 0, INT_MAX, &number)) return "--warmup " + value + ": expected an integer 0..2147483647";
      o->warmup = (int)number;
    } else if (arg == "--ppn") {
      if (!parse_int(value, 0, INT_MAX, &number)) return "--ppn " + value + ": expected an integer 0..2147483647 (0: detect)";
      o->ppn = (int)number;
      o->ppn_given = true;
    } else if (arg == "--seed") {
      if (value.empty() || value[0] == '-' || !mpix::parse_seed(value, &o->seed))
        return "--seed " + value + ": expected an integer 0..18446744073709551615";
    } else if (arg == "--format") {
      if (value == "csv") o->csv = true;
      else if (value == "table") o->csv = false;
      else return "--format " + value + ": expected table or csv";
    } else if (arg == "--set") {
      std::size_t at = value.find('=');
      if (at == std::string::npos || at == 0 || at + 1 == value.size())
        return "--set " + value + ": expected KEY=V1,V2,...";
      std::string key = value.substr(0, at);
      if (key.rfind("mpix_", 0) != 0) key = "mpix_" + key;
      std::vector<std::string> keys = parameter_keys();
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        std::string known;
        for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
        return "--set " + value + ": '" + key + "' is not an algorithm parameter (known: " + known + ")";
      }
      for (const auto& sweep : o->sweeps)
        if (sweep.first == key) return "--set: " + key + " given twice";
      std::vector<std::string> values = split(value.substr(at + 1), ',');
      // A value that is wrong on its own (not a number, radix 1) is a bad option;
      // one that is wrong only for a call (radix > P) becomes an error row.
      MPIX_Info* probe = nullptr;
      MPIX_Info_init(&probe);
      std::string error;
      for (const std::string& v : values) {
        if (MPIX_Info_set(probe, key.c_str(), v.c_str()) != MPIX_SUCCESS) {
          error = std::string("--set: ") + MPIX_Last_error_message();
          break;
        }
      }
      MPIX_Info_free(&probe);
      if (!error.empty()) return error;
      o->sweeps.emplace_back(key, values);
    }
  }
  if (o->help) return "";
  // The loops count warmup and timed calls in an int.
  if ((long long)o->warmup + o->iters > INT_MAX)
    return "--warmup " + std::to_string(o->warmup) + " and --iters " + std::to_string(o->iters) +
           ": at most " + std::to_string(INT_MAX) + " calls together";
  if (is_sdde(o->op)) {
    if (o->patterns.empty() && o->matrices.empty()) o->patterns = {"stencil2d", "random"};
    if (!o->sizes_given) o->sizes = {16};
    for (long long S : o->sizes)
      if (S < 4) return "--sizes: " + std::to_string(S) + ": SDDE messages carry ints, at least 4 bytes";
  } else if (!o->matrices.empty() || !o->patterns.empty()) {
    return "--matrix and --pattern apply to --op alltoall_crs and alltoallv_crs";
  }
  if (!o->all_algorithms) {
    std::vector<std::string> names, listed;
    for (const std::string& name : o->algorithms) {
      if (name == "all") {  // "all,auto": the registry's, then the library's choice
        for (const std::string& each : mpix::algorithm_names(o->op)) listed.push_back(each);
      } else {
        listed.push_back(name);
      }
    }
    for (const std::string& name : listed) {
      if (name != "auto" && !mpix::find_algorithm(name, o->op) && !(is_peer(name) && !is_sdde(o->op))) {
        std::string known;
        for (const std::string& k : mpix::algorithm_names(o->op)) known += (known.empty() ? "" : ",") + k;
        if (!is_sdde(o->op))
          for (const std::string& k : peer_names()) known += "," + k;
        return "--algorithms: unknown algorithm '" + name + "' for " + mpix::op_name(o->op) +
               " (known: all,auto," + known + ")";
      }
      append_once(&names, name);
    }
    o->algorithms = names;
  }
  return "";
}

}  // namespace bench
