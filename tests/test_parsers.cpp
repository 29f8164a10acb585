// The parsers of user files: the machine file and the tuning file (src/core/model.*,
// tuning.*; docs/tuning.md), and the Matrix Market reader of mpix-bench's SpMV
// pattern. Every malformed form is named with its file and line.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/model.hpp"
#include "core/registry.hpp"
#include "core/tuning.hpp"
#include "harness.hpp"
#include "model_facts.hpp"

using harness::message_has;
using model_test::facts_of;

namespace {

std::string write_file(const char* stem, const std::string& text) {
  return harness::temp_file(std::string("model_") + stem, text);
}

}  // namespace

TEST_CASE("machine file: every key, comments, and every malformed form", "[model][parser]") {
  mpix::MachineProfile profile;
  std::string path = write_file("good", "# measured\ninter_latency = 2e-6\n  intra_bandwidth=5e9  # shm\n\n"
                                        "bisection_bandwidth = 0\nintra_copies = 1\nalltoall_bandwidth = 3e10\n"
                                        "inter_message_bytes = 16\neager_bytes = 16384\n");
  REQUIRE(mpix::load_machine_profile(path, &profile) == MPIX_SUCCESS);
  CHECK(profile.inter_latency == 2e-6);
  CHECK(profile.intra_bandwidth == 5e9);
  CHECK(profile.intra_copies == 1);
  CHECK(profile.alltoall_bandwidth == 3e10);
  CHECK(profile.inter_message_bytes == 16);
  CHECK(profile.eager_bytes == 16384);
  CHECK(profile.inter_bandwidth == mpix::MachineProfile{}.inter_bandwidth);  // default kept
  CHECK(profile.source == path);
  // What machine_profile_text writes reads back the same.
  std::string round_trip = write_file("trip", mpix::machine_profile_text(profile));
  mpix::MachineProfile again;
  REQUIRE(mpix::load_machine_profile(round_trip, &again) == MPIX_SUCCESS);
  CHECK(again.inter_latency == profile.inter_latency);
  CHECK(again.intra_bandwidth == profile.intra_bandwidth);
  CHECK(again.alltoall_bandwidth == profile.alltoall_bandwidth);
  CHECK(again.intra_copies == profile.intra_copies);
  CHECK(again.inter_message_bytes == profile.inter_message_bytes);
  CHECK(again.eager_bytes == profile.eager_bytes);

  const std::pair<const char*, const char*> bad[] = {
      {"inter_latency 2e-6\n", "expected key = value"},
      {"no_such_key = 1\n", "unknown key 'no_such_key'"},
      {"inter_latency = fast\n", "not a number"},
      {"inter_latency = -1\n", "must be >= 0"},
      {"inter_bandwidth = 0\n", "must be > 0"},
      {"alltoall_bandwidth = -1\n", "must be >= 0"},
      {"intra_copies = -2\n", "must be >= 0 copies"},
      {"inter_message_bytes = -16\n", "must be >= 0 bytes"},
      {"inter_latency =\n", "no value"},
      {"inter_latency = 1 2\n", "one value per key"},
      {"inter latency = 1\n", "a key is one word"},
      {"inter_latency = inf\n", "not a number"},
      {"inter_latency = 1e-6x\n", "not a number"},
      {"inter_latency = 1e300\n", "more than 1 s, past any machine (the unit is seconds)"},
      {"inter_bandwidth = 1e-300\n", "under 1000 bytes/s"},
      {"intra_copies = 1e9\n", "more than 8 copies"},
      {"inter_message_bytes = 1e7\n", "more than 65536 bytes"},
      {"eager_bytes = -1\n", "must be >= 0 bytes"},
      {"eager_bytes = 4e9\n", "more than 1.07374e+09 bytes"},
  };
  for (const auto& [text, why] : bad) {
    std::string file = write_file("bad", std::string("# ok\n") + text);
    mpix::MachineProfile untouched;
    untouched.inter_latency = 42;
    CHECK(mpix::load_machine_profile(file, &untouched) == MPIX_ERR_TUNING_FILE);
    CHECK(message_has(why));
    CHECK(message_has(":2:"));  // the line
    CHECK(untouched.inter_latency == 42);
  }
  CHECK(mpix::load_machine_profile("/nonexistent/machine", &profile) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has("cannot be opened"));
  // A key twice (two profiles merged by hand): which value was meant is unknown.
  std::string twice = write_file("twice", "inter_latency = 1e-6\nintra_latency = 1e-7\ninter_latency = 2e-6\n");
  CHECK(mpix::load_machine_profile(twice, &profile) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has(":3: inter_latency given twice (first on line 1)"));
  // A NUL byte is named, not left to cut the message short.
  std::string nul = write_file("nul", std::string("inter_latency = 1e-6\nintra_\0latency = 1\n", 40));
  CHECK(mpix::load_machine_profile(nul, &profile) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has(":2: holds a NUL byte"));
}

TEST_CASE("tuning file: distribution conditions", "[model][parser]") {
  mpix::TuningTable table;
  std::string path = write_file("conditions",
                                "alltoallv * * * * pairwise mean_block=0..100 nonempty=0.5..*\n"
                                "alltoallv * * * * tuna nodes=2..* ppn=4..4 mpix_radix=2\n"
                                "alltoallv * * * * nonblocking persistent=1..1\n"
                                "alltoallv * * 0 * scattered intra_node=0..0.5 contiguous=0..0 total_bytes=0..*\n");
  REQUIRE(mpix::load_tuning_table(path, &table) == MPIX_SUCCESS);
  mpix::ExchangeFacts f = facts_of(16, 4, 64, false);
  CHECK(table.match(mpix::kAlltoallv, f)->algorithm->name == std::string("pairwise"));
  f = facts_of(16, 4, 1000, false);
  CHECK(table.match(mpix::kAlltoallv, f)->algorithm->name == std::string("tuna"));
  f = facts_of(16, 2, 1000, false);
  CHECK(table.match(mpix::kAlltoallv, f) == nullptr);
  f.persistent = true;
  CHECK(table.match(mpix::kAlltoallv, f)->algorithm->name == std::string("nonblocking"));
  f.persistent = false;
  f.contiguous = false;
  CHECK(table.match(mpix::kAlltoallv, f)->algorithm->name == std::string("scattered"));
  CHECK(table.match(mpix::kAlltoall, f) == nullptr);

  const std::pair<const char*, const char*> bad[] = {
      {"alltoallv * * * * pairwise mean_block=5\n", "expected lo..hi"},
      {"alltoallv * * * * pairwise mean_block=9..5\n", "lo <= hi"},
      {"alltoallv * * * * pairwise mean_block=..5\n", "expected lo..hi"},
      {"alltoallv * * * * pairwise mean_block=-1..5\n", "numbers >= 0"},
      {"alltoallv * * * * pairwise mean_block=a..b\n", "expected lo..hi"},
      {"alltoallv * * * * pairwise colour=1..2\n", "unknown condition 'colour'"},
      {"alltoallv * * * * pairwise mpix_radix=2\n", "does not take mpix_radix"},
      {"alltoallv * * * * pairwise mpix_colour=2\n", "unknown key 'mpix_colour'"},
      {"alltoallv * * * * tuna mpix_radix=1\n", "must be 2..P"},
      {"alltoallv * * * *\n", "expected <op>"},
      {"alltoallw * * * * pairwise\n", "unknown operation"},
      {"alltoallv 4 2 * * pairwise\n", "empty range"},
      {"alltoallv x * * * pairwise\n", "ranks must be integers"},
      {"alltoallv * * -1 * pairwise\n", "bytes must be integers"},
      {"alltoallv * * * * no_such\n", "unknown algorithm 'no_such'"},
      {"alltoall * * * * pairwise nonempty\n", "expected key=value"},
      {"alltoallv * * * * pairwise contiguous=2..2\n", "contiguous is 0 or 1"},
      {"alltoallv * * * * pairwise persistent=0.5..0.7\n", "persistent is 0 or 1"},
      {"alltoallv * * * * pairwise nonempty=0..2\n", "nonempty is a fraction, 0..1"},
      {"alltoallv * * * * pairwise intra_node=2..*\n", "intra_node is a fraction"},
      {"alltoallv * * * * pairwise nodes=1..2 nodes=3..4\n", "nodes given twice"},
      {"alltoallv * * * * tuna mpix_radix=2 mpix_radix=4\n", "mpix_radix given twice"},
      {"alltoallv * * * * pairwise\xc2\xa0\n", "unknown algorithm 'pairwise\\xc2\\xa0'"},
  };
  for (const auto& [text, why] : bad) {
    std::string file = write_file("badrule", std::string("# header\n\n") + text);
    CHECK(mpix::load_tuning_table(file, &table) == MPIX_ERR_TUNING_FILE);
    CHECK(message_has(why));
    CHECK(message_has(":3:"));
  }
  std::string nul = write_file("nulrule", std::string("alltoallv * * * * pair\0wise\n", 28));
  CHECK(mpix::load_tuning_table(nul, &table) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has(":1: holds a NUL byte"));
}

TEST_CASE("tuning and machine files: what is not a file, its size, its byte-order mark and line ends",
          "[model][parser]") {
  mpix::TuningTable table;
  // A byte-order mark is dropped; a lone \r ends a line (the rule on line 2 was part
  // of the comment on line 1).
  REQUIRE(mpix::load_tuning_table(write_file("bom", "\xEF\xBB\xBF" "alltoallv * * * * pairwise\n"), &table) ==
          MPIX_SUCCESS);
  CHECK(table.rules.size() == 1);
  CHECK(mpix::load_tuning_table(write_file("cr", "# a\ralltoallv * * * * no_such\r"), &table) ==
        MPIX_ERR_TUNING_FILE);
  CHECK(message_has(":2: unknown algorithm 'no_such'"));
  REQUIRE(mpix::load_tuning_table(write_file("crlf", "# a\r\nalltoallv * * * * pairwise\r\n\r\nalltoall * * * * "
                                                     "pairwise\r\n"), &table) == MPIX_SUCCESS);
  CHECK(table.rules.size() == 2);
  CHECK(table.rules[1].line == 4);
  // /dev/null is an empty file; /dev/zero never ends, a FIFO would block in open.
  REQUIRE(mpix::load_tuning_table("/dev/null", &table) == MPIX_SUCCESS);
  CHECK(table.rules.empty());
  CHECK(mpix::load_tuning_table("/dev/zero", &table) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has("tuning file /dev/zero: is longer than 16777216 bytes"));
  const std::string fifo = "/tmp/mpix_test_model_fifo_" + std::to_string(getpid());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(mpix::load_tuning_table(fifo, &table) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has("is a FIFO or a socket, not a file"));
  mpix::MachineProfile profile;
  CHECK(mpix::load_machine_profile(fifo, &profile) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has(("machine file " + fifo + ": is a FIFO").c_str()));
  unlink(fifo.c_str());
  CHECK(mpix::load_machine_profile("/tmp", &profile) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has("machine file /tmp: is a directory"));
  CHECK(mpix::load_tuning_table("/no/such/file", &table) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has("tuning file /no/such/file: cannot be opened (No such file or directory)"));
  REQUIRE(mpix::load_machine_profile(write_file("bomprofile", "\xEF\xBB\xBFinter_latency = 3e-6\r\n"), &profile) ==
          MPIX_SUCCESS);
  CHECK(profile.inter_latency == 3e-6);
}

TEST_CASE("Matrix Market reader: every malformed form is named, a good file read", "[parser]") {
  const std::string header = "%%MatrixMarket matrix coordinate real general\n";
  auto read = [](const std::string& text, std::string* error) {
    std::istringstream in(text);
    return mpix::workload::read_spmv_needs(in, 2, error);
  };
  std::string error;
  mpix::workload::SpmvNeeds needs = read(header + "% comment\n4 4 2\n1 4 1.0\n4 1 2.0\n", &error);
  CHECK(error.empty());
  REQUIRE(needs.size() == 2);
  CHECK(needs[0].at(1) == std::vector<int>{3});  // rank 0 (rows 0-1) needs column 3 of rank 1
  const std::pair<std::string, const char*> bad[] = {
      {"%%MatrixMarket matrix array real general\n4 4\n", "not a readable Matrix Market coordinate file"},
      {header + "4 x 2\n", "bad size line"},
      {header + "0 4 1\n1 1 1\n", "bad size line"},
      {header + "4 4 2\n1 9 1.0\n2 2 1.0\n", "bad entry '1 9 1.0'"},
      {header + "4 4 2\n0 1 1.0\n2 2 1.0\n", "bad entry"},
      {header + "4 4 5\n1 1 1.0\n", "truncated: 1 of the 5 entries"},
      {"%%MatrixMarket matrix coordinate real symmetric\n4 3 1\n1 1 1\n", "symmetric but not square"},
  };
  for (const auto& [text, says] : bad) {
    INFO(text);
    error.clear();
    read(text, &error);
    CHECK(error.find(says) != std::string::npos);
  }
}
