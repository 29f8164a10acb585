// Every registered dense algorithm against MPI_Alltoallv, byte for byte with
// canaries: alltoall and alltoallv, blocking and persistent (MPIX_Wait and
// MPIX_Test loops), every distribution and datatype, in place, ranks that send
// or receive nothing. Run at 1, 2, 3, 4, 5, 8 ranks and at 16 ranks with emulated
// nodes (MPIX_PPN).
#include <catch2/catch.hpp>
#include <unistd.h>
#include <cstdlib>
#include <set>
#include <string>

#include "core/carried_agreement.hpp"
#include "core/comm.hpp"
#include "core/registry.hpp"
#include "harness.hpp"

using harness::DenseCase;
using harness::Mode;
using mpix::workload::Distribution;

namespace {

// Small batches, queues and segments, so that batching, queue waits, several
// segments and trailing remainders all happen even at a few ranks; an IPC threshold
// that sends the smallest blocks of ipc_hybrid by messages and copies the others.
// Keys an algorithm does not take are ignored.
const std::vector<std::pair<const char*, std::string>> kSmallParameters = {
    {"mpix_block_count", "3"}, {"mpix_stride", "3"}, {"mpix_max_queue", "4"}, {"mpix_segment_bytes", "40"},
    {"mpix_ipc_threshold", "16"}};

// Which part of the matrix a run covers. Runs up to 8 ranks cover all of it. At 16
// oversubscribed ranks a collective costs tens of milliseconds, so the two 16-rank
// runs share the work: nodes of 4 run every distribution (blocking) and nodes of 5
// every datatype (blocking); both run persistent requests (two starts) on a few
// cases and the in-place ones.
struct Coverage {
  bool all = true, distributions = true, datatypes = true;
  int starts = 3;
};

Coverage coverage() {
  Coverage c;
  if (harness::world_size() < 16) return c;
  const char* ppn = std::getenv("MPIX_PPN");
  bool datatype_run = ppn && std::string(ppn) == "5";
  c.all = false;
  c.distributions = !datatype_run;
  c.datatypes = datatype_run;
  c.starts = 2;
  return c;
}

void check(const DenseCase& c, MPIX_Comm* comm) {
  std::string why;
  bool ok = harness::run_dense_case(c, comm, &why);
  INFO(c.describe() << (why.empty() ? "" : ": " + why));
  CHECK(ok);
}

void run_all(bool alltoall, const std::string& algorithm, MPIX_Comm* comm) {
  const Coverage cover = coverage();
  const int starts = cover.starts;
  // Blocking calls once each (test_reuse.cpp repeats them).
  auto run = [&](Distribution dist, long long bytes, const char* types, Mode mode, bool in_place) {
    check(DenseCase{alltoall, dist, bytes, types, mode, in_place, mode == Mode::blocking ? 1 : starts, algorithm,
                    kSmallParameters}, comm);
  };
  for (Mode mode : {Mode::blocking, Mode::persistent}) {
    const bool blocking = mode == Mode::blocking;
    // Distributions (alltoall blocks are constant; a few sizes instead), and the
    // whole exchange empty.
    if (cover.all || (cover.distributions && blocking)) {
      if (alltoall) {
        for (long long bytes : {0LL, 4LL, 200LL}) run(Distribution::constant, bytes, "int", mode, false);
      } else {
        for (Distribution dist : mpix::workload::all_distributions()) run(dist, 200, "int", mode, false);
        run(Distribution::constant, 0, "int", mode, false);
      }
    } else if (cover.distributions) {
      run(Distribution::uniform, 200, "int", mode, false);
    }
    // Datatypes, and in place (also with holes in the datatype).
    if (cover.all || (cover.datatypes && blocking)) {
      for (const auto& types : harness::type_cases()) run(Distribution::uniform, 120, types.name.c_str(), mode, false);
      for (const char* types : {"int", "vector"}) run(Distribution::uniform, 96, types, mode, true);
    } else if (cover.datatypes) {
      run(Distribution::uniform, 120, "vector", mode, false);
      run(Distribution::uniform, 96, "int", mode, true);
    }
  }
  // Completed by MPIX_Test loops (every round advanced by a test), in place too.
  run(Distribution::uniform, 200, "int", Mode::tested, false);
  run(Distribution::uniform, 96, "vector", Mode::tested, true);
  // Default parameters once.
  check(DenseCase{alltoall, Distribution::uniform, 300, "double", Mode::blocking, false, 1, algorithm, {}}, comm);
}

}  // namespace

TEST_CASE("alltoallv: every registered algorithm equals MPI_Alltoallv", "[alltoallv]") {
  harness::Comm guard;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
    SECTION(name) { run_all(false, name, guard.comm); }
  }
}

TEST_CASE("alltoall: every registered algorithm equals MPI_Alltoall", "[alltoall]") {
  harness::Comm guard;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
    SECTION(name) { run_all(true, name, guard.comm); }
  }
}

TEST_CASE("auto selection equals MPI_Alltoallv", "[auto]") {
  harness::Comm guard;
  for (long long bytes : {16LL, 2000LL, 40000LL}) {
    check(DenseCase{false, Distribution::uniform, bytes, "byte", Mode::blocking, false, 1, "", {}}, guard.comm);
    check(DenseCase{true, Distribution::constant, bytes, "byte", Mode::persistent, false, 2, "", {}}, guard.comm);
  }
}

// What a first call of 16 B blocks ran, on a fresh communicator: at these sizes
// the model prices the carried exchange (`expected`, radix 2) below an agreement
// plus any algorithm on the built-in profile.
// In place too: there the carried rounds' slots cannot point at the send blocks
// (Rotation), which are the receive buffer the call writes at its end.
static void check_first_call_carried(bool alltoall, const char* expected) {
  if (harness::world_size() < 2 || harness::world_size() > 8 || harness::nodes_emulated()) return;
  for (bool in_place : {false, true})
    for (const char* types : {"byte", "int"}) {
      INFO((in_place ? "in place, " : "") << types);
      harness::Comm fresh;
      check(DenseCase{alltoall, alltoall ? Distribution::constant : Distribution::uniform, 16, types, Mode::blocking,
                      in_place, 1, "", {}}, fresh.comm);
      CHECK(fresh.comm->blocking_choices[alltoall ? 0 : 1].algorithm == expected);
      CHECK(fresh.comm->blocking_choices[alltoall ? 0 : 1].params == "radix=2");
      CHECK(fresh.comm->blocking_choices[alltoall ? 0 : 1].carried_blocks);
    }
}

// A first blocking MPIX_Alltoall of small blocks under `auto`: its agreement's
// rounds carry the blocks (carried_agreement.hpp), so nothing else runs, and the
// calls that repeat it run the plan made for them. Every datatype (the block is
// packed into Bruck's rotation), in place, empty blocks, and blocks above the
// limit (then the record travels alone and a plan runs).
TEST_CASE("auto alltoall: small blocks arrive with the agreement, every datatype", "[auto]") {
  harness::Comm guard;
  for (const auto& types : harness::type_cases())
    for (long long bytes : {0LL, 48LL, 96LL})
      check(DenseCase{true, Distribution::constant, bytes, types.name.c_str(), Mode::blocking, false, 3, "", {}},
            guard.comm);
  for (const char* types : {"int", "vector"})
    check(DenseCase{true, Distribution::constant, 48, types, Mode::blocking, true, 2, "", {}}, guard.comm);
  check_first_call_carried(true, "bruck");
}

// tuna_carried's size entries have the fewest bytes that hold the largest block:
// 1 up to 255, 2 up to 65535, then 4; the edges of each width, and blocks of
// their own sizes up to 70000 bytes.
TEST_CASE("tuna_carried: size entries of 1, 2 and 4 bytes", "[alltoallv]") {
  harness::Comm guard;
  for (long long bytes : {255LL, 256LL, 65535LL, 65536LL})
    check(DenseCase{false, Distribution::constant, bytes, "byte", Mode::persistent, false, 2, "tuna_carried", {}},
          guard.comm);
  for (long long bytes : {300LL, 70000LL})
    check(DenseCase{false, Distribution::uniform, bytes, "byte", Mode::blocking, false, 2, "tuna_carried", {}},
          guard.comm);
}

// The same for alltoallv: blocks of their own sizes, with a byte of size each.
// Distributions with empty blocks, blocks at the limit (64 B) and beyond it on
// some ranks (then no rank's blocks arrive with the agreement).
TEST_CASE("auto alltoallv: small blocks arrive with the agreement, every datatype", "[auto]") {
  harness::Comm guard;
  for (const auto& types : harness::type_cases())
    for (Distribution dist : {Distribution::uniform, Distribution::powerlaw})
      for (long long bytes : {0LL, 48LL, 64LL, 96LL})
        check(DenseCase{false, dist, bytes, types.name.c_str(), Mode::blocking, false, 3, "", {}}, guard.comm);
  for (const char* types : {"int", "vector"})
    check(DenseCase{false, Distribution::uniform, 48, types, Mode::blocking, true, 2, "", {}}, guard.comm);
  check_first_call_carried(false, "tuna_carried");
}

// fft_n1: the last ranks send nothing (and receive only, or nothing). Their own
// facts say nothing of the others' blocks; they carry anyway (a byte of size per
// block), so that the blocks of the ranks that do send arrive with the agreement.
TEST_CASE("auto alltoallv: ranks that send nothing carry too", "[auto]") {
  if (harness::world_size() < 3 || harness::nodes_emulated()) return;
  harness::Comm fresh;
  check(DenseCase{false, Distribution::fft_n1, 0, "byte", Mode::blocking, false, 1, "", {}}, fresh.comm);
  CHECK(fresh.comm->blocking_choices[1].carried_blocks);
  CHECK(fresh.comm->agreements == 1);
}

TEST_CASE("auto: a radix set by the user is not overruled by the carried radix-2 exchange", "[auto]") {
  const int size = harness::world_size();
  if (size < 2 || harness::nodes_emulated()) return;
  for (const char* radix : {"auto", "2"}) {
    INFO("mpix_radix=" << radix);
    harness::Comm fresh;
    check(DenseCase{true, Distribution::constant, 16, "byte", Mode::blocking, false, 1, "", {{"mpix_radix", radix}}},
          fresh.comm);
    // Left at auto, the first call of 16 B blocks carries them (as above).
    CHECK(fresh.comm->blocking_choices[0].carried_blocks == (std::string(radix) == "auto"));
  }
}

// A rank that declines to carry (rank 0: its block to itself is above the limit)
// makes every rank's blocks undeliverable; each rank sends its blocks only until it
// knows (carried_agreement.cpp). In Bruck's rounds rank r's records show rank 0 from
// the round of distance r + 1 on, so it sends blocks in the rounds of distance up
// to r; in lanes (in batches of 2), the ranks of rank 0's node in the rounds inside
// the node up to their local rank and in no lane, the other nodes' ranks in every
// round inside the node and in the batches of lanes before the one that brought
// them node 0's record or a message without blocks. The result is MPI's all the
// same.
TEST_CASE("auto alltoallv: a rank that declines to carry stops the blocks", "[auto]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  constexpr long long kBlock = 48;
  auto blocks_in_round = [](int ranks, int distance) {
    int blocks = 0;
    for (int j = 0; j < ranks; ++j) blocks += (j & distance) != 0;
    return blocks;
  };
  // Lane groups of 2 (last: ppn 0): the result and the declined call only.
  for (int ppn : std::vector<int>{1, 2, 0}) {
    const int group = ppn == 0 ? 2 : 1;
    if (ppn == 0) ppn = 2;
    if (size % ppn != 0 || (ppn > 1 && size / ppn < 1 + group)) continue;
    harness::Comm fresh;
    if (ppn > 1) {
      REQUIRE(MPIX_Comm_update_locality(fresh.comm, ppn) == MPIX_SUCCESS);
      fresh.comm->lane_group = group;
      fresh.comm->lane_batch = 2;
    } else {
      REQUIRE(MPIX_Comm_update_locality(fresh.comm, 1) == MPIX_SUCCESS);
      fresh.comm->lane_group = 0;
    }
    INFO("nodes of " << ppn << ", lane groups of " << group);
    // Bandwidths without limit: the other ranks' facts price carrying below any
    // algorithm after an agreement, at any layout.
    const std::string machine = harness::unbounded_machine_file();
    harness::ExchangeCase c;
    c.types = &harness::type_case("byte");
    c.keys = {{"mpix_machine_file", machine}};
    c.units = [](int source, int dest) { return source == 0 && dest == 0 ? 2 * (int)kBlock : (int)kBlock; };
    std::string why;
    CHECK(harness::run_exchange(c, fresh.comm, MPI_COMM_WORLD, &why));
    INFO(why);
    const mpix::DenseChoice& choice = fresh.comm->blocking_choices[1];
    CHECK_FALSE(choice.carried_blocks);
    if (group > 1) continue;
    long long expected = 0;
    if (ppn == 1) {
      for (int distance = 1; distance < size && rank > 0; distance <<= 1)
        if (distance <= rank) expected += kBlock * blocks_in_round(size, distance);
    } else {
      const int nodes = size / ppn, local = rank % ppn, node = rank / ppn, lanes = nodes - 1, batch = 2;
      for (int distance = 1; distance < ppn && rank > 0; distance <<= 1)
        if (rank >= ppn || distance <= local) expected += kBlock * blocks_in_round(ppn, distance) * nodes;
      // The ranks of this local rank, node by node: whether they know yet. Lane
      // position p goes to node + lane(p) on every node (agree_in_lanes).
      std::vector<bool> knows((std::size_t)nodes, false);
      knows[0] = true;
      for (int first = 1; first <= lanes; first += batch) {
        const int in_batch = std::min(batch, lanes - first + 1);
        const std::vector<bool> knew = knows;
        if (!knew[(std::size_t)node]) expected += kBlock * ppn * in_batch;
        for (int n = 0; n < nodes; ++n)
          for (int b = 0; b < in_batch; ++b) {
            const int k = (local + first + b - 1) % lanes + 1;
            if (knew[(std::size_t)((n - k + nodes) % nodes)]) knows[(std::size_t)n] = true;
          }
      }
    }
    CHECK(choice.carried.payload_bytes == expected);
  }
}

// The carried agreement in lanes (carried_lanes.cpp): nodes emulated as blocks of
// 2, of 4 and of half the ranks, wherever that makes equal nodes, the pattern set
// on every rank (as choose_carry_pattern's broadcast would): lane groups of 1, 2
// and 3 ranks (3 where it does not divide the node: a last group of the rest),
// the lanes in batches of 8 and of 2. The first call of small blocks arrives with
// the agreement as tuna_hier_coalesced; every datatype, in place, empty blocks,
// blocks at the limit and beyond it on some ranks.
TEST_CASE("auto: the agreement carries the blocks in lanes, every datatype", "[auto]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  for (int ppn : std::set<int>{2, 4, size / 2}) {
    if (ppn < 2 || size % ppn != 0 || size / ppn < 2) continue;
    const int nodes = size / ppn;
    for (int group = 1; group <= std::min({3, ppn, nodes - 1}); ++group) {
      harness::Comm guard;
      REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
      REQUIRE(mpix::lanes_apply(guard.comm->locality));
      guard.comm->lane_group = group;
      guard.comm->lane_batch = 2;  // several batches from 4 nodes on
      INFO("nodes of " << ppn << ", lane groups of " << group);
      {
        // Bandwidths without limit on the machine: the model carries blocks at any
        // layout (on the built-in profile, 10 nodes of 2 would run node_aware).
        const std::string machine = harness::unbounded_machine_file();
        // In place too: there the send blocks are the receive buffer (Rotation packs them).
        for (bool in_place : {false, true}) {
          harness::Comm fresh;
          REQUIRE(MPIX_Comm_update_locality(fresh.comm, ppn) == MPIX_SUCCESS);
          fresh.comm->lane_group = group;
          for (bool alltoall : {true, false}) {
            check(DenseCase{alltoall, alltoall ? Distribution::constant : Distribution::uniform, 16,
                            in_place ? "int" : "byte", Mode::blocking, in_place, 1, "",
                            {{"mpix_machine_file", machine}}},
                  fresh.comm);
            const mpix::DenseChoice& choice = fresh.comm->blocking_choices[alltoall ? 0 : 1];
            CHECK(choice.carried_blocks);
            CHECK(choice.algorithm == "tuna_hier_coalesced");
            // Rounds inside the node, then this rank's lanes in batches, then the
            // rounds inside its group. Member m of a group takes the node offsets
            // k = m + 1, m + 1 + (group size), ...
            auto rounds_over = [](int ranks) {
              int rounds = 0;
              for (int distance = 1; distance < ranks; distance <<= 1) ++rounds;
              return rounds;
            };
            const int local = rank % ppn, first = local / group * group, members = std::min(group, ppn - first);
            int lanes = 0;
            for (int k = 1; k < nodes; ++k) lanes += (k - 1) % members == local - first;
            CHECK(choice.carried.rounds ==
                  rounds_over(ppn) + (lanes + mpix::kLaneBatch - 1) / mpix::kLaneBatch + rounds_over(members));
            CHECK(choice.carried.messages == rounds_over(ppn) + lanes + rounds_over(members));
          }
        }
      }
      for (const auto& types : harness::type_cases()) {
        for (long long bytes : {0LL, 48LL, 96LL})
          check(DenseCase{true, Distribution::constant, bytes, types.name.c_str(), Mode::blocking, false, 3, "", {}},
                guard.comm);
        for (Distribution dist : {Distribution::uniform, Distribution::powerlaw})
          for (long long bytes : {0LL, 64LL, 96LL})
            check(DenseCase{false, dist, bytes, types.name.c_str(), Mode::blocking, false, 3, "", {}}, guard.comm);
      }
      for (const char* types : {"int", "vector"}) {
        check(DenseCase{true, Distribution::constant, 48, types, Mode::blocking, true, 2, "", {}}, guard.comm);
        check(DenseCase{false, Distribution::uniform, 48, types, Mode::blocking, true, 2, "", {}}, guard.comm);
      }
    }
  }
}

// ipc_hybrid with the other CMA direction (readv out of the sender's buffer) and
// with CMA forced off (every block by messages): the same results. MPIX_CMA is read
// once per MPIX_Comm, when its first ipc_hybrid plan is made.
TEST_CASE("ipc_hybrid with MPIX_CMA=read and MPIX_CMA=off", "[ipc]") {
  for (const char* setting : {"read", "off"}) {
    setenv("MPIX_CMA", setting, 1);
    {
      harness::Comm guard;
      SECTION(std::string("alltoallv, MPIX_CMA=") + setting) { run_all(false, "ipc_hybrid", guard.comm); }
      SECTION(std::string("alltoall, MPIX_CMA=") + setting) { run_all(true, "ipc_hybrid", guard.comm); }
    }
    unsetenv("MPIX_CMA");
  }
}

// A blocking alltoall of `nonblocking` (or `auto`'s, where the model prefers it)
// posts its exchange before the agreement (speculation.hpp): every datatype, blocks
// past the eager limits, repeated calls (the second plans for the calls that repeat
// it, the third runs that plan without an agreement). In place and empty blocks
// start nothing. The agreement's rounds after the posting, or between its
// messages (looked at after every message, every third).
TEST_CASE("alltoall: the spread-out exchange starts before the agreement", "[speculation]") {
  if (harness::world_size() < 2) return;
  const int interleave = GENERATE(-1, 1, 3);
  INFO("speculation_interleave " << interleave);
  harness::Comm guard;
  guard.comm->speculation = 1;  // wherever it may, whatever the model says
  guard.comm->speculation_interleave = interleave;
  for (const auto& types : harness::type_cases()) {
    const unsigned long long before = guard.comm->speculations_finished;
    check(DenseCase{true, Distribution::constant, 120, types.name.c_str(), Mode::blocking, false, 3, "nonblocking",
                    {}}, guard.comm);
    CHECK(guard.comm->speculations_finished == before + 2);
  }
  for (long long bytes : {4LL, 70000LL, 300000LL})
    check(DenseCase{true, Distribution::constant, bytes, "byte", Mode::blocking, false, 1, "nonblocking", {}},
          guard.comm);
  const unsigned long long before = guard.comm->speculations_finished;
  check(DenseCase{true, Distribution::constant, 96, "int", Mode::blocking, true, 1, "nonblocking", {}}, guard.comm);
  check(DenseCase{true, Distribution::constant, 0, "int", Mode::blocking, false, 1, "nonblocking", {}}, guard.comm);
  CHECK(guard.comm->speculations_finished == before);
  CHECK(guard.comm->speculations_abandoned == 0);
  // The calls that started (two of each type's three).
  CHECK(guard.comm->speculations_interleaved == (interleave > 0 ? 2 * harness::type_cases().size() + 3 : 0));
}

// An alltoallv starts its exchange before the agreement too, each rank from its
// own facts. A rank with no message to start (fft_n1's last ranks send and
// receive nothing) goes along with the others (Agreement::idle): nothing is
// abandoned. Blocks past the eager limits; every datatype.
TEST_CASE("alltoallv: the spread-out exchange starts before the agreement", "[speculation]") {
  const int size = harness::world_size();
  if (size < 2) return;
  const int interleave = GENERATE(-1, 2);
  INFO("speculation_interleave " << interleave);
  harness::Comm guard;
  guard.comm->speculation = 1;
  guard.comm->speculation_interleave = interleave;
  for (const auto& types : harness::type_cases())
    check(DenseCase{false, Distribution::uniform, 120, types.name.c_str(), Mode::blocking, false, 3, "nonblocking",
                    {}}, guard.comm);
  // (fft_n1's and fft_n2's blocks have sizes of their own: one call each.)
  for (Distribution dist : {Distribution::powerlaw, Distribution::fft_n1, Distribution::fft_n2})
    for (long long bytes : {4LL, 70000LL, 300000LL}) {
      if (mpix::workload::fixed_sizes(dist) && bytes != 4) continue;
      INFO(mpix::workload::distribution_name(dist) << ", blocks up to " << bytes << " bytes");
      // Where no rank has a message (powerlaw's smallest at few ranks), none starts.
      bool any_message = false;
      for (int source = 0; source < size; ++source)
        for (int dest = 0; dest < size; ++dest)
          any_message = any_message ||
                        (source != dest && mpix::workload::block_bytes(dist, bytes, source, dest, size, 12345) > 0);
      const unsigned long long before = guard.comm->speculations_finished;
      check(DenseCase{false, dist, bytes, "byte", Mode::blocking, false, 2, "nonblocking", {}}, guard.comm);
      CHECK(guard.comm->speculations_finished == before + (any_message ? 2 : 0));
    }
  CHECK(guard.comm->speculations_abandoned == 0);
  // Under `auto` (the model decides; here it may not start), the same results.
  guard.comm->speculation = 0;
  for (long long bytes : {16LL, 1024LL, 70000LL})
    check(DenseCase{false, Distribution::uniform, bytes, "byte", Mode::blocking, false, 2, "", {}}, guard.comm);
}

// A rank that did not start the exchange before the agreement, because its own
// facts chose otherwise (here: told so), starts it after: nothing is abandoned.
// A rank that could not start it at all (here: forbidden; in a program, a block of
// 1 MiB or more, device buffers): the others' messages are each received once,
// their receives from it cancelled, and the call runs as after any agreement. MPI's
// result every time, alltoall and alltoallv.
TEST_CASE("a rank that starts nothing before the agreement", "[speculation]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  for (int knob : {-1, -2})
    for (bool alltoall : {true, false})
      for (long long bytes : {64LL, 300000LL})
        for (int quiet : {1, 0}) {
          INFO((alltoall ? "alltoall" : "alltoallv") << ", blocks of " << bytes << " bytes, rank " << quiet
                                                     << (knob == -1 ? " starts late" : " cannot start"));
          harness::Comm fresh;
          fresh.comm->speculation = rank == quiet ? knob : 1;
          const Distribution dist = alltoall ? Distribution::constant : Distribution::uniform;
          check(DenseCase{alltoall, dist, bytes, "byte", Mode::blocking, false, 1, "nonblocking", {}}, fresh.comm);
          CHECK(fresh.comm->speculations_abandoned == (knob == -1 ? 0 : 1));
          CHECK(fresh.comm->speculations_finished == (knob == -1 ? 1 : 0));
          CHECK(fresh.comm->speculations_late == (knob == -1 && rank == quiet ? 1 : 0));
          // Another call (the same one would run the plan the first made).
          fresh.comm->speculation = 1;
          check(DenseCase{alltoall, dist, bytes + 8, "byte", Mode::blocking, false, 1, "nonblocking", {}},
                fresh.comm);
          CHECK(fresh.comm->speculations_finished == (knob == -1 ? 2 : 1));
        }
}

// mpix_early_start: `true` starts the exchange before the agreement under `auto`
// wherever the call can (here where the model would carry the blocks or run
// another algorithm), `false` never starts it; a value that is neither fails on
// every rank with the key's name.
TEST_CASE("mpix_early_start: true starts wherever it can, false never", "[speculation]") {
  const int size = harness::world_size();
  if (size < 2) return;
  for (bool alltoall : {true, false})
    for (long long bytes : {16LL, 1024LL, 70000LL}) {
      INFO((alltoall ? "alltoall" : "alltoallv") << ", blocks of up to " << bytes << " bytes");
      const Distribution dist = alltoall ? Distribution::constant : Distribution::uniform;
      bool any_message = false;  // uniform blocks of up to 16 bytes may all be empty
      for (int source = 0; source < size; ++source)
        for (int dest = 0; dest < size; ++dest)
          any_message = any_message ||
                        (source != dest && mpix::workload::block_bytes(dist, bytes, source, dest, size, 12345) >= 4);
      harness::Comm early;
      check(DenseCase{alltoall, dist, bytes, "int", Mode::blocking, false, 1, "", {{"mpix_early_start", "true"}}},
            early.comm);
      CHECK(early.comm->speculations_finished == (any_message ? 1 : 0));
      harness::Comm never;
      for (const char* value : {"false", "OFF"})
        check(DenseCase{alltoall, dist, bytes, "int", Mode::blocking, false, 1, "nonblocking",
                        {{"mpix_early_start", value}}},
              never.comm);
      CHECK(never.comm->speculations_finished + never.comm->speculations_late + never.comm->speculations_abandoned ==
            0);
    }
  harness::Comm guard;
  std::vector<int> send((std::size_t)size, 1), recv((std::size_t)size, 0);
  harness::Info bad;
  CHECK(MPIX_Info_set(bad.info, "mpix_early_start", "sometimes") == MPIX_ERR_INFO_VALUE);
  CHECK(harness::message_has("mpix_early_start=sometimes: expected true, false or auto"));
  setenv("MPIX_EARLY_START", "2", 1);
  CHECK(MPIX_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, nullptr, guard.comm) == MPIX_ERR_INFO_VALUE);
  CHECK(harness::message_has("MPIX_EARLY_START (environment)=2: expected true, false or auto"));
  unsetenv("MPIX_EARLY_START");
}

// Bad input where the exchange started before the agreement: every rank fails
// with the agreement's reason, no byte lands past the receive buffer, nothing
// stays in flight (the next call, on the same tags, is right).
TEST_CASE("alltoall: bad input fails everywhere although the exchange started", "[speculation]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  const int interleave = GENERATE(-1, 1);
  INFO("speculation_interleave " << interleave);
  harness::Comm guard;
  guard.comm->speculation = 1;
  guard.comm->speculation_interleave = interleave;
  harness::Info spread_out{{"mpix_alltoall_algorithm", "nonblocking"}};
  auto good_call = [&] {
    std::vector<int> out((std::size_t)size * 4), in((std::size_t)size * 4, -1);
    for (int j = 0; j < size * 4; ++j) out[(std::size_t)j] = rank * 100000 + j;
    const int rc = MPIX_Alltoall(out.data(), 4, MPI_INT, in.data(), 4, MPI_INT, spread_out.info, guard.comm);
    bool arrived = rc == MPIX_SUCCESS;
    for (int i = 0; i < size; ++i)
      for (int k = 0; k < 4; ++k) arrived = arrived && in[(std::size_t)(i * 4 + k)] == i * 100000 + rank * 4 + k;
    CHECK(harness::all_ranks(arrived));
  };
  // Rank 1's blocks are twice the others' (both sides): every rank starts, rank
  // 1's messages are truncated, the others' are short; small and large blocks.
  for (int count : {4, 40000}) {
    INFO("blocks of " << count << " ints, rank 1's of " << 2 * count);
    const int mine = rank == 1 ? 2 * count : count;
    std::vector<int> send((std::size_t)size * mine, rank), recv((std::size_t)size * mine + 1, -1);
    const int rc = MPIX_Alltoall(send.data(), mine, MPI_INT, recv.data(), mine, MPI_INT, spread_out.info, guard.comm);
    CHECK(harness::all_ranks(rc == MPIX_ERR_ARG));
    CHECK(harness::message_has("MPIX_Alltoall: ranks give different block sizes"));
    CHECK(recv.back() == -1);
    good_call();
  }
  std::vector<int> send((std::size_t)size * 4, rank), recv((std::size_t)size * 4 + 1, -1);
  {
    // Rank 1 fails its own checks and starts nothing.
    const int rc = MPIX_Alltoall(send.data(), rank == 1 ? -1 : 4, MPI_INT, recv.data(), 4, MPI_INT,
                                 spread_out.info, guard.comm);
    CHECK(harness::all_ranks(rc == MPIX_ERR_ARG));
    if (rank != 1) CHECK(harness::message_has("another rank rejected its arguments"));
    good_call();
  }
  {
    // Rank 0 asks for pairwise, which starts nothing before the agreement.
    harness::Info info{{"mpix_alltoall_algorithm", rank == 0 ? "pairwise" : "nonblocking"}};
    const int rc = MPIX_Alltoall(send.data(), 4, MPI_INT, recv.data(), 4, MPI_INT, info.info, guard.comm);
    CHECK(harness::all_ranks(rc == MPIX_ERR_ARG));
    CHECK(harness::message_has("ranks asked for different algorithms"));
    good_call();
  }
  CHECK(recv.back() == -1);
  CHECK(guard.comm->speculations_abandoned == 4);
}
