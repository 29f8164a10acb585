// libFuzzer target: the agreement's records on the wire (src/core/agreement.cpp,
// pack_record and unpack_record), which the carried agreement reads from other
// ranks' messages. Checks: bytes read as a record use no more than they are and
// than kPackedRecordMaxBytes, and that record packs and reads back to the same
// values; and the input read as raw records (22 integers each) packs within
// kPackedRecordMaxBytes and reads back to the same values.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/agreement.hpp"

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "fuzz_record: check failed: %s\n", #cond); \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

namespace {

void check_round_trip(const long long* record) {
  char packed[mpix::kPackedRecordMaxBytes];
  const std::size_t bytes = mpix::pack_record(record, packed);
  CHECK(bytes > 0 && bytes <= mpix::kPackedRecordMaxBytes);
  long long back[mpix::kRecordFields];
  CHECK(mpix::unpack_record(packed, bytes, back) == bytes);
  CHECK(std::memcmp(back, record, mpix::kRecordBytes) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  long long record[mpix::kRecordFields];
  const std::size_t used = mpix::unpack_record((const char*)data, size, record);
  CHECK(used <= size && used <= mpix::kPackedRecordMaxBytes);
  if (used > 0) check_round_trip(record);
  for (std::size_t at = 0; at + mpix::kRecordBytes <= size; at += mpix::kRecordBytes) {
    std::memcpy(record, data + at, mpix::kRecordBytes);
    check_round_trip(record);
  }
  return 0;
}
