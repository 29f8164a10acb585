#include "before_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "agreement.hpp"
#include "carried_agreement.hpp"
#include "comm.hpp"
#include "error.hpp"
#include "info.hpp"
#include "select.hpp"
#include "speculation.hpp"

namespace mpix {

namespace {

// One round of the agreement in Bruck's rounds, at the level of its messages
// (between nodes where there are several): its two messages' overheads, and
// those with a latency.
struct AgreementRound {
  double overheads, seconds;
};
AgreementRound agreement_round(const ExchangeFacts& f, const MachineProfile& profile) {
  const bool between = f.nodes > 1;
  const double overheads = between ? profile.inter_send_overhead + profile.inter_recv_overhead
                                   : profile.intra_send_overhead + profile.intra_recv_overhead;
  return {overheads, (between ? profile.inter_latency : profile.intra_latency) + overheads};
}

}  // namespace

// A spread-out exchange of `exchange` seconds started before an agreement of
// `agreement`: it overlaps the agreement where its messages wait for the network,
// but the CPU that posts them is the agreement's too (on 2 nodes of 32 at 16 B,
// 126 overheads of 0.25 us come first, and the call is no faster than after it).
// Where the exchange is bound by its posting (it ends within one agreement round
// of its last message posted) and the agreement goes in Bruck's rounds, those
// rounds go between its messages: the links are idle enough that the records
// pass, and the call costs the exchange and the CPU of the agreement's messages.
// Simulated on 64 nodes of 1 rank at 1 KiB (fat tree, 126 overheads of 0.25 us):
// 36.5 us where the agreement's rounds went after the posting took 39.4 (the
// model priced that at 38.8) and the rounds alone 6.6. Where the exchange waits
// for its bytes instead, the rounds' messages share the loaded links and the
// agreement goes after the posting: interleaved at 16 KiB there it took 107.9 us
// against 104.5.
EarlyStart speculative_seconds(const ExchangeFacts& f, const MachineProfile& profile, double exchange,
                               double agreement, int lane_group) {
  const double on_node = f.max_ppn - 1.0, off_node = f.ranks - 1.0 - on_node;
  const double posting = on_node * (profile.intra_send_overhead + profile.intra_recv_overhead) +
                         off_node * (profile.inter_send_overhead + profile.inter_recv_overhead);
  const AgreementRound round = agreement_round(f, profile);
  EarlyStart early;
  early.seconds = std::max(exchange, posting + agreement);
  if (lane_group != 0 || f.ranks < 2 || exchange > posting + round.seconds) return early;
  // Each round costs its two messages' overheads and about one look at it
  // (MPI_Test), priced as a receive's overhead. (Simulated, a round cost 0.61 us
  // of a 64-node fat tree's posting, o = 0.25 us and a look 0.1; 0.3-0.4 us on
  // fatnode's 16 x 4, o = 0.1 us, where the rounds hide 0.3 us of latency each and
  // the call took 0.2 us longer than with the agreement after the posting.)
  const double rounds = std::ceil(std::log2(f.ranks));
  const double interleaved = std::max(exchange + rounds * 1.5 * round.overheads, agreement);
  early.interleaved = interleaved < early.seconds;
  early.seconds = std::min(early.seconds, interleaved);
  return early;
}

int posts_per_round(const ExchangeFacts& f, const MachineProfile& profile) {
  const AgreementRound round = agreement_round(f, profile);
  // A rank looks at the round every k posts, so a round's message, sent by a rank
  // that looked as late, comes k/2 posts of o after its latency and overheads:
  // one look a round, k o = round + k o / 2, is k = 2 round / o. (Simulated on 64
  // nodes of 1 at 1 KiB, k = 9: 36.5 us; 5: 36.9; 3: 37.7; 20: 37.1.)
  return (int)std::clamp(std::ceil(2.0 * round.seconds / std::max(0.5 * round.overheads, 1e-9)), 1.0, 1e6);
}

namespace {

// 2^k nearest to `value` on a log scale (0 for 0): the edges lie at 2^(k + 1/2),
// away from the powers of 2 that block sizes and their means tend to be.
double nearest_power_of_2(double value) { return value > 0 ? std::exp2(std::round(std::log2(value))) : 0.0; }

// An alltoallv's facts as every rank may guess them from its own blocks alike:
// an alltoall of blocks of the mean size of this rank's non-empty blocks (sent and
// received), a share of them non-empty, both rounded to powers of 2. Ranks whose
// blocks are drawn alike (their means within a factor of about 1.4 of each other
// and of the same power of 2) so decide alike whether to start their exchange
// before the agreement; with each rank's exact facts taken for every rank's, a
// few per cent between two ranks' totals split them where the model's choice
// changes, and every rank then waits for the ranks that start only after the
// agreement (Agreement::unready).
ExchangeFacts coarse_facts(const Exchange& ex, const ExchangeFacts& own, const Locality& locality) {
  long long bytes = 0, blocks = 0;
  for (int peer = 0; peer < ex.size; ++peer) {
    if (peer == ex.rank) continue;
    for (const long long b : {ex.send.block_bytes(peer), ex.recv.block_bytes(peer)}) {
      bytes += b;
      blocks += b > 0;
    }
  }
  ExchangeFacts coarse = own;
  coarse.max_block = blocks > 0 ? (long long)nearest_power_of_2((double)bytes / (double)blocks) : 0;
  set_alltoall_sums(locality, &coarse);
  const double nonempty = own.ranks > 1 ? std::min(1.0, nearest_power_of_2(blocks / (2.0 * (own.ranks - 1)))) : 1.0;
  coarse.min_block = nonempty < 1.0 ? 0 : coarse.max_block;
  coarse.total_bytes = (long long)(coarse.total_bytes * nonempty);
  coarse.nonempty_blocks = (long long)(coarse.nonempty_blocks * nonempty);
  coarse.intra_node_bytes = (long long)(coarse.intra_node_bytes * nonempty);
  coarse.max_rank_send = coarse.max_rank_recv = coarse.total_bytes / std::max(1, own.ranks);
  coarse.max_rank_messages = coarse.nonempty_blocks / std::max(1, own.ranks);
  return coarse;
}

}  // namespace

CarryAgain price_carrying_again(Op op, const PlanContext& context, int lane_group) {
  CarryAgain price;
  price.plan = select_dense(op, context);
  price.carried = carried_seconds(context.facts, *context.profile, lane_group);
  price.plan_start = predict_seconds(price.plan.cost, *context.profile, true);
  price.pays = price.plan.algorithm && price.carried <= 0.9 * price.plan_start;
  return price;
}

BeforeAgreement choose_before_agreement(Op op, const Exchange& ex, const Hints& hints, const Agreement& mine,
                                        bool fresh, MPIX_Comm_s* comm) {
  BeforeAgreement choice;
  const ExchangeFacts& own = mine.facts;
  const Algorithm* spread_out = find_algorithm("nonblocking", op);
  // Whether this rank could run the spread-out exchange under its tags, started
  // before the agreement or, where other ranks did and it chose otherwise, after
  // it (an alltoallv's ranks have facts of their own and may decide differently;
  // an alltoall's blocks have one size). A rank with no message to start can too.
  // The tests' knob (MPIX_Comm_s::speculation) overrides mpix_early_start.
  const int early_start = comm->speculation != 0 ? comm->speculation : hints.early_start;
  const bool tagged = own.max_block == 0 ? early_start >= -1 : may_speculate(comm, own.max_block);
  choice.ready = !hints.check_args && host_buffers(ex) && !own.in_place && tagged &&
                 (op == kAlltoallv || own.min_block == own.max_block) && (!hints.asked || hints.asked == spread_out);
  const bool speculable = choice.ready && own.max_block > 0 && early_start >= 0;
  if (hints.check_args || !fresh || !host_buffers(ex)) return choice;
  if (hints.asked && (hints.asked != spread_out || !speculable)) return choice;
  // The carried rounds hold the own block too (max_block leaves it out).
  const long long own_block = ex.send.block_bytes(ex.rank);
  // A radix the user set is for the exchange: the carried one is of radix 2.
  const bool may_carry = !hints.asked && hints.params.radix_auto &&
                         std::max(own.max_block, own_block) <= kCarriedBlockLimit &&
                         !(op == kAlltoall && own.min_block != own.max_block);
  if (!may_carry && !speculable) return choice;
  PlanContext context;
  context.comm = comm;
  context.mpi_comm = comm->lib_comm;
  context.exchange = ex;
  context.params = hints.params;
  context.profile = hints.profile;
  context.facts = own;
  if (op == kAlltoall) {
    set_alltoall_sums(comm->locality, &context.facts);
  } else {
    context.facts.total_bytes *= own.ranks;
    context.facts.nonempty_blocks *= own.ranks;
    context.facts.intra_node_bytes *= own.ranks;
  }
  context.facts.direct_copy = comm->direct_copy.ready() && comm->direct_copy.cma();
  // A tuning rule that applies names the algorithm; a loaded file whose rules do not
  // (mpix-tune writes none where auto was not beaten) leaves the call to auto.
  if (!hints.asked && hints.tuning && hints.tuning->match(op, context.facts)) return choice;
  // A rank that sends no bytes knows nothing of the others' blocks, and carrying
  // costs it a byte of size per block: declining would only stop the ranks that
  // carry from finishing in the agreement (fft_n1, whose last ranks send nothing).
  if (may_carry && op == kAlltoallv && own.max_rank_send == 0) {
    const std::string line = "[mpix]   rank 0 carries its blocks in the agreement: it sends none\n";
    if (reports(comm, line)) std::fputs(line.c_str(), stderr);
    choice.carries = true;
    return choice;
  }
  const MachineProfile& profile = *hints.profile;
  // The ways a call may go, priced on `facts`.
  struct Prices {
    Prediction best;  // the algorithm run after an agreement
    double agreement = 0, separate = 0, speculative = 0;
    bool interleaved = false;  // the agreement's rounds between the exchange's messages
  };
  auto price = [&](const ExchangeFacts& facts) {
    Prices p;
    context.facts = facts;
    p.best = hints.asked ? predict_best(*spread_out, facts, hints.params, profile) : select_dense(op, context);
    p.agreement = blocking_agreement_seconds(facts, profile, comm->lane_group);
    p.separate = p.speculative = p.best.seconds + p.agreement;
    if (speculable) {
      const Prediction alone = hints.asked ? p.best : predict_best(*spread_out, facts, hints.params, profile);
      if (alone.cost.valid) {
        const EarlyStart early = speculative_seconds(facts, profile, alone.seconds, p.agreement, comm->lane_group);
        p.speculative = early.seconds;
        p.interleaved = early.interleaved;
      }
    }
    return p;
  };
  Prices prices = price(context.facts);
  const double carried = may_carry ? carried_seconds(context.facts, profile, comm->lane_group) : prices.separate;
  // Carrying checks every rank's arguments before any block is written and leaves
  // nothing to clean up where ranks decide differently: it is kept unless starting
  // the exchange before the agreement is predicted at least 10 % faster, or
  // mpix_early_start=true asks for that start.
  choice.carries = may_carry && !(speculable && early_start > 0) && carried <= prices.separate &&
                   carried <= 1.1 * prices.speculative;
  if (op == kAlltoallv && speculable && !choice.carries) prices = price(coarse_facts(ex, own, comm->locality));
  // Starting after posting must save a whole agreement: the exchange must outlast
  // the messages' posting and the agreement after it, which is when the agreement
  // hides inside it (then speculative + agreement = separate, where the best way is
  // this exchange). Where it does not, the agreement's messages come out behind the
  // exchange's and share its links: simulated on 2 nodes of 32, the call then took
  // 0.7-4 us longer than the agreement and the exchange one after the other (the
  // torus at 256 B, the dragonfly at 1 KiB, 50 GB/s links at 1 KiB; the cells and
  // the rule's history are in docs/performance.md). Interleaved, its rounds leave
  // between the exchange's messages on links the posting keeps light, and the
  // prediction stands as it is.
  const double saving = prices.separate - prices.speculative - (prices.interleaved ? 0.0 : prices.agreement);
  choice.speculates = !choice.carries && speculable && (saving >= -1e-9 * prices.separate || early_start > 0);
  const int interleave = comm->speculation_interleave;
  if (choice.speculates && (interleave > 0 || (interleave == 0 && prices.interleaved)))
    choice.progress_every = interleave > 0 ? interleave : posts_per_round(own, profile);
  if (comm->rank == 0 && verbose_level() > 0) {
    std::string line;
    if (choice.carries || may_carry)
      line = format("[mpix]   rank 0 %s its blocks in the agreement: predicted %s, against %s for an "
                    "agreement and then %s (its own facts, each rank's taken for every rank's)\n",
                    choice.carries ? "carries" : "does not carry", microseconds(carried).c_str(),
                    microseconds(prices.separate).c_str(), prices.best.algorithm->name);
    if (speculable)
      line += format("[mpix]   rank 0 %s nonblocking before the agreement: predicted %s, against %s for an "
                     "agreement of %s and then %s (%s%s)\n",
                     choice.speculates ? "starts" : "does not start", microseconds(prices.speculative).c_str(),
                     microseconds(prices.separate).c_str(), microseconds(prices.agreement).c_str(),
                     prices.best.algorithm->name,
                     op == kAlltoallv && !choice.carries
                         ? "its blocks' coarse view: mean and share of non-empty blocks rounded to powers of 2"
                         : "its own facts, each rank's taken for every rank's",
                     early_start > 0 ? "; mpix_early_start=true: it starts wherever it can" : "");
    if (reports(comm, line)) std::fputs(line.c_str(), stderr);
  }
  return choice;
}

}  // namespace mpix
