#include "select.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "error.hpp"

namespace mpix {

std::vector<long long> parameter_range(Param param, int ranks) {
  std::vector<long long> values;
  const long long top = std::max(2, ranks);
  switch (param) {
    case Param::radix: {
      // Every small radix (where the rounds change fastest), the powers of two, the
      // square root (TuNA's U-shaped middle, paper 000 section V-A) and P itself.
      for (long long r = 2; r <= std::min(8LL, top); ++r) values.push_back(r);
      for (long long r = 16; r < top; r *= 2) values.push_back(r);
      const long long root = std::llround(std::sqrt((double)ranks));
      for (long long r : {root - 1, root, root + 1, top})
        if (r >= 2 && r <= top) values.push_back(r);
      break;
    }
    case Param::block_count:
      for (long long b = 1; b < top; b *= 2) values.push_back(b);
      values.push_back(INT_MAX);
      break;
    case Param::stride:
      for (long long s = 1; s < top * 2 && s <= 256; s *= 2) values.push_back(s);
      break;
    case Param::max_queue:
      for (long long q = 2; q <= std::max(4LL, 2 * top) && q <= 512; q *= 2) values.push_back(q);
      break;
    case Param::segment_bytes:
      for (long long s = 1024; s <= (4LL << 20); s *= 4) values.push_back(s);
      break;
    case Param::seed:  // changes the order, not the cost
    case Param::ipc_threshold:
    case Param::memcpy_threshold:  // of ipc_hybrid, which auto does not choose
    case Param::locality:          // the user's choice (mpix_locality), not the model's
      break;
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

namespace {

void set_param(Params* params, Param param, long long value) {
  switch (param) {
    case Param::radix:
      params->radix = (int)value;
      params->radix_auto = false;
      break;
    case Param::block_count: params->block_count = (int)value; break;
    case Param::stride: params->stride = (int)value; break;
    case Param::max_queue: params->max_queue = (int)value; break;
    case Param::segment_bytes: params->segment_bytes = value; break;
    case Param::seed:
    case Param::ipc_threshold:
    case Param::memcpy_threshold:
    case Param::locality: break;
  }
}

bool better(const Prediction& a, const Prediction& b) {
  if (!b.algorithm || !b.cost.valid) return a.cost.valid;
  return a.cost.valid && a.seconds < b.seconds * (1 - 1e-9);
}

}  // namespace

Prediction predict_best(const Algorithm& algorithm, const ExchangeFacts& facts, const Params& base,
                        const MachineProfile& profile) {
  // The parameters to choose: those of the algorithm the user left open (a radix
  // is open while it is `auto`).
  std::vector<Param> open;
  for (Param param : algorithm.params) {
    if (parameter_range(param, facts.ranks).empty()) continue;
    if (param == Param::radix ? base.radix_auto : !base.is_given(param)) open.push_back(param);
  }
  Prediction best;
  best.algorithm = &algorithm;
  best.cost.valid = false;
  const bool takes_radix = std::find(algorithm.params.begin(), algorithm.params.end(), Param::radix) != algorithm.params.end();
  if (takes_radix && !base.radix_auto && base.radix > std::max(2, facts.ranks)) return best;  // a given radix above P
  std::vector<std::vector<long long>> ranges;
  for (Param param : open) ranges.push_back(parameter_range(param, facts.ranks));
  std::vector<std::size_t> at(open.size(), 0);
  for (;;) {
    Prediction candidate;
    candidate.algorithm = &algorithm;
    candidate.params = base;
    for (std::size_t i = 0; i < open.size(); ++i) set_param(&candidate.params, open[i], ranges[i][at[i]]);
    candidate.cost = algorithm.cost(facts, candidate.params, profile);
    candidate.seconds = predict_seconds(candidate.cost, profile, facts.persistent);
    if (better(candidate, best)) best = candidate;
    std::size_t i = 0;
    while (i < open.size() && ++at[i] == ranges[i].size()) at[i++] = 0;
    if (i == open.size()) break;
  }
  return best;
}

std::vector<Prediction> rank_algorithms(Op op, const ExchangeFacts& facts, const Params& base,
                                        const MachineProfile& profile,
                                        const std::function<bool(const Algorithm&)>& allowed) {
  std::vector<Prediction> ranked;
  for (const Algorithm& algorithm : algorithms()) {
    if (!(algorithm.ops & op) || !algorithm.cost || !allowed(algorithm)) continue;
    if (op == kAlltoall && !facts.uniform) continue;
    Prediction prediction = predict_best(algorithm, facts, base, profile);
    if (prediction.cost.valid) ranked.push_back(prediction);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Prediction& a, const Prediction& b) { return a.seconds < b.seconds * (1 - 1e-9); });
  return ranked;
}

Prediction select_dense(Op op, const PlanContext& context, std::vector<Prediction>* ranked) {
  std::vector<Prediction> list =
      rank_algorithms(op, context.facts, context.params, *context.profile,
                      [&context](const Algorithm& a) { return inapplicable_reason(a, context).empty(); });
  Prediction choice = list.empty() ? Prediction{} : list.front();
  if (choice.algorithm && std::string(choice.algorithm->name) != "pmpi") {
    for (const Prediction& p : list)
      if (std::string(p.algorithm->name) == "pmpi" && choice.seconds * kSwitchGain > p.seconds) choice = p;
  }
  if (!choice.algorithm) {
    choice.algorithm = find_algorithm("pmpi", op);
    choice.params = context.params;
  }
  if (ranked) *ranked = std::move(list);
  return choice;
}

}  // namespace mpix
