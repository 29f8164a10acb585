// The linear exchanges: the MPI library's own (pmpi), pairwise, spread-out
// (nonblocking) and scattered. Papers 003 (algorithms 1 and 2) and 000
// (section II, the scattered baseline of MPICH).
#include <climits>

#include "../core/algorithms.hpp"
#include "../core/breakdown.hpp"
#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/large_count.hpp"
#include "../core/schedule.hpp"

namespace mpix {
namespace {

// A blocking call's plan (kept or not, only blocking calls run it) calls MPI's
// blocking collective in start() where every rank makes the int call (agreed:
// blocking forms do not interoperate, an MPI_Alltoallv facing an MPI_Alltoallw
// hangs); otherwise, and for a persistent plan, the nonblocking collective.
class PmpiPlan : public Plan {
 public:
  explicit PmpiPlan(const PlanContext& context)
      : ex_(context.exchange),
        comm_(context.mpi_comm),
        blocking_(!context.facts.persistent && context.facts.int_counts) {}
  int start() override {
    TimeScope exchanging(TimePhase::exchange);
    stats = PlanStats{};
    stats.scratch_bytes = init_stats.scratch_bytes;
    stats.rounds = ex_.size > 1 ? 1 : 0;
    for (int i = 0; i < ex_.size; ++i) {
      if (i == ex_.rank || ex_.send.block_bytes(i) == 0) continue;
      stats.messages += 1;
      stats.payload_bytes += ex_.send.block_bytes(i);
    }
    return mpi_.post(ex_, comm_, blocking_ ? nullptr : &request_);
  }
  // Chooses MPI's int or large-count call (large_count.hpp).
  int prepare() { return mpi_.prepare(ex_); }
  int wait() override {
    if (request_ == MPI_REQUEST_NULL) return MPIX_SUCCESS;
    TimeScope exchanging(TimePhase::exchange);
    return wait_all(1, &request_, comm_);
  }
  int test(bool* done) override {
    int flag = 0;
    MPIX_TRY(test_one(&request_, &flag, comm_));
    *done = flag != 0;
    return MPIX_SUCCESS;
  }

 private:
  Exchange ex_;
  MPI_Comm comm_;
  bool blocking_;
  MPI_Request request_ = MPI_REQUEST_NULL;  // stays null after a blocking call: waits return at once
  MpiAlltoall mpi_;
};

}  // namespace

int create_pmpi(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  auto made = std::make_unique<PmpiPlan>(context);
  MPIX_TRY(made->prepare());
  *plan = std::move(made);
  return MPIX_SUCCESS;
}

int create_pairwise(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = make_linear_schedule(context, 1, false);
  return MPIX_SUCCESS;
}

int create_nonblocking(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = make_linear_schedule(context, INT_MAX, false);
  return MPIX_SUCCESS;
}

// MPICH's scattered: a batch posts its receives, then its sends, then waits.
int create_scattered(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = make_linear_schedule(context, context.params.block_count, true);
  return MPIX_SUCCESS;
}

// ---------------------------------------------------------------- cost models

// MPI's own non-blocking alltoall(v) is modelled as what MPICH's and Open MPI's
// basic linear algorithms and SMPI's MPI_Ialltoall(v) do: every message posted at
// once. The library may do better (Bruck for small alltoall blocks); selection
// therefore keeps pmpi unless another algorithm is predicted clearly faster.
Cost cost_pmpi(const ExchangeFacts& facts, const Params&, const MachineProfile&) { return batched_steps_cost(facts, facts.ranks); }

Cost cost_pairwise(const ExchangeFacts& facts, const Params&, const MachineProfile&) { return batched_steps_cost(facts, 1); }

Cost cost_nonblocking(const ExchangeFacts& facts, const Params&, const MachineProfile&) { return batched_steps_cost(facts, facts.ranks); }

Cost cost_scattered(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  return batched_steps_cost(facts, params.block_count);
}

}  // namespace mpix
