// Replays TuNA's schedule (src/alltoallv/bruck.cpp tuna_schedule()) for one rank
// count and radix by moving every block of every rank: each block leaves from
// where the schedule says it is (the send buffer or its slot of T), arrives into a
// slot that is free at that moment (free before the round, or vacated by a send of
// an earlier part of the same round), no slot index reaches past T (B = Q - (K + 1)
// slots; with one part per round, tuna_one_part_slots, never more than the paper's
// code holds: B and two of the largest round, r^(w-1) blocks each), and at the end
// every block has been delivered exactly once, to its destination. Aborts with a
// message otherwise. Used by the fuzz targets fuzz_schedule and fuzz_hier_schedule,
// for both schedules and for one message per round under an eager limit.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "alltoallv/bruck.hpp"

namespace tuna_replay {

#define TUNA_CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "tuna_replay: P=%d radix=%d: check failed: %s\n", p, radix, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

inline void replay_one(int p, int radix, bool one_part, int eager_blocks = INT32_MAX) {
  const mpix::TunaSchedule schedule = mpix::tuna_schedule(p, radix, one_part, eager_blocks);
  const int slots = schedule.slots;
  if (one_part) {
    long long largest_round = 1;
    while (largest_round * radix < p) largest_round *= radix;
    TUNA_CHECK(slots >= mpix::tuna_temp_blocks(p, radix));
    TUNA_CHECK(p <= 1 || slots <= mpix::tuna_temp_blocks(p, radix) + 2 * largest_round);
    // In parts only past the eager limit, and each part below it.
    for (const auto& round : schedule.rounds) {
      if (round.parts == 1) continue;
      TUNA_CHECK((long long)round.hops.size() > eager_blocks);
      std::vector<int> part_blocks(round.parts, 0);
      for (const auto& hop : round.hops) ++part_blocks[hop.part];
      TUNA_CHECK(*std::max_element(part_blocks.begin(), part_blocks.end()) <= eager_blocks);
    }
  } else {
    TUNA_CHECK(slots == mpix::tuna_temp_blocks(p, radix));
  }
  TUNA_CHECK((int)schedule.rounds.size() == (p <= 1 ? 0 : mpix::bruck_rounds(p, radix)));
  // The schedule is the same at every rank (indices are relative), so where index i
  // is (kSendBuffer, a slot, or kDelivered) is one table; which origin's block it
  // holds is per rank.
  constexpr int kSendBuffer = -1, kDelivered = -2;
  std::vector<int> where(std::max(p, 1), kSendBuffer), owner(std::max(slots, 1), -1);
  // origin[i][me]: whose block index i of rank me holds; at first its own (for me + i).
  std::vector<std::vector<int>> origin(p, std::vector<int>(p));
  for (int i = 0; i < p; ++i)
    for (int me = 0; me < p; ++me) origin[i][me] = me;
  std::vector<int> delivered((std::size_t)p * p, 0);
  for (const auto& round : schedule.rounds) {
    TUNA_CHECK(round.distance >= 1 && round.distance < p && round.parts >= 1);
    std::vector<int> vacated_in_part(owner.size(), INT32_MAX);
    int last_part = 0;
    for (const auto& hop : round.hops) {
      TUNA_CHECK(hop.index >= 1 && hop.index < p);
      TUNA_CHECK(hop.part >= last_part && hop.part < round.parts);  // posted by part
      last_part = hop.part;
      TUNA_CHECK(hop.from_slot == where[hop.index]);  // leaves from where it is
      TUNA_CHECK(hop.from_slot >= kSendBuffer && hop.from_slot < slots);
      TUNA_CHECK(hop.to_slot >= -1 && hop.to_slot < slots);  // T never overflows
      if (hop.from_slot >= 0) {
        TUNA_CHECK(owner[hop.from_slot] == hop.index);
        vacated_in_part[hop.from_slot] = std::min(vacated_in_part[hop.from_slot], hop.part);
      }
    }
    for (const auto& hop : round.hops) {
      if (hop.to_slot < 0) continue;
      const bool free_before = owner[hop.to_slot] < 0;
      TUNA_CHECK(free_before || vacated_in_part[hop.to_slot] < hop.part);
    }
    for (const auto& hop : round.hops)
      if (hop.from_slot >= 0) owner[hop.from_slot] = -1;
    // Move the data: index i of rank me goes to index i of rank me + distance.
    for (const auto& hop : round.hops) {
      std::vector<int>& column = origin[hop.index];
      std::rotate(column.begin(), column.end() - round.distance, column.end());
    }
    for (const auto& hop : round.hops) {
      if (hop.to_slot >= 0) {
        TUNA_CHECK(owner[hop.to_slot] < 0);  // two blocks in one slot
        owner[hop.to_slot] = hop.index;
        where[hop.index] = hop.to_slot;
        continue;
      }
      TUNA_CHECK(where[hop.index] != kDelivered);
      where[hop.index] = kDelivered;
      for (int me = 0; me < p; ++me) {
        const int from = origin[hop.index][me];
        TUNA_CHECK((from + hop.index) % p == me);  // arrived at its destination
        ++delivered[(std::size_t)from * p + me];
      }
    }
  }
  for (int i = 1; i < p; ++i) TUNA_CHECK(where[i] == kDelivered);
  for (int from = 0; from < p; ++from)
    for (int to = 0; to < p; ++to) TUNA_CHECK(delivered[(std::size_t)from * p + to] == (from == to ? 0 : 1));
}

// Both schedules, and one message per round under eager limits that split some
// rounds of r < sqrt(P) (tuna_rounds).
inline void replay(int p, int radix) {
  replay_one(p, radix, false);
  replay_one(p, radix, true);
  for (int eager_blocks : {p / radix * 3 / 4, p / (2 * radix)}) replay_one(p, radix, true, eager_blocks);
}

}  // namespace tuna_replay
