// libFuzzer target: the routing of hierarchical TuNA (src/alltoallv/hierarchical.cpp
// hier_route(), the function the plans build their messages from) for any rank
// count, node shape (equal nodes, a smaller last node, any sizes, ranks scattered
// over nodes), radix, variant (staggered, coalesced) and mpix_block_count; and
// node_aware's aggregation (node_aware.cpp aggregation_route()): every source is
// gathered once on every node, by the rank it sends to.
//
// Every rank's route is computed and the exchange simulated block by block, with
// block sizes drawn from the input (zeros included; sender and receiver agree, as in
// a valid call):
// - the destinations routed through a node's local ranks are every rank once, and
//   all ranks of a node see the same routing;
// - intra-node phase: the TuNA schedule over the node's ranks with that radix holds
//   (tuna_replay.hpp); each piece lands in its final place or in X, inside the
//   x_bytes the plan allocates, no two pieces overlapping;
// - inter-node phase: messages between two ranks are matched in posting order (by
//   batch of block_count positions, receives before sends in a batch, as the plan
//   posts them; empty pieces and empty messages left out on both sides, as
//   PieceMessage does): both sides agree on the position, the pieces and their
//   sizes; a sent piece leaves from where the intra-node phase put that block;
// - at the end every block is delivered to its destination exactly once, and every
//   piece of X is sent on exactly once.
//
// Input: two bytes of P (1..128), one of node shape, one of ppn, one of radix, one
// of variant and block_count, then the seed of sizes and shapes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "alltoallv/hierarchical.hpp"
#include "tuna_replay.hpp"

namespace {

int g_p = 0, g_shape = 0;
bool g_coalesced = false;
long long g_batch = 0;

#define CHECK(cond)                                                                                        \
  do {                                                                                                     \
    if (!(cond)) {                                                                                         \
      std::fprintf(stderr, "fuzz_hier_schedule: P=%d shape=%d %s block_count=%lld: check failed: %s\n", g_p, \
                   g_shape, g_coalesced ? "coalesced" : "staggered", g_batch, #cond);                      \
      std::abort();                                                                                        \
    }                                                                                                      \
  } while (0)

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Where a block is between the phases.
struct Place {
  enum Kind { kNowhere, kSendBuffer, kX, kDelivered } kind = kNowhere;
  int rank = -1;
  long long offset = 0;
};

struct Physical {  // a non-empty piece of a message as MPI sees it
  int origin, dest;
  long long bytes;
  bool operator==(const Physical& o) const { return origin == o.origin && dest == o.dest && bytes == o.bytes; }
};
struct Posted {
  long long position;
  std::vector<Physical> pieces;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  const int p = g_p = 1 + (int)((data[0] | data[1] << 8) % 128);
  std::uint64_t seed = 0;
  for (std::size_t k = 6; k < size && k < 14; ++k) seed = seed << 8 | data[k];
  g_shape = data[2] % 3;
  g_coalesced = data[5] & 1;
  g_batch = (data[5] >> 1) == 0 ? (long long)INT32_MAX : (long long)(data[5] >> 1);

  // Node shape: blocks of ppn consecutive ranks (the last node smaller); node sizes
  // from the input; or blocks of ppn over a shuffled rank order (detected nodes need
  // not hold consecutive ranks).
  std::vector<int> order(p);
  std::iota(order.begin(), order.end(), 0);
  if (g_shape == 2)
    for (int i = p - 1; i > 0; --i) std::swap(order[i], order[(int)(mix(seed + (std::uint64_t)i) % (std::uint64_t)(i + 1))]);
  mpix::NodeLayout layout;
  for (int r = 0, k = 0; r < p; ++k) {
    int q = 1 + data[3] % p;
    if (g_shape == 1) q = 1 + (int)(mix(seed ^ (0x5151ull + (std::uint64_t)k)) % 16);
    layout.emplace_back();
    for (int i = 0; i < q && r < p; ++i) layout.back().push_back(order[r++]);
  }
  const int nodes = (int)layout.size();
  int q_max = 0;
  for (const auto& ranks : layout) q_max = std::max(q_max, (int)ranks.size());
  std::vector<int> node_of(p), local_of(p);
  for (int n = 0; n < nodes; ++n)
    for (int l = 0; l < (int)layout[n].size(); ++l) node_of[layout[n][l]] = n, local_of[layout[n][l]] = l;

  // Intra-node TuNA: the radix the plan accepts (2..max(2, Q_max)) over every node.
  const int radix = 2 + data[4] % std::max(1, q_max - 1);
  {
    std::vector<int> sizes;
    for (const auto& ranks : layout) sizes.push_back((int)ranks.size());
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    for (int q : sizes) tuna_replay::replay(q, radix);
  }

  auto bytes = [seed](int from, int to) -> long long {
    const std::uint64_t h = mix(seed * 1000003ull + (std::uint64_t)from * 65599ull + (std::uint64_t)to);
    return h % 4 == 0 ? 0 : (long long)(1 + (h >> 8) % 100);
  };

  std::vector<mpix::HierRoute> routes;
  for (int r = 0; r < p; ++r) {
    routes.push_back(mpix::hier_route(layout, r, g_coalesced));
    const mpix::HierRoute& route = routes.back();
    CHECK(route.me == r && route.node == node_of[r] && route.local == local_of[r]);
    CHECK(route.q == (int)layout[node_of[r]].size() && route.q_max == q_max);
    CHECK((int)route.routed.size() == route.q);
    CHECK(route.positions == (g_coalesced ? (long long)(nodes - 1) : (long long)(nodes - 1) * q_max));
  }
  for (int r = 0; r < p; ++r)  // the same routing on every rank of a node (the TuNA core's piece counts)
    CHECK(routes[r].routed == routes[layout[node_of[r]][0]].routed);
  for (int n = 0; n < nodes; ++n) {
    std::vector<int> seen(p, 0);
    for (const auto& through : routes[layout[n][0]].routed)
      for (int d : through) {
        CHECK(d >= 0 && d < p);
        ++seen[d];
      }
    for (int d = 0; d < p; ++d) CHECK(seen[d] == 1);
  }

  // node_aware's aggregation (aggregation_route): each rank sends what it has for
  // another node to one rank there, which lists it among the sources it gathers,
  // and every rank of a node is gathered by the local rank it is (its own node) or
  // by the one that serves it (other nodes): the holders of a node are all ranks once.
  {
    std::vector<mpix::AggregationRoute> aggregation;
    for (int r = 0; r < p; ++r) aggregation.push_back(mpix::aggregation_route(layout, r));
    for (int r = 0; r < p; ++r) {
      const mpix::AggregationRoute& route = aggregation[r];
      CHECK((int)route.aggregator.size() == nodes && route.holders.size() == layout[node_of[r]].size());
      CHECK(route.holders == aggregation[layout[node_of[r]][0]].holders);
      std::vector<int> seen(p, 0);
      for (const std::vector<int>& sources : route.holders)
        for (int s : sources) {
          CHECK(s >= 0 && s < p);
          ++seen[s];
        }
      for (int s = 0; s < p; ++s) CHECK(seen[s] == 1);
      CHECK(std::find(route.holders[local_of[r]].begin(), route.holders[local_of[r]].end(), r) !=
            route.holders[local_of[r]].end());
      for (int m = 0; m < nodes; ++m) {
        const int a = route.aggregator[m];
        if (m == node_of[r]) {
          CHECK(a == -1);
          continue;
        }
        CHECK(a >= 0 && a < p && node_of[a] == m);
        const std::vector<int>& gathered = aggregation[a].holders[local_of[a]];
        CHECK(std::count(gathered.begin(), gathered.end(), r) == 1);
      }
    }
  }

  // Intra-node phase. place[o][d]: where block o -> d is afterwards.
  std::vector<std::vector<Place>> place(p, std::vector<Place>(p));
  std::vector<int> received(p * (std::size_t)p, 0);  // logical receipts of o -> d
  for (int t_rank = 0; t_rank < p; ++t_rank) {
    mpix::HierRoute& route = routes[t_rank];
    const std::vector<int>& members = layout[route.node];
    const std::vector<int>& mine = route.routed[route.local];
    route.layout_x([&](int o, int k) { return bytes(members[o], mine[k]); });
    CHECK((int)route.x_offset.size() == route.q);
    std::vector<std::pair<long long, long long>> used;  // offset, bytes
    for (int o = 0; o < route.q; ++o) {
      CHECK(route.x_offset[o].size() == mine.size());
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const int origin = members[o], d = mine[k];
        if (origin == d) continue;  // the own block: copied by the plan
        Place& at = place[origin][d];
        CHECK(at.kind == Place::kNowhere);
        if (o == route.local) {
          at = Place{Place::kSendBuffer, origin, 0};
        } else if (d == t_rank) {
          at = Place{Place::kDelivered, d, 0};
          ++received[(std::size_t)origin * p + d];
        } else {
          const long long offset = route.x_offset[o][k], length = bytes(origin, d);
          CHECK(offset >= 0 && offset + length <= route.x_bytes);  // X never overflows
          if (length > 0) used.emplace_back(offset, length);
          at = Place{Place::kX, t_rank, offset};
        }
      }
    }
    std::sort(used.begin(), used.end());
    for (std::size_t i = 1; i < used.size(); ++i) CHECK(used[i - 1].first + used[i - 1].second <= used[i].first);
  }
  for (int o = 0; o < p; ++o)
    for (int d = 0; d < p; ++d) CHECK((o == d) == (place[o][d].kind == Place::kNowhere));

  // Inter-node phase: what each rank posts to / from each peer, in posting order.
  std::vector<std::vector<Posted>> sends(p * (std::size_t)p), recvs(p * (std::size_t)p);  // [from * P + to]
  std::vector<int> x_sent(p * (std::size_t)p, 0);  // times block o -> d was sent on from X
  for (int a = 0; a < p; ++a) {
    const mpix::HierRoute& route = routes[a];
    const std::vector<int>& members = layout[route.node];
    std::vector<std::tuple<long long, int, int>> order_of;  // batch, sends after receives, index
    for (int i = 0; i < (int)route.inter.size(); ++i) {
      const mpix::HierMessage& m = route.inter[i];
      CHECK(m.position >= 0 && m.position < route.positions);
      CHECK(m.peer >= 0 && m.peer < p && node_of[m.peer] != route.node);
      order_of.emplace_back(m.position / g_batch, m.send ? 1 : 0, i);
    }
    std::sort(order_of.begin(), order_of.end());
    for (const auto& [batch, is_send, i] : order_of) {
      const mpix::HierMessage& m = route.inter[i];
      Posted posted{m.position, {}};
      for (const mpix::HierBlock& b : m.blocks) {
        CHECK(b.origin >= 0 && b.origin < p && b.dest >= 0 && b.dest < p && b.origin != b.dest);
        if (m.send) {
          CHECK(b.dest == m.peer);
          CHECK(node_of[b.origin] == route.node && b.origin == members[b.origin_local]);
          const Place& at = place[b.origin][b.dest];
          CHECK(at.rank == a);  // leaves from where the intra-node phase put it
          if (b.origin == a) {
            CHECK(at.kind == Place::kSendBuffer);
          } else {
            CHECK(b.k >= 0 && b.k < (int)route.routed[route.local].size() && route.routed[route.local][b.k] == b.dest);
            CHECK(at.kind == Place::kX && at.offset == route.x_offset[b.origin_local][b.k]);
            ++x_sent[(std::size_t)b.origin * p + b.dest];
          }
        } else {
          CHECK(b.dest == a && node_of[b.origin] != route.node);
          // The proxy the receive names holds the block.
          CHECK(place[b.origin][b.dest].rank == m.peer);
          ++received[(std::size_t)b.origin * p + b.dest];
        }
        if (bytes(b.origin, b.dest) > 0) posted.pieces.push_back(Physical{b.origin, b.dest, bytes(b.origin, b.dest)});
      }
      if (posted.pieces.empty()) continue;  // no message is posted
      (m.send ? sends[(std::size_t)a * p + m.peer] : recvs[(std::size_t)m.peer * p + a]).push_back(std::move(posted));
    }
  }
  // MPI matches messages between two ranks on one tag in posting order.
  std::vector<int> delivered(p * (std::size_t)p, 0);
  for (std::size_t pair = 0; pair < sends.size(); ++pair) {
    const std::vector<Posted>& sent = sends[pair];
    const std::vector<Posted>& posted_recvs = recvs[pair];
    CHECK(posted_recvs.size() == sent.size());
    for (std::size_t i = 0; i < sent.size(); ++i) {
      const Posted& send = sent[i];
      const Posted& recv = posted_recvs[i];
      CHECK(send.position == recv.position);  // the same batch for any block_count
      CHECK(send.pieces == recv.pieces);      // each piece lands in its own block
      for (const Physical& piece : recv.pieces) ++delivered[(std::size_t)piece.origin * p + piece.dest];
    }
  }
  for (int o = 0; o < p; ++o)
    for (int d = 0; d < p; ++d) {
      if (o == d) continue;
      CHECK(received[(std::size_t)o * p + d] == 1);  // every block once, logically
      if (bytes(o, d) == 0) continue;
      const int expected = place[o][d].kind == Place::kDelivered ? 0 : 1;
      CHECK(delivered[(std::size_t)o * p + d] == expected);  // and as a message, if it crosses nodes
    }
  // Every piece of X is sent on exactly once.
  for (int o = 0; o < p; ++o)
    for (int d = 0; d < p; ++d) CHECK(x_sent[(std::size_t)o * p + d] == (place[o][d].kind == Place::kX ? 1 : 0));
  return 0;
}
