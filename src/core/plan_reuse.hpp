// Plan reuse by blocking calls. Applications make the same exchange again and again (a solver's halo
// update, an FFT's transpose), and a blocking call is agreement, plan, start, wait.
// The plan of the previous blocking call of the same operation serves again while
// nothing it was made from changed on any rank: buffers, counts, displacements,
// datatype layouts, algorithm and hints. Each rank compares its call with the one
// it keeps the plan of; either every rank runs its kept plan or every rank plans
// anew, so the choice stays collective. Two ways to learn whether any rank's call
// changed:
// - the call's one agreement carries the bit: the call saves the planning and the
//   metadata rounds (TuNA's sizes, node_aware's gathered sizes), not the agreement;
// - the kept plan's own messages carry it (Plan::start_carrying: the plans whose
//   messages reach every rank from every rank, bruck, tuna, tuna_carried, the
//   hierarchical TuNAs, and the direct exchanges in their messages' lengths,
//   ScheduledPlan), where every rank keeps the plan (also
//   agreed), not in place and without mpix_check_args: the call is the exchange alone. A rank whose call
//   changed only sends the plan's messages, with the bit, touching no user buffer;
//   then every rank makes the call anew (the agreement, which fails it everywhere if
//   that rank's arguments are bad). In place is left out, as the exchange writes the
//   receive buffer its next attempt would send from. As a change then costs an
//   exchange of the plan's messages more, this starts once the plan has run again
//   after an agreement: calls that alternate between two exchanges never pay it.
// Host buffers only: a CUDA IPC handle names an allocation, which may have been
// freed and made again at the same address. mpix_plan_reuse=false turns reuse off
// (a kept plan holds its scratch).
#pragma once

#include <memory>

#include "agreement.hpp"
#include "dense_args.hpp"
#include "request.hpp"

namespace mpix {

struct ReusablePlan {
  Op op;
  Exchange exchange;  // as checked, before planning pointed anything at scratch
  long long algorithm = -1, hints_hash = 0;
  bool in_place = false;
  std::unique_ptr<MPIX_Request_s> request;  // none: the call's blocks arrived with its agreement
  bool carried = false;  // the plan carries the bit, every rank keeps it, not in place
  int reuses = 0;        // calls that ran it again after the agreement (the same on every rank)
  // Where the call's hints came from (same_raw_call): its info, that info's content,
  // the MPIX_ environment.
  const MPIX_Info_s* info = nullptr;
  unsigned long long info_generation = 0, environment = 0;
};

// The call, as checked (before planning pointed anything at scratch), to be kept
// with its plan or, where its blocks arrived with the agreement, alone.
std::unique_ptr<ReusablePlan> keep_call(Op op, const Exchange& ex, const Agreement& mine, bool in_place,
                                        const MPIX_Info_s* info);
// Frees a kept plan (its scratch goes back to the pool) and empties its slot.
void drop(ReusablePlan*& kept);
// Whether `kept` was made from the same call as `ex` with `hints`.
bool same_call(const ReusablePlan& kept, Op op, const Exchange& ex, const Hints& hints, bool in_place);
// The call whose plan `kept` is, again, from its raw arguments: the same buffers,
// counts, displacements and datatype layouts, the same info unchanged since, and
// the same MPIX_ environment, so the same hints. It decides nothing check_local and
// same_call would decide otherwise; it only skips building the exchange and
// resolving a dozen hints, which took half of a repeated call at 2 ranks (about
// 1 us on real MPICH). False means: look closer.
bool same_raw_call(const DenseArgs& a, const MPIX_Info_s* info, const MPIX_Comm_s* comm, const ReusablePlan& kept);

}  // namespace mpix
