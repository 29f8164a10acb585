// libFuzzer target: TuNA's schedule (src/alltoallv/bruck.cpp tuna_schedule()) as a
// pure function, for any rank count, radix and node shape. The flat exchange runs
// it over P ranks; the hierarchical ones over each node's ranks with the radix of
// the largest node (so often radix > Q on a smaller last node).
//
// The schedule is replayed by moving every block of every rank: each block leaves
// from where the schedule says it is (the send buffer or its slot of T), arrives
// into a slot that is free at that moment (free before the round, or vacated by a
// send of an earlier part of the same round), no slot index reaches past T's
// B = Q - (K + 1) slots, and at the end every block has been delivered exactly
// once, to its destination.
//
// Input: two bytes of P (1..300), one of radix, then node sizes (one byte each,
// 1..32, up to 16 nodes).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "alltoallv/bruck.hpp"

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "fuzz_schedule: P=%d radix=%d: check failed: %s\n", p, radix, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

namespace {

void replay(int p, int radix) {
  const mpix::TunaSchedule schedule = mpix::tuna_schedule(p, radix);
  const int slots = schedule.slots;
  CHECK(slots == mpix::tuna_temp_blocks(p, radix));
  CHECK((int)schedule.rounds.size() == (p <= 1 ? 0 : mpix::bruck_rounds(p, radix)));
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
    CHECK(round.distance >= 1 && round.distance < p && round.parts >= 1);
    std::vector<int> vacated_in_part(owner.size(), INT32_MAX);
    int last_part = 0;
    for (const auto& hop : round.hops) {
      CHECK(hop.index >= 1 && hop.index < p);
      CHECK(hop.part >= last_part && hop.part < round.parts);  // posted by part
      last_part = hop.part;
      CHECK(hop.from_slot == where[hop.index]);  // leaves from where it is
      CHECK(hop.from_slot >= kSendBuffer && hop.from_slot < slots);
      CHECK(hop.to_slot >= -1 && hop.to_slot < slots);  // T never overflows
      if (hop.from_slot >= 0) {
        CHECK(owner[hop.from_slot] == hop.index);
        vacated_in_part[hop.from_slot] = std::min(vacated_in_part[hop.from_slot], hop.part);
      }
    }
    for (const auto& hop : round.hops) {
      if (hop.to_slot < 0) continue;
      const bool free_before = owner[hop.to_slot] < 0;
      CHECK(free_before || vacated_in_part[hop.to_slot] < hop.part);
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
        CHECK(owner[hop.to_slot] < 0);  // two blocks in one slot
        owner[hop.to_slot] = hop.index;
        where[hop.index] = hop.to_slot;
        continue;
      }
      CHECK(where[hop.index] != kDelivered);
      where[hop.index] = kDelivered;
      for (int me = 0; me < p; ++me) {
        const int from = origin[hop.index][me];
        CHECK((from + hop.index) % p == me);  // arrived at its destination
        ++delivered[(std::size_t)from * p + me];
      }
    }
  }
  for (int i = 1; i < p; ++i) CHECK(where[i] == kDelivered);
  for (int from = 0; from < p; ++from)
    for (int to = 0; to < p; ++to) CHECK(delivered[(std::size_t)from * p + to] == (from == to ? 0 : 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const int p_flat = 1 + (int)((data[0] | data[1] << 8) % 300);
  // Radix 2..P+1 (above P: the plans clamp nothing; the schedule must still hold).
  int p = p_flat, radix = 2 + data[2] % (p_flat + 1);
  replay(p, radix);
  // Hierarchical: each node runs TuNA over its ranks with the largest node's radix.
  std::vector<int> nodes;
  for (std::size_t k = 3; k < size && nodes.size() < 16; ++k) nodes.push_back(1 + data[k] % 32);
  if (nodes.empty()) return 0;
  const int q_max = *std::max_element(nodes.begin(), nodes.end());
  const int node_radix = 2 + data[2] % std::max(1, q_max - 1);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  for (int q : nodes) {
    p = q;
    radix = node_radix;
    replay(q, node_radix);
  }
  return 0;
}
