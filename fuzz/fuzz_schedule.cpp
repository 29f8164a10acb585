// libFuzzer target: TuNA's schedule (src/alltoallv/bruck.cpp tuna_schedule()) as a
// pure function, for any rank count, radix and node shape. The flat exchange runs
// it over P ranks; the hierarchical ones over each node's ranks with the radix of
// the largest node (so often radix > Q on a smaller last node). tuna_replay.hpp
// replays it block by block.
//
// Input: two bytes of P (1..300), one of radix, then node sizes (one byte each,
// 1..32, up to 16 nodes).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tuna_replay.hpp"

using tuna_replay::replay;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const int p_flat = 1 + (int)((data[0] | data[1] << 8) % 300);
  // Radix 2..P+1 (above P: the plans clamp nothing; the schedule must still hold).
  replay(p_flat, 2 + data[2] % (p_flat + 1));
  // Hierarchical: each node runs TuNA over its ranks with the largest node's radix.
  std::vector<int> nodes;
  for (std::size_t k = 3; k < size && nodes.size() < 16; ++k) nodes.push_back(1 + data[k] % 32);
  if (nodes.empty()) return 0;
  const int q_max = *std::max_element(nodes.begin(), nodes.end());
  const int node_radix = 2 + data[2] % std::max(1, q_max - 1);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  for (int q : nodes) replay(q, node_radix);
  return 0;
}
