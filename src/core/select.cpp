#include "select.hpp"

#include "error.hpp"

namespace mpix {

// Paper 002's size-based rule (section 2): below 512 bytes per block randomizing
// does not pay and the MPI library's own algorithm (Bruck for small alltoall in
// MPICH and Open MPI) is kept; up to 16 KiB randomized scatter on few ranks and
// randomized sendrecv with a request queue on many; above that the segmented
// sendrecv. The cost model of the selection issue replaces this rule.
std::vector<const Algorithm*> auto_candidates(Op op) {
  std::vector<const Algorithm*> list;
  for (const char* name : {"pmpi", "random_scatter", "random_sendrecv", "random_segmented"})
    list.push_back(find_algorithm(name, op));
  return list;
}

const Algorithm* select_dense(Op op, const PlanContext& context, std::string* reason) {
  const long long bytes = context.exchange.max_block_bytes;
  const int size = context.exchange.size;
  const char* name = nullptr;
  if (size == 1 || bytes < 512) {
    name = "pmpi";
    *reason = format("largest block %lld B < 512 B: small blocks stay with MPI (paper 002)", bytes);
  } else if (bytes <= 16384) {
    name = size <= 64 ? "random_scatter" : "random_sendrecv";
    *reason = format("largest block %lld B in 512 B..16 KiB, P=%d %s 64 (paper 002)", bytes, size,
                     size <= 64 ? "<=" : ">");
  } else {
    name = "random_segmented";
    *reason = format("largest block %lld B > 16 KiB (paper 002)", bytes);
  }
  return find_algorithm(name, op);
}

}  // namespace mpix
