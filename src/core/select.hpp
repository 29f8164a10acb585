// The `auto` choice for dense exchanges: the registry's cost models minimised over
// the algorithms and over each algorithm's parameter ranges, from facts all ranks
// agree on (model.hpp), so every rank makes the same choice.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "model.hpp"
#include "registry.hpp"

namespace mpix {

struct Prediction {
  const Algorithm* algorithm = nullptr;
  Params params;
  Cost cost;
  double seconds = 0;
};

// The values the model tries for a parameter that the user did not give, for an
// exchange among `ranks` ranks (mpix-tune sweeps the same ranges).
std::vector<long long> parameter_range(Param param, int ranks);

// The prediction of `algorithm` with the parameters in `base` that are given
// (Params::given) and the best values of the others over parameter_range().
// Invalid (Cost::valid false) when no parameter set applies.
Prediction predict_best(const Algorithm& algorithm, const ExchangeFacts& facts, const Params& base,
                        const MachineProfile& profile);

// Every algorithm of `op` with a cost model that `allowed` accepts, each with its
// best parameters, fastest first (ties: registry order, pmpi last).
std::vector<Prediction> rank_algorithms(Op op, const ExchangeFacts& facts, const Params& base,
                                        const MachineProfile& profile,
                                        const std::function<bool(const Algorithm&)>& allowed);

// `auto`: the fastest of rank_algorithms() for the call of `context` (pmpi where
// nothing else applies). `ranked` receives the first three (for MPIX_VERBOSE).
Prediction select_dense(Op op, const PlanContext& context, std::vector<Prediction>* ranked = nullptr);

}  // namespace mpix
