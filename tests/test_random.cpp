// Randomized differential test: every case is drawn from one seed and compared
// with MPI_Alltoall(v) byte for byte, canaries included (harness::run_exchange).
//
// A case draws, from its seed and the world size W alone: a sub-communicator of
// 1..W ranks in a shuffled or identity order, a node shape (MPIX_Comm_update_locality
// with ppn 1..ranks, so often a smaller last node, or detected), the operation
// (alltoall, alltoallv; blocking with 1 or 2 calls or persistent with 1..3 starts), the algorithm and
// its parameters from the registry's own list and the ranges info.cpp checks, a
// datatype (basic, contiguous, vector, mixed, struct with holes), in place or not,
// and the block sizes (zeros, uniform, random, skewed, one huge block, ranks that
// send or receive nothing). Only valid calls are drawn: every rank's counts agree
// with its peers'.
//
// With --invalid, each case's call is made first with bad arguments on one rank
// (harness::BadArgument, drawn from the case's seed: counts that shrink, a
// negative count, a NULL receive buffer or datatype, an uncommitted datatype,
// another or an unknown algorithm): it must fail on every rank, with a message,
// writing nothing; then the valid case runs on the same communicator.
//
//   test_random [--seed S|random] [--cases N] [--quiet] [--invalid]
// Case k runs with seed S + k; a failed case prints the command that replays it
// alone (`--seed S+k --cases 1` at the same rank count). docs/testing.md.
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "harness.hpp"

#ifndef MPIX_MPIEXEC
#define MPIX_MPIEXEC "mpiexec"
#endif

namespace {

using harness::Mode;

// SplitMix64: the same sequence with every compiler and standard library (the
// <random> distributions are not), so a seed means one case everywhere.
struct Rng {
  std::uint64_t state;
  explicit Rng(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  long long range(long long lo, long long hi) { return lo + (long long)(next() % (std::uint64_t)(hi - lo + 1)); }
  bool chance(int percent) { return (int)(next() % 100) < percent; }
};

std::uint64_t hash3(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  Rng rng(seed ^ (a * 0x100000001b3ull) ^ (b * 0xc2b2ae3d27d4eb4full));
  rng.next();
  return rng.next();
}

enum class Counts { zeros, uniform, random, skewed, huge_block, empty_ranks };
const char* counts_name(Counts counts) {
  switch (counts) {
    case Counts::zeros: return "zeros";
    case Counts::uniform: return "uniform";
    case Counts::random: return "random";
    case Counts::skewed: return "skewed";
    case Counts::huge_block: return "huge_block";
    case Counts::empty_ranks: return "empty_ranks";
  }
  return "?";
}

// int, (hole), double, short, (hole): size 14, extent 24.
harness::TypeCase make_struct_type() {
  struct Record {
    int a;
    double b;
    short c;
  };
  int lengths[3] = {1, 1, 1};
  MPI_Aint displs[3] = {offsetof(Record, a), offsetof(Record, b), offsetof(Record, c)};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, raw, resized;
  MPI_Type_create_struct(3, lengths, displs, types, &raw);
  MPI_Type_create_resized(raw, 0, sizeof(Record), &resized);
  MPI_Type_free(&raw);
  MPI_Type_commit(&resized);
  return harness::TypeCase{"struct", resized, resized, 1, 1, (int)(sizeof(int) + sizeof(double) + sizeof(short))};
}

struct Case {
  std::uint64_t seed = 0;
  int ranks = 1, ppn = 0;  // ppn 0: nodes as detected
  bool shuffled = false;
  std::vector<int> key;    // by world rank: its rank in the sub-communicator
  bool alltoall = false;
  Mode mode = Mode::blocking;
  int starts = 1;
  bool in_place = false;
  std::string algorithm;   // empty: auto
  std::string types;
  Counts counts = Counts::uniform;
  int scale = 1;           // largest ordinary block, in units
  int huge = 0;            // units of the huge block
  int huge_source = 0, huge_dest = 0;
  std::vector<bool> silent_send, silent_recv;  // empty_ranks, by sub-communicator rank
  // Parameters drawn as raw numbers, mapped into their range once the node layout is
  // known (the radix of a hierarchical algorithm is at most the largest node).
  std::vector<std::pair<mpix::Param, std::uint64_t>> params;  // raw 0: the default
  std::vector<std::pair<const char*, std::string>> keys;        // resolved
  harness::BadCall bad;  // --invalid: the rank whose call goes wrong first, and how
};

Case draw(std::uint64_t seed, int world, const std::vector<std::string>& type_names) {
  Rng rng(seed);
  Case c;
  c.seed = seed;
  c.ranks = rng.chance(25) ? world : rng.chance(10) ? 1 : (int)rng.range(1, world);
  c.ppn = rng.chance(25) ? 0 : (int)rng.range(1, c.ranks);
  c.shuffled = rng.chance(50);
  c.key.resize(world);
  for (int r = 0; r < world; ++r) c.key[r] = r;
  if (c.shuffled)
    for (int r = c.ranks - 1; r > 0; --r) std::swap(c.key[r], c.key[rng.range(0, r)]);
  c.alltoall = rng.chance(40);
  const mpix::Op op = c.alltoall ? mpix::kAlltoall : mpix::kAlltoallv;
  if (rng.chance(35)) {
    c.mode = Mode::persistent;
    c.starts = (int)rng.range(1, 3);
  } else {
    // One or two blocking calls, the second running the first one's plan again; from
    // the seed, so that every other draw stays what it was before.
    c.starts = 1 + (int)(seed & 1);
  }
  c.in_place = rng.chance(25);
  std::vector<std::string> names = mpix::algorithm_names(op);
  names.push_back("");  // auto
  c.algorithm = names[rng.next() % names.size()];
  if (!c.algorithm.empty())
    for (mpix::Param param : mpix::find_algorithm(c.algorithm, op)->params)
      c.params.emplace_back(param, rng.chance(25) ? 0 : rng.next() | 1);
  c.types = type_names[rng.next() % type_names.size()];
  if (c.alltoall) {
    const Counts kinds[] = {Counts::zeros, Counts::uniform, Counts::uniform, Counts::huge_block};
    c.counts = kinds[rng.next() % 4];
  } else {
    c.counts = (Counts)rng.range(0, 5);
  }
  c.scale = rng.chance(30) ? (int)rng.range(1, 4) : (int)rng.range(1, 200);
  c.huge = (int)rng.range(4096, 40000);
  c.huge_source = (int)rng.range(0, c.ranks - 1);
  c.huge_dest = (int)rng.range(0, c.ranks - 1);
  c.silent_send.resize(c.ranks);
  c.silent_recv.resize(c.ranks);
  for (int r = 0; r < c.ranks; ++r) {
    c.silent_send[r] = rng.chance(30);
    c.silent_recv[r] = rng.chance(30);
  }
  return c;
}

// The fault of --invalid, from its own stream of the seed, so that the valid case
// is the one the same seed draws without it.
void draw_bad(Case& c) {
  Rng rng(c.seed ^ 0x6261645f61726773ull);
  c.bad.rank = (int)rng.range(0, c.ranks - 1);
  c.bad.argument = (harness::BadArgument)rng.range(0, (int)harness::BadArgument::count - 1);
  c.bad.peer = (int)rng.range(0, 1 << 20);
}

// Units from `source` to `dest` (ranks of the sub-communicator).
int units(const Case& c, int source, int dest) {
  const std::uint64_t h = hash3(c.seed, (std::uint64_t)source, (std::uint64_t)dest);
  switch (c.counts) {
    case Counts::zeros: return 0;
    case Counts::uniform: return c.scale;
    case Counts::random: return (int)(h % (std::uint64_t)(c.scale + 1));
    case Counts::skewed: {
      // Most blocks small, a few near the largest (a power law).
      double u = (double)(h >> 11) / 9007199254740992.0;
      return (int)(c.scale * 8 * std::pow(u, 12.0));
    }
    case Counts::huge_block:
      if (c.alltoall) return c.huge / 16;
      return source == c.huge_source && dest == c.huge_dest ? c.huge : (int)(h % (std::uint64_t)(c.scale + 1));
    case Counts::empty_ranks:
      if (c.silent_send[source] || c.silent_recv[dest]) return 0;
      return (int)(h % (std::uint64_t)(c.scale + 1));
  }
  return 0;
}

// Maps the drawn parameters into the ranges that info.cpp and the algorithm accept,
// now that the largest node (q_max) is known.
void resolve_keys(Case& c, int q_max, long long max_block_bytes) {
  const bool hierarchical = c.algorithm.rfind("tuna_hier", 0) == 0;
  const int n = c.ranks;
  c.keys.clear();
  for (const auto& drawn : c.params) {
    const std::uint64_t raw = drawn.second;
    if (raw == 0) continue;
    std::string value;
    switch (drawn.first) {
      case mpix::Param::radix: {
        const int limit = std::max(2, hierarchical ? q_max : n);
        value = raw % 7 == 0 ? "auto" : std::to_string(2 + (int)(raw % (std::uint64_t)(limit - 1)));
        break;
      }
      case mpix::Param::block_count:
        value = raw % 7 == 0 ? "unlimited" : std::to_string(1 + (int)(raw % (std::uint64_t)(n + 2)));
        break;
      case mpix::Param::stride: value = std::to_string(1 + (int)(raw % (std::uint64_t)(n + 2))); break;
      case mpix::Param::max_queue: value = std::to_string(2 + (int)(raw % (std::uint64_t)(2 * n + 1))); break;
      case mpix::Param::segment_bytes:
        // At most 64 segments per block: one message per segment, and a case
        // should take seconds, not hours (2-byte segments of a 31 KB block at 8
        // ranks are 127 000 messages per rank).
        value = std::to_string(std::max((1LL << (raw % 15)) + (long long)((raw >> 8) % 7), (max_block_bytes + 63) / 64));
        break;
      case mpix::Param::seed: value = std::to_string((long long)(raw >> 1) * ((raw >> 63) ? -1 : 1)); break;
      case mpix::Param::ipc_threshold:
      case mpix::Param::memcpy_threshold:  // ipc_hybrid's: any size in bytes
        value = std::to_string((long long)(raw % 65536));
        break;
      case mpix::Param::locality: value = raw % 2 ? "region" : "node"; break;
      case mpix::Param::lane_group:
        // Lane groups need nodes of one size (a call on others fails by design,
        // test_logtime); beyond min(Q, N - 1) they act as that.
        value = c.ppn > 0 && n % c.ppn == 0 ? std::to_string(1 + (int)(raw % (std::uint64_t)(q_max + 1))) : "1";
        break;
    }
    c.keys.emplace_back(mpix::param_key(drawn.first), value);
  }
}

std::string describe(const Case& c) {
  std::string text = "ranks=" + std::to_string(c.ranks) + (c.shuffled ? " (shuffled)" : "");
  text += c.ppn > 0 ? " ppn=" + std::to_string(c.ppn) : std::string(" ppn=detected");
  text += c.alltoall ? " alltoall" : " alltoallv";
  text += " algorithm=" + (c.algorithm.empty() ? std::string("auto") : c.algorithm);
  for (const auto& k : c.keys) text += std::string(" ") + (k.first + 5) + "=" + k.second;
  text += " type=" + c.types;
  text += c.mode == Mode::persistent ? " persistent(" + std::to_string(c.starts) + " starts)"
                                      : " blocking(" + std::to_string(c.starts) + " calls)";
  if (c.in_place) text += " in-place";
  if (c.bad.rank >= 0)
    text += std::string(" bad=") + harness::bad_argument_name(c.bad.argument) + "@rank" + std::to_string(c.bad.rank) +
            "(peer " + std::to_string(c.bad.peer) + ")";
  text += std::string(" counts=") + counts_name(c.counts);
  if (c.counts == Counts::huge_block)
    text += "(" + std::to_string(c.huge) + " units" +
            (c.alltoall ? "/16" : " " + std::to_string(c.huge_source) + "->" + std::to_string(c.huge_dest)) + ")";
  else if (c.counts != Counts::zeros)
    text += "(scale " + std::to_string(c.scale) + ")";
  return text;
}

// Runs one case on every rank of MPI_COMM_WORLD (those outside the drawn
// sub-communicator only take part in its creation). True on every rank if it passed.
bool run_case(Case& c, const harness::TypeCase& type, bool print, std::string* why) {
  const int world_rank = harness::world_rank();
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < c.ranks ? 0 : MPI_UNDEFINED, c.key[world_rank], &sub);
  bool ok = true;
  if (sub != MPI_COMM_NULL) {
    MPIX_Comm* comm = nullptr;
    int rc = MPIX_Comm_init(&comm, sub);
    if (rc == MPIX_SUCCESS) rc = MPIX_Comm_update_locality(comm, c.ppn);
    if (rc != MPIX_SUCCESS) {
      *why = std::string("communicator setup: ") + MPIX_Last_error_message();
      ok = false;
    }
    int local_size = 0, q_max = 0;
    if (comm) MPIX_Comm_locality(comm, nullptr, nullptr, &local_size, nullptr);
    MPI_Allreduce(&local_size, &q_max, 1, MPI_INT, MPI_MAX, sub);
    long long max_block_bytes = 0;
    for (int source = 0; source < c.ranks; ++source)
      for (int dest = 0; dest < c.ranks; ++dest)
        max_block_bytes = std::max(max_block_bytes, (long long)units(c, source, dest) * type.unit_bytes);
    resolve_keys(c, q_max, max_block_bytes);
    if (print) {
      // Before the run, so that a hang shows its case.
      std::printf("%s: ", describe(c).c_str());
      std::fflush(stdout);
    }
    if (harness::all_ranks(ok, sub)) {
      harness::ExchangeCase e;
      e.alltoall = c.alltoall;
      e.types = &type;
      e.mode = c.mode;
      e.in_place = c.in_place;
      e.starts = c.starts;
      e.algorithm = c.algorithm;
      e.keys = c.keys;
      e.units = [&c](int source, int dest) { return units(c, source, dest); };
      if (c.bad.rank >= 0) {
        e.bad = c.bad;
        ok = harness::run_exchange(e, comm, sub, why);
        e.bad = harness::BadCall{};
        if (!ok && why) *why = "bad arguments: " + *why;
      }
      // After a failed call, the communicator serves the valid one.
      ok = harness::run_exchange(e, comm, sub, why) && ok;
    } else {
      ok = false;
    }
    if (comm) MPIX_Comm_free(&comm);
    MPI_Comm_free(&sub);
  }
  // Rank 0 is in every sub-communicator: it holds the resolved keys for the report.
  return harness::all_ranks(ok);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = harness::world_rank(), world = harness::world_size();
  std::uint64_t seed = 0;
  bool random_seed = true, quiet = false, invalid = false;
  long long cases = 10;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seed" && i + 1 < argc) {
      std::string value = argv[++i];
      random_seed = value == "random";
      if (!random_seed) seed = std::strtoull(value.c_str(), nullptr, 10);
    } else if (arg == "--cases" && i + 1 < argc) {
      cases = std::atoll(argv[++i]);
    } else if (arg == "--quiet") {
      quiet = true;
    } else if (arg == "--invalid") {
      invalid = true;
    } else {
      if (rank == 0)
        std::fprintf(stderr, "usage: %s [--seed S|random] [--cases N] [--quiet] [--invalid]\n", argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  if (random_seed) {
    seed = (std::uint64_t)std::time(nullptr) * 1000003ull % 1000000007ull;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  }

  std::vector<harness::TypeCase> types = harness::type_cases();
  types.push_back(make_struct_type());
  std::vector<std::string> type_names;
  for (const auto& t : types) type_names.push_back(t.name);

  if (rank == 0)
    std::printf("test_random: seed %" PRIu64 ", %lld case(s) at %d rank(s); case k has seed %" PRIu64 " + k\n", seed,
                cases, world, seed);
  long long failed = 0;
  for (long long k = 0; k < cases; ++k) {
    Case c = draw(seed + (std::uint64_t)k, world, type_names);
    if (invalid) draw_bad(c);
    const harness::TypeCase* type = nullptr;
    for (const auto& t : types)
      if (t.name == c.types) type = &t;
    if (rank == 0 && !quiet) std::printf("case %lld seed %" PRIu64 ": ", k, c.seed);
    std::string why;
    bool ok = run_case(c, *type, rank == 0 && !quiet, &why);
    if (!why.empty()) std::fprintf(stderr, "  rank %d: %s\n", rank, why.c_str());
    if (rank == 0 && !quiet) std::printf("%s\n", ok ? "ok" : "FAILED");
    if (!ok) {
      ++failed;
      if (rank == 0)
        std::printf("FAILED case seed %" PRIu64 ": %s\n  replay: MPIX_PPN= %s -n %d %s --seed %" PRIu64 " --cases 1%s\n",
                    c.seed, describe(c).c_str(), MPIX_MPIEXEC, world, argv[0], c.seed, invalid ? " --invalid" : "");
    }
    std::fflush(stdout);
  }
  if (rank == 0) std::printf("test_random: %lld of %lld case(s) failed (seed %" PRIu64 ")\n", failed, cases, seed);
  MPI_Type_free(&types.back().send);
  MPI_Finalize();
  return failed ? 1 : 0;
}
