// Plan reuse by blocking calls (src/core/dense.cpp, "Plan reuse"): a call that
// repeats the previous one of its operation on every rank runs that call's plan
// again, with the new call's data; a change on any one rank (buffer, counts,
// displacements, datatype, hints) makes every rank plan anew; mpix_plan_reuse=false
// on one rank turns it off for all without a hang; bad arguments still fail on
// every rank; the communicator's functions see no request of the user's in a kept
// plan. Plans made are counted by the communicator's plan tags (plans_created).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/comm.hpp"
#include "core/registry.hpp"
#include "harness.hpp"

using harness::all_ranks;
using harness::message_has;

namespace {

// Block i -> j holds (i + j) % 3 + 1 ints, of value 1000000 * call + 1000 * i + 10 * j + k.
struct Exchange {
  int size = harness::world_size(), rank = harness::world_rank();
  std::vector<int> send, recv, send_counts, send_displs, recv_counts, recv_displs;
  MPI_Datatype send_type = MPI_INT, recv_type = MPI_INT;

  static int units(int i, int j) { return (i + j) % 3 + 1; }
  Exchange() : send_counts(size), send_displs(size), recv_counts(size), recv_displs(size) {
    int sent = 0, received = 0;
    for (int peer = 0; peer < size; ++peer) {
      send_counts[peer] = units(rank, peer);
      recv_counts[peer] = units(peer, rank);
      send_displs[peer] = sent;
      recv_displs[peer] = received;
      sent += send_counts[peer];
      received += recv_counts[peer];
    }
    send.resize(sent);
    recv.resize(received);
  }
  int run(int call, MPIX_Info* info, MPIX_Comm* comm) {
    for (int peer = 0; peer < size; ++peer)
      for (int k = 0; k < send_counts[peer]; ++k) send[send_displs[peer] + k] = value(call, rank, peer, k);
    std::fill(recv.begin(), recv.end(), -1);
    return MPIX_Alltoallv(send.data(), send_counts.data(), send_displs.data(), send_type, recv.data(),
                          recv_counts.data(), recv_displs.data(), recv_type, info, comm);
  }
  static int value(int call, int from, int to, int k) { return 1000000 * call + 1000 * from + 10 * to + k; }
  bool correct(int call) const {
    for (int peer = 0; peer < size; ++peer)
      for (int k = 0; k < recv_counts[peer]; ++k)
        if (recv[recv_displs[peer] + k] != value(call, peer, rank, k)) return false;
    return true;
  }
};

// Calls `ex` on every rank; true on every rank when all succeeded with MPI's result
// and every rank made `plans` new plans.
bool run_counted(Exchange& ex, int call, MPIX_Info* info, MPIX_Comm* comm, unsigned long long plans) {
  const unsigned long long before = comm->plans_created;
  const int rc = ex.run(call, info, comm);
  INFO("call " << call << ": " << MPIX_Last_error_message());
  CHECK(rc == MPIX_SUCCESS);
  return all_ranks(rc == MPIX_SUCCESS && ex.correct(call) && comm->plans_created - before == plans);
}

}  // namespace

TEST_CASE("a repeated blocking call runs its plan again, with the new data", "[reuse]") {
  for (const char* algorithm : {"pairwise", "tuna", "node_aware"}) {
    INFO(algorithm);
    harness::Comm c;
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    Exchange ex;
    const unsigned long long before = c.comm->plans_created;
    CHECK(ex.run(0, info.info, c.comm) == MPIX_SUCCESS);
    CHECK(all_ranks(ex.correct(0)));
    const unsigned long long first = c.comm->plans_created - before;
    CHECK(first >= 1);
    for (int call = 1; call < 4; ++call) CHECK(run_counted(ex, call, info.info, c.comm, 0));
  }
}

TEST_CASE("a change on one rank makes every rank plan anew", "[reuse]") {
  harness::Comm c;
  harness::Info info{{"mpix_alltoallv_algorithm", "tuna"}};
  Exchange ex;
  const bool changer = ex.rank == ex.size - 1;
  int call = 0;
  CHECK(run_counted(ex, call++, info.info, c.comm, 1));
  CHECK(run_counted(ex, call++, info.info, c.comm, 0));

  SECTION("another send buffer") {
    if (changer) ex.send = std::vector<int>(ex.send.size() + 1);  // storage of its own
    CHECK(run_counted(ex, call++, info.info, c.comm, 1));
  }
  SECTION("another receive displacement") {
    if (changer) {
      ex.recv.push_back(-1);
      ++ex.recv_displs[ex.size - 1];
    }
    CHECK(run_counted(ex, call++, info.info, c.comm, 1));
  }
  SECTION("another datatype of the same layout") {
    MPI_Datatype one_int;
    MPI_Type_contiguous(1, MPI_INT, &one_int);
    MPI_Type_commit(&one_int);
    if (changer) ex.recv_type = one_int;
    CHECK(run_counted(ex, call++, info.info, c.comm, 1));
    CHECK(run_counted(ex, call++, info.info, c.comm, 0));
    ex.recv_type = MPI_INT;
    CHECK(run_counted(ex, call++, info.info, c.comm, 1));
    MPI_Type_free(&one_int);
  }
  SECTION("other counts between two ranks") {
    // Rank 0 sends rank size-1 one int more, which expects it.
    if (ex.rank == 0) {  // its last block: no displacement moves
      ++ex.send_counts[ex.size - 1];
      ex.send.push_back(0);
    }
    if (changer) {
      ++ex.recv_counts[0];
      for (int peer = 1; peer < ex.size; ++peer) ++ex.recv_displs[peer];
      ex.recv.push_back(0);
    }
    // The extra int (k = units) has the value the formula gives it on both sides.
    CHECK(run_counted(ex, call++, info.info, c.comm, 1));
  }
  SECTION("other hints, on every rank") {
    info.set("mpix_check_args", "true");
    CHECK(run_counted(ex, call++, info.info, c.comm, 1));
  }
  // The new plan serves again.
  CHECK(run_counted(ex, call++, info.info, c.comm, 0));
}

TEST_CASE("mpix_plan_reuse=false on one rank plans every call on every rank", "[reuse]") {
  harness::Comm c;
  Exchange ex;
  harness::Info info{{"mpix_alltoallv_algorithm", "tuna"}};
  if (ex.rank == 0) info.set("mpix_plan_reuse", "false");
  for (int call = 0; call < 3; ++call) CHECK(run_counted(ex, call, info.info, c.comm, 1));
  CHECK((c.comm->reusable_plans[1] == nullptr) == (ex.rank == 0));
  setenv("MPIX_PLAN_REUSE", "sometimes", 1);
  CHECK(ex.run(0, nullptr, c.comm) == MPIX_ERR_INFO_VALUE);
  CHECK(message_has("MPIX_PLAN_REUSE (environment)=sometimes: expected true or false"));
  unsetenv("MPIX_PLAN_REUSE");
}

TEST_CASE("bad arguments after a reused plan fail on every rank; the plan stays", "[reuse]") {
  harness::Comm c;
  Exchange ex;
  CHECK(run_counted(ex, 0, nullptr, c.comm, 1));
  CHECK(run_counted(ex, 1, nullptr, c.comm, 0));
  std::vector<int> negative(ex.send_counts);
  negative[0] = -1;
  const int rc = MPIX_Alltoallv(ex.send.data(), ex.rank == 0 ? negative.data() : ex.send_counts.data(),
                                ex.send_displs.data(), MPI_INT, ex.recv.data(), ex.recv_counts.data(),
                                ex.recv_displs.data(), MPI_INT, nullptr, c.comm);
  CHECK(rc == MPIX_ERR_ARG);
  CHECK(message_has(ex.rank == 0 ? "sendcounts[0]=-1" : "another rank rejected its arguments"));
  CHECK(run_counted(ex, 2, nullptr, c.comm, 0));
}

TEST_CASE("alltoall and alltoallv keep a plan each", "[reuse]") {
  harness::Comm c;
  Exchange ex;
  std::vector<int> send(ex.size * 2), recv(ex.size * 2);
  auto alltoall = [&](int call) {
    for (int j = 0; j < ex.size * 2; ++j) send[j] = Exchange::value(call, ex.rank, j / 2, j % 2);
    int rc = MPIX_Alltoall(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, nullptr, c.comm);
    bool ok = rc == MPIX_SUCCESS;
    for (int j = 0; j < ex.size * 2; ++j) ok = ok && recv[j] == Exchange::value(call, j / 2, ex.rank, j % 2);
    return all_ranks(ok);
  };
  CHECK(alltoall(0));
  CHECK(run_counted(ex, 0, nullptr, c.comm, 1));
  const unsigned long long before = c.comm->plans_created;
  for (int call = 1; call < 3; ++call) {
    CHECK(alltoall(call));
    CHECK(run_counted(ex, call, nullptr, c.comm, 0));
  }
  CHECK(c.comm->plans_created == before);
}

TEST_CASE("kept plans are not the user's requests", "[reuse]") {
  harness::Comm c;
  Exchange ex;
  CHECK(run_counted(ex, 0, nullptr, c.comm, 1));
  MPIX_Request* request = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(ex.send.data(), ex.send_counts.data(), ex.send_displs.data(), MPI_INT, ex.recv.data(),
                              ex.recv_counts.data(), ex.recv_displs.data(), MPI_INT, nullptr, c.comm,
                              &request) == MPIX_SUCCESS);
  MPIX_Comm* comm = c.comm;
  CHECK(MPIX_Comm_free(&comm) == MPIX_ERR_ARG);
  CHECK(message_has(": 1 persistent request(s)"));
  CHECK(MPIX_Request_free(&request) == MPIX_SUCCESS);
  // A new node layout drops the kept plan, made for the old one.
  CHECK(run_counted(ex, 1, nullptr, c.comm, 1));
  CHECK(MPIX_Comm_update_locality(c.comm, 1) == MPIX_SUCCESS);
  CHECK(c.comm->reusable_plans[1] == nullptr);
  CHECK(run_counted(ex, 2, nullptr, c.comm, 1));
  CHECK(MPIX_Comm_update_regions(c.comm, 0) == MPIX_SUCCESS);
  CHECK(run_counted(ex, 3, nullptr, c.comm, 1));
}

// Every algorithm, through the harness's check against MPI: two blocking calls with
// other contents, the second running the first one's plan (in place too).
TEST_CASE("every algorithm equals MPI when its plan runs again", "[reuse]") {
  harness::Comm c;
  for (bool alltoall : {false, true}) {
    for (const std::string& name : mpix::algorithm_names(alltoall ? mpix::kAlltoall : mpix::kAlltoallv)) {
      for (bool in_place : {false, true}) {
        harness::DenseCase dense;
        dense.alltoall = alltoall;
        dense.dist = alltoall ? mpix::workload::Distribution::constant : mpix::workload::Distribution::uniform;
        dense.max_bytes = 96;
        dense.types = in_place ? "vector" : "int";
        dense.in_place = in_place;
        dense.starts = 2;
        dense.algorithm = name;
        std::string why;
        bool ok = harness::run_dense_case(dense, c.comm, &why);
        INFO(dense.describe() << (why.empty() ? "" : ": " + why));
        CHECK(ok);
      }
    }
  }
}
