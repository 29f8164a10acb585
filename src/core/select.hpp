// The `auto` choice for dense exchanges.
#pragma once
#include <string>

#include "registry.hpp"

namespace mpix {

// Chooses an algorithm for `op` from what all ranks agree on (size, nodes, the
// largest block); `reason` says why, for MPIX_VERBOSE.
const Algorithm* select_dense(Op op, const PlanContext& context, std::string* reason);

}  // namespace mpix
