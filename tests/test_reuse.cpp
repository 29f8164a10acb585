// Plan reuse by blocking calls (src/core/dense.cpp, "Plan reuse"): a call that
// repeats the previous one of its operation on every rank runs that call's plan
// again, with the new call's data, after the agreement (the first repeat, and plans
// that cannot carry the change) or without it (the TuNAs, bruck and node_aware: their
// own messages carry it; the direct exchanges: their messages' lengths do); a
// change on any one rank (buffer,
// counts, displacements, datatype, hints) makes every rank plan anew;
// mpix_plan_reuse=false on one rank turns it off for all without a hang; bad
// arguments still fail on every rank; the communicator's functions see no request
// of the user's in a kept plan. Plans made and agreements made are counted by the
// communicator (plans_created(), agreements).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <list>
#include <string>
#include <vector>

#include "core/comm.hpp"
#include "core/registry.hpp"
#include "core/schedule.hpp"
#include "harness.hpp"

using harness::all_ranks;
using harness::message_has;

namespace {

// Block i -> j holds (i + j) % 3 + 1 ints (with_empty: (i + j) % 3, so that some
// blocks are empty), of value 1000000 * call + 1000 * i + 10 * j + k.
struct Exchange {
  int size = harness::world_size(), rank = harness::world_rank();
  std::vector<int> send, recv, send_counts, send_displs, recv_counts, recv_displs;
  MPI_Datatype send_type = MPI_INT, recv_type = MPI_INT;
  bool with_empty = false;

  int units(int i, int j) const { return (i + j) % 3 + (with_empty ? 0 : 1); }
  explicit Exchange(bool with_empty_ = false)
      : send_counts(size), send_displs(size), recv_counts(size), recv_displs(size), with_empty(with_empty_) {
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
  // The send buffer of call number `call`; the receive buffer cleared.
  void fill(int call) {
    for (int peer = 0; peer < size; ++peer)
      for (int k = 0; k < send_counts[peer]; ++k) send[send_displs[peer] + k] = value(call, rank, peer, k);
    std::fill(recv.begin(), recv.end(), -1);
  }
  int run(int call, MPIX_Info* info, MPIX_Comm* comm) {
    fill(call);
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

// What a call costs in plans made and agreements made, on every rank.
struct Made {
  unsigned long long plans, agreements;
};

// Calls `ex` on every rank; true on every rank when all succeeded with MPI's result
// and every rank made what `made` says.
bool run_counted(Exchange& ex, int call, MPIX_Info* info, MPIX_Comm* comm, Made made) {
  const Made before{comm->plans_created(), comm->agreements};
  const int rc = ex.run(call, info, comm);
  INFO("call " << call << ": " << MPIX_Last_error_message());
  CHECK(rc == MPIX_SUCCESS);
  const Made after{comm->plans_created() - before.plans, comm->agreements - before.agreements};
  INFO("plans " << after.plans << " agreements " << after.agreements);
  const bool ok = all_ranks(rc == MPIX_SUCCESS && ex.correct(call) && after.plans == made.plans &&
                            after.agreements == made.agreements);
  CHECK(ok);
  return ok;
}

const Made kPlanned{1, 1};
const Made kReused{0, 1};  // the plan run again after the agreement

// The plans whose own messages carry the change: tuna_carried, those on the TuNA
// core (ByteExchangePlan::carry_change), and the direct exchanges on the schedule
// engine in one pass (ScheduledPlan: the messages' lengths).
const char* const kDirectCarrying[] = {"pairwise", "nonblocking", "scattered", "multipair", "random_scatter",
                                       "random_sendrecv"};
bool carries(const std::string& algorithm) {
  for (const char* direct : kDirectCarrying)
    if (algorithm == direct) return true;
  return algorithm == "tuna_carried" || algorithm == "tuna" || algorithm == "bruck" ||
         algorithm.rfind("tuna_hier_", 0) == 0 || algorithm == "node_aware";
}

// A call repeated once more, after a kReused one: without the agreement where the
// plan's own messages carry the change.
Made again(const std::string& algorithm) { return Made{0, carries(algorithm) ? 0ull : 1ull}; }

// The ways the plan's own messages carry a change: tuna_carried's headers; the TuNA
// core's and the hierarchical inter-node messages' words; node_aware's phase 1
// words, then its node-local plan; pairwise's lengths.
const char* const kAlgorithms[] = {"node_aware", "pairwise", "tuna_carried", "tuna", "tuna_hier_coalesced"};

// hints: the same info object set anew; hints_environment: an MPIX_ variable;
// info_object: another info, made at once where the freed one was (malloc gives
// the same address back), so only its content can tell.
enum class Change { send_buffer, recv_displacement, datatype, counts, hints, hints_environment, info_object };

// Plans, runs again (both ways, where the algorithm has two), makes `change` on the
// last rank (counts: between rank 0 and it), and checks that every rank plans anew
// and that the new plan serves again.
void change_one_rank(const char* algorithm, Change change) {
  harness::Comm c;
  harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
  Exchange ex;
  const bool changer = ex.rank == ex.size - 1;
  int call = 0;
  run_counted(ex, call++, info.info, c.comm, kPlanned);
  run_counted(ex, call++, info.info, c.comm, kReused);
  run_counted(ex, call++, info.info, c.comm, again(algorithm));
  MPI_Datatype one_int = MPI_DATATYPE_NULL;
  switch (change) {
    case Change::send_buffer:
      if (changer) ex.send = std::vector<int>(ex.send.size() + 1);  // storage of its own
      break;
    case Change::recv_displacement:
      if (changer) {
        ex.recv.push_back(-1);
        ++ex.recv_displs[ex.size - 1];
      }
      break;
    case Change::datatype:  // another handle, the same layout
      MPI_Type_contiguous(1, MPI_INT, &one_int);
      MPI_Type_commit(&one_int);
      if (changer) ex.recv_type = one_int;
      break;
    case Change::counts:
      // Rank 0 sends rank size-1 one int more, which expects it; the extra int
      // (k = units) has the value the formula gives it on both sides.
      if (ex.rank == 0) {  // its last block: no displacement moves
        ++ex.send_counts[ex.size - 1];
        ex.send.push_back(0);
      }
      if (changer) {
        ++ex.recv_counts[0];
        for (int peer = 1; peer < ex.size; ++peer) ++ex.recv_displs[peer];
        ex.recv.push_back(0);
      }
      break;
    case Change::hints:  // on every rank
      info.set("mpix_check_args", "true");
      break;
    case Change::hints_environment:  // on every rank
      setenv("MPIX_CHECK_ARGS", "true", 1);
      break;
    case Change::info_object:  // on every rank
      MPIX_Info_free(&info.info);
      MPIX_Info_init(&info.info);
      MPIX_Info_set(info.info, "mpix_alltoallv_algorithm", algorithm);
      MPIX_Info_set(info.info, "mpix_check_args", "true");
      break;
  }
  const bool hints = change == Change::hints || change == Change::hints_environment || change == Change::info_object;
  run_counted(ex, call++, info.info, c.comm, kPlanned);
  run_counted(ex, call++, info.info, c.comm, kReused);
  // mpix_check_args=true compares the sizes on every call, after the agreement.
  run_counted(ex, call++, info.info, c.comm, hints ? kReused : again(algorithm));
  if (change == Change::hints_environment) unsetenv("MPIX_CHECK_ARGS");
  if (change == Change::datatype) {  // and back
    ex.recv_type = MPI_INT;
    run_counted(ex, call++, info.info, c.comm, kPlanned);
    MPI_Type_free(&one_int);
  }
}

}  // namespace

TEST_CASE("a repeated blocking call runs its plan again, with the new data", "[reuse]") {
  for (const char* algorithm : {"pairwise", "tuna", "tuna_carried", "node_aware", "tuna_hier_staggered"}) {
    INFO(algorithm);
    harness::Comm c;
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    Exchange ex;
    const unsigned long long before = c.comm->plans_created();
    CHECK(ex.run(0, info.info, c.comm) == MPIX_SUCCESS);
    CHECK(all_ranks(ex.correct(0)));
    CHECK(c.comm->plans_created() - before >= 1);
    run_counted(ex, 1, info.info, c.comm, kReused);
    for (int call = 2; call < 5; ++call) run_counted(ex, call, info.info, c.comm, again(algorithm));
  }
}

TEST_CASE("a change on one rank makes every rank plan anew", "[reuse]") {
  for (const char* algorithm : kAlgorithms)
    for (Change change : {Change::send_buffer, Change::recv_displacement, Change::datatype, Change::counts,
                          Change::hints, Change::hints_environment, Change::info_object}) {
      INFO(algorithm << ", change " << (int)change);
      change_one_rank(algorithm, change);
    }
}

// TuNA's rounds bring each rank's bit to every rank (the path from j to i takes one
// round per non-zero radix-r digit of i - j); the hierarchical TuNAs' intra-node
// rounds bring it to the node, their inter-node messages (one from every other node
// to every rank) to all; node_aware's phase 1 brings it to one rank of every other
// node, its node-local plan from there to the node. A change on any one rank, at
// every radix, on nodes of every size (the last one smaller), makes every rank plan
// anew, as the counts show on every rank.
void carry_from_every_rank(const char* algorithm, int radix, harness::Comm& c, bool with_empty = false) {
  Exchange ex(with_empty);
  harness::Info info{{"mpix_alltoallv_algorithm", algorithm}, {"mpix_radix", std::to_string(radix)}};
  int call = 0;
  run_counted(ex, call++, info.info, c.comm, kPlanned);
  run_counted(ex, call++, info.info, c.comm, kReused);
  CHECK(mpix::kept_plan_carries(c.comm, false) == carries(algorithm));
  for (int changer = 0; changer < ex.size; ++changer) {
    INFO("changed on rank " << changer);
    run_counted(ex, call++, info.info, c.comm, again(algorithm));
    if (ex.rank == changer) ex.send = std::vector<int>(ex.send.size());  // storage of its own
    run_counted(ex, call++, info.info, c.comm, kPlanned);
    run_counted(ex, call++, info.info, c.comm, kReused);
  }
}

TEST_CASE("the plans' own messages carry a change from any rank to every rank", "[reuse]") {
  harness::Comm c;
  const int size = harness::world_size();
  for (int radix = 2; radix <= std::max(2, size); ++radix) {
    INFO("tuna_carried, radix " << radix);
    carry_from_every_rank("tuna_carried", radix, c);
  }
  // The TuNA core at radix 2, 3 and P (its schedules with and without parts).
  std::vector<int> radices{2};
  for (int radix : {3, size})
    if (radix > radices.back() && radix <= size) radices.push_back(radix);
  for (int radix : radices) {
    INFO("tuna, radix " << radix);
    carry_from_every_rank("tuna", radix, c);
  }
  for (const char* algorithm : {"tuna_hier_coalesced", "tuna_hier_staggered", "node_aware"})
    for (int ppn = 1; ppn <= std::max(1, size / 2); ++ppn) {
      REQUIRE(MPIX_Comm_update_locality(c.comm, ppn) == MPIX_SUCCESS);
      // Radix 2 and Q, the two ends of the intra-node schedules (node_aware has no
      // radix: a second radix would be the same call, run again without planning).
      const bool radix_matters = std::string(algorithm) != "node_aware";
      for (int radix : ppn > 2 && radix_matters ? std::vector<int>{2, ppn} : std::vector<int>{2}) {
        INFO(algorithm << ", " << ppn << " ranks per node, radix " << radix);
        carry_from_every_rank(algorithm, radix, c);
      }
    }
}

// A direct exchange's step meets every other rank once on each side: a changed
// rank's empty message where a block is planned, or its one byte where none is,
// reaches every rank directly. Empty blocks: the planned-empty messages while carrying.
TEST_CASE("the direct exchanges' message lengths carry a change from any rank to every rank", "[reuse]") {
  harness::Comm c;
  // Plans only: `nonblocking` started before the agreement makes none (speculation.hpp).
  c.comm->speculation = -2;
  for (const char* algorithm : kDirectCarrying)
    for (bool with_empty : {false, true}) {
      if (with_empty && harness::world_size() == 1) continue;  // an empty buffer: no change to make
      INFO(algorithm << (with_empty ? ", some blocks empty" : ""));
      carry_from_every_rank(algorithm, 2, c, with_empty);
    }
}

TEST_CASE("the direct exchanges carry the change only where few blocks are empty", "[reuse]") {
  mpix::ExchangeFacts facts;
  facts.ranks = 256;
  facts.nonempty_blocks = facts.pairs();
  CHECK(mpix::few_empty_blocks(facts));
  facts.nonempty_blocks = facts.pairs() - 256 * 8;  // 8 empty blocks a rank: the agreement's rounds
  CHECK(mpix::few_empty_blocks(facts));
  facts.nonempty_blocks -= 1;
  CHECK_FALSE(mpix::few_empty_blocks(facts));
  facts.ranks = 1;
  facts.nonempty_blocks = 0;
  CHECK(mpix::few_empty_blocks(facts));
}

TEST_CASE("mpix_plan_reuse=false on one rank plans every call on every rank", "[reuse]") {
  for (const char* algorithm : kAlgorithms) {
    INFO(algorithm);
    harness::Comm c;
    Exchange ex;
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    if (ex.rank == 0) info.set("mpix_plan_reuse", "false");
    for (int call = 0; call < 3; ++call) run_counted(ex, call, info.info, c.comm, kPlanned);
    CHECK((c.comm->reusable_plans[1] == nullptr) == (ex.rank == 0));
  }
  harness::Comm c;
  Exchange ex;
  setenv("MPIX_PLAN_REUSE", "sometimes", 1);
  CHECK(ex.run(0, nullptr, c.comm) == MPIX_ERR_INFO_VALUE);
  CHECK(message_has("MPIX_PLAN_REUSE (environment)=sometimes: expected true or false"));
  // Written differently on different ranks, a boolean still agrees: "0" is "false",
  // "ON" is "true" (mpix_check_args is part of the compared hints).
  setenv("MPIX_PLAN_REUSE", ex.rank == 0 ? "0" : "false", 1);
  harness::Info check{{"mpix_check_args", ex.rank == 0 ? "ON" : "true"}};
  for (int call = 0; call < 3; ++call) run_counted(ex, call, check.info, c.comm, kPlanned);
  CHECK(c.comm->reusable_plans[1] == nullptr);
  unsetenv("MPIX_PLAN_REUSE");
}

TEST_CASE("bad arguments after a reused plan fail on every rank", "[reuse]") {
  for (const char* algorithm : kAlgorithms) {
    INFO(algorithm);
    harness::Comm c;
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    Exchange ex;
    run_counted(ex, 0, info.info, c.comm, kPlanned);
    run_counted(ex, 1, info.info, c.comm, kReused);
    run_counted(ex, 2, info.info, c.comm, again(algorithm));
    std::vector<int> negative(ex.send_counts);
    negative[0] = -1;
    const int rc = MPIX_Alltoallv(ex.send.data(), ex.rank == 0 ? negative.data() : ex.send_counts.data(),
                                  ex.send_displs.data(), MPI_INT, ex.recv.data(), ex.recv_counts.data(),
                                  ex.recv_displs.data(), MPI_INT, info.info, c.comm);
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(message_has(ex.rank == 0 ? "sendcounts[0]=-1" : "another rank rejected its arguments"));
    // The agreement keeps the plan through a failed call; the plan's own messages
    // (which learnt of the change before the agreement failed the call) do not.
    const bool carried = carries(algorithm);
    run_counted(ex, 3, info.info, c.comm, carried ? kPlanned : again(algorithm));
    run_counted(ex, 4, info.info, c.comm, carried ? kReused : again(algorithm));
  }
}

TEST_CASE("alltoall and alltoallv keep a plan each", "[reuse]") {
  for (const char* algorithm : kAlgorithms) {
    INFO(algorithm);
    harness::Comm c;
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}, {"mpix_alltoall_algorithm", algorithm}};
    Exchange ex;
    std::vector<int> send(ex.size * 2), recv(ex.size * 2);
    auto alltoall = [&](int call) {
      for (int j = 0; j < ex.size * 2; ++j) send[j] = Exchange::value(call, ex.rank, j / 2, j % 2);
      int rc = MPIX_Alltoall(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, info.info, c.comm);
      bool ok = rc == MPIX_SUCCESS;
      for (int j = 0; j < ex.size * 2; ++j) ok = ok && recv[j] == Exchange::value(call, j / 2, ex.rank, j % 2);
      return all_ranks(ok);
    };
    CHECK(alltoall(0));
    run_counted(ex, 0, info.info, c.comm, kPlanned);
    const Made before{c.comm->plans_created(), c.comm->agreements};
    for (int call = 1; call < 3; ++call) {
      CHECK(alltoall(call));
      run_counted(ex, call, info.info, c.comm, call == 1 ? kReused : again(algorithm));
    }
    CHECK(c.comm->plans_created() == before.plans);
    CHECK(c.comm->agreements - before.agreements == 2 * (kReused.agreements + again(algorithm).agreements));
    // The same buffers, one int per block: a new plan, and its result.
    const unsigned long long plans = c.comm->plans_created();
    for (int j = 0; j < ex.size; ++j) send[j] = Exchange::value(3, ex.rank, j, 0);
    REQUIRE(MPIX_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, info.info, c.comm) == MPIX_SUCCESS);
    bool ok = c.comm->plans_created() == plans + 1;
    for (int j = 0; j < ex.size; ++j) ok = ok && recv[j] == Exchange::value(3, j, ex.rank, 0);
    CHECK(all_ranks(ok));
  }
}

TEST_CASE("in place, a repeated call reuses its plan after the agreement", "[reuse]") {
  for (const char* algorithm : kAlgorithms) {
    INFO(algorithm);
    harness::Comm c;
    harness::Info info{{"mpix_alltoall_algorithm", algorithm}};
    const int size = harness::world_size(), rank = harness::world_rank();
    std::vector<int> data(size * 2);
    for (int call = 0; call < 3; ++call) {
      for (int j = 0; j < size * 2; ++j) data[j] = Exchange::value(call, rank, j / 2, j % 2);
      const Made before{c.comm->plans_created(), c.comm->agreements};
      CHECK(MPIX_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data.data(), 2, MPI_INT, info.info, c.comm) ==
            MPIX_SUCCESS);
      bool ok = true;
      for (int j = 0; j < size * 2; ++j) ok = ok && data[j] == Exchange::value(call, j / 2, rank, j % 2);
      CHECK(all_ranks(ok));
      CHECK(c.comm->plans_created() - before.plans == (call == 0 ? 1u : 0u));
      CHECK(c.comm->agreements - before.agreements == 1u);
    }
  }
}

// Under `auto`, a first call of small blocks carries them in its agreement
// (carried_agreement.hpp) and keeps only the call; the plan for the calls that repeat
// it is made by the first that does, which carries its blocks too, and the call after
// that runs the plan without an agreement where its messages carry a change. Calls
// that alternate between two exchanges never plan. The model's choice at these sizes
// is that of the built-in profile on one node (check_first_call_carried); whether the
// repeated calls carry again instead is the next test's.
TEST_CASE("auto: a call whose blocks came with its agreement plans when it repeats", "[reuse][auto]") {
  if (harness::world_size() < 2 || harness::world_size() > 8 || harness::nodes_emulated()) return;
  harness::Comm c;
  c.comm->carry_again = -1;
  Exchange a, b(true);
  const mpix::DenseChoice& choice = c.comm->blocking_choices[1];
  const Made kCarriedAlone{0, 1};
  int call = 0;
  for (Exchange* ex : {&a, &b, &a}) {
    run_counted(*ex, call++, nullptr, c.comm, kCarriedAlone);
    CHECK(choice.carried_blocks);
  }
  run_counted(a, call++, nullptr, c.comm, kPlanned);  // carried again, and planned
  CHECK(choice.carried_blocks);
  // The plan made for it runs, without an agreement where its messages carry the change.
  REQUIRE(run_counted(a, call++, nullptr, c.comm, Made{0, carries(choice.algorithm) ? 0ull : 1ull}));
  CHECK_FALSE(choice.carried_blocks);
  run_counted(a, call++, nullptr, c.comm, Made{0, carries(choice.algorithm) ? 0ull : 1ull});
  // Another exchange: carried, the plan dropped for the call alone.
  run_counted(b, call++, nullptr, c.comm, kCarriedAlone);
  CHECK(choice.carried_blocks);
  run_counted(b, call++, nullptr, c.comm, kPlanned);

  // Bad arguments on one rank after a call kept alone fail on every rank (that rank
  // sends its record alone, so no rank's blocks arrive) and keep the call: the next
  // valid call repeats it, carries, and plans.
  harness::Comm fresh;
  fresh.comm->carry_again = -1;
  run_counted(a, call++, nullptr, fresh.comm, kCarriedAlone);
  std::vector<int> negative(a.send_counts);
  negative[0] = -1;
  const int rc = MPIX_Alltoallv(a.send.data(), a.rank == 0 ? negative.data() : a.send_counts.data(),
                                a.send_displs.data(), MPI_INT, a.recv.data(), a.recv_counts.data(),
                                a.recv_displs.data(), MPI_INT, nullptr, fresh.comm);
  CHECK(rc == MPIX_ERR_ARG);
  CHECK(message_has(a.rank == 0 ? "sendcounts[0]=-1" : "another rank rejected its arguments"));
  run_counted(a, call++, nullptr, fresh.comm, kPlanned);
  CHECK(fresh.comm->blocking_choices[1].carried_blocks);
}

// Where the model prices carrying below the plan the calls that repeat a carried
// one would make (price_carrying_again; forced here by the tests' knob), they
// carry their blocks again: no plan, an agreement each, MPI's result every time,
// and a change or bad arguments on one rank seen on every rank as by any first call.
TEST_CASE("auto: calls that repeat a carried one carry again where that is priced lower", "[reuse][auto]") {
  if (harness::world_size() < 2 || harness::world_size() > 8 || harness::nodes_emulated()) return;
  harness::Comm c;
  c.comm->carry_again = 1;
  Exchange a, b(true);
  const mpix::DenseChoice& choice = c.comm->blocking_choices[1];
  const Made kCarriedAlone{0, 1};
  int call = 0;
  for (Exchange* ex : {&a, &a, &a, &a, &b, &b, &a}) {
    run_counted(*ex, call++, nullptr, c.comm, kCarriedAlone);
    CHECK(choice.carried_blocks);
  }
  const int rank = harness::world_rank();
  std::vector<int> negative(a.send_counts);
  negative[0] = -1;
  const int rc = MPIX_Alltoallv(a.send.data(), rank == 0 ? negative.data() : a.send_counts.data(),
                                a.send_displs.data(), MPI_INT, a.recv.data(), a.recv_counts.data(),
                                a.recv_displs.data(), MPI_INT, nullptr, c.comm);
  CHECK(rc == MPIX_ERR_ARG);
  CHECK(message_has(rank == 0 ? "sendcounts[0]=-1" : "another rank rejected its arguments"));
  run_counted(a, call++, nullptr, c.comm, kCarriedAlone);
  CHECK(choice.carried_blocks);
  // Against MPI, call after call with other contents: both operations, in place
  // (the carried rounds pack the receive blocks before writing them) and with a
  // datatype that is not one run of bytes. Bandwidths without limit: every rank's
  // model carries, whatever its own blocks.
  const std::string machine = harness::unbounded_machine_file();
  for (bool alltoall : {false, true})
    for (bool in_place : {false, true}) {
      harness::Comm again;
      again.comm->carry_again = 1;
      again.comm->speculation = -2;  // carrying weighed against an agreement alone, not an early start
      harness::DenseCase dense;
      dense.alltoall = alltoall;
      // Equal blocks: a rank whose own blocks are few would price carrying level with
      // an agreement and decline (choose_before_agreement); the calls above vary them.
      dense.dist = mpix::workload::Distribution::constant;
      dense.max_bytes = 16;
      dense.types = in_place ? "vector" : "int";
      dense.in_place = in_place;
      dense.starts = 4;
      dense.keys = {{"mpix_machine_file", machine}};
      std::string why;
      const bool ok = harness::run_dense_case(dense, again.comm, &why);
      INFO(dense.describe() << (why.empty() ? "" : ": " + why));
      CHECK(ok);
      CHECK(again.comm->blocking_choices[alltoall ? 0 : 1].carried_blocks);
      CHECK(again.comm->plans_created() == 0);
    }
  // Never: the second call plans, as in the test above.
  harness::Comm never;
  never.comm->carry_again = -1;
  run_counted(a, call++, nullptr, never.comm, kCarriedAlone);
  run_counted(a, call++, nullptr, never.comm, kPlanned);
  const mpix::DenseChoice& planned = never.comm->blocking_choices[1];
  run_counted(a, call++, nullptr, never.comm, Made{0, carries(planned.algorithm) ? 0ull : 1ull});
  CHECK_FALSE(planned.carried_blocks);
}

TEST_CASE("kept plans are not the user's requests", "[reuse]") {
  harness::Comm c;
  harness::Info info{{"mpix_alltoallv_algorithm", "tuna_carried"}};
  Exchange ex;
  run_counted(ex, 0, info.info, c.comm, kPlanned);
  MPIX_Request* request = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(ex.send.data(), ex.send_counts.data(), ex.send_displs.data(), MPI_INT, ex.recv.data(),
                              ex.recv_counts.data(), ex.recv_displs.data(), MPI_INT, info.info, c.comm,
                              &request) == MPIX_SUCCESS);
  run_counted(ex, 1, info.info, c.comm, kReused);  // beside a persistent plan
  run_counted(ex, 2, info.info, c.comm, again("tuna_carried"));
  MPIX_Comm* comm = c.comm;
  CHECK(MPIX_Comm_free(&comm) == MPIX_ERR_ARG);
  CHECK(message_has(": 1 persistent request(s)"));
  CHECK(MPIX_Request_free(&request) == MPIX_SUCCESS);
  // MPIX_Comm_free drops the kept plans first, on every rank, also where it then
  // fails: so no rank keeps a plan another has dropped.
  CHECK(c.comm->reusable_plans[1] == nullptr);
  run_counted(ex, 3, info.info, c.comm, kPlanned);
  // A new node layout drops the kept plan, made for the old one.
  CHECK(MPIX_Comm_update_locality(c.comm, 1) == MPIX_SUCCESS);
  CHECK(c.comm->reusable_plans[1] == nullptr);
  run_counted(ex, 4, info.info, c.comm, kPlanned);
  CHECK(MPIX_Comm_update_regions(c.comm, 0) == MPIX_SUCCESS);
  run_counted(ex, 5, info.info, c.comm, kPlanned);
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

// A repeated call that runs its plan without the agreement waits as a started
// request: the program's started persistent requests move on meanwhile. Ranks that
// make the call while their peers wait for a request all of them started (MPI
// prescribes only the order of starts) hung when the call's wait did not.
TEST_CASE("a repeated call without the agreement moves started requests on", "[reuse][persistent]") {
  harness::Comm c, other;
  const int rank = harness::world_rank();
  Exchange started;  // on `other`, pairwise: one round per peer, each after the last
  harness::Info pairwise{{"mpix_alltoallv_algorithm", "pairwise"}};
  MPIX_Request* request = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(started.send.data(), started.send_counts.data(), started.send_displs.data(), MPI_INT,
                              started.recv.data(), started.recv_counts.data(), started.recv_displs.data(), MPI_INT,
                              pairwise.info, other.comm, &request) == MPIX_SUCCESS);
  for (const char* algorithm : {"tuna", "tuna_carried", "pairwise"}) {
    INFO(algorithm);
    harness::Info info{{"mpix_alltoallv_algorithm", algorithm}};
    Exchange ex;
    for (int call = 0; call < 3; ++call) REQUIRE(all_ranks(ex.run(call, info.info, c.comm) == MPIX_SUCCESS));
    REQUIRE(all_ranks(mpix::kept_plan_carries(c.comm, false)));
    started.fill(7);
    REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
    int call_rc = MPIX_SUCCESS, wait_rc = MPIX_SUCCESS;
    if (rank % 2 == 0) {
      call_rc = ex.run(3, info.info, c.comm);
      wait_rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
    } else {
      wait_rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
      call_rc = ex.run(3, info.info, c.comm);
    }
    CHECK(all_ranks(call_rc == MPIX_SUCCESS && wait_rc == MPIX_SUCCESS && ex.correct(3) && started.correct(7)));
  }
  MPIX_Request_free(&request);
}

// Every blocking call that plans takes new tags; with few tags (MPI_TAG_UB allows as
// few as 4096 plans' worth), a long run of them came round to the tags of a
// persistent plan started before them and waited after them, whose messages the
// calls then received as their own.
TEST_CASE("blocking calls never take the tags of a started persistent plan", "[reuse][persistent][tags]") {
  harness::Comm c;
  const int rank = harness::world_rank();
  c.comm->tag_slots = 4;
  c.comm->speculation = -2;  // every call plans (started before its agreement, none would)
  // pairwise posts one round at a time, the later ones while the calls below run
  // (they move started requests on), so its messages are in flight beside theirs.
  Exchange started;
  harness::Info pairwise{{"mpix_alltoallv_algorithm", "pairwise"}};
  harness::Info nonblocking{{"mpix_alltoallv_algorithm", "nonblocking"}};
  MPIX_Request* request = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(started.send.data(), started.send_counts.data(), started.send_displs.data(), MPI_INT,
                              started.recv.data(), started.recv_counts.data(), started.recv_displs.data(), MPI_INT,
                              pairwise.info, c.comm, &request) == MPIX_SUCCESS);
  // Each call's buffers are new (all kept alive, so that none is at an address
  // before), so each plans anew and takes new tags: with 4 slots, the fourth plan
  // after the persistent one came round to its tags.
  std::list<Exchange> calls;
  bool calls_correct = true;
  const unsigned long long plans = c.comm->plans_created();
  for (int call = 0; call < 6; ++call) {
    if (call == 3) {
      started.fill(7);
      REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
      // Odd ranks go through the rounds they can before the call: their later
      // rounds' messages to even ranks are sent before the call's, and an even rank
      // posts the call's receives before those rounds' (pairwise: r - 3 for r).
      if (rank % 2 == 1) {
        int done = 0;
        for (const double begin = MPI_Wtime(); !done && MPI_Wtime() - begin < 0.2;)
          REQUIRE(MPIX_Test(request, &done, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
      }
    }
    calls.emplace_back();
    calls_correct = calls_correct && calls.back().run(call, nonblocking.info, c.comm) == MPIX_SUCCESS &&
                    calls.back().correct(call);
  }
  CHECK(c.comm->plans_created() - plans == 6);
  const int wait_rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
  CHECK(all_ranks(calls_correct && wait_rc == MPIX_SUCCESS && started.correct(7)));
  MPIX_Request_free(&request);
}

// MPI prescribes only the order of starts: rank 0 may wait for a started request
// before making another call that its peers make first. Those peers' waits inside
// the call (its agreement, its plan's metadata, the SDDE's rounds) move the started
// request on, or rank 0 waits for their part of it for ever. Each call here has new
// buffers, so it agrees and plans.
TEST_CASE("a call's agreement and planning move started requests on", "[reuse][persistent]") {
  harness::Comm c;
  const int rank = harness::world_rank(), size = harness::world_size();
  Exchange started;  // pairwise: one round per peer, each posted after the last
  harness::Info pairwise{{"mpix_alltoallv_algorithm", "pairwise"}};
  MPIX_Request* request = nullptr;
  REQUIRE(MPIX_Alltoallv_plan(started.send.data(), started.send_counts.data(), started.send_displs.data(), MPI_INT,
                              started.recv.data(), started.recv_counts.data(), started.recv_displs.data(), MPI_INT,
                              pairwise.info, c.comm, &request) == MPIX_SUCCESS);
  auto dense = [&](const char* algorithm, const char* check_args) {
    return [=, &c](int call) {
      harness::Info info{{"mpix_alltoallv_algorithm", algorithm}, {"mpix_check_args", check_args}};
      Exchange ex;
      return ex.run(call, info.info, c.comm) == MPIX_SUCCESS && ex.correct(call);
    };
  };
  auto plan = [&](int call) {
    Exchange ex;
    MPIX_Request* made = nullptr;
    harness::Info tuna{{"mpix_alltoallv_algorithm", "tuna"}};
    bool ok = MPIX_Alltoallv_plan(ex.send.data(), ex.send_counts.data(), ex.send_displs.data(), MPI_INT, ex.recv.data(),
                                  ex.recv_counts.data(), ex.recv_displs.data(), MPI_INT, tuna.info, c.comm,
                                  &made) == MPIX_SUCCESS;
    ex.fill(call);
    ok = ok && MPIX_Start(made) == MPIX_SUCCESS && MPIX_Wait(made, MPI_STATUS_IGNORE) == MPIX_SUCCESS &&
         ex.correct(call);
    if (made) MPIX_Request_free(&made);
    return ok;
  };
  // On `on`, or c where none is given.
  auto sparse = [&](const char* algorithm, MPIX_Comm* on = nullptr) {
    return [=, &c](int call) {
      // Each rank sends one int to the next rank.
      const int dest = (rank + 1) % size, value = call * 1000 + rank;
      int recv_nnz = -1, *src = nullptr;
      void* vals = nullptr;
      harness::Info info{{"mpix_alltoall_crs_algorithm", algorithm}};
      bool ok = MPIX_Alltoall_crs(1, &dest, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, info.info,
                                  on ? on : c.comm) == MPIX_SUCCESS &&
                recv_nnz == 1 && src[0] == (rank + size - 1) % size &&
                static_cast<int*>(vals)[0] == call * 1000 + src[0];
      MPIX_Free(src);
      MPIX_Free(vals);
      return ok;
    };
  };
  auto comm_init = [&](int) {
    MPIX_Comm* made = nullptr;
    const bool ok = MPIX_Comm_init(&made, MPI_COMM_WORLD) == MPIX_SUCCESS;
    if (made) MPIX_Comm_free(&made);
    return ok;
  };
  // On a communicator of its own: the started request keeps c's layout.
  harness::Comm other;
  // A communicator whose SDDE rma window (made here, before the start) its free
  // releases: MPI_Win_free synchronises.
  MPIX_Comm* windowed = nullptr;
  REQUIRE(MPIX_Comm_init(&windowed, MPI_COMM_WORLD) == MPIX_SUCCESS);
  REQUIRE(sparse("rma", windowed)(0));
  auto free_windowed = [&](int) { return MPIX_Comm_free(&windowed) == MPIX_SUCCESS && windowed == nullptr; };
  auto update_locality = [&](int) { return MPIX_Comm_update_locality(other.comm, 0) == MPIX_SUCCESS; };
  const std::vector<std::pair<std::string, std::function<bool(int)>>> calls = {
      {"ipc_hybrid, the communicator's first", dense("ipc_hybrid", "false")},
      {"MPIX_Alltoall_crs rma", sparse("rma")},
      {"auto", dense("auto", "false")},
      {"tuna", dense("tuna", "false")},
      {"node_aware", dense("node_aware", "false")},
      {"pairwise with mpix_check_args", dense("pairwise", "true")},
      {"MPIX_Alltoallv_plan", plan},
      {"MPIX_Alltoall_crs personalized", sparse("personalized")},
      {"MPIX_Alltoall_crs nonblocking", sparse("nonblocking")},
      {"MPIX_Comm_update_locality", update_locality},
      {"MPIX_Comm_init", comm_init},
      {"MPIX_Comm_free of a communicator with an rma window", free_windowed}};
  int call = 0;
  for (const auto& named : calls) {
    INFO(named.first);
    ++call;
    started.fill(call);
    REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
    int wait_rc = MPIX_SUCCESS;
    bool call_ok = true;
    if (rank == 0) {
      wait_rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
      call_ok = named.second(call);
    } else {
      call_ok = named.second(call);
      wait_rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
    }
    CHECK(all_ranks(call_ok && wait_rc == MPIX_SUCCESS && started.correct(call)));
  }
  MPIX_Request_free(&request);
}
