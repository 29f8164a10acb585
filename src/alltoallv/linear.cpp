// The linear exchanges: the MPI library's own (pmpi), pairwise, spread-out
// (nonblocking) and scattered. Papers 003 (algorithms 1 and 2) and 000
// (section II, the scattered baseline of MPICH).
#include <climits>

#include "../core/algorithms.hpp"
#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/schedule.hpp"

namespace mpix {
namespace {

class PmpiPlan : public Plan {
 public:
  explicit PmpiPlan(const PlanContext& context) : ex_(context.exchange), comm_(context.mpi_comm) {}
  int start() override {
    stats = PlanStats{};
    stats.scratch_bytes = init_stats.scratch_bytes;
    stats.rounds = ex_.size > 1 ? 1 : 0;
    for (int i = 0; i < ex_.size; ++i) {
      if (i == ex_.rank || ex_.send.block_bytes(i) == 0) continue;
      stats.messages += 1;
      stats.payload_bytes += ex_.send.block_bytes(i);
    }
    if (ex_.uniform) {
      MPIX_CHECK_MPI(MPI_Ialltoall(ex_.send.buf, ex_.send.counts[0], ex_.send.layout.type, ex_.recv.buf,
                                   ex_.recv.counts[0], ex_.recv.layout.type, comm_, &request_));
    } else {
      MPIX_CHECK_MPI(MPI_Ialltoallv(ex_.send.buf, ex_.send.counts.data(), ex_.send.displs.data(),
                                    ex_.send.layout.type, ex_.recv.buf, ex_.recv.counts.data(),
                                    ex_.recv.displs.data(), ex_.recv.layout.type, comm_, &request_));
    }
    return MPIX_SUCCESS;
  }
  int wait() override {
    return wait_all(1, &request_, comm_);
  }

 private:
  Exchange ex_;
  MPI_Comm comm_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace

int create_pmpi(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = std::make_unique<PmpiPlan>(context);
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

}  // namespace mpix
