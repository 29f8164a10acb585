// The routing of hierarchical TuNA (hierarchical.cpp) and of node_aware's
// aggregation (node_aware.cpp) as pure functions of the node layout, so that the
// plans and fuzz/fuzz_hier_schedule.cpp run the same code (the fuzzer without MPI).
#pragma once
#include <functional>
#include <vector>

namespace mpix {

// Ranks of each node in order of local rank (Locality::node_ranks); nodes of any
// sizes, ranks in any order.
using NodeLayout = std::vector<std::vector<int>>;

// With unequal nodes, the local rank of a node of `node_size` ranks that stands in
// for local rank `local` of another node: it sends to and receives from that rank.
inline int serving_local_rank(int local, int node_size) { return local % node_size; }

// A block of the exchange carried by an inter-node message: from rank `origin` (local
// rank `origin_local` on the sending node) to rank `dest`. On the sending side, k is
// dest's index in routed[local] (its place in X); on the receiving side, with lane
// groups, the block's place among the pieces the rank forwards to dest in the
// group's TuNA (row * Q + origin_local, HierRoute::group_sources), else -1.
struct HierBlock {
  int origin = 0, origin_local = 0, dest = 0, k = -1;
};

// One inter-node message of a rank, with the position (round) it is posted in:
// both sides of every message give it the same position, so batches of any
// number of positions line up.
struct HierMessage {
  bool send = false;
  long long position = 0;
  int peer = 0;
  std::vector<HierBlock> blocks;  // in message order; empty blocks are left out when built
};

struct HierRoute {
  int me = 0, node = 0, local = 0, q = 0, q_max = 0;
  // routed[t]: the destinations whose pieces travel through local rank t of this
  // node in the intra-node TuNA, in piece order (every rank once over all t).
  std::vector<std::vector<int>> routed;
  long long positions = 0;  // inter-node positions: N-1 (coalesced) or (N-1) Q_max
  std::vector<HierMessage> inter;  // this rank's sends, then its receives

  // Lane groups (coalesced, equal nodes, lane_group > 1; topology/lane_groups.hpp):
  // the ranks of this rank's group in member order (one: no group phase), this
  // rank's member index, and group_sources[m][j], the rank whose block for a
  // member member m forwards as its j-th piece in the group's TuNA (row * Q +
  // origin_local, every member padded to the first member's rows; -1: padding).
  std::vector<int> group;
  int member = 0;
  std::vector<std::vector<int>> group_sources;

  // X: the pieces from every other local origin o for each destination routed[local][k]
  // that is not this rank, by destination, then by origin, x_offset[o][k] bytes in,
  // x_bytes in all. `arriving(o, k)`: bytes of that piece (the TuNA metadata).
  std::vector<std::vector<long long>> x_offset;
  long long x_bytes = 0;
  void layout_x(const std::function<long long(int, int)>& arriving);
};

// The route of rank `me` (section IV): staggered (Algorithm 2) or coalesced
// (Algorithm 3), the latter in lane groups of `lane_group` local ranks where that
// is above 1 (all nodes of one size: the caller checks).
HierRoute hier_route(const NodeLayout& layout, int me, bool coalesced, int lane_group = 1);

// node_aware's phase 1 for rank `me` (node_aware.cpp): aggregator[m], the rank of
// node m that gets everything this rank has for node m (none for its own node);
// holders[j], the sources whose blocks for this node local rank j gathers (itself,
// and on every other node the ranks whose local rank it serves).
struct AggregationRoute {
  std::vector<int> aggregator;
  std::vector<std::vector<int>> holders;
};
AggregationRoute aggregation_route(const NodeLayout& layout, int me);

}  // namespace mpix
