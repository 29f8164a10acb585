// Bad input under MPI's default error handlers (MPI_COMM_WORLD keeps
// MPI_ERRORS_ARE_FATAL: mpi_main.cpp does not change it): every case returns an
// error instead of aborting the job, no rank is left waiting, messages name the
// call and the cause in words, and the communicator stays usable. Run at 2 to 5
// ranks, with emulated nodes (MPIX_PPN) so that the locality-aware algorithms
// have several nodes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/comm.hpp"
#include "core/completion.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "harness.hpp"

using harness::all_ranks;
using harness::Comm;
using harness::message_has;

namespace {

std::string last_message() { return MPIX_Last_error_message(); }

// No C++ source text in a message: no member names, calls or MPI constants.
bool reads_as_words(const std::string& message) {
  for (const char* source : {"requests_", ".data()", ".size()", "MPI_STATUS", "(int)", "&"})
    if (message.find(source) != std::string::npos) return false;
  return true;
}

// Alltoallv of ints where block i -> j holds i*100+j, one int per block; rank
// `from` sends `sent` ints to rank `to`, which expects `expected`.
struct Exchange {
  int size = harness::world_size(), rank = harness::world_rank();
  std::vector<int> send, recv, send_counts, send_displs, recv_counts, recv_displs;
  // Rank `from` sends `sent` ints to rank `to`, which expects `expected`; every
  // other block is one int, but that rank `also_from` sends `also_sent` to `to`.
  Exchange(int sent = 1, int expected = 1, int from = 0, int to = 1, int also_from = -1, int also_sent = 1) {
    send_counts.assign(size, 1);
    recv_counts.assign(size, 1);
    if (rank == from && to < size) send_counts[to] = sent;
    if (rank == also_from && to < size) send_counts[to] = also_sent;
    if (rank == to) recv_counts[from] = expected;
    send_displs.resize(size);
    recv_displs.resize(size);
    int s = 0, r = 0;
    for (int j = 0; j < size; ++j) {
      send_displs[j] = s;
      recv_displs[j] = r;
      for (int k = 0; k < send_counts[j]; ++k) send.push_back(rank * 100 + j);
      s += send_counts[j];
      r += recv_counts[j];
    }
    recv.assign((std::size_t)r + 1, -1);  // one guard element
  }
  int run(MPIX_Info* info, MPIX_Comm* comm) {
    return MPIX_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_INT, recv.data(),
                          recv_counts.data(), recv_displs.data(), MPI_INT, info, comm);
  }
  bool correct() const {
    for (int i = 0; i < size; ++i)
      if (recv[(std::size_t)recv_displs[i]] != i * 100 + rank) return false;
    return recv.back() == -1;
  }
};

std::vector<std::string> alltoallv_algorithms() {
  std::vector<std::string> names;
  for (const mpix::Algorithm& algorithm : mpix::algorithms())
    if (algorithm.ops & mpix::kAlltoallv) names.push_back(algorithm.name);
  return names;
}

}  // namespace

TEST_CASE("counts that disagree fail on every rank before any data moves, for every algorithm", "[abort]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  for (const std::string& name : alltoallv_algorithms()) {
    INFO("algorithm " << name);
    harness::Info info{{"mpix_alltoallv_algorithm", name}};
    Exchange good;
    int rc = good.run(info.info, c.comm);
    if (all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;  // does not apply here
    REQUIRE(all_ranks(rc == MPIX_SUCCESS));
    CHECK(all_ranks(good.correct()));

    // A neighbour, and the last rank (on another emulated node): more, fewer, none
    // where one is expected, one where none is. Before the agreement's checksums,
    // these truncated on the receiving rank only, were dropped silently (pmpi),
    // shifted other blocks (the hierarchical exchanges' inter-node messages), or
    // left a message to a later call.
    for (int to : {1, size - 1})
      for (const auto& [sent, expected] : {std::pair<int, int>{2, 1}, {1, 2}, {0, 1}, {1, 0}}) {
        INFO("rank 0 sends " << sent << " ints to rank " << to << ", which expects " << expected);
        Exchange bad(sent, expected, 0, to);
        rc = bad.run(info.info, c.comm);
        CHECK(all_ranks(rc == MPIX_ERR_ARG));
        if (rank == to)
          CHECK(message_has(mpix::format("MPIX_Alltoallv: rank 0 sends %d bytes to rank %d, which expects %d",
                                            4 * sent, to, 4 * expected).c_str()));
        else
          CHECK(message_has("MPIX_Alltoallv: send and receive counts disagree between ranks"));
        CHECK(reads_as_words(last_message()));
        CHECK(bad.recv.back() == -1);  // nothing beyond the receive buffer
      }

    // The handlers swapped around the library's waits are the user's again.
    MPI_Errhandler world;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    CHECK(world == MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&world);

    // Nothing of the failed calls is left in flight: the next exchange is right.
    Exchange after;
    CHECK(all_ranks(after.run(info.info, c.comm) == MPIX_SUCCESS));
    CHECK(all_ranks(after.correct()));
  }
}

TEST_CASE("random_segmented: counts that differ by a segment fail instead of hanging", "[hang]") {
  // Segments above MPI's eager limit: the sender of a segment the receiver posts no
  // receive for used to wait for ever.
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  const int segment_ints = 65536;  // 256 KiB
  harness::Info info{{"mpix_alltoallv_algorithm", "random_segmented"},
                     {"mpix_segment_bytes", std::to_string(4 * segment_ints)}};
  Exchange bad(2 * segment_ints, segment_ints, 0, 1);
  CHECK(all_ranks(bad.run(info.info, c.comm) == MPIX_ERR_ARG));
  if (rank == 1) CHECK(message_has("rank 0 sends 524288 bytes to rank 1, which expects 262144"));
  Exchange good(2 * segment_ints, 2 * segment_ints, 0, 1);
  CHECK(all_ranks(good.run(info.info, c.comm) == MPIX_SUCCESS));
  CHECK(all_ranks(good.correct()));
}

TEST_CASE("a truncated receive completes as this call's error, not an abort", "[abort]") {
  // Counts that disagree no longer reach the exchange (the agreement finds them);
  // the completion wrappers still turn a truncation that gets past it into an
  // error after the exchange (completion.hpp), under MPI_ERRORS_ARE_FATAL on
  // MPI_COMM_WORLD: called directly here.
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int data[2] = {7, 8}, into[2] = {-1, -1};
  mpix::set_pending(MPIX_SUCCESS, std::string());
  int rc = MPIX_SUCCESS;
  if (rank == 0) {
    MPI_Send(data, 2, MPI_INT, 1, 0, comm);
  } else if (rank == 1) {
    MPI_Request request;
    MPI_Irecv(into, 1, MPI_INT, 0, 0, comm, &request);
    rc = mpix::wait_all(1, &request, comm);
    CHECK(rc == MPIX_SUCCESS);  // the exchange goes on
  }
  rc = mpix::finish_call("MPIX_Alltoallv", rc);
  if (rank == 1) {
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_Alltoallv: rank 1 received a message from rank 0 larger than the receive posted"));
    CHECK(into[1] == -1);
  } else {
    CHECK(rc == MPIX_SUCCESS);
  }
  MPI_Comm_free(&comm);
}

TEST_CASE("alltoall block sizes that disagree fail on every rank, for every algorithm", "[abort]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  for (const mpix::Algorithm& algorithm : mpix::algorithms()) {
    if (!(algorithm.ops & mpix::kAlltoall)) continue;
    INFO("algorithm " << algorithm.name);
    harness::Info info{{"mpix_alltoall_algorithm", algorithm.name}};
    // Rank 1 sends and receives blocks of two ints, the others of one.
    const int count = rank == 1 ? 2 : 1;
    std::vector<int> send((std::size_t)(size * count), rank), recv((std::size_t)(size * count) + 1, -1);
    int rc = MPIX_Alltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, info.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    CHECK(message_has("MPIX_Alltoall: ranks give different block sizes"));
    CHECK(recv.back() == -1);
  }
}

// Under `auto` a blocking alltoall's agreement travels in a Bruck exchange's
// rounds and may carry blocks of up to 64 bytes (carried_agreement.hpp). Ranks that
// disagree must still all fail, with nothing written, whether the odd rank's
// blocks are carried too (32 B against 16 B), too large to be (128 B), or it asks
// for another algorithm or fails its own checks; and ranks that differ only in
// their datatypes' layout or in mpix_plan_reuse (valid) exchange correctly.
static void bad_alltoall_while_carrying(MPIX_Comm* comm) {
  const struct { MPIX_Comm* comm; } c{comm};
  const int size = harness::world_size(), rank = harness::world_rank();
  for (int odd_count : {8, 32}) {
    INFO("rank 1 sends " << odd_count * 4 << " B blocks, the others 16 B");
    const int count = rank == 1 ? odd_count : 4;
    std::vector<int> send((std::size_t)(size * count), rank), recv((std::size_t)(size * count), -1);
    int rc = MPIX_Alltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, nullptr, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    CHECK(message_has("MPIX_Alltoall: ranks give different block sizes"));
    CHECK(std::count(recv.begin(), recv.end(), -1) == (long)recv.size());
  }
  std::vector<int> send((std::size_t)(size * 4), rank), recv((std::size_t)(size * 4), -1);
  {
    harness::Info info{{"mpix_alltoall_algorithm", rank == 1 ? "bruck" : "auto"}};
    int rc = MPIX_Alltoall(send.data(), 4, MPI_INT, recv.data(), 4, MPI_INT, info.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    CHECK(message_has("ranks asked for different algorithms"));
  }
  {
    int rc = MPIX_Alltoall(send.data(), 4, MPI_INT, rank == 1 ? nullptr : recv.data(), 4, MPI_INT, nullptr, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    if (rank != 1) CHECK(message_has("another rank rejected its arguments"));
  }
  CHECK(std::count(recv.begin(), recv.end(), -1) == (long)recv.size());
  if (size >= 3) {
    // Two ranks wrong in different ways: every rank returns the largest code, the
    // wrong ones with their own message. A radix set carries nothing: the other
    // ranks may start their exchange before the agreement (speculation.hpp) and
    // write their receive blocks, which MPI leaves undefined after an error.
    harness::Info info{{"mpix_radix", rank == 2 ? "99" : "2"}};  // 99 > P: refused by the call
    int rc = MPIX_Alltoall(send.data(), rank == 1 ? -1 : 4, MPI_INT, recv.data(), 4, MPI_INT, info.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_INFO_VALUE));
    if (rank == 1) CHECK(message_has("sendcount=-1"));
    if (rank == 1) CHECK(message_has("every rank returns invalid info value"));
    if (rank == 2) CHECK(message_has("mpix_radix"));
    if (rank != 1 && rank != 2) CHECK(message_has("another rank rejected its arguments"));
  }
  // Rank 0's blocks are two doubles with a hole (not contiguous; extent three
  // doubles), the others' two doubles in a row: the same type signature, a valid call.
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &strided);
  MPI_Type_commit(&strided);
  const bool holes = rank == 0;
  std::vector<double> from((std::size_t)size * 4), to((std::size_t)size * 4 + 1, -1.0);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < 2; ++k) from[(std::size_t)(holes ? j * 3 + 2 * k : j * 2 + k)] = rank * 1000 + j * 10 + k;
  int rc = MPIX_Alltoall(from.data(), holes ? 1 : 2, holes ? strided : MPI_DOUBLE, to.data(), holes ? 1 : 2,
                         holes ? strided : MPI_DOUBLE, nullptr, c.comm);
  CHECK(all_ranks(rc == MPIX_SUCCESS));
  bool correct = to.back() == -1.0;
  for (int i = 0; i < size; ++i)
    for (int k = 0; k < 2; ++k)
      correct = correct && to[(std::size_t)(holes ? i * 3 + 2 * k : i * 2 + k)] == i * 1000 + rank * 10 + k;
  CHECK(all_ranks(correct));
  MPI_Type_free(&strided);
  // Rank 1 keeps no plan (mpix_plan_reuse=false), the others would: valid, and no
  // rank may make a plan for the repeated calls that the others do not make.
  harness::Info reuse{{"mpix_plan_reuse", rank == 1 ? "false" : "true"}};
  for (int call = 0; call < 3; ++call) {
    std::vector<int> out((std::size_t)size * 4), in((std::size_t)size * 4, -1);
    for (int j = 0; j < size * 4; ++j) out[(std::size_t)j] = rank * 1000 + j + call;
    rc = MPIX_Alltoall(out.data(), 4, MPI_INT, in.data(), 4, MPI_INT, reuse.info, c.comm);
    bool arrived = rc == MPIX_SUCCESS;
    for (int i = 0; i < size; ++i)
      for (int k = 0; k < 4; ++k) arrived = arrived && in[(std::size_t)(i * 4 + k)] == i * 1000 + rank * 4 + k + call;
    CHECK(all_ranks(arrived));
  }
}

// The same for alltoallv, whose blocks travel with their sizes: counts that
// disagree between two ranks (both blocks carried, or one too large to be) fail
// everywhere with nothing written; one pair's block beyond the limit on both
// sides is valid (no rank carries); so is a rank that asks for nothing where the
// others ask for auto, unlike one that names an algorithm.
static void bad_alltoallv_while_carrying(MPIX_Comm* comm) {
  const struct { MPIX_Comm* comm; } c{comm};
  const int size = harness::world_size(), rank = harness::world_rank();
  // From rank 1, on rank 0's node in lanes, and from the last rank, which reaches
  // rank 0 by a lane, whose blocks travel without sizes.
  for (int from : std::set<int>{1, size - 1})
    for (int expected : {2, 4, 40}) {
      INFO("rank " << from << " sends 3 ints to rank 0, which expects " << expected);
      Exchange ex(3, expected, from, 0);
      CHECK(all_ranks(ex.run(nullptr, c.comm) == MPIX_ERR_ARG));
      CHECK(message_has(rank == 0 ? mpix::format("rank %d sends 12 bytes to rank 0, which expects", from).c_str()
                                  : "send and receive counts disagree between ranks"));
      CHECK(std::count(ex.recv.begin(), ex.recv.end(), -1) == (long)ex.recv.size());
    }
  if (size >= 3) {
    // Two disagreements that keep the length of what rank 0 receives from the last
    // two ranks (in lanes, one message from the other node): its blocks would be
    // read at the wrong places; the agreement finds them and nothing is written.
    INFO("rank " << size - 1 << " sends 2 ints to rank 0 and rank " << size - 2 << " none, where it expects 1 each");
    Exchange ex(2, 1, size - 1, 0, size - 2, 0);
    CHECK(all_ranks(ex.run(nullptr, c.comm) == MPIX_ERR_ARG));
    CHECK(std::count(ex.recv.begin(), ex.recv.end(), -1) == (long)ex.recv.size());
  }
  {
    Exchange ex(40, 40, 1, 0);
    CHECK(all_ranks(ex.run(nullptr, c.comm) == MPIX_SUCCESS));
    CHECK(all_ranks(ex.correct()));
  }
  {
    Exchange ex;
    harness::Info info{{"mpix_alltoallv_algorithm", rank == 1 ? "tuna_carried" : "auto"}};
    CHECK(all_ranks(ex.run(info.info, c.comm) == MPIX_ERR_ARG));
    CHECK(message_has("ranks asked for different algorithms"));
    CHECK(std::count(ex.recv.begin(), ex.recv.end(), -1) == (long)ex.recv.size());
  }
  {
    Exchange ex;
    int rc = MPIX_Alltoallv(ex.send.data(), ex.send_counts.data(), ex.send_displs.data(), MPI_INT,
                            rank == 1 ? nullptr : ex.recv.data(), ex.recv_counts.data(), ex.recv_displs.data(), MPI_INT,
                            nullptr, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    if (rank != 1) CHECK(message_has("another rank rejected its arguments"));
    CHECK(std::count(ex.recv.begin(), ex.recv.end(), -1) == (long)ex.recv.size());
  }
  for (int call = 0; call < 3; ++call) {
    harness::Info reuse{{"mpix_plan_reuse", rank == 1 ? "false" : "true"}};
    Exchange ex(call + 1, call + 1, 0, size - 1);
    CHECK(all_ranks(ex.run(reuse.info, c.comm) == MPIX_SUCCESS));
    CHECK(all_ranks(ex.correct()));
  }
}

// Both on the communicator's own pattern of carried agreement and in lanes
// (carried_agreement.hpp) on nodes of 2, where they apply: the pattern is set on
// every rank, as choose_carry_pattern's broadcast would.
static void on_both_patterns(void (*body)(MPIX_Comm*)) {
  const int size = harness::world_size();
  if (size < 2) return;
  Comm own;
  body(own.comm);
  if (size % 2 != 0 || size < 4) return;
  Comm lanes;
  REQUIRE(MPIX_Comm_update_locality(lanes.comm, 2) == MPIX_SUCCESS);
  lanes.comm->lane_group = 1;
  INFO("in lanes, nodes of 2");
  body(lanes.comm);
}

TEST_CASE("auto alltoall: bad input fails everywhere although the agreement carries blocks", "[abort]") {
  on_both_patterns(bad_alltoall_while_carrying);
}

TEST_CASE("auto alltoallv: bad input fails everywhere although the agreement carries blocks", "[abort]") {
  on_both_patterns(bad_alltoallv_while_carrying);
}

// MPI has no query for "committed"; communicating with such a type fails only where
// data moves, so rank 0 used to wait for ever for rank 1's message (and at P = 1
// the call succeeded).
TEST_CASE("an uncommitted datatype on one rank fails on every rank, for every algorithm", "[hang]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(1, MPI_INT, &uncommitted);
  const int odd_rank = size > 1 ? 1 : 0;
  const MPI_Datatype type = rank == odd_rank ? uncommitted : MPI_INT;
  for (const mpix::Algorithm& algorithm : mpix::algorithms()) {
    if (!(algorithm.ops & (mpix::kAlltoall | mpix::kAlltoallv))) continue;
    INFO("algorithm " << algorithm.name);
    std::vector<int> send((std::size_t)size, rank), recv((std::size_t)size + 1, -1);
    if (algorithm.ops & mpix::kAlltoall) {
      harness::Info info{{"mpix_alltoall_algorithm", algorithm.name}};
      int rc = MPIX_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, type, info.info, c.comm);
      CHECK(all_ranks(rc == MPIX_ERR_ARG));
      if (rank == odd_rank) CHECK(message_has("MPIX_Alltoall: recvtype: MPI refuses to use this datatype"));
    }
    if (algorithm.ops & mpix::kAlltoallv) {
      harness::Info info{{"mpix_alltoallv_algorithm", algorithm.name}};
      Exchange ex;
      int rc = MPIX_Alltoallv(ex.send.data(), ex.send_counts.data(), ex.send_displs.data(), type, ex.recv.data(),
                              ex.recv_counts.data(), ex.recv_displs.data(), MPI_INT, info.info, c.comm);
      CHECK(all_ranks(rc == MPIX_ERR_ARG));
      if (rank == odd_rank) CHECK(message_has("committed with MPI_Type_commit"));
      MPIX_Request* request = nullptr;
      rc = MPIX_Alltoallv_plan(ex.send.data(), ex.send_counts.data(), ex.send_displs.data(), MPI_INT, ex.recv.data(),
                               ex.recv_counts.data(), ex.recv_displs.data(), type, info.info, c.comm, &request);
      CHECK(all_ranks(rc == MPIX_ERR_ARG));
      CHECK(request == nullptr);
      CHECK(ex.recv.back() == -1);
    }
    CHECK(recv.back() == -1);
  }
  Exchange ex;  // the communicator is still usable
  CHECK(all_ranks(ex.run(nullptr, c.comm) == MPIX_SUCCESS && ex.correct()));
  MPI_Type_free(&uncommitted);
}

TEST_CASE("a NULL output handle on one rank fails on every rank", "[hang]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  const int odd_rank = size > 1 ? 1 : 0;
  Comm c;
  std::vector<int> send((std::size_t)size, rank), recv((std::size_t)size, -1);
  MPIX_Request* request = nullptr;
  int rc = MPIX_Alltoall_plan(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, nullptr, c.comm,
                              rank == odd_rank ? nullptr : &request);
  CHECK(all_ranks(rc == MPIX_ERR_ARG));
  CHECK(request == nullptr);
  if (rank == odd_rank) CHECK(message_has("MPIX_Alltoall_plan: request is NULL"));
  else CHECK(message_has("another rank rejected its arguments"));

  MPIX_Comm* comm = nullptr;
  rc = MPIX_Comm_init(rank == odd_rank ? nullptr : &comm, MPI_COMM_WORLD);
  CHECK(all_ranks(rc == MPIX_ERR_ARG));
  CHECK(comm == nullptr);
  if (rank == odd_rank) CHECK(message_has("MPIX_Comm_init: comm is NULL"));

  Exchange ex;  // the communicator is still usable
  CHECK(all_ranks(ex.run(nullptr, c.comm) == MPIX_SUCCESS && ex.correct()));
}

TEST_CASE("MPI's error text: the function and the reason, no source", "[messages]") {
  int rc = mpix::fail_mpi(MPI_ERR_TRUNCATE, "MPI_Waitall((int)requests_.size(), requests_.data(), MPI_STATUSES_IGNORE)");
  CHECK(rc == MPIX_ERR_MPI);
  CHECK(message_has("MPI_Waitall failed: "));
  CHECK(reads_as_words(last_message()));
  CHECK(last_message().find('\n') == std::string::npos);
}

TEST_CASE("intercommunicators are refused", "[comm]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 7, &inter);
  MPIX_Comm* comm = nullptr;
  CHECK(MPIX_Comm_init(&comm, inter) == MPIX_ERR_UNSUPPORTED);
  CHECK(comm == nullptr);
  CHECK(message_has("MPIX_Comm_init: mpi_comm is an intercommunicator"));
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

TEST_CASE("node layouts that differ between ranks fail on every rank", "[comm]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  Comm c;
  int nodes_before = 0;
  MPIX_Comm_locality(c.comm, &nodes_before, nullptr, nullptr, nullptr);

  // MPIX_Comm_update_locality with different ppn.
  CHECK(all_ranks(MPIX_Comm_update_locality(c.comm, rank == 0 ? 1 : 2) == MPIX_ERR_ARG));
  CHECK(message_has("MPIX_Comm_update_locality: ranks give different node layouts"));
  int nodes = 0;
  MPIX_Comm_locality(c.comm, &nodes, nullptr, nullptr, nullptr);
  CHECK(nodes == nodes_before);  // the layout it had
  // Detected on some ranks, emulated on others.
  CHECK(all_ranks(MPIX_Comm_update_locality(c.comm, rank == 0 ? 0 : 1) == MPIX_ERR_ARG));
  harness::Info info{{"mpix_alltoallv_algorithm", "node_aware"}};
  Exchange after;
  CHECK(all_ranks(after.run(info.info, c.comm) == MPIX_SUCCESS));
  CHECK(all_ranks(after.correct()));
  CHECK(all_ranks(MPIX_Comm_update_locality(c.comm, 1) == MPIX_SUCCESS));

  // MPIX_PPN, different or malformed on one rank, at init.
  const char* saved = std::getenv("MPIX_PPN");
  std::string saved_value = saved ? saved : "";
  for (const char* odd : {"1", "two"}) {
    INFO("MPIX_PPN on rank 0: " << odd);
    setenv("MPIX_PPN", rank == 0 ? odd : "2", 1);
    MPIX_Comm* comm = nullptr;
    int rc = MPIX_Comm_init(&comm, MPI_COMM_WORLD);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    CHECK(comm == nullptr);
    if (rc == MPIX_SUCCESS) MPIX_Comm_free(&comm);
  }
  if (saved) setenv("MPIX_PPN", saved_value.c_str(), 1); else unsetenv("MPIX_PPN");
}
