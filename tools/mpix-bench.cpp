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
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/comm.hpp"
#include "core/info.hpp"
#include "core/registry.hpp"
#include "core/request.hpp"
#include "mpix/mpix.h"
#include "workload.hpp"

namespace {

using mpix::workload::Distribution;
using mpix::workload::block_owner;
using KeyValues = std::vector<std::pair<std::string, std::string>>;

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
                             registry has for --op); 'auto' runs the library's own
                             choice (shown as auto:NAME), and 'all,auto' both.
                             pmpi (the MPI library's MPI_Alltoall(v)) is always run
                             first, as the baseline of 'speedup'.
  --sizes S1,S2,...          largest block size S in bytes; suffixes k (1024) and
                             m (1048576) are accepted: 16,256,4k,1m (default 16,256,4k)
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
                             mpix_max_queue, mpix_segment_bytes, mpix_seed.
                             A key is applied only to the algorithms whose registry
                             entry declares it; each algorithm runs once per
                             distinct combination of the keys it takes.
  --format table|csv         output (default table); only rank 0 prints
  --check                    compare every algorithm's receive buffer, byte for
                             byte, with pmpi's (after the timed calls and after the
                             persistent run) and report it in a 'check' column;
                             the exit status is 1 if any run mismatched.
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
  algorithm        registry name (auto:NAME for the library's choice)
  params           the algorithm's resolved parameters (info > environment > default)
  ranks nodes ppn  communicator size, number of nodes, ranks on the largest node
  dist             block-size distribution
  max_block_bytes  S (for fft_n1/fft_n2: the largest block that occurs)
  median_us min_us max_us
                   median, minimum and maximum over the timed iterations, in
                   microseconds, of the per-iteration maximum over ranks
  rounds           communication rounds of one persistent start (a wait between
                   two rounds; for the sliding-window multipair variants: completions)
  messages         payload messages sent to other ranks
  payload_bytes    payload bytes sent to other ranks
  metadata_bytes   bytes of block-size/offset metadata, at init plus at start
  scratch_bytes    scratch memory the plan holds
                   (rounds..scratch_bytes: maximum over ranks, read from a
                   persistent request, MPIX_Alltoall(v)_init + Start + Wait)
  speedup          pmpi's median / this median
  check            with --check: ref (pmpi), ok, or MISMATCH(bytes, ranks)
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
                             sends to about P/(r+1) ranks), all_to_one, one_to_all.
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

struct Options {
  mpix::Op op = mpix::kAlltoallv;
  bool all_algorithms = true;
  std::vector<std::string> algorithms;
  std::vector<long long> sizes = {16, 256, 4096};
  std::vector<Distribution> dists = {Distribution::uniform};
  bool dist_given = false;
  int iters = 10, warmup = 2;
  bool ppn_given = false;
  int ppn = 0;
  std::vector<std::pair<std::string, std::vector<std::string>>> sweeps;
  bool csv = false, check = false, help = false;
  unsigned long long seed = 1;
  bool sizes_given = false;
  std::vector<std::string> matrices, patterns;  // SDDE
};

bool is_sdde(mpix::Op op) { return op == mpix::kAlltoallCrs || op == mpix::kAlltoallvCrs; }

const char* const kSddePatterns[] = {"stencil2d", "stencil3d", "random", "powerlaw", "all_to_one", "one_to_all"};

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
      o->patterns = split(value, ',');
      for (const std::string& name : o->patterns)
        if (std::find_if(std::begin(kSddePatterns), std::end(kSddePatterns),
                         [&](const char* known) { return name == known; }) == std::end(kSddePatterns))
          return "--pattern: unknown pattern '" + name +
                 "' (known: stencil2d,stencil3d,random,powerlaw,all_to_one,one_to_all)";
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
        o->sizes.push_back(bytes);
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
        if (std::find(o->dists.begin(), o->dists.end(), d) == o->dists.end()) o->dists.push_back(d);
      }
    } else if (arg == "--iters") {
      if (!parse_int(value, 1, INT_MAX, &number)) return "--iters " + value + ": expected an integer >= 1";
      o->iters = (int)number;
    } else if (arg == "--warmup") {
      if (!parse_int(value, 0, INT_MAX, &number)) return "--warmup " + value + ": expected an integer >= 0";
      o->warmup = (int)number;
    } else if (arg == "--ppn") {
      if (!parse_int(value, 0, INT_MAX, &number)) return "--ppn " + value + ": expected an integer >= 0 (0: detect)";
      o->ppn = (int)number;
      o->ppn_given = true;
    } else if (arg == "--seed") {
      if (!mpix::parse_integer(value, &number)) return "--seed " + value + ": expected an integer";
      o->seed = (unsigned long long)number;
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
      if (name != "auto" && !mpix::find_algorithm(name, o->op)) {
        std::string known;
        for (const std::string& k : mpix::algorithm_names(o->op)) known += (known.empty() ? "" : ",") + k;
        return "--algorithms: unknown algorithm '" + name + "' for " + mpix::op_name(o->op) +
               " (known: all,auto," + known + ")";
      }
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    o->algorithms = names;
  }
  return "";
}

// --- agreement between ranks --------------------------------------------------

// Collective: false if `rc` failed on any rank; then `*error` (on rank 0) is the
// failure of the lowest failing rank: "code text: details".
bool all_succeeded(int rc, MPI_Comm comm, std::string* error) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = rc != MPIX_SUCCESS ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return true;
  std::string text;
  if (rank == first) text = std::string(MPIX_Error_string(rc)) + ": " + MPIX_Last_error_message();
  if (first != 0) {
    const int tag = 7001;
    if (rank == first) {
      MPI_Send(text.data(), (int)text.size(), MPI_CHAR, 0, tag, comm);
    } else if (rank == 0) {
      MPI_Status status;
      int length = 0;
      MPI_Probe(first, tag, comm, &status);
      MPI_Get_count(&status, MPI_CHAR, &length);
      text.resize(length);
      MPI_Recv(&text[0], length, MPI_CHAR, first, tag, comm, MPI_STATUS_IGNORE);
      text = "rank " + std::to_string(first) + ": " + text;
    }
  }
  *error = text;
  return false;
}

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
}

struct Row {
  std::string algorithm, params;
  std::string error;  // non-empty: the run failed
  double median = 0, min = 0, max = 0;
  long long rounds = 0, messages = 0, payload = 0, metadata = 0, scratch = 0;
  std::string check;
  long long mismatch_bytes = 0, mismatch_ranks = 0;
};

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

  Row run(Workload& w, const std::string& algorithm, const KeyValues& settings) {
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
    for (int it = 0; it < o_.warmup + o_.iters; ++it) {
      MPI_Barrier(world_);
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
    }
    std::sort(times.begin(), times.end());
    std::size_t n = times.size();
    row.median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    row.min = times.front();
    row.max = times.back();
    long long mismatch = 0;
    if (o_.check) {
      if (is_reference) {
        w.reference.assign(w.recv.data(), w.recv.data() + w.recv.size());
        w.have_reference = true;
      } else {
        mismatch += compare(w);
      }
    }

    // Counters: one persistent request, started and waited once.
    MPIX_Request* request = nullptr;
    rc = init(w, info, &request);
    MPIX_Info_free(&info);
    if (!all_succeeded(rc, world_, &row.error)) return row;
    if (o_.check) std::memset(w.recv.data(), 0xA5, w.recv.size());
    rc = MPIX_Start(request);
    if (rc == MPIX_SUCCESS) rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
    if (!all_succeeded(rc, world_, &row.error)) {
      MPIX_Wait(request, MPI_STATUS_IGNORE);
      MPIX_Request_free(&request);
      return row;
    }
    const mpix::PlanStats& start = request->plan->stats;
    const mpix::PlanStats& setup = request->plan->init_stats;
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
    if (algorithm == "auto") row.algorithm = "auto:" + request->algorithm;
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

// --- output ---------------------------------------------------------------------

std::string fixed(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

class Output {
 public:
  // Any columns (the SDDE table); the last one of `header` may be "check".
  Output(std::vector<std::string> header, bool csv, bool print) : csv_(csv), print_(print), header_(std::move(header)) {
    if (csv_) {
      header_.push_back("error");
      if (print_) print_csv(header_);
    }
  }
  // Only the rank with `print` set writes anything.
  Output(bool csv, bool check, bool print) : csv_(csv), print_(print) {
    header_ = {"op",     "algorithm", "params",   "ranks",   "nodes",    "ppn",      "dist",
               "max_block_bytes", "median_us", "min_us", "max_us", "rounds", "messages", "payload_bytes",
               "metadata_bytes", "scratch_bytes", "speedup"};
    if (check) header_.push_back("check");
    if (csv_) {
      header_.push_back("error");
      if (print_) print_csv(header_);
    }
  }

  // `cells` are the leading columns up to max_block_bytes; `rest` the others, or
  // empty with `error` set.
  void add(std::vector<std::string> cells, const std::vector<std::string>& rest, const std::string& error) {
    if (!print_) return;
    if (csv_) {
      if (error.empty()) {
        cells.insert(cells.end(), rest.begin(), rest.end());
        cells.push_back("");
      } else {
        while (cells.size() < header_.size() - 1) cells.push_back("");
        cells.push_back(error);
      }
      print_csv(cells);
      return;
    }
    if (error.empty()) cells.insert(cells.end(), rest.begin(), rest.end());
    else cells.push_back("error: " + error);
    rows_.push_back(cells);
    errors_.push_back(!error.empty());
  }

  void finish() {
    if (csv_ || !print_) return;
    std::vector<std::size_t> width(header_.size());
    for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
    for (std::size_t r = 0; r < rows_.size(); ++r)
      for (std::size_t c = 0; c < rows_[r].size(); ++c)
        if (!(errors_[r] && c + 1 == rows_[r].size())) width[c] = std::max(width[c], rows_[r][c].size());
    print_aligned(header_, width, false);
    for (std::size_t r = 0; r < rows_.size(); ++r) print_aligned(rows_[r], width, errors_[r]);
    std::fflush(stdout);
  }

 private:
  static bool left_aligned(const std::string& column) {
    return column == "op" || column == "algorithm" || column == "params" || column == "dist" ||
           column == "check" || column == "pattern";
  }
  void print_aligned(const std::vector<std::string>& cells, const std::vector<std::size_t>& width,
                     bool last_free) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) line += "  ";
      const std::string& text = cells[c];
      if (last_free && c + 1 == cells.size()) {
        line += text;
        break;
      }
      std::string pad(width[c] > text.size() ? width[c] - text.size() : 0, ' ');
      bool left = left_aligned(header_[c]);
      // The last column needs no trailing padding.
      line += left ? (c + 1 == cells.size() ? text : text + pad) : pad + text;
    }
    std::printf("%s\n", line.c_str());
  }
  void print_csv(const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) line += (c ? "," : "") + csv_field(cells[c]);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  bool csv_, print_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> errors_;
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
  for (const SddePattern& p : patterns) {
    long long max_nnz = 0;
    for (const auto& sends : p.sends) max_nnz = std::max(max_nnz, (long long)sends.size());
    double baseline = -1;
    for (const std::string& name : names) {
      std::string shown = name;
      SddeRow row = run_sdde(o, comm, p, &shown);
      if (name == "personalized" && row.error.empty()) baseline = row.median;
      mismatch = mismatch || row.mismatches > 0;
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
  return mismatch ? 1 : 0;
}

int bench_main(int argc, char** argv) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Options o;
  std::string error = parse_options(argc, argv, &o);
  if (o.help) {
    if (rank == 0) std::fputs(kUsage, stdout);
    return 0;
  }
  if (error.empty()) {
    for (long long S : o.sizes)
      if (S > INT_MAX / size) {
        error = "--sizes: " + std::to_string(S) + " bytes per block times " + std::to_string(size) +
                " ranks exceeds 2^31-1 bytes per buffer";
        break;
      }
  }
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
  if (is_sdde(o.op)) {
    int status = sdde_main(o, comm, nodes, ppn);
    MPIX_Comm_free(&comm);
    return status;
  }

  // The algorithms: pmpi first, then the registry's (or the given) order.
  std::vector<std::string> names = o.all_algorithms ? mpix::algorithm_names(o.op) : o.algorithms;
  names.erase(std::remove(names.begin(), names.end(), "pmpi"), names.end());
  names.insert(names.begin(), "pmpi");

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
  Output out(o.csv, o.check, rank == 0);
  if (rank == 0 && !o.csv)
    std::printf("# mpix-bench %s: %d ranks, %d nodes, %d iterations (+%d warmup), seed %llu; times in us: "
                "per-iteration max over ranks, then median/min/max over iterations\n",
                mpix::op_name(o.op), size, nodes, o.iters, o.warmup, o.seed);
  bool any_mismatch = false;
  Workload w;
  for (Distribution dist : dists) {
    std::vector<long long> sizes = o.sizes;
    if (o.op == mpix::kAlltoallv && mpix::workload::fixed_sizes(dist)) sizes = {0};
    for (long long S : sizes) {
      build_workload(o, dist, S, rank, size, &w);
      double reference_median = -1;
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
          Row row = bench.run(w, name, settings);
          if (name == "pmpi" && row.error.empty()) reference_median = row.median;
          any_mismatch = any_mismatch || row.mismatch_bytes > 0;
          if (rank != 0) continue;
          std::vector<std::string> cells = {mpix::op_name(o.op), row.algorithm,
                                            row.params.empty() ? "-" : row.params,
                                            std::to_string(size), std::to_string(nodes), std::to_string(ppn),
                                            w.dist, std::to_string(w.max_block)};
          std::vector<std::string> rest = {fixed(row.median), fixed(row.min), fixed(row.max),
                                           std::to_string(row.rounds), std::to_string(row.messages),
                                           std::to_string(row.payload), std::to_string(row.metadata),
                                           std::to_string(row.scratch),
                                           reference_median > 0 && row.median > 0
                                               ? fixed(reference_median / row.median)
                                               : std::string("-")};
          if (o.check) rest.push_back(row.check);
          out.add(cells, rest, row.error);
        }
      }
    }
  }
  out.finish();
  MPIX_Comm_free(&comm);
  return any_mismatch ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = bench_main(argc, argv);
  MPI_Finalize();
  return status;
}
