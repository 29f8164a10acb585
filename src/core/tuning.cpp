#include "tuning.hpp"

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "config_file.hpp"
#include "error.hpp"
#include "info.hpp"

namespace mpix {

const char* const kConditionNames[] = {"nodes", "ppn", "mean_block", "min_block", "max_rank_send",
                                       "total_bytes", "nonempty", "intra_node", "contiguous", "persistent",
                                       nullptr};

namespace {

// In the order of kConditionNames.
enum ConditionFact {
  kNodesFact, kPpnFact, kMeanBlockFact, kMinBlockFact, kMaxRankSendFact, kTotalBytesFact,
  kNonemptyFact, kIntraNodeFact, kContiguousFact, kPersistentFact
};

}  // namespace

double condition_fact(int fact, const ExchangeFacts& f) {
  switch (fact) {
    case kNodesFact: return f.nodes;
    case kPpnFact: return f.max_ppn;
    case kMeanBlockFact: return f.mean_block();
    case kMinBlockFact: return (double)f.min_block;
    case kMaxRankSendFact: return (double)f.max_rank_send;
    case kTotalBytesFact: return (double)f.total_bytes;
    case kNonemptyFact: return f.nonempty_fraction();
    case kIntraNodeFact: return f.intra_fraction();
    case kContiguousFact: return f.contiguous;
    case kPersistentFact: return f.persistent;
  }
  return 0;
}

const TuningRule* TuningTable::match(Op op, const ExchangeFacts& facts,
                                     const std::function<bool(const TuningRule&)>& fits) const {
  for (const TuningRule& rule : rules) {
    if (rule.op != op || facts.ranks < rule.min_ranks || facts.ranks > rule.max_ranks ||
        facts.max_block < rule.min_bytes || facts.max_block > rule.max_bytes)
      continue;
    bool all = true;
    for (const TuningCondition& c : rule.conditions) {
      double value = condition_fact(c.fact, facts);
      all = all && value >= c.lo && value <= c.hi;
    }
    if (all && (!fits || fits(rule))) return &rule;
  }
  return nullptr;
}

namespace {

bool parse_bound(const std::string& text, long long unbounded, long long* value) {
  if (text == "*") {
    *value = unbounded;
    return true;
  }
  return parse_integer(text, value) && *value >= 0;
}

// "lo..hi", each a number >= 0 or *.
bool parse_condition_range(const std::string& text, double* lo, double* hi) {
  std::size_t dots = text.find("..");
  if (dots == std::string::npos) return false;
  auto number = [](const std::string& word, double open, double* out) {
    if (word == "*") {
      *out = open;
      return true;
    }
    if (word.empty()) return false;
    char* end = nullptr;
    *out = std::strtod(word.c_str(), &end);
    return *end == '\0' && std::isfinite(*out) && *out >= 0;
  };
  return number(text.substr(0, dots), 0, lo) && number(text.substr(dots + 2), HUGE_VAL, hi) && *lo <= *hi;
}

}  // namespace

int load_tuning_table(const std::string& path, TuningTable* table) {
  std::string contents;
  MPIX_TRY(read_config_text(path, "tuning file", &contents));
  return parse_tuning_table(contents, path, table);
}

int parse_tuning_table(const std::string& contents, const std::string& path, TuningTable* table) {
  table->path = path;
  table->rules.clear();
  unsigned long long hash = 1469598103934665603ull;
  int number = 0;
  for (const std::string& line : config_lines(contents)) {
    ++number;
    for (unsigned char c : line) hash = (hash ^ c) * 1099511628211ull;
    auto bad = [&](const std::string& why) {
      return fail(MPIX_ERR_TUNING_FILE,
                  format("tuning file %s:%d: %s", printable(path).c_str(), number, printable(why).c_str()));
    };
    // Before any word is quoted: a NUL would end the message there.
    if (line.find('\0') != std::string::npos) return bad("holds a NUL byte (not a text file?)");
    std::string text = line.substr(0, line.find('#'));
    std::istringstream fields(text);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    if (words.empty()) continue;
    if (words.size() < 6)
      return bad("expected <op> <min_ranks> <max_ranks> <min_bytes> <max_bytes> <algorithm> [hint=value | fact=lo..hi ...]");
    TuningRule rule{};
    rule.line = number;
    if (words[0] == "alltoall") rule.op = kAlltoall;
    else if (words[0] == "alltoallv") rule.op = kAlltoallv;
    else return bad("unknown operation '" + words[0] + "' (alltoall or alltoallv)");
    if (!parse_bound(words[1], 0, &rule.min_ranks) || !parse_bound(words[2], INT32_MAX, &rule.max_ranks))
      return bad("ranks must be integers >= 0 or *");
    if (!parse_bound(words[3], 0, &rule.min_bytes) || !parse_bound(words[4], INT64_MAX, &rule.max_bytes))
      return bad("bytes must be integers >= 0 or *");
    if (rule.min_ranks > rule.max_ranks || rule.min_bytes > rule.max_bytes) return bad("empty range");
    rule.algorithm = find_algorithm(words[5], rule.op);
    if (!rule.algorithm) return bad("unknown algorithm '" + words[5] + "' for " + words[0]);
    std::set<std::string> keys;
    for (std::size_t i = 6; i < words.size(); ++i) {
      std::size_t equals = words[i].find('=');
      if (equals == std::string::npos) return bad("expected key=value, got '" + words[i] + "'");
      std::string key = words[i].substr(0, equals), value = words[i].substr(equals + 1);
      int fact = -1;
      for (int f = 0; kConditionNames[f]; ++f)
        if (key == kConditionNames[f]) fact = f;
      // A key given twice is a merge gone wrong: both would have to hold (a
      // condition) or one would silently win (a hint).
      if (!keys.insert(key).second) return bad(key + " given twice");
      if (fact >= 0) {
        TuningCondition condition{fact, 0, 0};
        if (!parse_condition_range(value, &condition.lo, &condition.hi))
          return bad("condition " + key + "=" + value + ": expected lo..hi, numbers >= 0 or *, lo <= hi");
        // Fractions and flags have bounded values: a range past them, or a flag
        // range holding neither 0 nor 1, could never match as written.
        const bool flag = fact == kContiguousFact || fact == kPersistentFact;
        const bool fraction = fact == kNonemptyFact || fact == kIntraNodeFact;
        if (flag && !((condition.lo == 0 || condition.lo == 1) &&
                      (condition.hi == 0 || condition.hi == 1 || std::isinf(condition.hi))))
          return bad("condition " + key + "=" + value + ": " + key + " is 0 or 1 (write 0..0, 1..1 or 0..1)");
        if (fraction && (condition.lo > 1 || (condition.hi > 1 && !std::isinf(condition.hi))))
          return bad("condition " + key + "=" + value + ": " + key + " is a fraction, 0..1");
        rule.conditions.push_back(condition);
        continue;
      }
      if (key.rfind("mpix_", 0) != 0) {
        std::string known;
        for (int f = 0; kConditionNames[f]; ++f) known += std::string(" ") + kConditionNames[f];
        return bad("unknown condition '" + key + "'; conditions:" + known + "; hints start with mpix_");
      }
      const KeySpec* spec = find_key(key);
      if (!spec) return bad("unknown key '" + key + "'");
      bool taken = false;
      for (Param param : rule.algorithm->params) taken = taken || key == param_key(param);
      if (!taken) return bad(std::string("algorithm ") + rule.algorithm->name + " does not take " + key);
      if (check_value(*spec, value, key) != MPIX_SUCCESS) return bad(MPIX_Last_error_message());
      rule.hints.emplace_back(key, value);
    }
    table->rules.push_back(rule);
  }
  table->content_hash = (long long)(hash >> 2);
  return MPIX_SUCCESS;
}

MPIX_Info_s with_rule_hints(const MPIX_Info_s* info, const TuningRule& rule) {
  MPIX_Info_s merged;
  if (info) merged = *info;
  for (const auto& hint : rule.hints) {
    std::string value, source;
    if (!lookup(info, hint.first.c_str(), &value, &source)) merged.values[hint.first] = hint.second;
  }
  return merged;
}

}  // namespace mpix
