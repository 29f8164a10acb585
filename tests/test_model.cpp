// The selection model (src/core/model.*, select.*): the choice itself, and every
// cost model's message, byte and round counts against the counters of the plan it
// describes (PlanStats), for many node layouts, parameters and distributions. The
// machine-file and tuning-file parsers: test_parsers.cpp.
#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "core/agreement.hpp"
#include "core/before_agreement.hpp"
#include "core/carried_agreement.hpp"
#include "core/comm.hpp"
#include "core/model.hpp"
#include "core/request.hpp"
#include "core/select.hpp"
#include "harness.hpp"
#include "model_facts.hpp"

using harness::message_has;
using model_test::facts_of;
using mpix::workload::Distribution;

TEST_CASE("the model prefers log-time exchanges for small blocks at scale, a direct exchange at 2 ranks", "[model]") {
  const mpix::MachineProfile profile;
  auto choose = [&](const mpix::ExchangeFacts& f) {
    mpix::PlanContext context;
    context.facts = f;
    context.profile = &profile;
    context.params.seed = f.ranks;
    return mpix::select_dense(f.uniform ? mpix::kAlltoall : mpix::kAlltoallv, context);
  };
  mpix::Prediction small = choose(facts_of(256, 4, 16, false));
  CHECK(std::string(small.algorithm->name).find("tuna") == 0);
  // 2 ranks: one message either way; on the tie mpix's own direct exchange goes
  // before MPI's, whose internals the model does not know.
  for (long long bytes : {16LL, 4096LL, 1LL << 20, 16LL << 20}) {
    mpix::Prediction choice = choose(facts_of(2, 1, bytes, false));
    CHECK(choice.algorithm->name != std::string("pmpi"));
    mpix::Prediction pmpi = mpix::predict_best(*mpix::find_algorithm("pmpi", mpix::kAlltoallv),
                                               facts_of(2, 1, bytes, false), mpix::Params{}, profile);
    CHECK(pmpi.seconds == Approx(choice.seconds));
  }
  // ipc_hybrid (one direct copy where a shared-memory message makes two) for large
  // blocks of one node, once the communicator's probe found direct copies; never
  // without them, nor for small blocks, where its notices and init cost more.
  for (long long bytes : {16LL, 4096LL, 1LL << 20, 16LL << 20}) {
    for (bool direct : {false, true}) {
      mpix::ExchangeFacts f = facts_of(2, 2, bytes, false);
      f.direct_copy = direct;
      const bool large = bytes >= (1LL << 20);
      INFO("S=" << bytes << " direct_copy=" << direct);
      CHECK((choose(f).algorithm->name == std::string("ipc_hybrid")) == (direct && large));
    }
  }
  {
    // On a single-copy MPI (intra_copies = 1) a message costs what a direct copy does.
    mpix::MachineProfile single = profile;
    single.intra_copies = 1;
    mpix::PlanContext context;
    context.facts = facts_of(2, 2, 16LL << 20, false);
    context.facts.direct_copy = true;
    context.profile = &single;
    CHECK(mpix::select_dense(mpix::kAlltoallv, context).algorithm->name != std::string("ipc_hybrid"));
  }
  // A radix chosen by the model is in 2..P; a hierarchical one in 2..Q.
  for (const mpix::Algorithm& a : mpix::algorithms()) {
    if (!a.cost || !(a.ops & mpix::kAlltoallv)) continue;
    mpix::Prediction p = mpix::predict_best(a, facts_of(64, 8, 100, false), mpix::Params{}, profile);
    REQUIRE(p.cost.valid);
    CHECK(p.params.radix >= 2);
    CHECK(p.params.radix <= (std::string(a.name).rfind("tuna_hier", 0) == 0 ? 8 : 64));
    CHECK(p.seconds > 0);
  }
  // A given parameter is kept.
  mpix::Params given;
  given.radix = 5;
  given.radix_auto = false;
  mpix::Prediction p = mpix::predict_best(*mpix::find_algorithm("tuna", mpix::kAlltoallv), facts_of(64, 8, 100, false),
                                          given, profile);
  CHECK(p.params.radix == 5);
  // Predictions are kept per input: the same inputs give the same prediction, a
  // profile with other constants (even at the same address) another one.
  {
    const mpix::Algorithm& tuna_algorithm = *mpix::find_algorithm("tuna", mpix::kAlltoallv);
    mpix::MachineProfile slow = profile;
    mpix::Prediction first = mpix::predict_best(tuna_algorithm, facts_of(64, 8, 100, false), mpix::Params{}, slow);
    mpix::Prediction again = mpix::predict_best(tuna_algorithm, facts_of(64, 8, 100, false), mpix::Params{}, slow);
    CHECK(again.seconds == first.seconds);
    CHECK(again.params.radix == first.params.radix);
    slow.inter_latency *= 10;
    mpix::Prediction slower = mpix::predict_best(tuna_algorithm, facts_of(64, 8, 100, false), mpix::Params{}, slow);
    CHECK(slower.seconds > first.seconds);
  }
  // Persistent plans do not pay TuNA's metadata rounds again.
  mpix::ExchangeFacts f = facts_of(64, 8, 100, false);
  mpix::Cost tuna = mpix::find_algorithm("tuna", mpix::kAlltoallv)->cost(f, p.params, profile);
  CHECK(mpix::predict_seconds(tuna, profile, true) < mpix::predict_seconds(tuna, profile, false));
}

TEST_CASE("a TuNA round loads the bisection with the ranks whose partner is on another node", "[model]") {
  // 8 nodes of 32, radix 2: at distance 1 one rank in 32 sends to another node, at
  // distance 32 and beyond every rank does.
  const mpix::ExchangeFacts f = facts_of(256, 32, 16, false);
  mpix::Params params;
  params.radix = 2;
  mpix::MachineProfile narrow;
  narrow.bisection_bandwidth = 1e9;  // the bisection, not the injection, limits
  for (const char* name : {"tuna", "tuna_carried"}) {
    INFO(name);
    const mpix::Cost cost = mpix::find_algorithm(name, mpix::kAlltoallv)->cost(f, params, narrow);
    REQUIRE(cost.rounds.size() == 8);
    for (int x = 0; x < 8; ++x) {
      const int distance = 1 << x;
      CHECK(cost.rounds[x].ranks == Approx(256 * mpix::inter_node_fraction(distance, 32, 256)));
    }
    CHECK(cost.rounds.front().ranks == Approx(8));
    CHECK(cost.rounds.back().ranks == Approx(256));
    // The same bytes per rank, a 32nd of the senders across the cut: cheaper.
    CHECK(mpix::rounds_seconds({cost.rounds.front()}, narrow) < mpix::rounds_seconds({cost.rounds.back()}, narrow));
  }
}

// A torus's routes of several hops load the links of its rings with more pairs
// than the bisection's cut carries (bench/platforms: 2.5x at 16 nodes of the 8x8x4
// torus): a round's inter-node bytes take at least all of them over the
// alltoall bandwidth, whatever the injection and the bisection allow.
TEST_CASE("the busiest link of the routes limits a round's inter-node bytes", "[model]") {
  const mpix::ExchangeFacts f = facts_of(512, 32, 1024, true);
  mpix::RoundCost round = mpix::linear_round(f, f.ranks - 1, 1024);
  mpix::MachineProfile wide, ring = wide;
  wide.bisection_bandwidth = ring.bisection_bandwidth = 54.4e9;
  ring.alltoall_bandwidth = 81.6e9;
  const double inter_bytes = round.inter.bytes * round.ranks;
  CHECK(mpix::rounds_seconds({round}, ring) > mpix::rounds_seconds({round}, wide));
  CHECK(mpix::rounds_seconds({round}, ring) >= inter_bytes / ring.alltoall_bandwidth);
  // Not tighter than the injection: no change.
  mpix::MachineProfile loose = wide;
  loose.alltoall_bandwidth = 1e15;
  CHECK(mpix::rounds_seconds({round}, loose) == mpix::rounds_seconds({round}, wide));
  // One node: nothing crosses the network.
  const mpix::ExchangeFacts one = facts_of(32, 32, 1024, true);
  mpix::RoundCost inside = mpix::linear_round(one, one.ranks - 1, 1024);
  CHECK(mpix::rounds_seconds({inside}, ring) == mpix::rounds_seconds({inside}, wide));
}

// Every message between nodes carries headers (and, in SMPI, 16 bytes) beyond its
// payload: on a slow link with cheap overheads, many small messages are limited by
// those bytes, which the node's ranks put on its link together.
TEST_CASE("each message between nodes adds its wire overhead to the round's bytes", "[model]") {
  const mpix::ExchangeFacts f = facts_of(64, 32, 16, false);
  mpix::RoundCost round = mpix::linear_round(f, f.ranks - 1, 8);
  mpix::MachineProfile bare, headers;
  bare.inter_bandwidth = headers.inter_bandwidth = 1e9;
  bare.inter_send_overhead = bare.inter_recv_overhead = headers.inter_send_overhead = headers.inter_recv_overhead = 5e-8;
  bare.inter_message_bytes = 0;
  headers.inter_message_bytes = 16;
  const double wire = round.inter.messages * (8 + 16) * round.nic_sharers / 1e9;
  CHECK(mpix::rounds_seconds({round}, headers) >= wire);
  CHECK(mpix::rounds_seconds({round}, headers) > mpix::rounds_seconds({round}, bare));
  // Inside one node nothing crosses the network.
  const mpix::ExchangeFacts one = facts_of(32, 32, 16, false);
  mpix::RoundCost inside = mpix::linear_round(one, one.ranks - 1, 8);
  CHECK(mpix::rounds_seconds({inside}, headers) == mpix::rounds_seconds({inside}, bare));
  // Such a machine (a simulated 1 GB/s network with 0.05 us overheads, 2 nodes of
  // 32): its 1024 messages of 8 B between the nodes took 3x the time of the
  // hierarchical exchange's few; auto, which priced them by their payload alone,
  // chose the direct exchange.
  mpix::PlanContext context;
  context.facts = facts_of(64, 32, 8, false);
  context.profile = &headers;
  context.params.seed = 64;
  const mpix::Prediction choice = mpix::select_dense(mpix::kAlltoallv, context);
  INFO(choice.algorithm->name);
  CHECK(std::string(choice.algorithm->name).find("tuna_hier") == 0);
}

// The first call of a blocking alltoall(v) may move its blocks inside the agreement's
// Bruck rounds (carried_agreement.hpp); `auto` prices that as an agreement plus
// what the blocks add to each round and the copies.
TEST_CASE("the carried exchange costs an agreement plus what its blocks add", "[model]") {
  mpix::MachineProfile profile, narrow;
  narrow.bisection_bandwidth = 1e9;
  for (int ranks : {1, 2, 3, 64, 256, 1000})
    for (int ppn : {1, 4, 32}) {
      INFO("P=" << ranks << " ppn=" << ppn);
      const mpix::ExchangeFacts empty = facts_of(ranks, ppn, 0);
      double previous = mpix::carried_bruck_seconds(empty, profile);
      CHECK(previous == Approx(mpix::agreement_seconds(empty, profile, mpix::kPackedRecordBytes)));
      for (long long block : {1LL, 16LL, 64LL}) {
        const double seconds = mpix::carried_bruck_seconds(facts_of(ranks, ppn, block), profile);
        if (ranks > 1) CHECK(seconds > previous);
        previous = seconds;
      }
      // An alltoallv's blocks travel with a byte of size each.
      if (ranks > 1)
        CHECK(mpix::carried_bruck_seconds(facts_of(ranks, ppn, 16, false), profile) >
              mpix::carried_bruck_seconds(facts_of(ranks, ppn, 16), profile));
      // Blocks between nodes cross the bisection: dearer where it is narrow.
      const mpix::ExchangeFacts blocks = facts_of(ranks, ppn, 64);
      if (blocks.nodes > 1)
        CHECK(mpix::carried_bruck_seconds(blocks, narrow) > mpix::carried_bruck_seconds(blocks, profile));
    }
}

// A spread-out exchange started before its agreement (before_agreement.cpp): the
// agreement's Bruck rounds go between its messages only where the exchange is
// bound by its posting and that is priced lower; then it costs the exchange and
// the rounds' overheads, never less than the agreement, and the posting looks at
// the round about once per round (more often where latency is short against the
// overheads). Never in the lanes, nor where the exchange waits for its bytes.
TEST_CASE("the exchange started before the agreement: its rounds between the messages where posting binds",
          "[model]") {
  mpix::MachineProfile profile;  // o = 0.5 us, 1.5 us between nodes
  const mpix::ExchangeFacts facts = facts_of(64, 1, 1024);
  const double posting = 63 * (profile.inter_send_overhead + profile.inter_recv_overhead);
  const double agreement = mpix::blocking_agreement_seconds(facts, profile, 0);
  const double round_overheads = profile.inter_send_overhead + profile.inter_recv_overhead;
  const mpix::EarlyStart bound = mpix::speculative_seconds(facts, profile, posting + 1e-6, agreement, 0);
  CHECK(bound.interleaved);
  CHECK(bound.seconds == Approx(posting + 1e-6 + 6 * 1.5 * round_overheads));
  CHECK(bound.seconds < posting + agreement);
  // The lanes' rounds have several messages each: the agreement after the posting.
  const mpix::EarlyStart lanes = mpix::speculative_seconds(facts, profile, posting + 1e-6, agreement, 2);
  CHECK_FALSE(lanes.interleaved);
  CHECK(lanes.seconds == Approx(posting + agreement));
  // An exchange that waits for its bytes long after its posting hides the agreement.
  const mpix::EarlyStart bytes = mpix::speculative_seconds(facts, profile, 4 * posting, agreement, 0);
  CHECK_FALSE(bytes.interleaved);
  CHECK(bytes.seconds == Approx(4 * posting));
  // Latency short against the overheads: nothing to hide, nothing to gain.
  mpix::MachineProfile near = profile;
  near.inter_latency = 0.01e-6;
  const double near_agreement = mpix::blocking_agreement_seconds(facts, near, 0);
  CHECK_FALSE(mpix::speculative_seconds(facts, near, posting, near_agreement, 0).interleaved);
  // Looked at about once a round: 2 (latency + overheads) / a message's overheads.
  CHECK(mpix::posts_per_round(facts, profile) == 10);
  CHECK(mpix::posts_per_round(facts, near) == 5);
  CHECK(mpix::posts_per_round(facts_of(8, 8, 1024), profile) == 8);
}

// The lanes (carried_lanes.cpp): Bruck's rounds inside the node, then N - 1
// messages between nodes (in lane groups of one rank). Their records alone cost more with every node, so a
// layout of many small nodes keeps Bruck's rounds over all ranks, and a few large
// ones take the lanes, whose blocks cross the network once; unequal nodes, one
// node or one rank per node never do.
TEST_CASE("the lanes: priced from their rounds, chosen for few large nodes", "[model]") {
  mpix::MachineProfile profile;
  for (int ppn : {2, 4, 32}) {
    double previous = 0;
    for (int nodes : {2, 4, 8, 16, 32, 64}) {
      INFO("nodes of " << ppn << ", " << nodes << " of them");
      const mpix::ExchangeFacts empty = facts_of(nodes * ppn, ppn, 0);
      const double records = mpix::blocking_agreement_seconds(empty, profile, 1);
      CHECK(mpix::carried_seconds(empty, profile, 1) == Approx(records));
      CHECK(records > previous);
      previous = records;
      double carried = records;
      for (long long block : {1LL, 16LL, 64LL}) {
        const double seconds = mpix::carried_seconds(facts_of(nodes * ppn, ppn, block), profile, 1);
        CHECK(seconds > carried);
        carried = seconds;
      }
      CHECK(mpix::carried_seconds(facts_of(nodes * ppn, ppn, 16, false), profile, 1) >
            mpix::carried_seconds(facts_of(nodes * ppn, ppn, 16), profile, 1));
    }
  }
  auto layout = [](int nodes, int ppn) { return facts_of(nodes * ppn, ppn, 0); };
  CHECK(mpix::choose_lane_group(layout(8, 32), profile) > 0);
  // Lane groups (carried_lanes.cpp): with 31 lanes per rank, groups of several
  // ranks send fewer messages of a record each for a few rounds inside the node;
  // chosen there, never larger than the node or N - 1.
  for (int nodes : {2, 4, 8, 16, 32}) {
    INFO(nodes << " nodes of 32");
    const int group = mpix::choose_lane_group(layout(nodes, 32), profile);
    CHECK(group <= std::min(32, nodes - 1));
    if (nodes >= 8) CHECK(group >= 1);
  }
  CHECK(mpix::choose_lane_group(layout(32, 32), profile) > 1);
  CHECK(mpix::blocking_agreement_seconds(layout(32, 32), profile, 8) <
        mpix::blocking_agreement_seconds(layout(32, 32), profile, 1));
  CHECK(mpix::choose_lane_group(layout(4, 2), profile) <= 2);
  CHECK(mpix::choose_lane_group(layout(64, 4), profile) == 0);
  CHECK(mpix::choose_lane_group(layout(1, 32), profile) == 0);
  CHECK(mpix::choose_lane_group(layout(64, 1), profile) == 0);
  CHECK(mpix::choose_lane_group(facts_of(250, 32, 0), profile) == 0);  // 7 nodes of 32 and one of 26
}

// The calls that repeat a carried one carry again where carrying is priced 10 %
// below a start of the plan they would make (price_carrying_again): on the
// simulated torus's constants (bench/simulate's machine file) with 64 nodes of 4
// where the plans may not go in lane groups (mpix_lane_group=1; simulated: 9.9 us
// carried against 15.0 for the plan, tuna_carried); with lane groups the plan
// (tuna_hier_coalesced in the carried call's groups of 4, 9.6 us) is priced below
// carrying, and the calls plan. Not with 8 nodes of 32, where the model prices the
// two alike; nor where the plan's start is what the carried call costs (one rank
// per node: the same rounds). The plan's start leaves out its metadata rounds,
// which its first call paid.
TEST_CASE("carrying again: priced against a start of the plan a repeated call would make", "[model][auto]") {
  mpix::MachineProfile torus;
  torus.inter_latency = 8.25e-07;
  torus.intra_latency = 1e-07;
  torus.inter_send_overhead = torus.inter_recv_overhead = 2e-07;
  torus.intra_send_overhead = torus.intra_recv_overhead = 2e-07;
  torus.inter_bandwidth = 4.08e+10;
  torus.inter_message_bytes = 16;
  torus.intra_bandwidth = torus.copy_bandwidth = 2e+10;
  torus.bisection_bandwidth = 1.088e+11;
  torus.alltoall_bandwidth = 3.4272e+11;
  torus.intra_copies = 0;
  torus.collective_overhead = 0;
  auto price = [&](int ranks, int ppn, bool uniform, bool lane_groups = true) {
    mpix::PlanContext context;
    context.facts = facts_of(ranks, ppn, 16, uniform);
    context.profile = &torus;
    context.params.seed = ranks;
    if (!lane_groups) context.params.given |= 1u << (unsigned)mpix::Param::lane_group;
    const int group = mpix::choose_lane_group(facts_of(ranks, ppn, 0), torus);
    return mpix::price_carrying_again(uniform ? mpix::kAlltoall : mpix::kAlltoallv, context, group);
  };
  for (bool uniform : {true, false}) {
    INFO((uniform ? "alltoall" : "alltoallv"));
    const mpix::CarryAgain lanes = price(256, 4, uniform, false);
    CHECK(lanes.pays);
    CHECK(lanes.carried <= 0.9 * lanes.plan_start);
    const mpix::CarryAgain grouped = price(256, 4, uniform);
    CHECK_FALSE(grouped.pays);
    REQUIRE(grouped.plan.algorithm);
    CHECK(grouped.plan.algorithm->name == std::string("tuna_hier_coalesced"));
    CHECK(grouped.plan.params.lane_group > 1);
    const mpix::CarryAgain tie = price(256, 32, uniform);
    CHECK_FALSE(tie.pays);
    REQUIRE(tie.plan.algorithm);
    // The start is the plan's exchange without its metadata rounds.
    CHECK(tie.plan_start <= tie.plan.seconds);
    CHECK(tie.plan_start == Approx(mpix::predict_seconds(tie.plan.cost, torus, true)));
    CHECK_FALSE(price(64, 1, uniform).pays);
  }
}

// A record on the wire of the carried agreement (agreement.hpp, pack_record):
// every field's value comes back, the extremes of either sign included; a node's
// record of 16-byte blocks at P = 256 packs into about kPackedRecordBytes, what
// the model charges; bytes that do not hold a record read as none.
TEST_CASE("a packed record: every value back, short, malformed bytes refused", "[model]") {
  auto round_trip = [](const long long* record) {
    char packed[mpix::kPackedRecordMaxBytes + 1];
    const std::size_t bytes = mpix::pack_record(record, packed);
    REQUIRE(bytes <= mpix::kPackedRecordMaxBytes);
    long long back[mpix::kRecordFields];
    REQUIRE(mpix::unpack_record(packed, bytes, back) == bytes);
    for (int f = 0; f < mpix::kRecordFields; ++f) CHECK(back[f] == record[f]);
    for (std::size_t shorter = 0; shorter < bytes; ++shorter) CHECK(mpix::unpack_record(packed, shorter, back) == 0);
    return bytes;
  };
  const long long edges[] = {0, 1, -1, 127, 128, -128, 255, 256, 65535, 1LL << 40, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1};
  for (long long a : edges)
    for (long long b : edges) {
      long long record[mpix::kRecordFields];
      for (int f = 0; f < mpix::kRecordFields; ++f) record[f] = f % 2 ? a : b;
      round_trip(record);
    }
  unsigned long long state = 1;
  for (int trial = 0; trial < 1000; ++trial) {
    long long record[mpix::kRecordFields];
    for (int f = 0; f < mpix::kRecordFields; ++f) {
      state = mpix::pair_weight((int)state, trial);
      record[f] = (long long)(state >> (state % 64));
    }
    round_trip(record);
  }

  // A node of 32 ranks of P = 256 (8 x 32), blocks uniform in [0, 16].
  long long node_record[mpix::kRecordFields];
  for (int local = 0; local < 32; ++local) {
    mpix::Agreement mine;
    mine.hints_hash = (long long)(1469598103934665603ull >> 2);  // hints_hash without parameters
    mine.facts.max_block = 16;
    mine.facts.min_block = 0;
    mine.facts.total_bytes = mine.facts.max_rank_send = mine.facts.max_rank_recv = 255 * 8;
    mine.facts.nonempty_blocks = mine.facts.max_rank_messages = 240;
    mine.facts.intra_node_bytes = 31 * 8;
    mine.sent_checksum = mpix::pair_weight(local, 1);
    mine.expected_checksum = mpix::pair_weight(1, local);
    long long record[mpix::kRecordFields];
    mpix::encode_carried_record(mine, true, local, 256, record);
    if (local == 0)
      std::copy(record, record + mpix::kRecordFields, node_record);
    else
      mpix::combine_records(record, node_record);
  }
  const std::size_t typical = round_trip(node_record);
  CHECK(typical <= mpix::kPackedRecordBytes);
  CHECK(typical >= mpix::kPackedRecordBytes - 8);

  // Half-bytes that claim more than 8 bytes, or a field beyond the last.
  char packed[mpix::kPackedRecordMaxBytes] = {};
  long long back[mpix::kRecordFields];
  CHECK(mpix::unpack_record(packed, sizeof packed, back) == (mpix::kRecordFields + 1) / 2);
  packed[3] = (char)0x90;
  CHECK(mpix::unpack_record(packed, sizeof packed, back) == 0);
  packed[3] = 0;
  // The last half-byte: a field beyond the last where their number is odd, else
  // the last field's, claiming 9 bytes.
  packed[(mpix::kRecordFields + 1) / 2 - 1] = (char)(mpix::kRecordFields % 2 ? 0x10 : 0x90);
  CHECK(mpix::unpack_record(packed, sizeof packed, back) == 0);
}

// The dissemination of a blocking call's agreement (carried_agreement.hpp), run
// for P ranks in one process: every rank's sums count every rank once (a plain
// dissemination counts some twice where P is not a power of two), its maxima and
// minima are those of all ranks, and each round's message holds the records the
// receiver expects.
// The one sum that stands for the algorithm, the hash and the checksums
// (encode_carried_record) is 0 where they agree, and not where one rank's differ.
TEST_CASE("the dissemination agreement sums every rank once", "[model]") {
  enum Differs { kNothing, kAlgorithm, kHash, kCounts, kVariants };
  for (int ranks = 1; ranks <= 70; ++ranks)
    for (int differs = kNothing; differs < kVariants; ++differs) {
      if (ranks == 1 && differs != kNothing) continue;
      INFO("P=" << ranks << " differs=" << differs);
      std::vector<mpix::Dissemination> disseminations;
      const int odd_rank = (ranks * 7 + differs) % ranks;
      for (int rank = 0; rank < ranks; ++rank) {
        mpix::Agreement mine;
        mine.facts.total_bytes = 1LL << (rank % 40);
        mine.facts.nonempty_blocks = 1;
        mine.facts.max_block = mine.facts.min_block = rank;
        mine.algorithm = 3;
        mine.hints_hash = 0x5bd1e9955bd1e995LL;
        mine.sent_checksum = 3ull * (unsigned long long)rank;
        mine.expected_checksum = 3ull * (unsigned long long)(ranks - 1 - rank);
        if (rank == odd_rank) {
          if (differs == kAlgorithm) mine.algorithm = -1;
          if (differs == kHash) mine.hints_hash ^= 1LL << 40;
          if (differs == kCounts) mine.sent_checksum += 3ull * mpix::pair_weight(rank, (rank + 1) % ranks);
        }
        long long record[mpix::kRecordFields];
        mpix::encode_carried_record(mine, true, rank, ranks, record);
        disseminations.emplace_back(ranks, record);
      }
      for (int distance = 1; distance < ranks; distance <<= 1) {
        std::vector<std::vector<long long>> messages(ranks, std::vector<long long>(2 * mpix::kRecordFields));
        for (int rank = 0; rank < ranks; ++rank) {
          const int to = (rank + distance) % ranks;
          CHECK(disseminations[rank].send(distance, messages[to].data()) == disseminations[to].receives(distance));
        }
        for (int rank = 0; rank < ranks; ++rank) disseminations[rank].arrived(distance, messages[rank].data());
      }
      long long total = 0;
      for (int rank = 0; rank < ranks; ++rank) total += 1LL << (rank % 40);
      for (int rank = 0; rank < ranks; ++rank) {
        mpix::Agreement all;
        mpix::decode_carried_record(disseminations[rank].result(), mpix::Agreement{}, &all);
        CHECK(all.facts.total_bytes == total);
        CHECK(all.facts.nonempty_blocks == ranks);
        CHECK(all.facts.max_block == ranks - 1);
        CHECK(all.facts.min_block == 0);
        CHECK(all.inconsistent == (differs != kNothing));
        CHECK(all.carried);
      }
    }
}

namespace {

struct Totals {
  long long messages = 0, bytes = 0, metadata_messages = 0, metadata_bytes = 0;
  int max_rounds = 0;
};

// Plans `algorithm` with `keys` on `comm`, starts it once, and sums its counters
// over the ranks; `request_out` keeps the request for the facts and parameters.
bool run_plan(MPIX_Comm* comm, bool alltoall, Distribution dist, long long bytes, const std::string& algorithm,
              const std::vector<std::pair<const char*, std::string>>& keys, Totals* totals,
              mpix::ExchangeFacts* facts, mpix::Params* params) {
  const int size = harness::world_size(), rank = harness::world_rank();
  std::vector<int> scounts(size), rcounts(size), sdispls(size), rdispls(size);
  int stotal = 0, rtotal = 0;
  for (int peer = 0; peer < size; ++peer) {
    scounts[peer] = (int)mpix::workload::block_bytes(dist, bytes, rank, peer, size, 7);
    rcounts[peer] = (int)mpix::workload::block_bytes(dist, bytes, peer, rank, size, 7);
    sdispls[peer] = stotal;
    rdispls[peer] = rtotal;
    stotal += scounts[peer];
    rtotal += rcounts[peer];
  }
  std::vector<char> send(stotal + 1, 1), recv(rtotal + 1);
  harness::Info info{{alltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm", algorithm}};
  for (const auto& k : keys) info.set(k.first, k.second);
  MPIX_Request* request = nullptr;
  int rc = alltoall ? MPIX_Alltoall_plan(send.data(), (int)bytes, MPI_BYTE, recv.data(), (int)bytes, MPI_BYTE,
                                         info.info, comm, &request)
                    : MPIX_Alltoallv_plan(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, recv.data(),
                                          rcounts.data(), rdispls.data(), MPI_BYTE, info.info, comm, &request);
  if (!harness::all_ranks(rc == MPIX_SUCCESS)) return false;
  MPIX_Start(request);
  MPIX_Wait(request, MPI_STATUS_IGNORE);
  const mpix::PlanStats& s = request->plan->stats;
  const mpix::PlanStats& init = request->plan->init_stats;
  long long mine[4] = {s.messages, s.payload_bytes, init.metadata_messages, init.metadata_bytes}, sum[4];
  MPI_Allreduce(mine, sum, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&s.rounds, &totals->max_rounds, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  *totals = Totals{sum[0], sum[1], sum[2], sum[3], totals->max_rounds};
  *facts = request->facts;
  *params = request->param_values;
  MPIX_Request_free(&request);
  return true;
}

}  // namespace

TEST_CASE("cost models count what their plans do", "[model][counts]") {
  harness::Comm guard;
  const int size = harness::world_size();
  const mpix::MachineProfile profile;
  std::vector<int> layouts = {size};
  for (int ppn : {1, 2, 4}) if (ppn < size && size % ppn == 0) layouts.push_back(ppn);
  for (int ppn : layouts) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    for (const mpix::Algorithm& algorithm : mpix::algorithms()) {
      if (!algorithm.cost) continue;
      // Each parameter at a few values of its range; a radix also above sqrt(P).
      std::vector<std::vector<std::pair<const char*, std::string>>> sweeps = {{}};
      // ipc_hybrid copies the blocks of a node from its threshold up: all of them.
      if (algorithm.needs & mpix::kNeedsDirectCopy) sweeps.push_back({{"mpix_ipc_threshold", "1"}});
      for (mpix::Param param : algorithm.params) {
        if (param == mpix::Param::seed) continue;
        std::vector<long long> range = mpix::parameter_range(param, size);
        for (std::size_t i = 0; i < range.size(); i += 3) {
          long long value = range[i];
          if (param == mpix::Param::radix && value > (std::string(algorithm.name).rfind("tuna_hier", 0) == 0 ? ppn : size)) continue;
          if (param == mpix::Param::segment_bytes && value > 4096) continue;
          sweeps.push_back({{mpix::param_key(param), value == INT_MAX ? "unlimited" : std::to_string(value)}});
        }
      }
      // Exact for constant blocks everywhere; for the linear exchanges (whose
      // counts depend only on the totals) for every distribution.
      const bool linear = std::string(algorithm.name).find("tuna") == std::string::npos &&
                          std::string(algorithm.name) != "bruck" && std::string(algorithm.name) != "node_aware" &&
                          std::string(algorithm.name) != "random_segmented";
      std::vector<Distribution> dists = {Distribution::constant};
      if (linear) dists = {Distribution::constant, Distribution::uniform, Distribution::powerlaw, Distribution::fft_n1};
      for (bool alltoall : {true, false}) {
        if (!(algorithm.ops & (alltoall ? mpix::kAlltoall : mpix::kAlltoallv))) continue;
        for (Distribution dist : alltoall ? std::vector<Distribution>{Distribution::constant} : dists) {
          for (long long bytes : {8LL, 3000LL}) {
            for (const auto& keys : sweeps) {
              Totals totals;
              mpix::ExchangeFacts facts;
              mpix::Params params;
              std::string label = std::string(algorithm.name) + (alltoall ? " alltoall " : " alltoallv ") +
                                  mpix::workload::distribution_name(dist) + " S=" + std::to_string(bytes) +
                                  " ppn=" + std::to_string(ppn) + (keys.empty() ? "" : " " + std::string(keys[0].first) + "=" + keys[0].second);
              INFO(label);
              // Which blocks reach ipc_hybrid's threshold, the facts know for constant ones only.
              if (!keys.empty() && keys[0].first == std::string("mpix_ipc_threshold") &&
                  dist != Distribution::constant)
                continue;
              REQUIRE(run_plan(guard.comm, alltoall, dist, bytes, algorithm.name, keys, &totals, &facts, &params));
              mpix::Cost cost = algorithm.cost(facts, params, profile);
              REQUIRE(cost.valid);
              CHECK(std::llround(cost.messages() * size) == totals.messages);
              CHECK(std::llround(cost.bytes() * size) == totals.bytes);
              CHECK(std::llround(cost.init_messages() * size) == totals.metadata_messages);
              CHECK(std::llround(cost.init_bytes() * size) == totals.metadata_bytes);
              // Rounds: the sliding windows count completions, not rounds.
              if (dist == Distribution::constant && algorithm.name != std::string("multipair_waitany") &&
                  algorithm.name != std::string("multipair_testany"))
                CHECK(std::llround(cost.round_count()) == totals.max_rounds);
            }
          }
        }
      }
    }
  }
  REQUIRE(MPIX_Comm_update_locality(guard.comm, 0) == MPIX_SUCCESS);
}

TEST_CASE("auto decides the same on every rank and says why under MPIX_VERBOSE", "[model][auto]") {
  harness::Comm guard;
  for (long long bytes : {16LL, 4096LL, 100000LL}) {
    Totals totals;
    mpix::ExchangeFacts facts;
    mpix::Params params;
    // Different block sizes on every rank: the decision still agrees (the plan would
    // hang or fail otherwise), and the facts are the agreed ones.
    REQUIRE(run_plan(guard.comm, false, Distribution::uniform, bytes, "auto", {}, &totals, &facts, &params));
    long long mine[2] = {facts.total_bytes, facts.max_block}, low[2], high[2];
    MPI_Allreduce(mine, low, 2, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(mine, high, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK(low[0] == high[0]);
    CHECK(low[1] == high[1]);
  }
}

TEST_CASE("auto chooses ipc_hybrid for large blocks of one node where CMA works, and the data arrive",
          "[model][auto][ipc]") {
  harness::Comm guard;
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  // One emulated node for every rank: all blocks are intra-node.
  REQUIRE(MPIX_Comm_update_locality(guard.comm, size) == MPIX_SUCCESS);
  for (long long bytes : {16LL, 4LL << 20}) {
    std::vector<int> counts(size, (int)bytes), displs(size);
    for (int peer = 0; peer < size; ++peer) displs[peer] = peer * (int)bytes;
    std::vector<char> send((std::size_t)bytes * size), recv((std::size_t)bytes * size, 0);
    for (int peer = 0; peer < size; ++peer)
      for (long long i = 0; i < bytes; i += 4096) send[(std::size_t)(peer * bytes + i)] = (char)(rank * 31 + peer);
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoallv_plan(send.data(), counts.data(), displs.data(), MPI_BYTE, recv.data(), counts.data(),
                                displs.data(), MPI_BYTE, nullptr, guard.comm, &request) == MPIX_SUCCESS);
    const bool cma = guard.comm->direct_copy.ready() && guard.comm->direct_copy.cma();
    INFO("S=" << bytes << " chose " << request->algorithm << (cma ? " (CMA works)" : " (no CMA)"));
    // Large blocks: the probe ran, and with CMA the copy beats two-copy messages.
    if (bytes > 8192) CHECK(guard.comm->direct_copy.ready());
    CHECK((std::string(request->algorithm) == "ipc_hybrid") == (bytes > 8192 && cma));
    REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
    REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
    int wrong = 0;
    for (int peer = 0; peer < size; ++peer)
      for (long long i = 0; i < bytes; i += 4096)
        wrong += recv[(std::size_t)(peer * bytes + i)] != (char)(peer * 31 + rank);
    CHECK(wrong == 0);
    MPIX_Request_free(&request);
  }
}

