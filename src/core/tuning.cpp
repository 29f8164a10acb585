#include "tuning.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "error.hpp"
#include "info.hpp"

namespace mpix {

const TuningRule* TuningTable::match(Op op, int ranks, long long bytes) const {
  for (const TuningRule& rule : rules)
    if (rule.op == op && ranks >= rule.min_ranks && ranks <= rule.max_ranks && bytes >= rule.min_bytes &&
        bytes <= rule.max_bytes)
      return &rule;
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

}  // namespace

int load_tuning_table(const std::string& path, TuningTable* table) {
  std::ifstream in(path);
  if (!in) return fail(MPIX_ERR_TUNING_FILE, "tuning file " + path + ": cannot be opened");
  return parse_tuning_table(in, path, table);
}

int parse_tuning_table(std::istream& in, const std::string& path, TuningTable* table) {
  table->path = path;
  table->rules.clear();
  unsigned long long hash = 1469598103934665603ull;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    for (unsigned char c : line) hash = (hash ^ c) * 1099511628211ull;
    std::string text = line.substr(0, line.find('#'));
    std::istringstream fields(text);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    if (words.empty()) continue;
    auto bad = [&](const std::string& why) {
      return fail(MPIX_ERR_TUNING_FILE, format("tuning file %s:%d: %s", path.c_str(), number, why.c_str()));
    };
    if (words.size() < 6)
      return bad("expected <op> <min_ranks> <max_ranks> <min_bytes> <max_bytes> <algorithm> [key=value ...]");
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
    for (std::size_t i = 6; i < words.size(); ++i) {
      std::size_t equals = words[i].find('=');
      if (equals == std::string::npos) return bad("expected key=value, got '" + words[i] + "'");
      std::string key = words[i].substr(0, equals), value = words[i].substr(equals + 1);
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
  if (in.bad()) return fail(MPIX_ERR_TUNING_FILE, "tuning file " + path + ": read error");
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
