// The plan of the previous blocking call kept for the calls that repeat it
// (plan_reuse.hpp).
#include "plan_reuse.hpp"

#include "comm.hpp"
#include "handles.hpp"
#include "info.hpp"

namespace mpix {

std::unique_ptr<ReusablePlan> keep_call(Op op, const Exchange& ex, const Agreement& mine, bool in_place,
                                        const MPIX_Info_s* info) {
  std::unique_ptr<ReusablePlan> kept(new ReusablePlan{op, ex, mine.algorithm, mine.hints_hash, in_place, nullptr});
  kept->info = info;
  kept->info_generation = info ? info->generation : 0;
  kept->environment = environment_fingerprint();
  return kept;
}

void drop(ReusablePlan*& kept) {
  delete kept;
  kept = nullptr;
}

void release_reusable_plans(MPIX_Comm_s* comm) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (ReusablePlan*& kept : comm->reusable_plans) {
    if (kept && kept->request && finalized) {  // its MPI objects went with MPI: nothing left to free
      kept->request.release();
      --comm->live_requests;
    }
    drop(kept);
  }
}

bool kept_plan_carries(const MPIX_Comm_s* comm, bool alltoall) {
  const ReusablePlan* kept = comm->reusable_plans[alltoall ? 0 : 1];
  return kept && kept->carried;
}

bool same_call(const ReusablePlan& kept, Op op, const Exchange& ex, const Hints& hints, bool in_place) {
  return hints.plan_reuse && kept.op == op && kept.algorithm == asked_index(hints) &&
         kept.hints_hash == hints_hash(hints) && kept.in_place == in_place && same_side(kept.exchange.send, ex.send) &&
         same_side(kept.exchange.recv, ex.recv);
}

bool same_raw_call(const DenseArgs& a, const MPIX_Info_s* info, const MPIX_Comm_s* comm, const ReusablePlan& kept) {
  if (a.op != kept.op || kept.in_place || a.sendbuf == MPI_IN_PLACE || info != kept.info ||
      (info && (!handle_live(info) || info->generation != kept.info_generation)))
    return false;
  return same_raw_side(a, true, kept.exchange.send, comm->lib_comm) &&
         same_raw_side(a, false, kept.exchange.recv, comm->lib_comm) && environment_fingerprint() == kept.environment;
}

}  // namespace mpix
