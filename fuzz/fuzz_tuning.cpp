// libFuzzer target: the tuning-file parser (src/core/tuning.cpp) on any bytes.
// Checks: it returns success or MPIX_ERR_TUNING_FILE with a message naming the
// file; every rule it keeps has non-empty, ordered ranges, a known algorithm of its
// operation and only hints that the algorithm takes; match() agrees with the rules.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/tuning.hpp"

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "fuzz_tuning: check failed: %s\n", #cond); \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mpix::TuningTable table;
  int rc = mpix::parse_tuning_table(std::string((const char*)data, size), "fuzz.tuning", &table);
  if (rc != MPIX_SUCCESS) {
    CHECK(rc == MPIX_ERR_TUNING_FILE);
    CHECK(std::strstr(MPIX_Last_error_message(), "tuning file fuzz.tuning") != nullptr);
    return 0;
  }
  for (const mpix::TuningRule& rule : table.rules) {
    CHECK(rule.op == mpix::kAlltoall || rule.op == mpix::kAlltoallv);
    CHECK(0 <= rule.min_ranks && rule.min_ranks <= rule.max_ranks);
    CHECK(0 <= rule.min_bytes && rule.min_bytes <= rule.max_bytes);
    CHECK(rule.algorithm && (rule.algorithm->ops & rule.op));
    CHECK(rule.line >= 1);
    for (const auto& hint : rule.hints) {
      bool taken = false;
      for (mpix::Param param : rule.algorithm->params) taken = taken || hint.first == mpix::param_key(param);
      CHECK(taken);
    }
    for (const mpix::TuningCondition& condition : rule.conditions) CHECK(condition.lo <= condition.hi);
    // The first rule matching its own lower corner is this one or an earlier one
    // (for a rule without conditions on the distribution: the corner's other facts
    // are the defaults).
    if (rule.min_ranks <= INT32_MAX && rule.conditions.empty()) {
      mpix::ExchangeFacts corner;
      corner.ranks = (int)rule.min_ranks;
      corner.max_block = rule.min_bytes;
      const mpix::TuningRule* hit = table.match(rule.op, corner);
      CHECK(hit && hit->line <= rule.line);
    }
  }
  return 0;
}
