// The log-time and hierarchical exchanges (paper 000, sections III and IV):
// correctness for every radix and block_count on emulated nodes, and the plans'
// counters (rounds, messages, bytes, metadata, scratch) against the formulas, so
// that a linear algorithm under a log-time name cannot pass. Run at 1, 5, 8 and 16
// ranks; at 16 ranks the nodes are emulated as 4 x 4, 2 x 8 and 3 x 5 + 1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "alltoallv/bruck.hpp"
#include "alltoallv/hierarchical.hpp"
#include "core/algorithms.hpp"
#include "core/comm.hpp"
#include "core/request.hpp"
#include "harness.hpp"
#include "model_facts.hpp"

using harness::DenseCase;
using harness::Mode;
using mpix::workload::Distribution;
using Keys = std::vector<std::pair<const char*, std::string>>;

namespace {

void check(const DenseCase& c, MPIX_Comm* comm) {
  std::string why;
  bool ok = harness::run_dense_case(c, comm, &why);
  INFO(c.describe() << (why.empty() ? "" : ": " + why));
  CHECK(ok);
}

// ---- the formulas, written here independently of the library ----------------

// Radix-r Bruck over p ranks (section III-A): rounds (x, z) with z r^x < p; a block
// with relative index i travels once per non-zero digit of i; T needs a slot per
// index with two or more non-zero digits, B = p - (K + 1) (section III-C). A round
// can only be one message per peer if no block has three or more non-zero digits
// (r^2 >= p): otherwise some arrive in later parts of their round.
struct Bruck {
  int rounds = 0;
  long long hops = 0;  // sum over i of non-zero digits
  int temp_blocks = 0;
  bool one_part_rounds = true;
};

Bruck bruck_formula(int p, int r) {
  Bruck f;
  auto digit = [&](int i, long long pw) { return (int)((i / pw) % r); };
  for (long long pw = 1; pw < p; pw *= r) {
    for (int z = 1; z < r && z * pw < p; ++z) {
      ++f.rounds;
    }
  }
  for (int i = 1; i < p; ++i) {
    int nonzero = 0;
    for (long long pw = 1; pw <= i; pw *= r) nonzero += digit(i, pw) != 0;
    f.hops += nonzero;
    if (nonzero >= 2) ++f.temp_blocks;
    if (nonzero >= 3) f.one_part_rounds = false;
  }
  return f;
}

struct Counters {
  mpix::PlanStats init, run;
  std::string algorithm;
  mpix::ExchangeFacts facts;  // the plan's agreed facts and parameters, for its cost model
  mpix::Params params;
};

// A persistent exchange of `block` bytes per block (alltoall) or of the uniform
// distribution up to `block` bytes (alltoallv), started `starts` times; the counters
// of init and of the last start.
Counters measure(MPIX_Comm* comm, bool alltoall, const std::string& algorithm, const Keys& keys, int block,
                 int starts = 1) {
  const int size = harness::world_size(), rank = harness::world_rank();
  std::vector<int> send_counts(size), recv_counts(size), sdispls(size), rdispls(size);
  int send_total = 0, recv_total = 0;
  for (int peer = 0; peer < size; ++peer) {
    send_counts[peer] = alltoall ? block
                                 : (int)mpix::workload::block_bytes(Distribution::uniform, block, rank, peer, size, 7);
    recv_counts[peer] = alltoall ? block
                                 : (int)mpix::workload::block_bytes(Distribution::uniform, block, peer, rank, size, 7);
    sdispls[peer] = send_total;
    rdispls[peer] = recv_total;
    send_total += send_counts[peer];
    recv_total += recv_counts[peer];
  }
  std::vector<char> send(send_total + 1, 1), recv(recv_total + 1, 0);
  harness::Info info;
  info.set(alltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm", algorithm);
  for (const auto& k : keys) info.set(k.first, k.second);
  MPIX_Request* request = nullptr;
  int rc = alltoall ? MPIX_Alltoall_plan(send.data(), block, MPI_BYTE, recv.data(), block, MPI_BYTE, info.info,
                                         comm, &request)
                    : MPIX_Alltoallv_plan(send.data(), send_counts.data(), sdispls.data(), MPI_BYTE, recv.data(),
                                          recv_counts.data(), rdispls.data(), MPI_BYTE, info.info, comm, &request);
  INFO(algorithm << ": " << MPIX_Last_error_message());
  REQUIRE(rc == MPIX_SUCCESS);
  for (int s = 0; s < starts; ++s) {
    REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
    REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
  }
  Counters c{request->plan->init_stats, request->plan->stats, request->algorithm, request->facts,
             request->param_values};
  MPIX_Request_free(&request);
  return c;
}

// Node layouts to emulate: at 16 ranks the ones of the issue, elsewhere a few with
// a smaller last node.
std::vector<int> node_layouts() {
  const int size = harness::world_size();
  if (size == 16) return {4, 8, 5};
  std::vector<int> ppns;
  for (int ppn : {2, 3})
    if (ppn < size) ppns.push_back(ppn);
  return ppns;
}

const std::vector<std::string> kBlockCounts = {"1", "2", "unlimited"};
const char* kHierarchical[] = {"tuna_hier_staggered", "tuna_hier_coalesced"};

}  // namespace

TEST_CASE("tuna, tuna_carried and bruck: every radix from 2 to P equals MPI", "[logtime][radix]") {
  harness::Comm guard;
  const int size = harness::world_size();
  const auto& types = harness::type_cases();
  for (int r = 2; r <= std::max(2, size); ++r) {
    const Keys keys = {{"mpix_radix", std::to_string(r)}};
    // A different datatype at each radix (holes and mixed types included).
    const std::string type = types[r % types.size()].name;
    check(DenseCase{false, Distribution::uniform, 160, type, Mode::blocking, false, 1, "tuna", keys}, guard.comm);
    check(DenseCase{false, Distribution::powerlaw, 160, "int", Mode::persistent, false, 2, "tuna", keys}, guard.comm);
    check(DenseCase{true, Distribution::constant, 48, type, Mode::blocking, false, 1, "bruck", keys}, guard.comm);
    check(DenseCase{true, Distribution::constant, 24, "int", Mode::persistent, false, 2, "tuna", keys}, guard.comm);
    check(DenseCase{false, Distribution::uniform, 160, type, Mode::blocking, false, 1, "tuna_carried", keys}, guard.comm);
    check(DenseCase{false, Distribution::powerlaw, 160, "int", Mode::persistent, false, 2, "tuna_carried", keys},
          guard.comm);
  }
  // The edges at the smallest and the largest radix: in place with holes, nothing
  // to send, ranks that send nothing.
  for (int r : {2, std::max(2, size)}) {
    const Keys keys = {{"mpix_radix", std::to_string(r)}};
    check(DenseCase{false, Distribution::uniform, 96, "vector", Mode::persistent, true, 2, "tuna", keys}, guard.comm);
    check(DenseCase{true, Distribution::constant, 96, "vector", Mode::blocking, true, 1, "bruck", keys}, guard.comm);
    check(DenseCase{false, Distribution::constant, 0, "int", Mode::blocking, false, 1, "tuna", keys}, guard.comm);
    check(DenseCase{false, Distribution::fft_n1, 0, "double", Mode::blocking, false, 1, "tuna", keys}, guard.comm);
    check(DenseCase{false, Distribution::uniform, 96, "vector", Mode::blocking, true, 1, "tuna_carried", keys},
          guard.comm);
    check(DenseCase{false, Distribution::constant, 0, "int", Mode::blocking, false, 1, "tuna_carried", keys},
          guard.comm);
  }
}

TEST_CASE("hierarchical TuNA: radix 2..Q, block_count 1, 2, unlimited, on emulated nodes",
          "[logtime][hierarchical]") {
  harness::Comm guard;
  for (int ppn : node_layouts()) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    int nodes = 0;
    MPIX_Comm_locality(guard.comm, &nodes, nullptr, nullptr, nullptr);
    INFO("ppn=" << ppn << " nodes=" << nodes);
    for (const char* algorithm : kHierarchical) {
      for (const std::string& bc : kBlockCounts) {
        for (int r = 2; r <= std::max(2, ppn); ++r) {
          const Keys keys = {{"mpix_radix", std::to_string(r)}, {"mpix_block_count", bc}};
          check(DenseCase{false, Distribution::uniform, 120, "int", Mode::blocking, false, 1, algorithm, keys},
                guard.comm);
        }
        const Keys keys = {{"mpix_block_count", bc}};
        check(DenseCase{false, Distribution::normal, 200, "vector", Mode::persistent, false, 2, algorithm, keys},
              guard.comm);
        check(DenseCase{true, Distribution::constant, 36, "mixed", Mode::blocking, false, 1, algorithm, keys},
              guard.comm);
      }
      check(DenseCase{false, Distribution::fft_n1, 0, "double", Mode::blocking, true, 1, algorithm, {}}, guard.comm);
    }
    check(DenseCase{false, Distribution::powerlaw, 300, "vector", Mode::persistent, false, 2, "node_aware", {}},
          guard.comm);
    check(DenseCase{true, Distribution::constant, 40, "int", Mode::blocking, true, 1, "node_aware", {}}, guard.comm);
    // ipc_hybrid on the same layouts: direct copies inside the emulated nodes,
    // messages between them and below the threshold.
    const Keys ipc = {{"mpix_ipc_threshold", "24"}};
    check(DenseCase{false, Distribution::powerlaw, 300, "vector", Mode::persistent, false, 2, "ipc_hybrid", ipc},
          guard.comm);
    check(DenseCase{true, Distribution::constant, 40, "mixed", Mode::blocking, true, 1, "ipc_hybrid", ipc},
          guard.comm);
    check(DenseCase{false, Distribution::normal, 200, "int", Mode::blocking, false, 1, "ipc_hybrid", ipc},
          guard.comm);
  }
}

// T's room in the paper's code (section III-C, its send and receive buffers): B
// slots and two of the largest round, r^(w-1) blocks each.
int paper_room(int p, int r) {
  long long largest_round = 1;
  while (largest_round * r < p) largest_round *= r;
  return bruck_formula(p, r).temp_blocks + (p > 1 ? 2 * (int)largest_round : 0);
}

// Replays TuNA's T schedule and checks it, independently of how it was built: every
// block follows its digits, leaves from the slot it was put in, and arrives into a
// slot that is free at that moment (free before the round, or vacated by a send of
// an earlier part of the same round); T never needs more than B slots, or, with one
// part per round, more than the paper's code holds.
// With an eager limit (one_part, eager_blocks), a round goes in parts only where its
// one message would carry more than eager_blocks blocks and each part no more.
void check_schedule(int p, int r, bool one_part, int eager_blocks = INT_MAX) {
  const mpix::TunaSchedule schedule = mpix::tuna_schedule(p, r, one_part, eager_blocks);
  const Bruck f = bruck_formula(p, r);
  INFO("P=" << p << " radix=" << r << " one_part=" << one_part << " eager_blocks=" << eager_blocks);
  if (one_part) {
    REQUIRE(schedule.slots >= f.temp_blocks);
    REQUIRE(schedule.slots <= paper_room(p, r));
    if (eager_blocks == INT_MAX) REQUIRE(schedule.slots == mpix::tuna_one_part_slots(p, r));
    for (const auto& round : schedule.rounds) {
      if (round.parts == 1) continue;
      REQUIRE((int)round.hops.size() > eager_blocks);
      std::vector<int> part_blocks(round.parts, 0);
      for (const auto& hop : round.hops) ++part_blocks[hop.part];
      REQUIRE(*std::max_element(part_blocks.begin(), part_blocks.end()) <= eager_blocks);
    }
  } else {
    REQUIRE(schedule.slots == f.temp_blocks);
  }
  REQUIRE((int)schedule.rounds.size() == f.rounds);
  std::vector<int> slot_of(p, -1), owner(std::max(1, schedule.slots), -1);
  std::vector<int> hops_seen(p, 0);
  bool ok = true;
  for (const auto& round : schedule.rounds) {
    const int pw = round.pw, z = round.distance / pw;
    std::vector<int> vacated_in_part(owner.size(), INT_MAX);
    int count = 0;
    for (int i = 1; i < p; ++i) count += (i / pw) % r == z;
    ok = ok && (int)round.hops.size() == count;
    for (const auto& hop : round.hops) {
      const int i = hop.index;
      ok = ok && (i / pw) % r == z && hop.part < round.parts;
      ok = ok && hop.from_slot == slot_of[i];
      if (hop.from_slot >= 0) vacated_in_part[hop.from_slot] = std::min(vacated_in_part[hop.from_slot], hop.part);
      ++hops_seen[i];
    }
    for (const auto& hop : round.hops) {
      const int i = hop.index;
      const bool stays = i >= (long long)pw * r;
      ok = ok && (hop.to_slot >= 0) == stays;
      if (hop.to_slot < 0) continue;
      const int holder = owner[hop.to_slot];
      const bool free_before = holder < 0;
      const bool vacated_earlier = vacated_in_part[hop.to_slot] < hop.part;
      ok = ok && (free_before || vacated_earlier);
    }
    for (const auto& hop : round.hops)
      if (hop.from_slot >= 0) owner[hop.from_slot] = -1;
    for (const auto& hop : round.hops) {
      if (hop.to_slot >= 0) {
        ok = ok && owner[hop.to_slot] < 0;  // two arrivals in one slot
        owner[hop.to_slot] = hop.index;
      }
      slot_of[hop.index] = hop.to_slot;
    }
  }
  for (int i = 1; i < p; ++i) {
    int nonzero = 0;
    for (long long pw = 1; pw <= i; pw *= r) nonzero += (i / pw) % r != 0;
    ok = ok && hops_seen[i] == nonzero && slot_of[i] < 0;
  }
  CHECK(ok);
}

// Data messages per rank of a TuNA exchange: one per part of every round (the
// schedule itself is checked by check_schedule).
int schedule_messages(int p, int r, bool one_part, int eager_blocks = INT_MAX) {
  int total = 0;
  for (const auto& round : mpix::tuna_schedule(p, r, one_part, eager_blocks).rounds) total += round.parts;
  return total;
}

TEST_CASE("tuna and bruck counters follow the formulas", "[logtime][counters]") {
  harness::Comm guard;
  const int size = harness::world_size();
  const int block = 64;
  for (int r = 2; r <= std::max(2, size); ++r) {
    const Bruck f = bruck_formula(size, r);
    const Keys keys = {{"mpix_radix", std::to_string(r)}};
    INFO("P=" << size << " radix=" << r);
    for (const char* algorithm : {"tuna", "bruck"}) {
      INFO(algorithm);
      Counters c = measure(guard.comm, true, algorithm, keys, block, 2);
      // Blocks this small take one message per round (tuna_one_part).
      REQUIRE(mpix::tuna_one_part(size, r, block));
      CHECK(c.run.rounds == f.rounds);
      CHECK(c.run.messages == f.rounds);
      CHECK(c.run.messages == schedule_messages(size, r, true));
      CHECK(c.run.payload_bytes == f.hops * block);
      CHECK(c.run.metadata_messages == 0);
      CHECK(c.run.metadata_bytes == 0);
      // TuNA's metadata: one message per round, at init only; Bruck has none.
      CHECK(c.init.metadata_messages == (std::string(algorithm) == "tuna" ? f.rounds : 0));
      // The only scratch is T: B = P - (K + 1) blocks of M (section III-C) where
      // no round needs parts, else the slots of one message per round, within the
      // paper's code's room; nothing at r >= P - 1.
      CHECK(f.temp_blocks == size - (f.rounds + 1));
      CHECK(c.run.scratch_bytes == (std::size_t)mpix::tuna_one_part_slots(size, r) * block);
      if (f.one_part_rounds) CHECK(c.run.scratch_bytes == (std::size_t)f.temp_blocks * block);
      CHECK(c.run.scratch_bytes <= (std::size_t)paper_room(size, r) * block);
      if (r >= size - 1) CHECK(c.run.scratch_bytes == 0);
    }
  }
  if (size == 16) {
    // The numbers: TuNA at P = 16 takes 4, 6 and 15 rounds at radix 2, 4, 16.
    for (auto expect : {std::make_pair(2, 4), std::make_pair(4, 6), std::make_pair(16, 15)}) {
      Counters c = measure(guard.comm, false, "tuna", {{"mpix_radix", std::to_string(expect.first)}}, 100);
      INFO("radix " << expect.first);
      CHECK(c.run.rounds == expect.second);
      CHECK(c.init.metadata_messages == expect.second);
    }
    CHECK(bruck_formula(16, 2).temp_blocks == 11);
    CHECK(bruck_formula(16, 4).temp_blocks == 9);
    CHECK(bruck_formula(16, 16).temp_blocks == 0);
  }
  // Non-uniform blocks: T is sized by the largest block anywhere, M.
  for (int r : {2, std::max(2, size)}) {
    const Bruck f = bruck_formula(size, r);
    Counters c = measure(guard.comm, false, "tuna", {{"mpix_radix", std::to_string(r)}}, 200);
    long long m = 0;
    for (int peer = 0; peer < size; ++peer)
      for (int other = 0; other < size; ++other)
        m = std::max(m, mpix::workload::block_bytes(Distribution::uniform, 200, peer, other, size, 7));
    INFO("alltoallv radix " << r << " M=" << m);
    CHECK(c.run.scratch_bytes == (std::size_t)(mpix::tuna_one_part_slots(size, r) * m));
    CHECK(c.run.rounds <= f.rounds);
    // Against the plain two-phase Bruck (ref. [10]), which holds P blocks of M
    // (below 32 ranks also with one part per round: 13 slots at P = 16, r = 2).
    if (size > 1 && size < 32) CHECK(c.run.scratch_bytes < (std::size_t)(size * m));
  }
}

TEST_CASE("TuNA's T schedule: B = P - (K + 1) slots in parts, or one message per round", "[logtime][schedule]") {
  if (harness::world_rank() != 0) return;
  for (bool one_part : {false, true}) {
    for (int p = 1; p <= 70; ++p)
      for (int r = 2; r <= std::max(2, p); ++r) check_schedule(p, r, one_part);
    for (int p = 71; p <= 300; ++p)
      for (int r : {2, 3, 4, 5, 6, 7, 8, (int)std::ceil(std::sqrt((double)p)), p / 2, p - 1, p})
        check_schedule(p, r, one_part);
    for (int p : {500, 512, 1000, 1024})
      for (int r : {2, 3, 4, 5, 7, 8, 16, 31, 32, p / 2, p - 2, p - 1, p}) check_schedule(p, r, one_part);
  }
  // One message per round but past an eager limit, where a round's parts stay below
  // it (limits that cut rounds of r < sqrt(P) at P = 64: 32 blocks as 28 + 4 and 16 + 15 + 1).
  for (int p = 1; p <= 300; p += p < 70 ? 1 : 7)
    for (int r : {2, 3, 4, 5, 8, (int)std::ceil(std::sqrt((double)p))})
      for (int eager_blocks : {p / r * 3 / 4, p / (2 * r), 1}) check_schedule(p, r, true, eager_blocks);
  for (int p : {512, 1024})
    for (int r : {2, 4, 8}) check_schedule(p, r, true, p / (2 * r));
  // Where blocks have three or more non-zero digits some rounds need more than one
  // part (P = 8, r = 2: index 7 leaves T while it arrives to stay), or a slot more.
  CHECK(mpix::tuna_schedule(8, 2).rounds[1].parts == 2);
  CHECK(mpix::tuna_schedule(16, 4).rounds[1].parts == 1);
  CHECK(mpix::tuna_one_part_slots(8, 2) == 5);
  // The message counts and slots of the memory table in docs/algorithms-logtime.md.
  CHECK(schedule_messages(64, 2, false) == 12);
  CHECK(schedule_messages(256, 2, false) == 20);
  CHECK(schedule_messages(256, 16, false) == 30);
  CHECK(mpix::tuna_one_part_slots(64, 2) == 73);
  CHECK(mpix::tuna_one_part_slots(64, 8) == 49);
  CHECK(mpix::tuna_one_part_slots(256, 2) == 337);
  CHECK(mpix::tuna_one_part_slots(256, 16) == 225);
}

TEST_CASE("TuNA's rounds are one message each unless T would grow past its room", "[logtime][schedule]") {
  if (harness::world_rank() != 0) return;
  // P = 64, r = 2: one part per round takes 16 slots more than B = 57.
  const double room = mpix::kTunaOnePartRoom;
  CHECK(mpix::tuna_one_part(64, 2, 1024));
  CHECK(mpix::tuna_one_part(64, 2, room / 16));
  CHECK_FALSE(mpix::tuna_one_part(64, 2, room / 16 + 1));
  // No slot more (r >= sqrt(P), or nothing in T): one part at any block size.
  CHECK(mpix::tuna_one_part(64, 8, 1e12));
  CHECK(mpix::tuna_one_part(64, 64, 1e12));
  CHECK(mpix::tuna_one_part(1, 2, 1e12));
  // The model prices the schedule the plans run: at r = 2, P = 64, K = 6 rounds as
  // 6 messages for small blocks, 12 (parts) past the room.
  const mpix::MachineProfile profile;
  auto messages = [&profile](double block) {
    mpix::ExchangeFacts facts;
    facts.ranks = 64;
    facts.nodes = 1;
    facts.max_ppn = 64;
    facts.max_block = (long long)block;
    mpix::Cost cost;
    mpix::add_tuna_rounds(&cost, facts, 64, 2, block, 1, true, false, mpix::kTunaOnePartRoom, profile.eager_bytes);
    double total = 0;
    for (const mpix::RoundCost& round : cost.rounds) total += round.intra.messages;
    return total;
  };
  CHECK(messages(1024) == 6);
  CHECK(messages(room / 8) == 12);
}

TEST_CASE("TuNA's rounds go in parts where one message would pass the eager limit and its parts would not",
          "[logtime][schedule][eager]") {
  if (harness::world_rank() != 0) return;
  // P = 64, r = 4: nine rounds of 16 blocks; three of them need a slot more, or go
  // as 13 + 3 (tuna_schedule(64, 4) in parts).
  auto messages = [](int eager_blocks) { return schedule_messages(64, 4, true, eager_blocks); };
  CHECK(messages(INT_MAX) == 9);
  CHECK(messages(16) == 9);  // one message of 16 blocks is eager
  CHECK(messages(15) == 12);  // it is not, 13 and 3 are
  CHECK(messages(13) == 12);
  CHECK(messages(12) == 9);  // 13 is not either: the wait once, not twice
  // Blocks of 4 KiB under a 64 KiB limit (SMPI's): 15 blocks stay below it.
  CHECK(mpix::tuna_rounds(64, 4, 4096, 4096, mpix::kTunaOnePartRoom, 65536).eager_blocks == 15);
  CHECK(mpix::tuna_rounds(64, 4, 4096, 4096, mpix::kTunaOnePartRoom, 65537).eager_blocks == 16);
  CHECK(mpix::tuna_rounds(64, 4, 0, 0, mpix::kTunaOnePartRoom, 65536).eager_blocks == INT_MAX);
  CHECK(mpix::tuna_rounds(64, 4, 1e9, 1e9, mpix::kTunaOnePartRoom, 65536).eager_blocks == 0);
  CHECK_FALSE(mpix::tuna_rounds(64, 2, 1e9, 1e9, mpix::kTunaOnePartRoom, 65536).one_part);
  // Blocks of 0-256 B: a round of 256 is 32 KiB on average, eager; the largest block
  // would put it at the limit.
  CHECK(mpix::tuna_rounds(512, 2, 256, 128, mpix::kTunaOnePartRoom, 65536).eager_blocks == 511);
  // The model prices the same schedule: bruck r = 4 at 4 KiB, 12 messages under
  // SMPI's limit, 9 under a limit of 1 MiB.
  mpix::ExchangeFacts facts = model_test::facts_of(64, 1, 4096, true);
  mpix::MachineProfile profile;
  const mpix::Params params = [] {
    mpix::Params p;
    p.radix = 4;
    return p;
  }();
  CHECK(mpix::cost_bruck(facts, params, profile).messages() == 12);
  profile.eager_bytes = 1 << 20;
  CHECK(mpix::cost_bruck(facts, params, profile).messages() == 9);
  // The model keeps one schedule per radix and takes a limit that splits no round
  // of it as no limit (tuna_shape): its messages equal the schedule's at every limit.
  for (int p : {8, 16, 37, 64, 100, 256})
    for (int r : {2, 3, 4, 5}) {
      mpix::ExchangeFacts one_byte = model_test::facts_of(p, p, 1, true);
      for (int eager_blocks = 0; eager_blocks <= p; ++eager_blocks) {
        mpix::Cost cost;
        mpix::add_tuna_rounds(&cost, one_byte, p, r, 1.0, 1, true, false, mpix::kTunaOnePartRoom, eager_blocks + 1.0);
        INFO("P=" << p << " radix=" << r << " eager_blocks=" << eager_blocks);
        REQUIRE(cost.messages() == schedule_messages(p, r, true, eager_blocks));
      }
    }
}

// The rounds in parts, as the plans run them where T's slots for one message per
// round would take more than their room (blocks of MiBs): the same results (blocking
// calls made again, which carry the change bit in every part), B slots of T, one
// message per part.
TEST_CASE("TuNA's rounds in parts (T of B slots) equal MPI", "[logtime][parts]") {
  harness::Comm guard;
  guard.comm->tuna_one_part_room = 0;
  const int size = harness::world_size();
  for (int r : {2, 3}) {
    if (r > std::max(2, size)) continue;
    const Keys keys = {{"mpix_radix", std::to_string(r)}};
    INFO("radix " << r);
    check(DenseCase{false, Distribution::uniform, 160, "vector", Mode::blocking, false, 3, "tuna", keys}, guard.comm);
    check(DenseCase{false, Distribution::powerlaw, 160, "int", Mode::persistent, false, 2, "tuna", keys}, guard.comm);
    check(DenseCase{true, Distribution::constant, 48, "mixed", Mode::blocking, false, 3, "bruck", keys}, guard.comm);
    check(DenseCase{true, Distribution::constant, 48, "int", Mode::blocking, true, 1, "bruck", keys}, guard.comm);
    const Bruck f = bruck_formula(size, r);
    for (const char* algorithm : {"tuna", "bruck"}) {
      Counters c = measure(guard.comm, true, algorithm, keys, 64, 2);
      INFO(algorithm);
      CHECK(c.run.messages == schedule_messages(size, r, false));
      CHECK(c.run.scratch_bytes == (std::size_t)f.temp_blocks * 64);
    }
  }
  // Nodes of 8 (at 16 ranks) have parts at r = 2.
  for (int ppn : node_layouts()) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    INFO("ppn=" << ppn);
    for (const char* algorithm : kHierarchical)
      check(DenseCase{false, Distribution::uniform, 120, "int", Mode::blocking, false, 3, algorithm,
                      {{"mpix_radix", "2"}, {"mpix_block_count", "2"}}},
            guard.comm);
  }
  if (size >= 8) CHECK(schedule_messages(size, 2, false) > schedule_messages(size, 2, true));
}

// The rounds in parts where one message would pass the machine profile's eager
// limit (a limit of a few blocks: at P = 8, r = 2 the round of 4 blocks goes as 3 + 1).
TEST_CASE("TuNA's rounds in parts below the eager limit equal MPI (bruck, tuna; not inside a node)", "[logtime][parts][eager]") {
  harness::Comm guard;
  const int size = harness::world_size();
  const int block = 64, eager_blocks = std::max(1, size / 2 - 1);
  const std::string machine =
      harness::temp_file("eager", "eager_bytes = " + std::to_string((eager_blocks + 1) * block) + "\n");
  const Keys keys = {{"mpix_radix", "2"}, {"mpix_machine_file", machine}};
  check(DenseCase{true, Distribution::constant, block, "byte", Mode::blocking, false, 3, "bruck", keys}, guard.comm);
  check(DenseCase{true, Distribution::constant, block, "int", Mode::persistent, false, 2, "bruck", keys}, guard.comm);
  for (const char* algorithm : {"tuna", "bruck"}) {
    INFO(algorithm);
    Counters c = measure(guard.comm, true, algorithm, keys, block, 2);
    CHECK(c.run.messages == schedule_messages(size, 2, true, eager_blocks));
    if (size >= 8) CHECK(c.run.messages > schedule_messages(size, 2, true));
  }
  // Two nodes of 8 (at 16 ranks): the intra-node rounds of the hierarchical TuNAs,
  // whose slots hold a piece per node (2 x 128 B), stay one message each under a
  // limit of 4 slots, which would cut the round of 4 blocks as 3 + 1 (the limit is
  // for rounds between nodes: BruckSetup::eager_bytes).
  if (size == 16) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, 8) == MPIX_SUCCESS);
    const std::string hier_machine = harness::temp_file("eager_hier", "eager_bytes = 1024\n");
    const Keys hier_keys = {{"mpix_radix", "2"}, {"mpix_block_count", "2"}, {"mpix_machine_file", hier_machine}};
    for (const char* algorithm : kHierarchical) {
      INFO(algorithm);
      check(DenseCase{false, Distribution::uniform, 32, "int", Mode::blocking, false, 3, algorithm, hier_keys},
            guard.comm);
      check(DenseCase{true, Distribution::constant, 32, "int", Mode::persistent, false, 2, algorithm, hier_keys},
            guard.comm);
      const Counters limited = measure(guard.comm, true, algorithm, hier_keys, 128, 2);
      const Counters one_message = measure(guard.comm, true, algorithm, {{"mpix_radix", "2"}, {"mpix_block_count", "2"}}, 128, 2);
      CHECK(limited.run.messages == one_message.run.messages);
    }
  }
}

// The inter-node rounds of hierarchical TuNA: in every round the ranks of a node send
// to min(Q, N - 1) different nodes (not all to the same one), and every rank still
// meets every other node exactly once, in the round its partner expects.
TEST_CASE("hierarchical rounds spread a node's messages over the other nodes", "[logtime][hierarchical][schedule]") {
  if (harness::world_rank() != 0) return;
  for (int nodes : {2, 3, 8, 33})
    for (int q : {1, 4, 32}) {
      mpix::NodeLayout layout(nodes);
      for (int rank = 0; rank < nodes * q; ++rank) layout[rank / q].push_back(rank);
      std::vector<std::vector<std::vector<int>>> targets(nodes, std::vector<std::vector<int>>(nodes - 1));
      std::vector<std::vector<long long>> sent(nodes * q), received(nodes * q);
      for (int me = 0; me < nodes * q; ++me) {
        const mpix::HierRoute route = mpix::hier_route(layout, me, true);
        for (const mpix::HierMessage& m : route.inter) {
          REQUIRE(m.position >= 0);
          REQUIRE(m.position < nodes - 1);
          (m.send ? sent[me] : received[me]).push_back(m.position);
          if (m.send) targets[me / q][(std::size_t)m.position].push_back(m.peer / q);
        }
      }
      INFO(nodes << " nodes of " << q);
      for (int me = 0; me < nodes * q; ++me) {
        std::sort(sent[me].begin(), sent[me].end());
        std::sort(received[me].begin(), received[me].end());
        CHECK(sent[me] == received[me]);  // one send and one receive per round
        CHECK((int)sent[me].size() == nodes - 1);
        CHECK(std::adjacent_find(sent[me].begin(), sent[me].end()) == sent[me].end());
      }
      for (int node = 0; node < nodes; ++node)
        for (std::vector<int>& to : targets[node]) {
          std::sort(to.begin(), to.end());
          CHECK(std::unique(to.begin(), to.end()) - to.begin() == std::min(q, nodes - 1));
        }
    }
}

TEST_CASE("hierarchical counters: intra-node TuNA rounds, then Q(N-1) or N-1 inter-node rounds",
          "[logtime][counters][hierarchical]") {
  harness::Comm guard;
  const int size = harness::world_size();
  const int block = 32;
  for (int ppn : node_layouts()) {
    if (size % ppn != 0) continue;  // the formulas below are for equal nodes
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    const int q = ppn, n = size / ppn;
    for (int r : {2, q}) {
      const Bruck f = bruck_formula(q, r);
      for (const std::string& bc : kBlockCounts) {
        const long long per_batch = bc == "unlimited" ? INT_MAX : std::stoll(bc);
        for (const char* algorithm : kHierarchical) {
          const bool coalesced = std::string(algorithm) == "tuna_hier_coalesced";
          const long long inter_messages = coalesced ? n - 1 : (long long)q * (n - 1);
          const long long inter_rounds = (inter_messages + per_batch - 1) / per_batch;
          Counters c = measure(guard.comm, true, algorithm,
                               {{"mpix_radix", std::to_string(r)}, {"mpix_block_count", bc}}, block, 2);
          INFO(algorithm << " ppn=" << ppn << " radix=" << r << " block_count=" << bc);
          CHECK(c.run.rounds == f.rounds + inter_rounds);
          CHECK(c.run.messages == schedule_messages(q, r, true) + inter_messages);
          CHECK(c.run.messages == f.rounds + inter_messages);
          // Intra-node: N pieces per block per hop; inter-node: Q(N-1) blocks.
          CHECK(c.run.payload_bytes == (long long)block * (n * f.hops + (long long)q * (n - 1)));
          CHECK(c.init.metadata_messages == f.rounds);
          CHECK(c.run.metadata_messages == 0);
        }
      }
    }
  }
}

// Lane groups (topology/lane_groups.hpp): the layouts of equal nodes with at
// least 3 nodes, where groups of more than one rank exist, and the groups there.
std::vector<std::pair<int, int>> lane_group_layouts() {
  const int size = harness::world_size();
  std::vector<std::pair<int, int>> layouts;  // (ppn, lane_group)
  for (int ppn : {2, 3, 4})
    if (size % ppn == 0 && size / ppn >= 3)
      for (int group = 2; group <= std::min(ppn, size / ppn - 1); ++group) layouts.push_back({ppn, group});
  return layouts;
}

// Where every block goes in lane groups, without MPI: a lane and its receiver
// agree on the position and the blocks, and every rank gets every block from
// another node exactly once, by its own lane or forwarded by a member of its group.
TEST_CASE("lane groups: the lanes match and deliver every block once", "[logtime][hierarchical][lanes][schedule]") {
  if (harness::world_rank() != 0) return;
  for (int nodes : {3, 4, 8, 9})
    for (int q : {2, 3, 4, 8})
      for (int group = 2; group <= std::min(q, nodes - 1); ++group) {
        INFO(nodes << " nodes of " << q << ", lane groups of " << group);
        mpix::NodeLayout layout(nodes);
        for (int rank = 0; rank < nodes * q; ++rank) layout[rank / q].push_back(rank);
        std::vector<mpix::HierRoute> routes;
        for (int me = 0; me < nodes * q; ++me) routes.push_back(mpix::hier_route(layout, me, true, group));
        std::vector<std::vector<int>> delivered(nodes * q, std::vector<int>(nodes * q, 0));
        for (int me = 0; me < nodes * q; ++me) {
          const mpix::HierRoute& route = routes[me];
          REQUIRE(route.group.size() >= 1);
          for (const mpix::HierMessage& m : route.inter) {
            REQUIRE(m.position < route.positions);
            if (!m.send) {
              for (const mpix::HierBlock& b : m.blocks)
                if (b.dest == me) ++delivered[me][b.origin];
              continue;
            }
            // The receiver posts the same blocks from this rank at the same position.
            const mpix::HierRoute& peer = routes[m.peer];
            int matches = 0;
            for (const mpix::HierMessage& r : peer.inter)
              if (!r.send && r.peer == me && r.position == m.position && r.blocks.size() == m.blocks.size()) {
                bool same = true;
                for (std::size_t i = 0; i < r.blocks.size(); ++i)
                  same = same && r.blocks[i].origin == m.blocks[i].origin && r.blocks[i].dest == m.blocks[i].dest;
                matches += same;
              }
            CHECK(matches == 1);
          }
          // What the group's other members forward to this rank.
          for (std::size_t member = 0; member < route.group.size(); ++member) {
            if ((int)member == route.member) continue;
            const mpix::HierRoute& mate = routes[route.group[member]];
            REQUIRE(mate.group == route.group);
            for (int source : mate.group_sources[member])
              if (source >= 0) ++delivered[me][source];
          }
          for (int source = 0; source < nodes * q; ++source)
            CHECK(delivered[me][source] == (source / q == me / q ? 0 : 1));
        }
      }
}

// tuna_hier_coalesced in lane groups against MPI (both operations, persistent and
// blocking, datatypes with holes, in place, batches of lanes), its counters against
// its cost model (summed over the ranks, as test_model's check of every algorithm,
// whose 4 ranks leave no room for groups), and a rank's lanes: one per node offset
// its member serves.
TEST_CASE("tuna_hier_coalesced in lane groups equals MPI, and its model counts its plan",
          "[logtime][hierarchical][lanes]") {
  harness::Comm guard;
  const int size = harness::world_size(), rank = harness::world_rank();
  const mpix::MachineProfile profile;
  for (const auto& [ppn, group] : lane_group_layouts()) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    const std::string g = std::to_string(group);
    INFO("nodes of " << ppn << ", lane groups of " << group);
    const Keys keys = {{"mpix_radix", "2"}, {"mpix_block_count", "2"}, {"mpix_lane_group", g}};
    check(DenseCase{false, Distribution::uniform, 120, "int", Mode::blocking, false, 3, "tuna_hier_coalesced", keys},
          guard.comm);
    check(DenseCase{true, Distribution::constant, 24, "mixed", Mode::persistent, false, 3, "tuna_hier_coalesced",
                    keys},
          guard.comm);
    check(DenseCase{false, Distribution::powerlaw, 200, "vector", Mode::tested, true, 2, "tuna_hier_coalesced",
                    {{"mpix_radix", std::to_string(ppn)}, {"mpix_lane_group", g}}},
          guard.comm);
    for (const std::string bc : {"1", "unlimited"}) {
      const Keys counted = {{"mpix_radix", "2"}, {"mpix_block_count", bc}, {"mpix_lane_group", g}};
      const Counters c = measure(guard.comm, true, "tuna_hier_coalesced", counted, 32, 2);
      INFO("block_count " << bc);
      const mpix::Cost cost = mpix::cost_tuna_hier_coalesced(c.facts, c.params, profile);
      REQUIRE(cost.valid);
      long long mine[4] = {c.run.messages, c.run.payload_bytes, c.init.metadata_messages, c.init.metadata_bytes},
                sum[4];
      MPI_Allreduce(mine, sum, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      int rounds = 0;
      MPI_Allreduce(&c.run.rounds, &rounds, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      CHECK(std::llround(cost.messages() * size) == sum[0]);
      CHECK(std::llround(cost.bytes() * size) == sum[1]);
      CHECK(std::llround(cost.init_messages() * size) == sum[2]);
      CHECK(std::llround(cost.init_bytes() * size) == sum[3]);
      // With a smaller last group the busiest rank's lanes and the full groups'
      // rounds are on different ranks: the model adds both (an upper bound).
      if (ppn % group == 0) CHECK(std::llround(cost.round_count()) == rounds);
      else CHECK(std::llround(cost.round_count()) >= rounds);
      // This rank's messages: the node's TuNA, a lane per node offset its member
      // serves, and the group's TuNA (radix 2).
      const int nodes = size / ppn, local = rank % ppn, first = local / group * group;
      const int members = std::min(group, ppn - first);
      int lanes = 0;
      for (int k = 1; k < nodes; ++k) lanes += (k - 1) % members == local - first;
      CHECK(c.run.messages == bruck_formula(ppn, 2).rounds + lanes + bruck_formula(members, 2).rounds);
    }
  }
  REQUIRE(MPIX_Comm_update_locality(guard.comm, 0) == MPIX_SUCCESS);
}

// Lane groups need nodes of one size: elsewhere the call fails on every rank and
// names the hint; groups of one run anywhere.
TEST_CASE("lane groups on nodes of different sizes fail on every rank", "[logtime][hierarchical][lanes][errors]") {
  harness::Comm guard;
  const int size = harness::world_size(), rank = harness::world_rank();
  int ppn = 0;
  for (int candidate : {3, 5})
    if (size % candidate != 0 && size / candidate >= 2) ppn = candidate;
  if (ppn == 0) return;
  REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
  std::vector<int> data(size, rank), out(size, -1);
  for (const char* group : {"2", "1"}) {
    harness::Info info{{"mpix_alltoall_algorithm", "tuna_hier_coalesced"}, {"mpix_lane_group", group}};
    const int rc = MPIX_Alltoall(data.data(), 1, MPI_INT, out.data(), 1, MPI_INT, info.info, guard.comm);
    const std::string message = MPIX_Last_error_message();
    INFO("mpix_lane_group=" << group << ": " << message);
    if (std::string(group) == "1") {
      CHECK(harness::all_ranks(rc == MPIX_SUCCESS));
      for (int peer = 0; peer < size; ++peer) CHECK(out[peer] == peer);
    } else {
      CHECK(harness::all_ranks(rc == MPIX_ERR_INFO_VALUE && message.find("mpix_lane_group=2") != std::string::npos &&
                               message.find("one size") != std::string::npos));
    }
  }
  REQUIRE(MPIX_Comm_update_locality(guard.comm, 0) == MPIX_SUCCESS);
}

TEST_CASE("persistent TuNA exchanges its metadata once, at init", "[logtime][persistent]") {
  harness::Comm guard;
  const int size = harness::world_size();
  for (int r : {2, std::max(2, size)}) {
    Counters c = measure(guard.comm, false, "tuna", {{"mpix_radix", std::to_string(r)}}, 300, 3);
    INFO("radix " << r);
    CHECK(c.init.metadata_messages == bruck_formula(size, r).rounds);
    CHECK(c.run.metadata_messages == 0);
    CHECK(c.run.metadata_bytes == 0);
    CHECK((c.run.payload_bytes > 0) == (size > 1));
  }
  for (int ppn : node_layouts()) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    int nodes = 0, local_size = 0;
    MPIX_Comm_locality(guard.comm, &nodes, nullptr, &local_size, nullptr);
    for (const char* algorithm : {"tuna_hier_staggered", "tuna_hier_coalesced", "node_aware"}) {
      Counters c = measure(guard.comm, false, algorithm, {{"mpix_radix", "2"}}, 300, 2);
      INFO(algorithm << " ppn=" << ppn);
      // Intra-node TuNA: one metadata message per round; node-aware: one per other
      // node, along the aggregation routes.
      const bool hierarchical = std::string(algorithm) != "node_aware";
      // (The node-local exchange of node_aware may add its own, at init too.)
      if (hierarchical)
        CHECK(c.init.metadata_messages == bruck_formula(local_size, 2).rounds);
      else
        CHECK(c.init.metadata_messages >= nodes - 1);
      CHECK(c.run.metadata_messages == 0);
    }
  }
}

// mpix_locality (node_aware's level): a bad value on one rank fails there with a
// message naming it and on the others as a rejected call; with auto too (auto reads
// every parameter); values that differ between ranks fail on every rank.
TEST_CASE("node_aware: a bad or disagreeing mpix_locality fails on every rank", "[logtime][errors][regions]") {
  harness::Comm guard;
  const int size = harness::world_size(), rank = harness::world_rank(), last = size - 1;
  std::vector<int> data(size, rank), out(size, 0);
  for (const char* algorithm : {"node_aware", "auto"}) {
    INFO(algorithm);
    harness::Info info{{"mpix_alltoall_algorithm", algorithm}};
    if (rank == last) setenv("MPIX_LOCALITY", "numa", 1);
    int rc = MPIX_Alltoall(data.data(), 1, MPI_INT, out.data(), 1, MPI_INT, info.info, guard.comm);
    const std::string message = MPIX_Last_error_message();
    if (rank == last) unsetenv("MPIX_LOCALITY");
    INFO(message);
    auto has = [&message](const char* text) { return message.find(text) != std::string::npos; };
    const bool named = rank == last ? rc == MPIX_ERR_INFO_VALUE && has("MPIX_LOCALITY") &&
                                          has("=numa: expected node or region")
                                    : rc == MPIX_ERR_INFO_VALUE && has("another rank rejected");
    CHECK(harness::all_ranks(named));
  }
  if (size > 1) {
    harness::Info info{{"mpix_alltoall_algorithm", "node_aware"}, {"mpix_locality", rank == 0 ? "region" : "node"}};
    int rc = MPIX_Alltoall(data.data(), 1, MPI_INT, out.data(), 1, MPI_INT, info.info, guard.comm);
    CHECK(harness::all_ranks(rc == MPIX_ERR_ARG &&
                             std::strstr(MPIX_Last_error_message(), "different algorithm parameters") != nullptr));
  }
  // Still usable.
  harness::Info info{{"mpix_alltoall_algorithm", "node_aware"}, {"mpix_locality", "region"}};
  const int rc = MPIX_Alltoall(data.data(), 1, MPI_INT, out.data(), 1, MPI_INT, info.info, guard.comm);
  CHECK(harness::all_ranks(rc == MPIX_SUCCESS));
}

TEST_CASE("bad radix and block_count fail with MPIX_ERR_INFO_VALUE and a message", "[logtime][errors]") {
  harness::Comm guard;
  const int size = harness::world_size();
  MPIX_Info* info = nullptr;
  REQUIRE(MPIX_Info_init(&info) == MPIX_SUCCESS);
  for (const char* bad : {"1", "0", "-3", "abc", "4x", ""}) {
    INFO("mpix_radix=" << bad);
    CHECK(MPIX_Info_set(info, "mpix_radix", bad) == MPIX_ERR_INFO_VALUE);
    CHECK(std::strstr(MPIX_Last_error_message(), "mpix_radix") != nullptr);
  }
  for (const char* bad : {"0", "-1", "many", "2.5"}) {
    INFO("mpix_block_count=" << bad);
    CHECK(MPIX_Info_set(info, "mpix_block_count", bad) == MPIX_ERR_INFO_VALUE);
    CHECK(std::strstr(MPIX_Last_error_message(), "mpix_block_count") != nullptr);
  }
  MPIX_Info_free(&info);

  std::vector<int> data(size, 1), out(size, 0);
  auto call = [&](const char* algorithm, const Keys& keys) {
    harness::Info i;
    i.set("mpix_alltoall_algorithm", algorithm);
    for (const auto& k : keys) i.set(k.first, k.second);
    return MPIX_Alltoall(data.data(), 1, MPI_INT, out.data(), 1, MPI_INT, i.info, guard.comm);
  };
  // Larger than P: the call fails, on every rank.
  const std::string too_large = std::to_string(std::max(2, size) + 1);
  for (const char* algorithm : {"tuna", "bruck", "tuna_hier_coalesced"}) {
    INFO(algorithm);
    CHECK(call(algorithm, {{"mpix_radix", too_large}}) == MPIX_ERR_INFO_VALUE);
    CHECK(std::strstr(MPIX_Last_error_message(), "mpix_radix") != nullptr);
  }
  // From the environment: not a number, too small, a bad block_count.
  for (const char* bad : {"abc", "1"}) {
    setenv("MPIX_RADIX", bad, 1);
    CHECK(call("tuna", {}) == MPIX_ERR_INFO_VALUE);
    CHECK(std::strstr(MPIX_Last_error_message(), "MPIX_RADIX") != nullptr);
    unsetenv("MPIX_RADIX");
  }
  setenv("MPIX_BLOCK_COUNT", "0", 1);
  CHECK(call("tuna_hier_staggered", {}) == MPIX_ERR_INFO_VALUE);
  CHECK(std::strstr(MPIX_Last_error_message(), "MPIX_BLOCK_COUNT") != nullptr);
  unsetenv("MPIX_BLOCK_COUNT");
  // Hierarchical TuNA: the radix is the intra-node radix, 2..Q.
  if (size >= 3) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, 2) == MPIX_SUCCESS);
    for (const char* algorithm : kHierarchical) {
      INFO(algorithm);
      CHECK(call(algorithm, {{"mpix_radix", "3"}}) == MPIX_ERR_INFO_VALUE);
      const std::string message = MPIX_Last_error_message();
      INFO(message);
      CHECK(message.find("mpix_radix=3") != std::string::npos);
      CHECK(message.find("Q=2") != std::string::npos);
      CHECK(call(algorithm, {{"mpix_radix", "2"}}) == MPIX_SUCCESS);
    }
  }
  // The communicator is still usable.
  CHECK(call("tuna", {{"mpix_radix", "2"}}) == MPIX_SUCCESS);
  for (int peer = 0; peer < size; ++peer) CHECK(out[peer] == 1);
}
