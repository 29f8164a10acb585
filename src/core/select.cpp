#include "select.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

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
    case Param::lane_group:
      // 1, and the groups whose lanes divide N - 1 evenly on small machines; the
      // cost model rules out groups above min(Q, N - 1).
      for (long long g = 1; g <= 32 && g < top; g *= 2) values.push_back(g);
      values.push_back(3);
      break;
    case Param::seed:  // changes the order, not the cost
    case Param::ipc_threshold:     // ipc_hybrid's: the paper's default (registry.hpp)
    case Param::memcpy_threshold:  // device copies only, which the model does not price
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
    case Param::lane_group: params->lane_group = (int)value; break;
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

Prediction search_best(const Algorithm& algorithm, const ExchangeFacts& facts, const Params& base,
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

// Every input of a prediction as bytes: a key equal on two ranks means the same
// prediction, so a rank's cache (whatever else it has seen) never changes a
// decision, only its cost. The profile goes in by value: addresses are reused.
std::string model_key(long long what, const ExchangeFacts& f, const Params& p, const MachineProfile& m) {
  const long long integers[] = {what, f.ranks, f.nodes, f.max_ppn, f.min_ppn, f.regions, f.max_region_size,
                                f.max_block, f.min_block, f.total_bytes, f.max_rank_send, f.max_rank_recv,
                                f.nonempty_blocks, f.max_rank_messages, f.intra_node_bytes, f.contiguous,
                                f.in_place, f.uniform, f.persistent, f.direct_copy, p.radix, p.radix_auto, p.block_count,
                                p.stride, p.max_queue, p.segment_bytes, (long long)p.seed, p.given,
                                p.ipc_threshold, p.memcpy_threshold, (long long)p.locality, p.lane_group};
  const double reals[] = {m.inter_latency, m.intra_latency, m.inter_send_overhead, m.inter_recv_overhead,
                          m.intra_send_overhead, m.intra_recv_overhead, m.inter_bandwidth, m.intra_bandwidth,
                          m.copy_bandwidth, m.bisection_bandwidth, m.alltoall_bandwidth, m.match_cost, m.intra_copies,
                          m.inter_message_bytes, m.collective_overhead, m.eager_bytes};
  std::string key(sizeof integers + sizeof reals, '\0');
  std::memcpy(&key[0], integers, sizeof integers);
  std::memcpy(&key[sizeof integers], reals, sizeof reals);
  return key;
}

// Searching every algorithm's parameter ranges costs tens of microseconds (node_aware
// ranks the algorithms again for its leaders), more than a small exchange on one
// node; applications repeat their exchanges, so results are kept, a bounded number.
template <class Value>
class ModelCache {
 public:
  bool find(const std::string& key, Value* value) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = map_.find(key);
    if (found == map_.end()) return false;
    *value = found->second;
    return true;
  }
  void insert(const std::string& key, const Value& value) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (map_.size() >= 4096) map_.clear();
    map_.emplace(key, value);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Value> map_;
};

}  // namespace

Prediction predict_best(const Algorithm& algorithm, const ExchangeFacts& facts, const Params& base,
                        const MachineProfile& profile) {
  static ModelCache<Prediction> cache;
  const std::string key = model_key((long long)(std::intptr_t)&algorithm, facts, base, profile);
  Prediction best;
  if (cache.find(key, &best)) return best;
  best = search_best(algorithm, facts, base, profile);
  cache.insert(key, best);
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
  // On a tie MPI's own call goes last: the model knows what mpix's algorithms do, not
  // what the MPI library does behind the same messages (MPICH 4.0's MPI_Ialltoallv at
  // 2 ranks took 1.3x to 2.6x the time of `nonblocking`, which the model prices the same).
  auto is_pmpi = [](const Prediction& p) { return std::string(p.algorithm->name) == "pmpi"; };
  std::stable_sort(ranked.begin(), ranked.end(), [&is_pmpi](const Prediction& a, const Prediction& b) {
    if (a.seconds < b.seconds * (1 - 1e-9)) return true;
    if (b.seconds < a.seconds * (1 - 1e-9)) return false;
    return !is_pmpi(a) && is_pmpi(b);
  });
  return ranked;
}

Prediction select_dense(Op op, const PlanContext& context, std::vector<Prediction>* ranked) {
  // Applicability is the build's (unavailable_reason) and the facts', so the ranking
  // is a function of the key too.
  struct Choice {
    Prediction choice;
    std::vector<Prediction> top;  // for MPIX_VERBOSE
  };
  static ModelCache<std::shared_ptr<const Choice>> cache;
  const std::string key = model_key(-(long long)op, context.facts, context.params, *context.profile);
  std::shared_ptr<const Choice> kept;
  if (!cache.find(key, &kept)) {
    std::vector<Prediction> list =
        rank_algorithms(op, context.facts, context.params, *context.profile,
                        [&context](const Algorithm& a) { return inapplicable_reason(a, context).empty(); });
    auto made = std::make_shared<Choice>();
    made->choice = list.empty() ? Prediction{} : list.front();
    if (!made->choice.algorithm) {
      made->choice.algorithm = find_algorithm("pmpi", op);
      made->choice.params = context.params;
    }
    list.resize(std::min<std::size_t>(list.size(), 3));
    made->top = std::move(list);
    kept = made;
    cache.insert(key, kept);
  }
  if (ranked) *ranked = kept->top;
  return kept->choice;
}

}  // namespace mpix
