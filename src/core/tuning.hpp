// Tuning files: measured selection rules that override the built-in choice of
// `auto` (API.md precedence: info key, environment, tuning file, built-in model).
//
// Format: one rule per line, '#' starts a comment, fields separated by blanks:
//   <op> <min_ranks> <max_ranks> <min_bytes> <max_bytes> <algorithm> [word ...]
// op is alltoall or alltoallv; the ranges are inclusive, `*` is unbounded; bytes are
// the largest block of the call. Each further word is either a hint of the
// algorithm, `mpix_radix=4`, used where the info and environment do not set it, or
// a condition on an agreed fact of the call (model.hpp), `name=lo..hi` with `*`
// for an open end (`mean_block=0..256`, `nonempty=0.5..*`); the names are in
// kConditionNames. The first rule that matches the call wins; no match falls back
// to the built-in model.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model.hpp"
#include "registry.hpp"

struct MPIX_Info_s;

namespace mpix {

// A condition on one fact of the call: lo <= fact <= hi.
struct TuningCondition {
  int fact;  // index into kConditionNames
  double lo, hi;
};
// nodes, ppn (ranks on the largest node), mean_block, min_block, max_rank_send,
// total_bytes, nonempty (fraction of blocks with bytes), intra_node (fraction of
// bytes inside nodes), contiguous and persistent (0 or 1).
extern const char* const kConditionNames[];
double condition_fact(int fact, const ExchangeFacts& facts);

struct TuningRule {
  Op op;
  long long min_ranks, max_ranks, min_bytes, max_bytes;
  std::vector<TuningCondition> conditions;
  const Algorithm* algorithm;
  std::vector<std::pair<std::string, std::string>> hints;
  int line;
};

struct TuningTable {
  std::string path;
  std::vector<TuningRule> rules;
  long long content_hash = 0;  // for the agreement between ranks

  // The first rule that matches the call and that `fits` (when given) accepts.
  const TuningRule* match(Op op, const ExchangeFacts& facts,
                          const std::function<bool(const TuningRule&)>& fits = nullptr) const;
};

// Reads and checks a tuning file; MPIX_ERR_TUNING_FILE naming the file, the line
// and the problem when it is missing, unreadable or malformed.
int load_tuning_table(const std::string& path, TuningTable* table);
// The same, from the file's contents; `path` names it in messages. No MPI (the
// fuzz target fuzz/fuzz_tuning.cpp calls it).
int parse_tuning_table(const std::string& contents, const std::string& path, TuningTable* table);

// A copy of `info` with the rule's hints added where neither the info nor the
// environment sets them.
MPIX_Info_s with_rule_hints(const MPIX_Info_s* info, const TuningRule& rule);

}  // namespace mpix
