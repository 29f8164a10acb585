// The multi-pair exchanges of paper 003 (section 4): `stride` send/receive pairs
// in flight. Algorithm 3 waits for the whole batch; algorithms 4 and 5 keep a
// sliding window and refill a slot as soon as MPI_Waitany / MPI_Testany frees it,
// so one late peer does not hold back the others.
#include <algorithm>
#include <vector>

#include "../core/algorithms.hpp"
#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/schedule.hpp"

namespace mpix {
namespace {

class SlidingWindowPlan : public Plan {
 public:
  SlidingWindowPlan(const PlanContext& context, bool use_test)
      : ex_(context.exchange),
        traffic_(context.mpi_comm, context.tag),
        stride_(std::max(1, std::min(context.params.stride, context.exchange.size))),
        use_test_(use_test),
        own_staging_(own_copy_staging(context)) {
    init_stats.scratch_bytes = own_staging_.size();
  }

  int start() override {
    stats = PlanStats{};
    stats.scratch_bytes = init_stats.scratch_bytes;
    MPIX_TRY(copy_block(ex_.send.block(ex_.rank), ex_.recv.block(ex_.rank), own_staging_.data(), traffic_.comm()));
    next_send_ = next_recv_ = 1;
    requests_.assign(2 * stride_, MPI_REQUEST_NULL);
    for (int slot = 0; slot < stride_; ++slot) {
      MPIX_TRY(post_recv(slot));
      MPIX_TRY(post_send(stride_ + slot));
    }
    return MPIX_SUCCESS;
  }

  int wait() override {
    bool done = false;
    return progress(true, &done);
  }

  int test(bool* done) override { return progress(false, done); }

 private:
  // Refills freed slots; blocking, until no request is left, else until none of
  // the active ones has completed.
  int progress(bool blocking, bool* done) {
    *done = false;
    for (;;) {
      int index = MPI_UNDEFINED, flag = 0;
      if (use_test_ || !blocking) {
        MPIX_TRY(test_any(&index, &flag));
        if (!flag && !blocking) return MPIX_SUCCESS;
        if (!flag) continue;
      } else {
        MPIX_TRY(wait_any((int)requests_.size(), requests_.data(), &index, traffic_.comm()));
      }
      if (index == MPI_UNDEFINED) {  // no active request left
        *done = true;
        return MPIX_SUCCESS;
      }
      ++stats.rounds;
      MPIX_TRY(index < stride_ ? post_recv(index) : post_send(index));
    }
  }

  // MPI_Testany over the window. SimGrid's SMPI 3.32 skips, in MPI_Testany (not in
  // MPI_Test or MPI_Waitany), every request that has no simulated transfer left,
  // which is what an eager ("detached", below smpi/send-is-detached-thresh) send is
  // as soon as it is posted: such a send is never reported complete, its slot is
  // never refilled, and with stride < P - 1 the exchange hangs. So the simulated
  // build tests the slots one by one with MPI_Test, in index order, which is what
  // MPI_Testany returns (the first completed slot, or flag with MPI_UNDEFINED when
  // none is active).
  int test_any(int* index, int* flag) {
#ifdef MPIX_SIMULATED
    *index = MPI_UNDEFINED;
    *flag = 1;
    for (int i = 0; i < (int)requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPIX_TRY(test_one(&requests_[i], &done, traffic_.comm()));
      if (done) {
        *index = i;
        *flag = 1;
        return MPIX_SUCCESS;
      }
      *flag = 0;
    }
#else
    MPIX_TRY(mpix::test_any((int)requests_.size(), requests_.data(), index, flag, traffic_.comm()));
#endif
    return MPIX_SUCCESS;
  }

  // The next receive, from rank - i, into `slot` (skipping empty blocks).
  int post_recv(int slot) {
    for (; next_recv_ < ex_.size; ++next_recv_) {
      int peer = (ex_.rank - next_recv_ + ex_.size) % ex_.size;
      Message m{ex_.recv.block(peer), peer};
      if (m.empty()) continue;
      ++next_recv_;
      return traffic_.irecv(m, &requests_[slot]);
    }
    return MPIX_SUCCESS;
  }
  // The next send, to rank + i, into `slot`.
  int post_send(int slot) {
    for (; next_send_ < ex_.size; ++next_send_) {
      int peer = (ex_.rank + next_send_) % ex_.size;
      Message m{ex_.send.block(peer), peer};
      if (m.empty()) continue;
      ++next_send_;
      return traffic_.isend(m, &requests_[slot], stats);
    }
    return MPIX_SUCCESS;
  }

  Exchange ex_;
  Traffic traffic_;
  int stride_;
  bool use_test_;
  int next_send_ = 1, next_recv_ = 1;
  std::vector<MPI_Request> requests_;  // [0, stride): receives, [stride, 2 stride): sends
  ScratchBuffer own_staging_;
};

}  // namespace

// Paper 003 algorithm 3: `stride` pairs, then a wait for all of them.
int create_multipair(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = make_linear_schedule(context, context.params.stride, false);
  return MPIX_SUCCESS;
}

int create_multipair_waitany(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = std::make_unique<SlidingWindowPlan>(context, false);
  return MPIX_SUCCESS;
}

int create_multipair_testany(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = std::make_unique<SlidingWindowPlan>(context, true);
  return MPIX_SUCCESS;
}

// Algorithm 3 waits for each batch of `stride` pairs. Algorithms 4 and 5 keep
// `stride` pairs in flight, which in a model without noise costs the same latency
// per `stride` messages (their gain is tolerance of late peers, which the model
// does not see): the registry gives all three this cost.
Cost cost_multipair(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  return batched_steps_cost(facts, params.stride);
}

}  // namespace mpix
