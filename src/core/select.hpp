// The `auto` choice for dense exchanges.
#pragma once
#include <string>
#include <vector>

#include "registry.hpp"

namespace mpix {

// The algorithms select_dense may return for `op`: their parameters are resolved
// (and checked) before the choice, so that a bad hint fails on every rank alike.
std::vector<const Algorithm*> auto_candidates(Op op);

// Chooses an algorithm for `op` from what all ranks agree on (size, nodes, the
// largest block); `reason` says why, for MPIX_VERBOSE.
const Algorithm* select_dense(Op op, const PlanContext& context, std::string* reason);

}  // namespace mpix
