// The core layer: hints, errors (every invalid input gets a code and a message,
// and the communicator stays usable), selection, persistent request semantics,
// isolation of the library's traffic, the scratch pool, tuning files, the registry.
// Communicators are in test_comm.cpp, buffers and datatypes in test_buffers.cpp.
#include <catch2/catch.hpp>
#include <algorithm>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/comm.hpp"
#include "core/registry.hpp"
#include "core/request.hpp"
#include "harness.hpp"


using harness::all_ranks;
using harness::Comm;
using harness::message_has;
using harness::SmallExchange;

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
                                         {"mpix_radix", "2147483648", "must be 2..P"},
                                         {"mpix_radix", "99999999999999999999", "must be 2..P"},
                                         {"mpix_stride", "99999999999999999999", "must be 1..2147483647"},
                                         {"mpix_ipc_threshold", "-99999999999999999999", "must be >= 0"},
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
                                         {"mpix_ipc_threshold", "8k", "not a number"},
                                         {"mpix_memcpy_threshold", "12 ", "not a number"},
                                         {"mpix_memcpy_threshold", "1e3", "not a number"},
                                         {"mpix_check_args", "maybe", "true or false"},
                                         {"mpix_early_start", "sometimes", "true, false or auto"},
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
  // The own block must carry as many bytes as it receives (the receive buffer
  // holds the P doubles, so that it cannot reach the send buffer: that would be
  // an overlap, another error).
  std::vector<double> wide(size);
  CHECK(MPIX_Alltoall(ex.send.data(), 1, MPI_INT, wide.data(), 1, MPI_DOUBLE, nullptr, c.comm) == MPIX_ERR_ARG);
  INFO(MPIX_Last_error_message());
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

// MPI forbids send and receive buffers that share bytes; blocks of the two sides may
// still interleave in one array.
TEST_CASE("send and receive blocks that share bytes are refused on every rank; interleaved ones are fine",
          "[errors]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  // One array: the block for rank j at 2j, the one from rank j at 2j + 1 (the
  // receive buffer starts one int in: the same pointer is refused, as MPICH does).
  std::vector<int> both(2 * size + 1, -1), counts(size, 1), send_displs(size), recv_displs(size);
  for (int j = 0; j < size; ++j) {
    both[2 * j] = rank * 100 + j;
    send_displs[j] = 2 * j;
    recv_displs[j] = 2 * j;
  }
  for (const char* algorithm : {"auto", "pairwise", "tuna"}) {
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    CHECK(MPIX_Alltoallv(both.data(), counts.data(), send_displs.data(), MPI_INT, both.data() + 1, counts.data(),
                         recv_displs.data(), MPI_INT, info.info, c.comm) == MPIX_SUCCESS);
    bool right = true;
    for (int j = 0; j < size; ++j) right = right && both[2 * j + 1] == j * 100 + rank && both[2 * j] == rank * 100 + j;
    CHECK(all_ranks(right));
  }
  // The last rank receives its last block onto the first int it sends.
  if (rank == size - 1) recv_displs[size - 1] = -1;
  CHECK(MPIX_Alltoallv(both.data(), counts.data(), send_displs.data(), MPI_INT, both.data() + 1, counts.data(),
                       recv_displs.data(), MPI_INT, nullptr, c.comm) == MPIX_ERR_ARG);
  CHECK(message_has(rank == size - 1
                        ? ("sendbuf and recvbuf overlap: the block sent to rank 0 and the block received from rank " +
                           std::to_string(size - 1) + " share bytes").c_str()
                        : "another rank"));
  // Alltoall: a receive buffer one int into the send buffer.
  std::vector<int> buffer(2 * size + 1);
  MPIX_Request* request = nullptr;
  CHECK(MPIX_Alltoall_plan(buffer.data(), 1, MPI_INT, buffer.data() + 1, 1, MPI_INT, nullptr, c.comm, &request) ==
        (size > 1 ? MPIX_ERR_ARG : MPIX_SUCCESS));
  if (size > 1) CHECK(message_has("sendbuf and recvbuf overlap"));
  if (request) MPIX_Request_free(&request);
  // Derived types whose blocks interleave are let through, as their spans meet but
  // their bytes need not: block j of both sides is ints 4j and 4j + 2 of its buffer,
  // and the receive buffer starts one int after the send buffer.
  MPI_Datatype every_other, pair;
  MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
  MPI_Type_create_resized(every_other, 0, 4 * sizeof(int), &pair);
  MPI_Type_commit(&pair);
  std::vector<int> pairs(4 * size + 1, -1), ones(size, 1), displs(size);
  for (int j = 0; j < size; ++j) {
    pairs[4 * j] = rank * 100 + j;
    pairs[4 * j + 2] = rank * 100 + j + 50;
    displs[j] = j;
  }
  CHECK(MPIX_Alltoallv(pairs.data(), ones.data(), displs.data(), pair, pairs.data() + 1, ones.data(), displs.data(),
                       pair, nullptr, c.comm) == MPIX_SUCCESS);
  bool right = true;
  for (int j = 0; j < size; ++j)
    right = right && pairs[4 * j + 1] == j * 100 + rank && pairs[4 * j + 3] == j * 100 + rank + 50;
  CHECK(all_ranks(right));
  MPI_Type_free(&every_other);
  MPI_Type_free(&pair);
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

// MPI writes no location twice. Receive blocks that share bytes are refused under
// mpix_check_args (on every rank, the rank at fault naming the two blocks), and let
// through otherwise, as MPI libraries do; blocks in reverse rank order are fine.
TEST_CASE("mpix_check_args refuses receive blocks that share bytes", "[errors]") {
  Comm c;
  SmallExchange ex;
  harness::Info check{{"mpix_check_args", "true"}};
  std::vector<int> recv_displs(ex.size);
  for (int j = 0; j < ex.size; ++j) recv_displs[j] = ex.size - 1 - j;
  CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(),
                       ex.counts.data(), recv_displs.data(), MPI_INT, check.info, c.comm) == MPIX_SUCCESS);
  bool right = true;
  for (int j = 0; j < ex.size; ++j) right = right && ex.recv[ex.size - 1 - j] == j * 100 + ex.rank;
  CHECK(all_ranks(right));
  if (ex.size < 2) return;
  // Rank 0 receives the blocks of ranks 0 and 1 onto one int.
  if (ex.rank == 0) recv_displs[1] = recv_displs[0];
  for (const char* algorithm : {"auto", "pairwise"}) {
    harness::Info info{{"mpix_check_args", "true"}, {"mpix_alltoallv_algorithm", algorithm}};
    CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(),
                         ex.counts.data(), recv_displs.data(), MPI_INT, info.info, c.comm) == MPIX_ERR_ARG);
    CHECK(message_has(ex.rank == 0 ? "the blocks received from rank 0 and from rank 1 share bytes"
                                   : "another rank"));
  }
  CHECK(MPIX_Alltoallv(ex.send.data(), ex.counts.data(), ex.displs.data(), MPI_INT, ex.recv.data(),
                       ex.counts.data(), recv_displs.data(), MPI_INT, nullptr, c.comm) == MPIX_SUCCESS);
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
  // A radix above P is wrong for the call (API.md), under auto as for a named
  // algorithm; P itself is a radix.
  const int size = harness::world_size();
  harness::Info above{{"mpix_radix", std::to_string(std::max(size, 2) + 1)}};
  CHECK(ex.run(above.info, c.comm) == MPIX_ERR_INFO_VALUE);
  CHECK(message_has("must be 2..P"));
  CHECK(ex.run(nullptr, c.comm) == MPIX_SUCCESS);
  harness::Info at_p{{"mpix_radix", std::to_string(std::max(size, 2))}};
  CHECK(ex.run(at_p.info, c.comm) == MPIX_SUCCESS);
  CHECK(all_ranks(ex.correct()));
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
  setenv("MPIX_ALLTOALLV_ALGORITHM", "", 1);  // set but empty: unset
  CHECK(chosen(nullptr) == automatic);
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
  MPIX_Request* copy = ra;
  CHECK(MPIX_Request_free(&ra) == MPIX_SUCCESS);
  CHECK(ra == nullptr);
  CHECK(MPIX_Request_free(&rb) == MPIX_SUCCESS);
  // A copy of a freed handle is refused, not read as freed memory; so is a pointer
  // the library never made.
  int flag = 0;
  CHECK(MPIX_Start(copy) == MPIX_ERR_ARG);
  CHECK(message_has("MPIX_Start: request is not a live handle"));
  CHECK(MPIX_Wait(copy, MPI_STATUS_IGNORE) == MPIX_ERR_ARG);
  CHECK(MPIX_Test(copy, &flag, MPI_STATUS_IGNORE) == MPIX_ERR_ARG);
  CHECK(MPIX_Request_free(&copy) == MPIX_ERR_ARG);
  CHECK(copy != nullptr);
  MPIX_Request* made_up = reinterpret_cast<MPIX_Request*>(&flag);
  CHECK(MPIX_Start(made_up) == MPIX_ERR_ARG);
  MPIX_Comm* other = nullptr;
  REQUIRE(MPIX_Comm_init(&other, MPI_COMM_WORLD) == MPIX_SUCCESS);
  MPIX_Comm* other_copy = other;
  REQUIRE(MPIX_Comm_free(&other) == MPIX_SUCCESS);
  CHECK(MPIX_Alltoallv(a.send.data(), a.counts.data(), a.displs.data(), MPI_INT, a.recv.data(), a.counts.data(),
                       a.displs.data(), MPI_INT, nullptr, other_copy) == MPIX_ERR_ARG);
  CHECK(message_has("MPIX_Alltoallv: comm is not a live handle"));
  CHECK(MPIX_Comm_free(&other_copy) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_locality(other_copy, nullptr, nullptr, nullptr, nullptr) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_mpi(other_copy) == MPI_COMM_NULL);
}

// An info is a handle like the others: a copy of a freed one is refused by the
// info calls and, where one rank passes it, fails the exchange on every rank,
// also on the path that runs a kept plan without an agreement (it reads the info
// to compare it with the kept call's).
TEST_CASE("a copy of a freed info is refused, by the info calls and by an exchange on every rank", "[core]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  MPIX_Info* info = nullptr;
  REQUIRE(MPIX_Info_init(&info) == MPIX_SUCCESS);
  REQUIRE(MPIX_Info_set(info, "mpix_alltoallv_algorithm", "pairwise") == MPIX_SUCCESS);
  std::vector<int> counts(size, 1), displs(size), send(size), recv(size);
  for (int i = 0; i < size; ++i) displs[i] = i;
  auto exchange = [&](MPIX_Info* with) {
    for (int i = 0; i < size; ++i) send[i] = rank * 100 + i;
    return MPIX_Alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(),
                          displs.data(), MPI_INT, with, c.comm);
  };
  // Repeated, so that the next call may run the kept plan without an agreement.
  for (int call = 0; call < 3; ++call) REQUIRE(exchange(info) == MPIX_SUCCESS);
  MPIX_Info* copy = info;  // on rank 0, of a freed info
  if (rank == 0) REQUIRE(MPIX_Info_free(&info) == MPIX_SUCCESS);
  CHECK(exchange(copy) == MPIX_ERR_ARG);
  if (rank == 0) CHECK(message_has("MPIX_Alltoallv: info is not a live handle"));
  // The communicator goes on: the next call with a live info is right.
  MPIX_Info* live = rank == 0 ? nullptr : info;
  if (rank == 0) REQUIRE(MPIX_Info_init(&live) == MPIX_SUCCESS);
  if (rank == 0) REQUIRE(MPIX_Info_set(live, "mpix_alltoallv_algorithm", "pairwise") == MPIX_SUCCESS);
  CHECK(exchange(live) == MPIX_SUCCESS);
  bool ok = true;
  for (int i = 0; i < size; ++i) ok = ok && recv[i] == i * 100 + rank;
  CHECK(all_ranks(ok));
  // A new info made at the freed one's address is taken for it: rank 0 says.
  int stale = rank == 0 && copy != live;
  MPI_Bcast(&stale, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    char value[32];
    int flag = 0;
    if (stale) {
      CHECK(MPIX_Info_set(copy, "mpix_radix", "4") == MPIX_ERR_ARG);
      CHECK(message_has("MPIX_Info_set: info is not a live handle"));
      CHECK(MPIX_Info_get(copy, "mpix_radix", sizeof value, value, &flag) == MPIX_ERR_ARG);
      CHECK(MPIX_Info_free(&copy) == MPIX_ERR_ARG);
      CHECK(message_has("MPIX_Info_free: *info is not a live handle"));
    }
    MPIX_Info* none = nullptr;
    CHECK(MPIX_Info_free(&none) == MPIX_ERR_ARG);
    CHECK(MPIX_Info_free(nullptr) == MPIX_ERR_ARG);
  }
  // The sparse exchange checks it too.
  const int dest = (rank + 1) % size, value = rank;
  int recv_nnz = -1, *src = nullptr;
  void* vals = nullptr;
  CHECK(MPIX_Alltoall_crs(1, &dest, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals,
                          rank == 0 && stale ? copy : nullptr, c.comm) == (stale ? MPIX_ERR_ARG : MPIX_SUCCESS));
  MPIX_Free(src);
  MPIX_Free(vals);
  REQUIRE(MPIX_Info_free(&live) == MPIX_SUCCESS);
}

// Two requests started in the same order everywhere, completed in opposite orders
// (odd ranks B first), which MPI allows.
// - By tests in turn: MPIX_Test must not wait; a test that waited inside one
//   request for a rank testing the other would hang both (node_aware did, in its
//   node phase, before 2026-11-28).
// - By waits: a rank waits for B while its peer waits for A; each wait must move
//   the other request on too. Plans moved only inside their own wait, so with
//   blocks too large to be sent eagerly both hung (pairwise, bruck, tuna,
//   ipc_hybrid; found through the interposer, before 2026-11-29).
TEST_CASE("persistent requests: two completed in opposite orders, by tests or by waits, every algorithm",
          "[persistent]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  const std::vector<std::string> alltoall_names = mpix::algorithm_names(mpix::kAlltoall);
  for (const bool waits : {false, true}) {
    for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
      INFO(name << (waits ? ", waits" : ", tests"));
      // Waits: blocks of up to 128 KiB, past MPICH's and Open MPI's eager limits.
      const int unit = waits ? 8192 : 1;
      const bool both = std::find(alltoall_names.begin(), alltoall_names.end(), name) != alltoall_names.end();
      harness::Info info{{"mpix_alltoallv_algorithm", name}, {"mpix_alltoall_algorithm", both ? name : "pmpi"}};
      // A: 0 to 4 units of ints per pair; B: 3 units per pair.
      std::vector<int> send_counts(size), send_displs(size), recv_counts(size), recv_displs(size);
      int sent = 0, received = 0;
      for (int j = 0; j < size; ++j) {
        send_counts[j] = (rank * 7 + j * 3) % 5 * unit, send_displs[j] = sent, sent += send_counts[j];
        recv_counts[j] = (j * 7 + rank * 3) % 5 * unit, recv_displs[j] = received, received += recv_counts[j];
      }
      std::vector<int> a_send(sent + 1), a_recv(received + 1), b_send(3 * unit * size), b_recv(3 * unit * size);
      MPIX_Request *a = nullptr, *b = nullptr;
      REQUIRE(MPIX_Alltoallv_plan(a_send.data(), send_counts.data(), send_displs.data(), MPI_INT, a_recv.data(),
                                  recv_counts.data(), recv_displs.data(), MPI_INT, info.info, c.comm,
                                  &a) == MPIX_SUCCESS);
      REQUIRE(MPIX_Alltoall_plan(b_send.data(), 3 * unit, MPI_INT, b_recv.data(), 3 * unit, MPI_INT, info.info,
                                 c.comm, &b) == MPIX_SUCCESS);
      for (int start = 0; start < 3; ++start) {
        for (int x = 0; x < sent; ++x) a_send[x] = rank * 10000 + start * 1000 + x;
        for (int x = 0; x < 3 * unit * size; ++x) b_send[x] = -(rank * 10000 + start * 1000 + x);
        std::vector<int> a_expected(received + 1), b_expected(3 * unit * size);
        MPI_Alltoallv(a_send.data(), send_counts.data(), send_displs.data(), MPI_INT, a_expected.data(),
                      recv_counts.data(), recv_displs.data(), MPI_INT, MPI_COMM_WORLD);
        MPI_Alltoall(b_send.data(), 3 * unit, MPI_INT, b_expected.data(), 3 * unit, MPI_INT, MPI_COMM_WORLD);
        REQUIRE(MPIX_Start(a) == MPIX_SUCCESS);
        REQUIRE(MPIX_Start(b) == MPIX_SUCCESS);
        MPIX_Request* order[2] = {rank % 2 ? b : a, rank % 2 ? a : b};
        int done[2] = {0, 0};
        if (waits)
          for (MPIX_Request* request : order) REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
        while (!waits && !(done[0] && done[1]))
          for (int k = 0; k < 2; ++k)
            if (!done[k]) REQUIRE(MPIX_Test(order[k], &done[k], MPI_STATUS_IGNORE) == MPIX_SUCCESS);
        a_recv.back() = a_expected.back();
        CHECK(all_ranks(a_recv == a_expected && b_recv == b_expected));
      }
      CHECK(MPIX_Request_free(&a) == MPIX_SUCCESS);
      CHECK(MPIX_Request_free(&b) == MPIX_SUCCESS);
    }
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

TEST_CASE("in place, the copy holds the receive blocks' span, however far into the buffer it starts", "[scratch]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  const int skipped = 1 << 16;  // elements before the first block
  std::vector<int> buffer(skipped + size * 4, -1), counts(size, 4), displs(size);
  for (int j = 0; j < size; ++j) {
    displs[j] = skipped + 4 * j;
    for (int k = 0; k < 4; ++k) buffer[displs[j] + k] = rank * 100 + j * 10 + k;
  }
  for (const char* algorithm : {"pmpi", "nonblocking", "tuna"}) {
    INFO(algorithm);
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoallv_plan(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buffer.data(), counts.data(),
                                displs.data(), MPI_INT, info.info, c.comm, &request) == MPIX_SUCCESS);
    CHECK(c.comm->scratch.in_use() < (std::size_t)skipped * sizeof(int));
    std::vector<int> received(buffer);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < 4; ++k) received[displs[j] + k] = j * 100 + rank * 10 + k;
    REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
    REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
    CHECK(all_ranks(buffer == received));
    MPIX_Request_free(&request);
    for (int j = 0; j < size; ++j)  // back to what was sent, for the next algorithm
      for (int k = 0; k < 4; ++k) buffer[displs[j] + k] = rank * 100 + j * 10 + k;
  }
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
    // A rule whose radix fits P but not the ranks per node (a file measured on
    // other nodes) is passed over like one that does not match; the next decides.
    const std::string other_layout = path + ".layout";
    if (size >= 3) {
      write_to(other_layout, "alltoallv 1 * 0 * tuna_hier_staggered mpix_radix=3\nalltoallv 1 * 0 * pairwise\n");
      harness::Info layout{{"mpix_tuning_file", other_layout}};
      Comm nodes_of_two;
      REQUIRE(MPIX_Comm_update_locality(nodes_of_two.comm, 2) == MPIX_SUCCESS);
      std::swap(c.comm, nodes_of_two.comm);
      CHECK(all_ranks(run(layout.info, &algorithm, &params) == MPIX_SUCCESS && algorithm == "pairwise"));
      REQUIRE(MPIX_Comm_update_locality(c.comm, 0) == MPIX_SUCCESS);  // one node: radix 3 fits
      const bool whole_node = c.comm->locality.num_nodes() == 1;
      CHECK(all_ranks(run(layout.info, &algorithm, &params) == MPIX_SUCCESS &&
                      (!whole_node || algorithm == "tuna_hier_staggered")));
      std::swap(c.comm, nodes_of_two.comm);
    }
    std::remove(other_ranks.c_str());
    std::remove(this_p.c_str());
    std::remove(other_layout.c_str());
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
  // A blocking call: a file whose rules do not match it leaves it to auto, carried
  // first call included (the same choice as without a file); a matching rule names
  // the algorithm.
  {
    auto first_blocking_call = [&](const char* file) {
      harness::Info info;
      if (file[0]) info.set("mpix_tuning_file", file);
      Comm fresh;  // no kept plan: the call is a first call
      CHECK(ex.run(info.info, fresh.comm) == MPIX_SUCCESS);
      CHECK(all_ranks(ex.correct()));
      return fresh.comm->blocking_choices[1].algorithm;
    };
    const std::string without = first_blocking_call("");
    write("alltoallv 1 * 1000 * nonblocking   # large blocks only\n");
    CHECK(first_blocking_call(path.c_str()) == without);
    write("alltoallv 1 * 0 * pairwise\n");
    CHECK(first_blocking_call(path.c_str()) == "pairwise");
  }
  // Through the environment too.
  write("alltoall  1 * 0 * pairwise\n"
        "alltoallv 1 * 1000 * nonblocking   # large blocks\n"
        "alltoallv 1 * 0 999 multipair mpix_stride=5\n");
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

TEST_CASE("a large own block takes no scratch: it is never sent", "[scratch]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  const int own = 1 << 18, other = 4;  // ints: 1 MiB kept, 16 B to every other rank
  std::vector<int> counts(size, other), displs(size);
  counts[rank] = own;
  int total = 0;
  for (int j = 0; j < size; ++j) displs[j] = total, total += counts[j];
  std::vector<int> send(total), recv(total, -1), expected(total, -1);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < counts[j]; ++k) send[displs[j] + k] = rank * 1000000 + j * 1000 + k % 1000;
  MPI_Alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, expected.data(), counts.data(), displs.data(),
                MPI_INT, MPI_COMM_WORLD);
  for (const std::string& algorithm : mpix::algorithm_names(mpix::kAlltoallv)) {
    INFO(algorithm);
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    std::fill(recv.begin(), recv.end(), -1);
    // What the plan reused by the call before still holds is not this call's.
    c.comm->scratch.reset_high_water();
    const std::size_t held = c.comm->scratch.in_use();
    const int rc = MPIX_Alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(),
                                  displs.data(), MPI_INT, info.info, c.comm);
    CHECK(rc == MPIX_SUCCESS);
    CHECK(all_ranks(recv == expected));
    // TuNA's slots and the carried rounds were sized by the largest block, the own
    // one included (1 MiB to 6 MiB here, B x 1 MiB for tuna), and node_aware's
    // aggregates held it twice.
    CHECK(c.comm->scratch.high_water() - held < (std::size_t)own * sizeof(int) / 16);
  }
}
