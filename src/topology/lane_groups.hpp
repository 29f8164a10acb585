// Lane groups: the local ranks of equal nodes (N nodes of Q ranks) in groups of g
// that share the messages between nodes (docs/algorithms.md, "Lane groups"). The
// groups are formed from local rank 0 on, the last one the rest of the node. Member
// m of a group of s ranks serves the node offsets k = m + 1, m + 1 + s, ... (its
// rows): it sends to node + k, to the rank of its own local rank, one message with
// the node's blocks for the group's ranks there, and receives node - k's for its
// own group. Every node offset is served once per group, so every node's blocks
// reach every group once. g is at most min(Q, N - 1), so that every member has a
// row. The carried agreement (core/carried_lanes.cpp) and the planned
// tuna_hier_coalesced (alltoallv/hierarchical.cpp) run this pattern.
#pragma once
#include <algorithm>

namespace mpix {

struct LaneGroups {
  int nodes, ppn, group;
  LaneGroups(int nodes_, int ppn_, int lane_group)
      : nodes(nodes_), ppn(ppn_), group(std::max(1, std::min({lane_group, ppn_, nodes_ - 1}))) {}
  int first(int local) const { return local / group * group; }
  int size(int local) const { return std::min(group, ppn - first(local)); }
  // The rows of member `member` of a group of `size`, and the node offset of its
  // row `row`.
  int rows(int member, int size) const { return member < nodes - 1 ? (nodes - 2 - member) / size + 1 : 0; }
  int offset(int member, int size, int row) const { return member + 1 + row * size; }
  // The lane messages of the busiest rank: a first member, of a full group or
  // of the last group where that one is smaller (more rows each).
  int most_rows() const { return std::max(rows(0, group), rows(0, ppn - first(ppn - 1))); }
};

}  // namespace mpix
