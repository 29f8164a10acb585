// The core layer: hints, errors (every invalid input gets a code and a message,
// and the communicator stays usable), locality and its emulation, persistent
// request semantics, isolation of the library's traffic, the scratch pool.
#include <catch2/catch.hpp>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/comm.hpp"
#include "core/datatype.hpp"
#include "core/registry.hpp"
#include "core/request.hpp"
#include "gpu/device.hpp"
#include "gpu/staging.hpp"
#ifdef MPIX_HAVE_CUDA
#include <cuda_runtime.h>
#endif
#include "harness.hpp"

using harness::all_ranks;
using harness::Comm;
using harness::message_has;

namespace {


// A small valid alltoallv of ints on `comm`: block i->j holds i*100+j.
struct SmallExchange {
  int size = harness::world_size(), rank = harness::world_rank();
  std::vector<int> send, recv, counts, displs;
  SmallExchange() : send(size), recv(size, -1), counts(size, 1), displs(size) {
    for (int j = 0; j < size; ++j) {
      send[j] = rank * 100 + j;
      displs[j] = j;
    }
  }
  int run(MPIX_Info* info, MPIX_Comm* comm) {
    return MPIX_Alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(),
                          displs.data(), MPI_INT, info, comm);
  }
  bool correct() const {
    for (int i = 0; i < size; ++i)
      if (recv[i] != i * 100 + rank) return false;
    return true;
  }
};

}  // namespace

TEST_CASE("error strings", "[errors]") {
  for (int code = 0; code <= 8; ++code) {
    REQUIRE(MPIX_Error_string(code) != nullptr);
    CHECK(std::strlen(MPIX_Error_string(code)) > 0);
  }
  CHECK(MPIX_Error_string(-7) != nullptr);
  CHECK(MPIX_Error_string(12345) != nullptr);
  CHECK(MPIX_Last_error_message() != nullptr);
  // All codes distinct and positive.
  int codes[] = {MPIX_ERR_ARG, MPIX_ERR_INFO_KEY, MPIX_ERR_INFO_VALUE, MPIX_ERR_UNSUPPORTED,
                 MPIX_ERR_NO_MEM, MPIX_ERR_MPI, MPIX_ERR_DEVICE, MPIX_ERR_TUNING_FILE};
  std::set<int> distinct(std::begin(codes), std::end(codes));
  CHECK(distinct.size() == 8);
  CHECK(*distinct.begin() > 0);
}

TEST_CASE("info keys and values", "[info]") {
  MPIX_Info* info = nullptr;
  REQUIRE(MPIX_Info_init(&info) == MPIX_SUCCESS);

  CHECK(MPIX_Info_set(info, "mpix_no_such_key", "1") == MPIX_ERR_INFO_KEY);
  CHECK(message_has("mpix_no_such_key"));

  struct Bad { const char* key; const char* value; const char* says; };
  for (const Bad& bad : std::vector<Bad>{{"mpix_radix", "1", "2..P"},
                                         {"mpix_radix", "0", "2..P"},
                                         {"mpix_radix", "-4", "2..P"},
                                         {"mpix_radix", "four", "not a number"},
                                         {"mpix_radix", "4x", "not a number"},
                                         {"mpix_radix", "", "not a number"},
                                         {"mpix_radix", "2147483648", "at most 2147483647"},
                                         {"mpix_block_count", "0", "1..2147483647 or unlimited"},
                                         {"mpix_block_count", "-2", "1..2147483647 or unlimited"},
                                         {"mpix_block_count", "lots", "not a number"},
                                         {"mpix_stride", "0", "1..2147483647"},
                                         {"mpix_max_queue", "1", "2..2147483647"},
                                         {"mpix_segment_bytes", "0", "1..2147483647"},
                                         {"mpix_segment_bytes", "2147483648", "1..2147483647"},
                                         {"mpix_seed", "abc", "not a 64-bit integer"},
                                         {"mpix_seed", "18446744073709551616", "not a 64-bit integer"},
                                         {"mpix_seed", "-9223372036854775809", "not a 64-bit integer"},
                                         {"mpix_ipc_threshold", "-1", ">= 0"},
                                         {"mpix_ipc_threshold", "9223372036854775808", "too large"},
                                         {"mpix_check_args", "maybe", "true or false"},
                                         {"mpix_tuning_file", "", "empty"},
                                         {"mpix_alltoallv_algorithm", "no_such", "unknown algorithm"},
                                         {"mpix_alltoallv_algorithm", "bruck_not", "unknown algorithm"}}) {
    INFO(bad.key << "=" << bad.value);
    CHECK(MPIX_Info_set(info, bad.key, bad.value) == MPIX_ERR_INFO_VALUE);
    CHECK(message_has(bad.key));
    CHECK(message_has(bad.says));
  }
  CHECK(MPIX_Info_set(nullptr, "mpix_radix", "2") == MPIX_ERR_ARG);
  CHECK(MPIX_Info_set(info, nullptr, "2") == MPIX_ERR_ARG);
  CHECK(MPIX_Info_set(info, "mpix_radix", nullptr) == MPIX_ERR_ARG);

  CHECK(MPIX_Info_set(info, "mpix_radix", "auto") == MPIX_SUCCESS);
  CHECK(MPIX_Info_set(info, "mpix_radix", "8") == MPIX_SUCCESS);
  CHECK(MPIX_Info_set(info, "mpix_block_count", "unlimited") == MPIX_SUCCESS);
  CHECK(MPIX_Info_set(info, "mpix_alltoallv_algorithm", "pairwise") == MPIX_SUCCESS);
  CHECK(MPIX_Info_set(info, "mpix_check_args", "true") == MPIX_SUCCESS);
  CHECK(MPIX_Info_set(info, "mpix_seed", "18446744073709551615") == MPIX_SUCCESS);
  CHECK(MPIX_Info_set(info, "mpix_seed", "-9223372036854775808") == MPIX_SUCCESS);

  char value[16];
  int flag = -1;
  CHECK(MPIX_Info_get(info, "mpix_radix", sizeof value, value, &flag) == MPIX_SUCCESS);
  CHECK(flag == 1);
  CHECK(std::string(value) == "8");
  CHECK(MPIX_Info_get(info, "mpix_alltoallv_algorithm", 5, value, &flag) == MPIX_SUCCESS);
  CHECK(std::string(value) == "pair");  // truncated to valuelen - 1
  CHECK(MPIX_Info_get(info, "mpix_stride", sizeof value, value, &flag) == MPIX_SUCCESS);
  CHECK(flag == 0);
  CHECK(MPIX_Info_get(info, "mpix_nope", sizeof value, value, &flag) == MPIX_ERR_INFO_KEY);
  CHECK(MPIX_Info_get(info, "mpix_radix", sizeof value, value, nullptr) == MPIX_ERR_ARG);

  CHECK(MPIX_Info_set(info, "mpix_stride", "3") == MPIX_SUCCESS);
  CHECK(MPIX_Info_get(info, "mpix_stride", 8, nullptr, &flag) == MPIX_ERR_ARG);
  CHECK(message_has("value is NULL but mpix_stride is set"));
  CHECK(MPIX_Info_free(&info) == MPIX_SUCCESS);
  CHECK(info == nullptr);
  CHECK(MPIX_Info_free(&info) == MPIX_ERR_ARG);
  CHECK(message_has("info is NULL"));
  CHECK(info == nullptr);
  CHECK(MPIX_Info_init(nullptr) == MPIX_ERR_ARG);
}

TEST_CASE("invalid arguments return an error naming them; the comm stays usable", "[errors]") {
  Comm c;
  SmallExchange ex;
  int size = ex.size;
  std::vector<int> negative(ex.counts);
  negative[size - 1] = -1;
  double anything = 0;

  CHECK(MPIX_Alltoallv(ex.send.data(), negative.data(), ex.displs.data(), MPI_INT, ex.recv.data(), ex.counts.data(),
                       ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has(("sendcounts[" + std::to_string(size - 1) + "]=-1").c_str()));
  CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(), negative.data(),
                       ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("recvcounts["));
  CHECK(MPIX_Alltoallv(nullptr, ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(), ex.counts.data(),
                       ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("sendbuf is NULL"));
  CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, nullptr, ex.counts.data(),
                       ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("recvbuf is NULL"));
  CHECK(MPIX_Alltoallv(ex.send.data(), nullptr, ex.displs.data(), MPI_INT, ex.recv.data(), ex.counts.data(),
                       ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("sendcounts is NULL"));
  CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), nullptr, MPI_INT, ex.recv.data(), ex.counts.data(),
                       ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("sdispls is NULL"));
  CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_DATATYPE_NULL, ex.recv.data(),
                       ex.counts.data(), ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("sendtype"));
  CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, MPI_IN_PLACE, ex.counts.data(),
                       ex.displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("recvbuf is MPI_IN_PLACE"));
  CHECK(MPIX_Alltoall(&anything, -3, MPI_INT, &anything, 1, MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("sendcount=-3"));
  CHECK(MPIX_Alltoall(ex.send.data(), 1, MPI_INT, ex.send.data(), 1, MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("the same buffer"));
  CHECK(MPIX_Alltoall(ex.send.data(), 1, MPI_INT, ex.recv.data(), 1, MPI_INT, nullptr, nullptr) == MPIX_ERR_ARG);
  CHECK(message_has("comm is NULL"));
  // The own block must carry as many bytes as it receives.
  CHECK(MPIX_Alltoall(ex.send.data(), 1, MPI_INT, ex.recv.data(), 1, MPI_DOUBLE, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has("own block"));

  // NULL buffers are fine when nothing is sent or received.
  std::vector<int> zeros(size, 0);
  CHECK(MPIX_Alltoallv(nullptr, zeros.data(), ex.displs.data(), MPI_INT, nullptr, zeros.data(), ex.displs.data(),
                       MPI_INT, nullptr, c.comm) == MPIX_SUCCESS);

  // Persistent: a NULL request pointer; a request that cannot be made stays NULL.
  CHECK(MPIX_Alltoall_plan(ex.send.data(), 1, MPI_INT, ex.recv.data(), 1, MPI_INT, nullptr, c.comm, nullptr) ==
        MPIX_ERR_ARG);
  MPIX_Request* request = reinterpret_cast<MPIX_Request*>(&anything);
  CHECK(MPIX_Alltoall_plan(ex.send.data(), -1, MPI_INT, ex.recv.data(), 1, MPI_INT, nullptr, c.comm, &request) ==
        MPIX_ERR_ARG);
  CHECK(request == nullptr);
  CHECK(MPIX_Start(nullptr) == MPIX_ERR_ARG);
  CHECK(MPIX_Wait(nullptr, MPI_STATUS_IGNORE) == MPIX_ERR_ARG);
  CHECK(MPIX_Request_free(nullptr) == MPIX_ERR_ARG);
  if (MPI_STATUS_IGNORE != nullptr) {  // MPICH; Open MPI's MPI_STATUS_IGNORE is NULL
    REQUIRE(MPIX_Alltoall_plan(ex.send.data(), 1, MPI_INT, ex.recv.data(), 1, MPI_INT, nullptr, c.comm, &request) ==
            MPIX_SUCCESS);
    int flag = 0;
    CHECK(MPIX_Wait(request, nullptr) == MPIX_ERR_ARG);
    CHECK(message_has("status is NULL (pass MPI_STATUS_IGNORE)"));
    CHECK(MPIX_Test(request, &flag, nullptr) == MPIX_ERR_ARG);
    CHECK(message_has("status is NULL"));
    CHECK(MPIX_Request_free(&request) == MPIX_SUCCESS);
  }

  // Only one rank passes a bad count: every rank returns an error, none hangs.
  std::vector<int> mine = harness::world_rank() == 0 ? negative : ex.counts;
  int rc = MPIX_Alltoallv(ex.send.data(), mine.data(), ex.displs.data(), MPI_INT, ex.recv.data(), ex.counts.data(),
                          ex.displs.data(), MPI_INT, nullptr, c.comm);
  CHECK(rc == MPIX_ERR_ARG);
  if (harness::world_rank() != 0) CHECK(message_has("another rank"));

  // Afterwards the communicator works, with every algorithm.
  for (const char* algorithm : {"pmpi", "pairwise", "random_sendrecv"}) {
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    std::fill(ex.recv.begin(), ex.recv.end(), -1);
    CHECK(ex.run(info.info, c.comm) == MPIX_SUCCESS);
    CHECK(all_ranks(ex.correct()));
  }
}

TEST_CASE("mpix_check_args finds counts that disagree between ranks", "[errors]") {
  Comm c;
  SmallExchange ex;
  harness::Info info{{"mpix_check_args", "true"}};
  CHECK(ex.run(info.info, c.comm) == MPIX_SUCCESS);
  CHECK(all_ranks(ex.correct()));
  if (ex.size > 1) {
    // Rank 0 expects two ints from rank 1, which sends one.
    std::vector<int> recv_counts(ex.counts), displs(ex.size);
    if (ex.rank == 0) recv_counts[1] = 2;
    for (int j = 0, d = 0; j < ex.size; d += recv_counts[j], ++j) displs[j] = d;
    std::vector<int> recv(ex.size + 1);
    int rc = MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, recv.data(),
                            recv_counts.data(), displs.data(), MPI_INT, info.info, c.comm);
    CHECK(rc == MPIX_ERR_ARG);
    if (ex.rank == 0) CHECK(message_has("rank 1 sends 4 bytes to rank 0, which expects 8"));
  }
}

// Under auto every parameter of every algorithm is read and checked before the
// agreement, as for an algorithm asked for: ipc_hybrid's thresholds too.
TEST_CASE("auto: every algorithm's parameters are honoured and checked", "[info]") {
  Comm c;
  SmallExchange ex;
  harness::Info info{{"mpix_ipc_threshold", "100"}, {"mpix_memcpy_threshold", "4096"}};
  MPIX_Request* request = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(),
                              ex.counts.data(), ex.displs.data(), MPI_INT, info.info, c.comm, &request) ==
          MPIX_SUCCESS);
  CHECK(request->param_values.ipc_threshold == 100);
  CHECK(request->param_values.memcpy_threshold == 4096);
  MPIX_Request_free(&request);
  for (const char* variable : {"MPIX_IPC_THRESHOLD", "MPIX_MEMCPY_THRESHOLD"}) {
    INFO(variable);
    setenv(variable, "-1", 1);
    CHECK(ex.run(nullptr, c.comm) == MPIX_ERR_INFO_VALUE);
    CHECK(message_has(variable));
    unsetenv(variable);
    CHECK(ex.run(nullptr, c.comm) == MPIX_SUCCESS);
  }
}

TEST_CASE("algorithm choice: info, then environment, then auto", "[info]") {
  Comm c;
  SmallExchange ex;
  auto chosen = [&](MPIX_Info* info) {
    MPIX_Request* request = nullptr;
    std::string name;
    if (MPIX_Alltoallv_plan(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(),
                            ex.counts.data(), ex.displs.data(), MPI_INT, info, c.comm, &request) == MPIX_SUCCESS) {
      name = request->algorithm;
      MPIX_Request_free(&request);
    } else {
      name = std::string("error: ") + MPIX_Last_error_message();
    }
    return name;
  };
  // auto: the model's choice, a registered algorithm (which one depends on the node
  // layout; tests/test_model.cpp checks the choice itself).
  const std::string automatic = chosen(nullptr);
  CHECK(mpix::find_algorithm(automatic, mpix::kAlltoallv) != nullptr);
  setenv("MPIX_ALLTOALLV_ALGORITHM", "pairwise", 1);
  CHECK(chosen(nullptr) == "pairwise");
  {
    harness::Info info{{"mpix_alltoallv_algorithm", "nonblocking"}};
    CHECK(chosen(info.info) == "nonblocking");
  }
  setenv("MPIX_ALLTOALLV_ALGORITHM", "no_such_algorithm", 1);
  std::string error = chosen(nullptr);
  CHECK(error.find("MPIX_ALLTOALLV_ALGORITHM") != std::string::npos);
  CHECK(error.find("no_such_algorithm") != std::string::npos);
  unsetenv("MPIX_ALLTOALLV_ALGORITHM");

  setenv("MPIX_STRIDE", "0", 1);
  harness::Info multipair{{"mpix_alltoallv_algorithm", "multipair"}};
  CHECK(chosen(multipair.info).find("MPIX_STRIDE (environment)=0") != std::string::npos);
  setenv("MPIX_STRIDE", "2", 1);
  MPIX_Request* request = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(),
                              ex.counts.data(), ex.displs.data(), MPI_INT, multipair.info, c.comm,
                              &request) == MPIX_SUCCESS);
  CHECK(request->params == "stride=2");
  MPIX_Request_free(&request);
  unsetenv("MPIX_STRIDE");

  // Ranks that ask for different algorithms are told so rather than left hanging.
  if (ex.size > 1) {
    harness::Info differs{{"mpix_alltoallv_algorithm", ex.rank == 0 ? "pairwise" : "nonblocking"}};
    CHECK(ex.run(differs.info, c.comm) == MPIX_ERR_ARG);
    CHECK(message_has("different algorithms"));
    // Or the same algorithm with different parameters: their schedules would not match.
    harness::Info seeds{{"mpix_alltoallv_algorithm", "random_sendrecv"}, {"mpix_seed", ex.rank == 0 ? "1" : "2"}};
    CHECK(ex.run(seeds.info, c.comm) == MPIX_ERR_ARG);
    CHECK(message_has("different algorithm parameters"));
    // A bad hint on one rank only, under auto: every rank returns an error.
    if (ex.rank == 1) setenv("MPIX_MAX_QUEUE", "1", 1);
    CHECK(ex.run(nullptr, c.comm) != MPIX_SUCCESS);
    if (ex.rank == 1) CHECK(message_has("MPIX_MAX_QUEUE (environment)=1"));
    unsetenv("MPIX_MAX_QUEUE");
    std::fill(ex.recv.begin(), ex.recv.end(), -1);
    CHECK(ex.run(nullptr, c.comm) == MPIX_SUCCESS);
    CHECK(all_ranks(ex.correct()));
  }
}

TEST_CASE("persistent requests: start, wait, reuse, several active at once", "[persistent]") {
  Comm c;
  SmallExchange a, b;
  for (int& v : b.send) v += 50000;
  harness::Info info{{"mpix_alltoallv_algorithm", "pairwise"}};
  MPIX_Request *ra = nullptr, *rb = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(a.send.data(), a.counts.data(), a.displs.data(), MPI_INT, a.recv.data(),
                              a.counts.data(), a.displs.data(), MPI_INT, info.info, c.comm, &ra) == MPIX_SUCCESS);
  REQUIRE(MPIX_Alltoallv_plan(b.send.data(), b.counts.data(), b.displs.data(), MPI_INT, b.recv.data(),
                              b.counts.data(), b.displs.data(), MPI_INT, info.info, c.comm, &rb) == MPIX_SUCCESS);
  // Wait on a request never started returns at once.
  MPI_Status status;
  CHECK(MPIX_Wait(ra, &status) == MPIX_SUCCESS);
  for (int round = 0; round < 3; ++round) {
    for (int j = 0; j < a.size; ++j) a.send[j] = a.rank * 100 + j + round;
    CHECK(MPIX_Start(ra) == MPIX_SUCCESS);
    CHECK(MPIX_Start(ra) == MPIX_ERR_ARG);  // already active
    CHECK(message_has("already active"));
    CHECK(MPIX_Request_free(&ra) == MPIX_ERR_ARG);  // active
    CHECK(ra != nullptr);
    // Both active at once: their messages must not cross.
    CHECK(MPIX_Start(rb) == MPIX_SUCCESS);
    CHECK(MPIX_Wait(ra, &status) == MPIX_SUCCESS);
    CHECK(status.MPI_ERROR == MPI_SUCCESS);
    CHECK(MPIX_Wait(rb, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
    bool ok = true;
    for (int i = 0; i < a.size; ++i) ok = ok && a.recv[i] == i * 100 + a.rank + round;
    CHECK(all_ranks(ok));
    bool b_ok = true;
    for (int i = 0; i < b.size; ++i) b_ok = b_ok && b.recv[i] == i * 100 + b.rank + 50000;
    CHECK(all_ranks(b_ok));
  }
  // The communicator cannot go while requests use it.
  MPIX_Comm* comm = c.comm;
  CHECK(MPIX_Comm_free(&comm) == MPIX_ERR_ARG);
  CHECK(message_has("2 persistent request(s)"));
  CHECK(MPIX_Comm_update_locality(comm, 1) == MPIX_ERR_ARG);
  CHECK(message_has("node layout"));
  CHECK(comm == c.comm);
  CHECK(MPIX_Request_free(&ra) == MPIX_SUCCESS);
  CHECK(ra == nullptr);
  CHECK(MPIX_Request_free(&rb) == MPIX_SUCCESS);
}

// MPIX_Test must not wait: with two requests active, each rank tests them in turn
// (odd ranks B first), and a test that waited inside one request for a rank testing
// the other would hang both (node_aware did, in its node phase, before 2026-11-28).
TEST_CASE("persistent requests: two completed by tests in turn, every algorithm", "[persistent]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  const std::vector<std::string> alltoall_names = mpix::algorithm_names(mpix::kAlltoall);
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
    INFO(name);
    const bool both = std::find(alltoall_names.begin(), alltoall_names.end(), name) != alltoall_names.end();
    harness::Info info{{"mpix_alltoallv_algorithm", name}, {"mpix_alltoall_algorithm", both ? name : "pmpi"}};
    // A: 0 to 4 ints per pair; B: 3 ints per pair.
    std::vector<int> send_counts(size), send_displs(size), recv_counts(size), recv_displs(size);
    int sent = 0, received = 0;
    for (int j = 0; j < size; ++j) {
      send_counts[j] = (rank * 7 + j * 3) % 5, send_displs[j] = sent, sent += send_counts[j];
      recv_counts[j] = (j * 7 + rank * 3) % 5, recv_displs[j] = received, received += recv_counts[j];
    }
    std::vector<int> a_send(sent + 1), a_recv(received + 1), b_send(3 * size), b_recv(3 * size);
    MPIX_Request *a = nullptr, *b = nullptr;
    REQUIRE(MPIX_Alltoallv_plan(a_send.data(), send_counts.data(), send_displs.data(), MPI_INT, a_recv.data(),
                                recv_counts.data(), recv_displs.data(), MPI_INT, info.info, c.comm, &a) == MPIX_SUCCESS);
    REQUIRE(MPIX_Alltoall_plan(b_send.data(), 3, MPI_INT, b_recv.data(), 3, MPI_INT, info.info, c.comm, &b) ==
            MPIX_SUCCESS);
    for (int start = 0; start < 3; ++start) {
      for (int x = 0; x < sent; ++x) a_send[x] = rank * 10000 + start * 1000 + x;
      for (int x = 0; x < 3 * size; ++x) b_send[x] = -(rank * 10000 + start * 1000 + x);
      std::vector<int> a_expected(received + 1), b_expected(3 * size);
      MPI_Alltoallv(a_send.data(), send_counts.data(), send_displs.data(), MPI_INT, a_expected.data(),
                    recv_counts.data(), recv_displs.data(), MPI_INT, MPI_COMM_WORLD);
      MPI_Alltoall(b_send.data(), 3, MPI_INT, b_expected.data(), 3, MPI_INT, MPI_COMM_WORLD);
      REQUIRE(MPIX_Start(a) == MPIX_SUCCESS);
      REQUIRE(MPIX_Start(b) == MPIX_SUCCESS);
      MPIX_Request* order[2] = {rank % 2 ? b : a, rank % 2 ? a : b};
      int done[2] = {0, 0};
      while (!(done[0] && done[1]))
        for (int k = 0; k < 2; ++k)
          if (!done[k]) REQUIRE(MPIX_Test(order[k], &done[k], MPI_STATUS_IGNORE) == MPIX_SUCCESS);
      a_recv.back() = a_expected.back();
      CHECK(all_ranks(a_recv == a_expected && b_recv == b_expected));
    }
    CHECK(MPIX_Request_free(&a) == MPIX_SUCCESS);
    CHECK(MPIX_Request_free(&b) == MPIX_SUCCESS);
  }
}

TEST_CASE("the library's messages never meet the user's", "[isolation]") {
  Comm c;
  SmallExchange ex;
  int size = ex.size, rank = ex.rank;
  // Every rank has a message to its right neighbour pending on the user's
  // communicator, with the tag the first plan would use, during the exchange.
  int out = 7000 + rank, in = -1;
  MPI_Request send;
  MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, &send);
  for (const char* algorithm : {"nonblocking", "random_scatter", "multipair_waitany"}) {
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    CHECK(ex.run(info.info, c.comm) == MPIX_SUCCESS);
    CHECK(all_ranks(ex.correct()));
  }
  MPI_Status status;
  MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  CHECK(in == 7000 + (rank - 1 + size) % size);
  CHECK(MPIX_Comm_mpi(c.comm) == MPI_COMM_WORLD);
}

TEST_CASE("locality: detection, emulation, a smaller last node", "[locality]") {
  // Detection ignores MPIX_PPN when it is unset; this test sets and restores it.
  const char* saved = std::getenv("MPIX_PPN");
  std::string saved_value = saved ? saved : "";
  unsetenv("MPIX_PPN");
  int size = harness::world_size(), rank = harness::world_rank();
  {
    Comm c;
    int nodes = 0, node = -1, local_size = 0, local_rank = -1;
    REQUIRE(MPIX_Comm_locality(c.comm, &nodes, &node, &local_size, &local_rank) == MPIX_SUCCESS);
    // This machine is one node.
    CHECK(nodes == 1);
    CHECK(node == 0);
    CHECK(local_size == size);
    CHECK(local_rank == rank);

    for (int ppn : {1, 2, 3, 5}) {
      INFO("ppn=" << ppn);
      REQUIRE(MPIX_Comm_update_locality(c.comm, ppn) == MPIX_SUCCESS);
      REQUIRE(MPIX_Comm_locality(c.comm, &nodes, &node, &local_size, &local_rank) == MPIX_SUCCESS);
      CHECK(nodes == (size + ppn - 1) / ppn);
      CHECK(node == rank / ppn);
      CHECK(local_rank == rank % ppn);
      CHECK(local_size == std::min(ppn, size - node * ppn));
      MPI_Comm node_comm, group_comm;
      REQUIRE(c.comm->locality.node_comm(&node_comm) == MPIX_SUCCESS);
      REQUIRE(c.comm->locality.group_comm(&group_comm) == MPIX_SUCCESS);
      int n = 0, r = 0;
      MPI_Comm_size(node_comm, &n);
      MPI_Comm_rank(node_comm, &r);
      CHECK(n == local_size);
      CHECK(r == local_rank);
      MPI_Comm_size(group_comm, &n);
      MPI_Comm_rank(group_comm, &r);
      int with_my_local_rank = 0;
      for (int q = 0; q < size; ++q) with_my_local_rank += q % ppn == local_rank;
      CHECK(n == with_my_local_rank);
      CHECK(r == node);
      // An exchange on the emulated layout.
      SmallExchange ex;
      CHECK(ex.run(nullptr, c.comm) == MPIX_SUCCESS);
      CHECK(all_ranks(ex.correct()));
    }
    REQUIRE(MPIX_Comm_update_locality(c.comm, 0) == MPIX_SUCCESS);
    REQUIRE(MPIX_Comm_locality(c.comm, &nodes, nullptr, nullptr, nullptr) == MPIX_SUCCESS);
    CHECK(nodes == 1);
  }
  {
    setenv("MPIX_PPN", "2", 1);
    Comm c;
    int nodes = 0;
    MPIX_Comm_locality(c.comm, &nodes, nullptr, nullptr, nullptr);
    CHECK(nodes == (size + 1) / 2);
    setenv("MPIX_PPN", "two", 1);
    MPIX_Comm* bad = nullptr;
    CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_PPN=two"));
    CHECK(bad == nullptr);
    // Below INT_MIN: refused, not wrapped (-4294967295 had become ppn 1).
    setenv("MPIX_PPN", "-4294967295", 1);
    CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_PPN=-4294967295 (environment): out of range"));
    CHECK(bad == nullptr);
  }
  if (saved) setenv("MPIX_PPN", saved_value.c_str(), 1);
  else unsetenv("MPIX_PPN");
  CHECK(MPIX_Comm_init(nullptr, MPI_COMM_WORLD) == MPIX_ERR_ARG);
  MPIX_Comm* none = nullptr;
  CHECK(MPIX_Comm_init(&none, MPI_COMM_NULL) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_free(nullptr) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_locality(nullptr, nullptr, nullptr, nullptr, nullptr) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_mpi(nullptr) == MPI_COMM_NULL);
}

TEST_CASE("sub-communicators of MPI_COMM_WORLD work", "[locality]") {
  // Odd ranks and even ranks each form a communicator.
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, harness::world_rank() % 2, 0, &half);
  {
    Comm c(half);
    int size = 0, rank = 0;
    MPI_Comm_size(half, &size);
    MPI_Comm_rank(half, &rank);
    std::vector<int> send(size), recv(size, -1);
    for (int j = 0; j < size; ++j) send[j] = rank * 10 + j;
    harness::Info info{{"mpix_alltoall_algorithm", "random_sendrecv"}};
    CHECK(MPIX_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, info.info, c.comm) == MPIX_SUCCESS);
    bool ok = true;
    for (int i = 0; i < size; ++i) ok = ok && recv[i] == i * 10 + rank;
    CHECK(all_ranks(ok));
  }
  MPI_Comm_free(&half);
}

TEST_CASE("scratch memory is taken from the communicator's pool", "[scratch]") {
  Comm c;
  int size = harness::world_size();
  // In place: the copy of the receive blocks is scratch.
  std::vector<int> buffer(size * 4, 1);
  MPIX_Request* request = nullptr;
  harness::Info pmpi{{"mpix_alltoall_algorithm", "pmpi"}};  // no scratch of its own
  REQUIRE(MPIX_Alltoall_plan(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer.data(), 4, MPI_INT, pmpi.info, c.comm,
                             &request) == MPIX_SUCCESS);
  CHECK(request->plan->init_stats.scratch_bytes == buffer.size() * sizeof(int));
  CHECK(c.comm->scratch.in_use() == buffer.size() * sizeof(int));
  MPIX_Request_free(&request);
  CHECK(c.comm->scratch.in_use() == 0);
  CHECK(c.comm->scratch.high_water() >= buffer.size() * sizeof(int));
}

TEST_CASE("tuning files: rules, precedence, and files that are missing or malformed", "[tuning]") {
  Comm c;
  SmallExchange ex;  // 4-byte blocks
  std::string path = "/tmp/mpix-tuning-test-" + std::to_string(getpid()) + ".txt";
  auto write = [&](const std::string& text) {
    FILE* file = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), file);
    std::fclose(file);
  };
  auto run = [&](MPIX_Info* info, std::string* algorithm, std::string* params) {
    MPIX_Request* request = nullptr;
    int rc = MPIX_Alltoallv_plan(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(),
                                 ex.counts.data(), ex.displs.data(), MPI_INT, info, c.comm, &request);
    if (rc == MPIX_SUCCESS) {
      *algorithm = request->algorithm;
      *params = request->params;
      MPIX_Start(request);
      MPIX_Wait(request, MPI_STATUS_IGNORE);
      MPIX_Request_free(&request);
    }
    return rc;
  };
  std::string algorithm, params;

  harness::Info missing{{"mpix_tuning_file", "/nonexistent/mpix.tuning"}};
  CHECK(run(missing.info, &algorithm, &params) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has("/nonexistent/mpix.tuning: cannot be opened"));

  struct Bad { const char* text; const char* says; };
  for (const Bad& bad : std::vector<Bad>{
           {"alltoallv 1 * 0 *\n", "expected <op>"},
           {"# comment\n\nalltoall_x 1 * 0 * pairwise\n", ":3: unknown operation"},
           {"alltoallv one * 0 * pairwise\n", "ranks must be integers"},
           {"alltoallv 1 * 0 -5 pairwise\n", "bytes must be integers"},
           {"alltoallv 8 4 0 * pairwise\n", "empty range"},
           {"alltoallv 1 * 0 * bruckish\n", "unknown algorithm 'bruckish'"},
           {"alltoallv 1 * 0 * multipair stride\n", "expected key=value"},
           {"alltoallv 1 * 0 * multipair mpix_nope=2\n", "unknown key 'mpix_nope'"},
           {"alltoallv 1 * 0 * multipair mpix_seed=2\n", "does not take mpix_seed"},
           {"alltoallv 1 * 0 * multipair mpix_stride=0\n", "mpix_stride=0: must be 1..2147483647"}}) {
    write(bad.text);
    harness::Info info{{"mpix_tuning_file", path}};
    INFO(bad.text);
    CHECK(run(info.info, &algorithm, &params) == MPIX_ERR_TUNING_FILE);
    CHECK(message_has(path.c_str()));
    CHECK(message_has(bad.says));
    // Every read of a malformed file fails again (nothing half-read is kept).
    CHECK(run(info.info, &algorithm, &params) == MPIX_ERR_TUNING_FILE);
  }

  // A rule for other rank counts may take hints that do not fit this P (mpix-tune
  // writes radices up to its P): it is left alone; one that may match fails, naming
  // its line.
  {
    // Files of their own: a communicator keeps the tables it read, by path.
    const int size = harness::world_size();
    const std::string other_ranks = path + ".ranks", this_p = path + ".p";
    auto write_to = [](const std::string& file, const std::string& text) {
      FILE* out = std::fopen(file.c_str(), "w");
      std::fputs(text.c_str(), out);
      std::fclose(out);
    };
    write_to(other_ranks, "alltoallv " + std::to_string(size + 1) + " * 0 * tuna mpix_radix=" +
                              std::to_string(size + 1) + "\nalltoallv 1 * 0 * pairwise\n");
    harness::Info info{{"mpix_tuning_file", other_ranks}};
    CHECK(run(info.info, &algorithm, &params) == MPIX_SUCCESS);
    CHECK(algorithm == "pairwise");
    if (size > 1) {  // one rank takes any radix
      write_to(this_p, "alltoallv 1 * 0 * tuna mpix_radix=" + std::to_string(size + 1) + "\n");
      harness::Info fits_not{{"mpix_tuning_file", this_p}};
      CHECK(run(fits_not.info, &algorithm, &params) == MPIX_ERR_TUNING_FILE);
      CHECK(message_has((this_p + ":1: ").c_str()));
      CHECK(message_has("mpix_radix"));
    }
    std::remove(other_ranks.c_str());
    std::remove(this_p.c_str());
  }

  write("# measured\n"
        "alltoall  1 * 0 * pairwise\n"
        "alltoallv 1 * 1000 * nonblocking   # large blocks\n"
        "alltoallv 1 * 0 999 multipair mpix_stride=5\n");
  std::string other = path + ".env";
  {
    harness::Info info{{"mpix_tuning_file", path}};
    CHECK(run(info.info, &algorithm, &params) == MPIX_SUCCESS);
    CHECK(algorithm == "multipair");
    CHECK(params == "stride=5");
    CHECK(all_ranks(ex.correct()));
    // The info's own hint wins over the rule's.
    info.set("mpix_stride", "2");
    CHECK(run(info.info, &algorithm, &params) == MPIX_SUCCESS);
    CHECK(params == "stride=2");
    // An algorithm asked for wins over the file.
    info.set("mpix_alltoallv_algorithm", "pairwise");
    CHECK(run(info.info, &algorithm, &params) == MPIX_SUCCESS);
    CHECK(algorithm == "pairwise");
  }
  // Through the environment too.
  setenv("MPIX_TUNING_FILE", path.c_str(), 1);
  CHECK(run(nullptr, &algorithm, &params) == MPIX_SUCCESS);
  CHECK(algorithm == "multipair");
  setenv("MPIX_TUNING_FILE", "/nonexistent/env.tuning", 1);
  CHECK(run(nullptr, &algorithm, &params) == MPIX_ERR_TUNING_FILE);
  CHECK(message_has("/nonexistent/env.tuning"));
  unsetenv("MPIX_TUNING_FILE");
  std::remove(path.c_str());
}

TEST_CASE("direct-copy algorithms are unavailable under simulation only", "[registry]") {
  // The rule on a made-up entry, for both kinds of build.
  mpix::Algorithm direct{"made_up_direct", mpix::kAlltoallv, {}, nullptr, nullptr, nullptr, "test entry"};
  direct.needs = mpix::kNeedsDirectCopy;
  CHECK(mpix::unavailable_reason(direct, false).empty());
  const std::string why = mpix::unavailable_reason(direct, true);
  CHECK(why.find("direct intra-node copies") != std::string::npos);
  CHECK(why.find("simulation") != std::string::npos);
  // ipc_hybrid needs direct copies; every other registered algorithm runs in every build.
  for (const mpix::Algorithm& algorithm : mpix::algorithms()) {
    INFO(algorithm.name);
    const bool ipc = std::string(algorithm.name) == "ipc_hybrid";
    CHECK(algorithm.needs == (ipc ? (unsigned)mpix::kNeedsDirectCopy : 0u));
    CHECK(mpix::unavailable_reason(algorithm, true).empty() == !ipc);
  }
}

// ipc_hybrid's direct copies (src/gpu): inside a node the blocks go without
// messages when CMA is permitted, all by messages with MPIX_CMA=off; block sizes
// that disagree between the two ranks of a direct pair fail on every rank before
// anything is copied; a malformed MPIX_CMA fails on every rank.
TEST_CASE("ipc_hybrid: direct copies, CMA off, disagreeing sizes", "[ipc]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  const int block = 1024;  // ints: 4 KiB per block
  std::vector<int> send((std::size_t)size * block), recv((std::size_t)size * block, -1);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < block; ++k) send[(std::size_t)j * block + k] = rank * 1000003 + j * 7 + k;
  harness::Info info{{"mpix_alltoall_algorithm", "ipc_hybrid"}, {"mpix_ipc_threshold", "0"}};
  for (const char* setting : {"write", "read", "off"}) {
    setenv("MPIX_CMA", setting, 1);
    Comm guard;
    int local_size = 0;
    MPIX_Comm_locality(guard.comm, nullptr, nullptr, &local_size, nullptr);
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoall_plan(send.data(), block, MPI_INT, recv.data(), block, MPI_INT, info.info, guard.comm,
                               &request) == MPIX_SUCCESS);
    for (int start = 0; start < 2; ++start) {
      std::fill(recv.begin(), recv.end(), -1);
      REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
      REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
      bool ok = true;
      for (int i = 0; i < size; ++i)
        for (int k = 0; k < block; ++k) ok = ok && recv[(std::size_t)i * block + k] == i * 1000003 + rank * 7 + k;
      CHECK(all_ranks(ok));
    }
    const bool cma = guard.comm->direct_copy.cma();
    INFO("MPIX_CMA=" << setting << ", CMA " << (cma ? "on" : "off: " + guard.comm->direct_copy.cma_off_reason()));
    CHECK(cma == (std::string(setting) != "off"));
    CHECK(request->plan->stats.messages == (cma ? size - local_size : size - 1));
    MPIX_Request_free(&request);
    unsetenv("MPIX_CMA");
  }

  // Rank 1 sends two ints to rank 0, which expects one: a direct pair (one node).
  Comm guard;
  int local_size = 0;
  MPIX_Comm_locality(guard.comm, nullptr, nullptr, &local_size, nullptr);
  if (size >= 2 && local_size >= 2 && guard.comm->direct_copy.cma()) {
    std::vector<int> counts(size, 1), displs(size), rcounts(size, 1);
    for (int j = 0; j < size; ++j) displs[j] = 2 * j;
    if (rank == 1) counts[0] = 2;
    std::vector<int> out(2 * size, 0), in(2 * size + 1, -1);
    harness::Info v{{"mpix_alltoallv_algorithm", "ipc_hybrid"}, {"mpix_ipc_threshold", "0"}};
    int rc = MPIX_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(), rcounts.data(),
                            displs.data(), MPI_INT, v.info, guard.comm);
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(in[2 * size] == -1);
    if (rank == 0) CHECK(in[1] == -1);  // nothing written beyond the expected block
  }

  setenv("MPIX_CMA", "sideways", 1);
  {
    Comm bad;
    int rc = MPIX_Alltoall(send.data(), block, MPI_INT, recv.data(), block, MPI_INT, info.info, bad.comm);
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_CMA=sideways"));
  }
  unsetenv("MPIX_CMA");
}

// Memory types and device buffers. Host memory is always recognised as such (also
// in CUDA builds on a machine without a GPU or driver: not an error). The device
// part needs a GPU: without one it says why and checks nothing more.
// MPI_BOTTOM (NULL in MPICH and Open MPI) with absolute addresses is legal MPI: in
// the displacements (alltoallv_c) or in the datatype (alltoall, a type whose lower
// bound is an address); a NULL with relative displacements is refused.
TEST_CASE("MPI_BOTTOM with absolute addresses, every algorithm", "[bottom]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  const int block = 3;
  Comm guard;
  std::vector<int> send((std::size_t)size * block), recv((std::size_t)size * block);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < block; ++k) send[(std::size_t)j * block + k] = rank * 1000 + j * 10 + k;
  auto received_right = [&] {
    bool ok = true;
    for (int i = 0; i < size; ++i)
      for (int k = 0; k < block; ++k) ok = ok && recv[(std::size_t)i * block + k] == i * 1000 + rank * 10 + k;
    return ok;
  };
  auto address = [](const void* p) {
    MPI_Aint a = 0;
    MPI_Get_address(p, &a);
    return a;
  };
  std::vector<MPI_Count> counts(size, block);
  std::vector<MPI_Aint> sdispls(size), rdispls(size);
  for (int j = 0; j < size; ++j) {  // in units of the extent of MPI_INT
    sdispls[j] = address(&send[(std::size_t)j * block]) / (MPI_Aint)sizeof(int);
    rdispls[j] = address(&recv[(std::size_t)j * block]) / (MPI_Aint)sizeof(int);
  }
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
    INFO("alltoallv_c " << name);
    harness::Info info{{"mpix_alltoallv_algorithm", name}};
    std::fill(recv.begin(), recv.end(), -1);
    int rc = MPIX_Alltoallv_c(MPI_BOTTOM, counts.data(), sdispls.data(), MPI_INT, MPI_BOTTOM, counts.data(),
                              rdispls.data(), MPI_INT, info.info, guard.comm);
    if (name == "ipc_hybrid" && all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;
    CHECK(all_ranks(rc == MPIX_SUCCESS && received_right()));
  }
  {
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoallv_plan_c(MPI_BOTTOM, counts.data(), sdispls.data(), MPI_INT, MPI_BOTTOM, counts.data(),
                                  rdispls.data(), MPI_INT, nullptr, guard.comm, &request) == MPIX_SUCCESS);
    for (int start = 0; start < 2; ++start) {
      std::fill(recv.begin(), recv.end(), -1);
      REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
      REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
      CHECK(all_ranks(received_right()));
    }
    MPIX_Request_free(&request);
  }
  // Alltoall: block j of a type whose lower bound is the first block's address.
  MPI_Datatype send_type, recv_type, send_block, recv_block;
  const int lengths[1] = {block};
  MPI_Aint send_at[1] = {address(send.data())}, recv_at[1] = {address(recv.data())};
  MPI_Type_create_hindexed(1, lengths, send_at, MPI_INT, &send_block);
  MPI_Type_create_hindexed(1, lengths, recv_at, MPI_INT, &recv_block);
  MPI_Type_create_resized(send_block, send_at[0], block * (MPI_Aint)sizeof(int), &send_type);
  MPI_Type_create_resized(recv_block, recv_at[0], block * (MPI_Aint)sizeof(int), &recv_type);
  MPI_Type_commit(&send_type);
  MPI_Type_commit(&recv_type);
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
    INFO("alltoall " << name);
    harness::Info info{{"mpix_alltoall_algorithm", name}};
    std::fill(recv.begin(), recv.end(), -1);
    int rc = MPIX_Alltoall(MPI_BOTTOM, 1, send_type, MPI_BOTTOM, 1, recv_type, info.info, guard.comm);
    if (name == "ipc_hybrid" && all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;
    CHECK(all_ranks(rc == MPIX_SUCCESS && received_right()));
  }
  for (MPI_Datatype* t : {&send_type, &recv_type, &send_block, &recv_block}) MPI_Type_free(t);
  // NULL with displacements relative to a buffer: a mistake, named.
  std::vector<MPI_Aint> relative(size);
  for (int j = 0; j < size; ++j) relative[j] = (MPI_Aint)j * block;
  int rc = MPIX_Alltoallv_c(send.data(), counts.data(), relative.data(), MPI_INT, nullptr, counts.data(),
                            relative.data(), MPI_INT, nullptr, guard.comm);
  CHECK(all_ranks(rc == MPIX_ERR_ARG));
  CHECK(message_has("recvbuf is NULL but"));
  CHECK(message_has("MPI_BOTTOM takes absolute addresses"));
  // The same far from address 0 (400 KB on): no page there is mapped.
  std::vector<MPI_Aint> far(relative);
  for (MPI_Aint& displ : far) displ += 100000;
  rc = MPIX_Alltoallv_c(send.data(), counts.data(), relative.data(), MPI_INT, nullptr, counts.data(), far.data(),
                        MPI_INT, nullptr, guard.comm);
  CHECK(all_ranks(rc == MPIX_ERR_ARG));
  CHECK(message_has("recvbuf is NULL but"));
}

TEST_CASE("memory types; device buffers through every algorithm", "[device]") {
  std::vector<int> host(16);
  CHECK(mpix::memory_type(host.data()) == mpix::MemoryType::host);
  CHECK(mpix::memory_type(nullptr) == mpix::MemoryType::host);
  bool aware = true;
  harness::Info no{{"mpix_cuda_aware", "false"}}, yes{{"mpix_cuda_aware", "true"}};
  REQUIRE(mpix::mpi_cuda_aware(no.info, &aware) == MPIX_SUCCESS);
  CHECK(!aware);
  REQUIRE(mpix::mpi_cuda_aware(yes.info, &aware) == MPIX_SUCCESS);
  CHECK(aware);
  if (!mpix::device_available()) {
    if (harness::world_rank() == 0)
      std::printf("SKIPPED: device buffer tests: %s\n", mpix::device_unavailable_reason().c_str());
    return;
  }
#ifdef MPIX_HAVE_CUDA
  const int size = harness::world_size(), rank = harness::world_rank();
  const int block = 256;
  std::vector<int> send((std::size_t)size * block), recv((std::size_t)size * block);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < block; ++k) send[(std::size_t)j * block + k] = rank * 100003 + j * 7 + k;
  void *dsend = nullptr, *drecv = nullptr;
  REQUIRE(cudaMalloc(&dsend, send.size() * sizeof(int)) == cudaSuccess);
  REQUIRE(cudaMalloc(&drecv, recv.size() * sizeof(int)) == cudaSuccess);
  CHECK(mpix::memory_type(dsend) == mpix::MemoryType::device);
  cudaMemcpy(dsend, send.data(), send.size() * sizeof(int), cudaMemcpyHostToDevice);
  Comm guard;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
    INFO(name);
    harness::Info info{{"mpix_alltoall_algorithm", name}, {"mpix_ipc_threshold", "0"}};
    cudaMemset(drecv, 0xff, recv.size() * sizeof(int));
    int rc = MPIX_Alltoall(dsend, block, MPI_INT, drecv, block, MPI_INT, info.info, guard.comm);
    // ipc_hybrid refuses (on every rank) what it cannot move and says why.
    if (name == "ipc_hybrid" && rc == MPIX_ERR_UNSUPPORTED) {
      CHECK(message_has("ipc_hybrid"));
      continue;
    }
    REQUIRE(rc == MPIX_SUCCESS);
    cudaMemcpy(recv.data(), drecv, recv.size() * sizeof(int), cudaMemcpyDeviceToHost);
    bool ok = true;
    for (int i = 0; i < size; ++i)
      for (int k = 0; k < block; ++k) ok = ok && recv[(std::size_t)i * block + k] == i * 100003 + rank * 7 + k;
    CHECK(all_ranks(ok));
  }
  cudaFree(dsend);
  cudaFree(drecv);
#endif
}

// Regions inside nodes: detected (whatever the hardware says, a partition of the
// node) and emulated with sizes that divide the node and that do not (the last
// region of a node smaller), on emulated nodes of several sizes; the region
// communicator matches; values that differ between ranks fail on every rank.
TEST_CASE("regions: detection, emulation, agreement", "[regions]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  Comm guard;
  for (int ppn : {0, 1, 2, 3, 4}) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    int local_size = 0, local_rank = 0;
    MPIX_Comm_locality(guard.comm, nullptr, nullptr, &local_size, &local_rank);
    for (int per_region : {0, 1, 2, 3}) {
      INFO("ppn=" << ppn << " ranks_per_region=" << per_region);
      REQUIRE(MPIX_Comm_update_regions(guard.comm, per_region) == MPIX_SUCCESS);
      int regions = 0, region = -1, region_size = 0, region_rank = -1;
      REQUIRE(MPIX_Comm_region(guard.comm, &regions, &region, &region_size, &region_rank) == MPIX_SUCCESS);
      CHECK(regions >= 1);
      CHECK(region >= 0);
      CHECK(region < regions);
      CHECK(region_rank >= 0);
      CHECK(region_rank < region_size);
      if (per_region > 0) {
        CHECK(regions == (local_size + per_region - 1) / per_region);
        CHECK(region == local_rank / per_region);
        CHECK(region_rank == local_rank % per_region);
        CHECK(region_size == std::min(per_region, local_size - region * per_region));
      }
      MPI_Comm region_comm = MPI_COMM_NULL;
      REQUIRE(guard.comm->regions.region_comm(&region_comm) == MPIX_SUCCESS);
      int comm_size = 0, comm_rank = 0;
      MPI_Comm_size(region_comm, &comm_size);
      MPI_Comm_rank(region_comm, &comm_rank);
      CHECK(comm_size == region_size);
      CHECK(comm_rank == region_rank);
      // The region level over all nodes: every region inside one node, the regions
      // of a node covering it, this rank where MPIX_Comm_region says.
      const mpix::Locality& nodes = guard.comm->locality;
      const mpix::Locality& level = guard.comm->regions.level();
      bool nested = level.local_rank() == region_rank && (int)level.node_ranks(level.node()).size() == region_size;
      std::vector<int> covered(nodes.num_nodes(), 0);
      for (int u = 0; u < level.num_nodes(); ++u) {
        const std::vector<int>& members = level.node_ranks(u);
        nested = nested && !members.empty();
        for (int r : members) nested = nested && nodes.node_of(r) == nodes.node_of(members[0]);
        if (!members.empty()) covered[nodes.node_of(members[0])] += (int)members.size();
      }
      for (int n = 0; n < nodes.num_nodes(); ++n) nested = nested && covered[n] == (int)nodes.node_ranks(n).size();
      CHECK(nested);
      CHECK(guard.comm->regions.divides_nodes() == (level.num_nodes() > nodes.num_nodes()));
    }
  }
  // The hwloc fallback of detection (the MPI's hardware-guided split comes first):
  // a package index, or -1 (not bound inside one package, or no hwloc). This
  // machine may have one package only: detection then gives one region per node,
  // which the loop above checked.
  const int package = mpix::package_of_binding();
  CHECK(package >= -1);
#ifndef MPIX_HAVE_HWLOC
  CHECK(package == -1);
#endif
  REQUIRE(MPIX_Comm_update_locality(guard.comm, 0) == MPIX_SUCCESS);
  if (size > 1) {
    int rc = MPIX_Comm_update_regions(guard.comm, rank == 0 ? 2 : 3);
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(message_has("ranks_per_region"));
  }
  // Any value <= 0 restores detection, INT_MIN too (it was once the marker of a
  // malformed MPIX_REGION_SIZE, and read an unset variable).
  CHECK(MPIX_Comm_update_regions(guard.comm, INT_MIN) == MPIX_SUCCESS);
  CHECK(guard.comm->regions.ranks_per_region() == 0);
  // Still usable, and the layout survives a node update.
  REQUIRE(MPIX_Comm_update_regions(guard.comm, 1) == MPIX_SUCCESS);
  REQUIRE(MPIX_Comm_update_locality(guard.comm, 2) == MPIX_SUCCESS);
  int region_size = 0;
  MPIX_Comm_region(guard.comm, nullptr, nullptr, &region_size, nullptr);
  CHECK(region_size == 1);
  SmallExchange ex;
  CHECK(ex.run(nullptr, guard.comm) == MPIX_SUCCESS);
  CHECK(all_ranks(ex.correct()));

  setenv("MPIX_REGION_SIZE", "two", 1);
  MPIX_Comm* bad = nullptr;
  CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
  CHECK(message_has("MPIX_REGION_SIZE=two (environment): not an integer"));
  CHECK(bad == nullptr);
  // Only one rank's value is malformed: every rank fails, that one with its value.
  setenv("MPIX_REGION_SIZE", rank == 0 ? "-2147483649" : "2", 1);
  CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
  CHECK(message_has(rank == 0 ? "MPIX_REGION_SIZE=-2147483649 (environment): out of range" : "malformed MPIX_REGION_SIZE"));
  CHECK(bad == nullptr);
  setenv("MPIX_REGION_SIZE", "2", 1);
  Comm from_env;
  int per = 0;
  MPIX_Comm_region(from_env.comm, nullptr, nullptr, &per, nullptr);
  int local_size = 0;
  MPIX_Comm_locality(from_env.comm, nullptr, nullptr, &local_size, nullptr);
  CHECK(from_env.comm->regions.ranks_per_region() == 2);
  unsetenv("MPIX_REGION_SIZE");
}

TEST_CASE("datatypes: a type map is in order only where copying its bytes equals packing it", "[datatype]") {
  // Each case is built, checked against what MPI_Pack makes of one element, and freed.
  struct Case {
    const char* name;
    bool in_order;
    MPI_Datatype type;
  };
  std::vector<Case> cases;
  auto add = [&cases](const char* name, bool in_order, MPI_Datatype type) {
    MPI_Type_commit(&type);
    cases.push_back({name, in_order, type});
  };
  MPI_Datatype t = MPI_DATATYPE_NULL, inner = MPI_DATATYPE_NULL;
  const int up[] = {0, 1, 2}, swapped[] = {1, 0}, twice[] = {0, 0, 2}, lengths[] = {2, 0, 1};
  const int gapless[] = {0, 2, 2}, one[] = {1, 1};
  MPI_Aint bytes_up[] = {0, 4}, bytes_down[] = {4, 0}, struct_up[] = {0, 8}, struct_gap[] = {0, 12};
  MPI_Datatype int_double[] = {MPI_INT, MPI_DOUBLE}, double_int[] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_contiguous(4, MPI_INT, &t), add("contiguous", true, t);
  MPI_Type_vector(3, 2, 2, MPI_INT, &t), add("vector, stride = blocklength", true, t);
  MPI_Type_vector(1, 5, 9, MPI_INT, &t), add("vector of one block", true, t);
  MPI_Type_vector(2, 1, -1, MPI_INT, &t), add("vector, stride -1", false, t);
  MPI_Type_create_hvector(2, 1, 4, MPI_INT, &t), add("hvector, 4-byte stride", true, t);
  MPI_Type_indexed(3, lengths, gapless, MPI_INT, &t), add("indexed with an empty block", true, t);
  MPI_Type_create_indexed_block(3, 1, up, MPI_INT, &t), add("indexed_block ascending", true, t);
  MPI_Type_create_indexed_block(2, 1, swapped, MPI_INT, &t), add("indexed_block swapped", false, t);
  MPI_Type_create_indexed_block(3, 1, twice, MPI_INT, &t), add("indexed_block repeated", false, t);
  MPI_Type_create_hindexed(2, one, bytes_up, MPI_INT, &t), add("hindexed ascending", true, t);
  MPI_Type_create_hindexed(2, one, bytes_down, MPI_INT, &t), add("hindexed swapped", false, t);
  MPI_Type_create_struct(2, one, struct_up, double_int, &t), add("struct double, int", true, t);
  MPI_Type_create_struct(2, one, struct_gap, double_int, &t), add("struct with a gap", false, t);
  MPI_Type_create_struct(2, one, bytes_down, int_double, &t), add("struct overlapping", false, t);
  MPI_Type_create_resized(MPI_INT, -4, 12, &t), add("resized int", true, t);
  MPI_Type_create_resized(MPI_INT, 0, 8, &inner);
  MPI_Type_contiguous(2, inner, &t), add("contiguous of a resized int (holes)", false, t);
  MPI_Type_contiguous(1, inner, &t), add("one resized int", true, t);
  MPI_Type_free(&inner);
  MPI_Type_create_indexed_block(2, 1, swapped, MPI_INT, &inner);
  MPI_Type_contiguous(1, inner, &t), add("contiguous of a swapped pair", false, t);
  MPI_Type_dup(inner, &t), add("dup of a swapped pair", false, t);
  MPI_Type_free(&inner);
  const int sizes[] = {4}, subsizes[] = {4}, starts[] = {0};
  MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t), add("subarray (not followed)", false, t);

  for (Case& c : cases) {
    INFO(c.name);
    mpix::TypeLayout layout;
    REQUIRE(mpix::describe_type(c.type, "type", &layout) == MPIX_SUCCESS);
    CHECK(layout.contiguous(1) == c.in_order);
    mpix::TypeLayout again;  // the answer kept with the type
    REQUIRE(mpix::describe_type(c.type, "type", &again) == MPIX_SUCCESS);
    CHECK(again.contiguous(1) == c.in_order);
    // Where the library would copy, the copy is what MPI packs.
    if (layout.contiguous(1)) {
      std::vector<unsigned char> memory((std::size_t)layout.true_extent), packed(memory.size());
      for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = (unsigned char)(i * 7 + 1);
      int position = 0;
      MPI_Pack(memory.data() - layout.true_lb, 1, c.type, packed.data(), (int)packed.size(), &position,
               MPI_COMM_SELF);
      CHECK(packed == memory);
    }
    MPI_Type_free(&c.type);
  }
  // A handle MPI hands out again after a free does not keep the old type's answer.
  for (int round = 0; round < 4; ++round) {
    const bool in_order = round % 2 == 0;
    const int displacements[] = {in_order ? 0 : 1, in_order ? 1 : 0};
    MPI_Datatype t;
    MPI_Type_create_indexed_block(2, 1, displacements, MPI_INT, &t);
    MPI_Type_commit(&t);
    mpix::TypeLayout layout;
    REQUIRE(mpix::describe_type(t, "type", &layout) == MPIX_SUCCESS);
    CHECK(layout.contiguous(1) == in_order);
    MPI_Type_free(&t);
  }
}
