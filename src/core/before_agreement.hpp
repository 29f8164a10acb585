// What a blocking MPIX_Alltoall(v) does before its agreement, chosen by each rank
// from its own facts: carry its blocks in the agreement (carried_agreement.hpp),
// start its spread-out exchange (speculation.hpp), or neither.
#pragma once
#include "dense_args.hpp"
#include "model.hpp"
#include "select.hpp"

struct MPIX_Comm_s;

namespace mpix {

struct Agreement;

// What a blocking call does before its agreement, from this rank's own facts,
// taken for every rank's (exact for a valid alltoall but for the datatypes'
// contiguity and direct copy, an estimate for an alltoallv), where the call changed
// or repeats one whose blocks arrived with its agreement (`fresh`; a kept plan runs
// otherwise):
// - `carries`: it sends its blocks with its records in the agreement
//   (carried_agreement.hpp), where `auto` decides (no algorithm asked for, no radix
//   set, no tuning rule matching this rank's facts), its blocks, sent and received,
//   are of at most kCarriedBlockLimit bytes, and the model prices the radix-2 Bruck
//   exchange with its records below the other ways;
// - `speculates`: a call not in place, with blocks of fewer than kSpeculationTags
//   bytes, starts the spread-out exchange before the agreement (speculation.hpp),
//   where it was asked for (`nonblocking`) or, under `auto`, the model prices it,
//   overlapped with the agreement, below the other ways;
// - `ready`: it could run the spread-out exchange so, started after the agreement
//   where other ranks started theirs before it and the call is valid (so ranks
//   that decide differently need not undo what was started).
// Where ranks decide differently otherwise, the call goes on as after any
// agreement, correct but without the saving (CarriedAgreement; Speculation::abandon).
// - `progress_every`: where it speculates, the messages it posts between two looks
//   at the agreement's round in flight (CarriedAgreement::progress;
//   posts_per_round); 0: the agreement begins after the posting.
struct BeforeAgreement {
  bool carries = false, speculates = false, ready = false;
  int progress_every = 0;
};

BeforeAgreement choose_before_agreement(Op op, const Exchange& ex, const Hints& hints, const Agreement& mine,
                                        bool fresh, MPIX_Comm_s* comm);

// Whether the blocking calls that repeat a call whose agreement carried its blocks
// (in the pattern of `lane_group`, as carried_seconds) carry theirs again instead
// of making and running the plan `plan` (select_dense's choice on the agreed facts
// of `context`): where carrying is priced at least 10 % below a start of that plan,
// all that a repeated log-time plan pays (its messages carry the change, and its
// metadata rounds were paid once, by the call that made it). The margin is for the
// model's errors between two ways it prices apart, as for the start before the
// agreement. docs/performance.md, "Carried again".
struct CarryAgain {
  bool pays = false;
  Prediction plan;
  double carried = 0, plan_start = 0;  // seconds
};
CarryAgain price_carrying_again(Op op, const PlanContext& context, int lane_group);

// How many messages a rank posts between two looks at the agreement's round in
// flight (Bruck's rounds): about one round, of a latency, a send's and a
// receive's overhead at the level of the busiest messages, and the wait for a
// peer that looks as seldom.
int posts_per_round(const ExchangeFacts& f, const MachineProfile& profile);

// A spread-out exchange of `exchange` seconds started before an agreement of
// `agreement` seconds in the pattern of `lane_group` (carried_agreement.hpp), on
// the layout of `f`: its predicted time, and whether the agreement's rounds go
// between its messages (CarriedAgreement::progress).
struct EarlyStart {
  double seconds = 0;
  bool interleaved = false;
};
EarlyStart speculative_seconds(const ExchangeFacts& f, const MachineProfile& profile, double exchange,
                               double agreement, int lane_group);

}  // namespace mpix
