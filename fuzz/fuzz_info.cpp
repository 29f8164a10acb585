// libFuzzer target: info values (src/core/info.cpp) and parameter resolution
// (src/core/registry.cpp resolve_params). The input is lines "key=value"; the
// first byte picks the communicator size 1..256. Checks: MPIX_Info_set accepts a
// value exactly when check_value does, and MPIX_Info_get returns it; whatever the
// info holds, resolve_params either fails with MPIX_ERR_INFO_VALUE or yields
// parameters in the ranges the algorithms rely on.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/info.hpp"
#include "core/registry.hpp"

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      std::fprintf(stderr, "fuzz_info: check failed: %s\n", #cond); \
      std::abort();                                                  \
    }                                                                \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const int comm_size = 1 + data[0];
  std::string text((const char*)data + 1, size - 1);
  MPIX_Info* info = nullptr;
  CHECK(MPIX_Info_init(&info) == MPIX_SUCCESS);
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    std::size_t equals = line.find('=');
    if (equals == std::string::npos) continue;
    std::string key = line.substr(0, equals), value = line.substr(equals + 1);
    // Embedded NULs cut C strings; the C API sees the prefix.
    key = key.c_str();
    value = value.c_str();
    const mpix::KeySpec* spec = mpix::find_key(key);
    int rc = MPIX_Info_set(info, key.c_str(), value.c_str());
    if (!spec) {
      CHECK(rc == MPIX_ERR_INFO_KEY);
      continue;
    }
    int expected = mpix::check_value(*spec, value, key);
    CHECK(rc == expected);
    if (rc != MPIX_SUCCESS) {
      CHECK(rc == MPIX_ERR_INFO_VALUE && std::strstr(MPIX_Last_error_message(), key.c_str()));
      continue;
    }
    std::vector<char> back(value.size() + 1);
    int flag = 0;
    CHECK(MPIX_Info_get(info, key.c_str(), (int)back.size(), back.data(), &flag) == MPIX_SUCCESS);
    CHECK(flag == 1 && value == back.data());
  }
  const std::vector<mpix::Param> all = {mpix::Param::radix,     mpix::Param::block_count, mpix::Param::stride,
                                        mpix::Param::max_queue, mpix::Param::segment_bytes, mpix::Param::seed};
  mpix::Params params;
  int rc = mpix::resolve_params(info, all, comm_size, &params);
  if (rc == MPIX_SUCCESS) {
    CHECK(params.radix >= 2 && params.radix <= (comm_size < 2 ? 2 : comm_size));
    CHECK(params.block_count >= 1);
    CHECK(params.stride >= 1);
    CHECK(params.max_queue >= 2);
    CHECK(params.segment_bytes >= 1);
    CHECK(!mpix::describe_params(all, params).empty());
  } else {
    CHECK(rc == MPIX_ERR_INFO_VALUE);
  }
  CHECK(MPIX_Info_free(&info) == MPIX_SUCCESS && info == nullptr);
  return 0;
}
