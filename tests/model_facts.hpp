// The facts of a dense exchange of equal blocks (`block` bytes each; `uniform`:
// an alltoall), as the agreement would give them, for the model tests.
#pragma once
#include <algorithm>

#include "core/model.hpp"

namespace model_test {

inline mpix::ExchangeFacts facts_of(int ranks, int ppn, long long block, bool uniform = true) {
  mpix::ExchangeFacts f;
  f.ranks = ranks;
  f.nodes = (ranks + ppn - 1) / ppn;
  f.max_ppn = std::min(ppn, ranks);
  f.min_ppn = ranks - (f.nodes - 1) * ppn;
  f.max_block = f.min_block = block;
  f.total_bytes = block * ranks * (ranks - 1);
  f.max_rank_send = f.max_rank_recv = block * (ranks - 1);
  f.nonempty_blocks = block > 0 ? (long long)ranks * (ranks - 1) : 0;
  f.max_rank_messages = block > 0 ? ranks - 1 : 0;
  f.intra_node_bytes = block * ranks * (f.max_ppn - 1);
  f.uniform = uniform;
  return f;
}

}  // namespace model_test
