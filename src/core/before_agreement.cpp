#include "before_agreement.hpp"

#include <algorithm>
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

// A spread-out exchange of `exchange` seconds started before an agreement of
// `agreement`: it overlaps the agreement where its messages wait for the network,
// but the CPU that posts them is the agreement's too (on 2 nodes of 32 at 16 B,
// 126 overheads of 0.25 us come first, and the call is no faster than after it).
double speculative_seconds(const ExchangeFacts& f, const MachineProfile& profile, double exchange,
                           double agreement) {
  const double on_node = f.max_ppn - 1.0, off_node = f.ranks - 1.0 - on_node;
  const double posting = on_node * (profile.intra_send_overhead + profile.intra_recv_overhead) +
                         off_node * (profile.inter_send_overhead + profile.inter_recv_overhead);
  return std::max(exchange, posting + agreement);
}

BeforeAgreement choose_before_agreement(Op op, const Exchange& ex, const Hints& hints, const Agreement& mine,
                                        bool fresh, MPIX_Comm_s* comm) {
  BeforeAgreement choice;
  if (hints.check_args || !fresh || !host_buffers(ex)) return choice;
  const ExchangeFacts& own = mine.facts;
  // An alltoallv's ranks have facts of their own, and may so decide differently
  // (the cost is Speculation::abandon's); an alltoall's blocks have one size.
  const bool speculable = !own.in_place && (op == kAlltoallv || own.min_block == own.max_block) &&
                          may_speculate(comm, own.max_block);
  const Algorithm* spread_out = find_algorithm("nonblocking", op);
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
  const Prediction best =
      hints.asked ? predict_best(*spread_out, context.facts, hints.params, profile) : select_dense(op, context);
  const double agreement = blocking_agreement_seconds(context.facts, profile, comm->lane_group);
  const double separate = best.seconds + agreement;
  const double carried = may_carry ? carried_seconds(context.facts, profile, comm->lane_group) : separate;
  double speculative = separate;
  if (speculable) {
    const Prediction alone = hints.asked ? best : predict_best(*spread_out, context.facts, hints.params, profile);
    if (alone.cost.valid) speculative = speculative_seconds(context.facts, profile, alone.seconds, agreement);
  }
  // Carrying checks every rank's arguments before any block is written and leaves
  // nothing to clean up where ranks decide differently: it is kept unless starting
  // the exchange before the agreement is predicted at least 10 % faster. And that
  // must save half an agreement: the agreement's messages share the links with the
  // exchange's, and arrive later than alone (on 2 nodes of 32 at 256 B, by 2.5 us).
  choice.carries = may_carry && carried <= separate && carried <= 1.1 * speculative;
  choice.speculates = !choice.carries && speculable &&
                      (speculative + 0.5 * agreement <= separate || comm->speculation > 0);
  if (comm->rank == 0 && verbose_level() > 0) {
    std::string line;
    if (choice.carries || may_carry)
      line = format("[mpix]   rank 0 %s its blocks in the agreement: predicted %s, against %s for an "
                    "agreement and then %s (its own facts, each rank's taken for every rank's)\n",
                    choice.carries ? "carries" : "does not carry", microseconds(carried).c_str(),
                    microseconds(separate).c_str(), best.algorithm->name);
    if (speculable)
      line += format("[mpix]   rank 0 %s nonblocking before the agreement: predicted %s, against %s for an "
                     "agreement and then %s (its own facts, each rank's taken for every rank's)\n",
                     choice.speculates ? "starts" : "does not start", microseconds(speculative).c_str(),
                     microseconds(separate).c_str(), best.algorithm->name);
    if (reports(comm, line)) std::fputs(line.c_str(), stderr);
  }
  return choice;
}

}  // namespace mpix
