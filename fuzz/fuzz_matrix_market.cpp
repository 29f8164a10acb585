// libFuzzer target: the Matrix Market reader of mpix-bench (tools/workload.cpp
// read_spmv_needs). The first byte picks the rank count 1..64. Checks: a file is
// refused with a message or read; every need names another rank and a non-empty,
// sorted list of distinct columns.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "workload.hpp"

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "fuzz_matrix_market: check failed: %s\n", #cond); \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const int ranks = 1 + data[0] % 64;
  std::istringstream in(std::string((const char*)data + 1, size - 1));
  std::string error;
  const mpix::workload::SpmvNeeds needs = mpix::workload::read_spmv_needs(in, ranks, &error);
  CHECK((int)needs.size() == ranks);
  if (!error.empty()) return 0;
  for (int r = 0; r < ranks; ++r) {
    for (const auto& need : needs[r]) {
      CHECK(need.first != r && need.first >= 0 && need.first < ranks);
      CHECK(!need.second.empty());
      for (std::size_t k = 0; k < need.second.size(); ++k) {
        CHECK(need.second[k] >= 0);
        if (k) CHECK(need.second[k - 1] < need.second[k]);
      }
    }
  }
  return 0;
}
