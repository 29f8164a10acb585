#include "schedule.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "breakdown.hpp"
#include "comm.hpp"
#include "completion.hpp"
#include "error.hpp"
#include "large_count.hpp"

namespace mpix {

const TypeLayout& byte_layout() {
  static const TypeLayout layout = [] {
    TypeLayout l;
    l.type = MPI_BYTE;
    l.extent = l.true_extent = 1;
    l.size = 1;
    return l;
  }();
  return layout;
}

int Traffic::isend(const Message& m, MPI_Request* request, PlanStats& stats, int tag_offset) {
  charge_mpi_pack(m.block);
  MPIX_TRY(isend_block(m.block, m.peer, tag_ + tag_offset, comm_, request));
  stats.messages += 1;
  stats.payload_bytes += m.block.bytes();
  return MPIX_SUCCESS;
}

int Traffic::irecv(const Message& m, MPI_Request* request, int tag_offset) {
  // MPI unpacks a non-contiguous block when it arrives; charged when the receive is
  // posted (the same total, a little earlier).
  charge_mpi_pack(m.block);
  MPIX_TRY(irecv_block(m.block, m.peer, tag_ + tag_offset, comm_, request));
  return MPIX_SUCCESS;
}

int ScheduledPlan::start() {
  TimeScope exchanging(TimePhase::exchange);
  stats = PlanStats{};
  stats.scratch_bytes = init_stats.scratch_bytes;
  phase_ = 0;
  pass_ = 0;
  next_step_ = 0;
  requests_.clear();
  if (before_start_) MPIX_TRY(before_start_());
  return post_batch();
}

int ScheduledPlan::post_batch() {
  requests_.clear();
  while (phase_ < phases_.size()) {
    const Phase& phase = phases_[phase_];
    if (pass_ >= phase.passes) {
      ++phase_;
      pass_ = 0;
      next_step_ = 0;
      continue;
    }
    if (next_step_ >= phase.step_count) {
      ++pass_;
      next_step_ = 0;
      continue;
    }
    int end = phase.batch_steps >= phase.step_count - next_step_ ? phase.step_count
                                                                 : next_step_ + phase.batch_steps;
    // Two passes when receives go first (all receives of the batch, then all sends);
    // one interleaved pass otherwise.
    for (int pass = 0; pass < (phase.recvs_first ? 2 : 1); ++pass) {
      for (int i = next_step_; i < end; ++i) {
        Step s = phase.step(i);
        bool post_recv = !phase.recvs_first || pass == 0;
        bool post_send = !phase.recvs_first || pass == 1;
        if ((s.recv.peer == rank_) != (s.send.peer == rank_))
          return fail(MPIX_ERR_ARG, "internal: a schedule step is local on one side only");
        if (post_recv && s.recv.peer == rank_) {
          // The own block: a local copy, done when its step comes.
          MPIX_TRY(copy_local(s.send.block, s.recv.block));
          continue;
        }
        if (post_send && s.send.peer == rank_) continue;
        if (post_recv && !s.recv.empty()) {
          requests_.emplace_back();
          MPIX_TRY(traffic_.irecv(s.recv, &requests_.back()));
        }
        if (post_send && !s.send.empty()) {
          requests_.emplace_back();
          MPIX_TRY(traffic_.isend(s.send, &requests_.back(), stats));
        }
      }
    }
    next_step_ = end;
    if (!requests_.empty()) {
      ++stats.rounds;
      return MPIX_SUCCESS;
    }
  }
  return MPIX_SUCCESS;
}

int ScheduledPlan::wait() {
  bool done = false;
  return progress(true, &done);
}

int ScheduledPlan::test(bool* done) { return progress(false, done); }

int ScheduledPlan::progress(bool blocking, bool* done) {
  TimeScope exchanging(TimePhase::exchange);
  *done = false;
  while (!requests_.empty()) {
    bool batch_done = false;
    MPIX_TRY(complete_requests(requests_, blocking, &batch_done, traffic_.comm()));
    if (!batch_done) return MPIX_SUCCESS;
    MPIX_TRY(post_batch());
  }
  if (after_wait_) MPIX_TRY(after_wait_());
  *done = true;
  return MPIX_SUCCESS;
}

int complete_requests(std::vector<MPI_Request>& requests, bool blocking, bool* done, MPI_Comm comm) {
  int flag = 1;
  if (blocking)
    MPIX_TRY(wait_all((int)requests.size(), requests.data(), comm));
  else
    MPIX_TRY(test_all((int)requests.size(), requests.data(), &flag, comm));
  *done = flag != 0;
  if (*done) requests.clear();
  return MPIX_SUCCESS;
}

}  // namespace mpix

namespace mpix {
namespace {

class LinearSchedule : public ExchangeSchedule {
 public:
  LinearSchedule(const PlanContext& context, int batch_steps, bool recvs_first) : ExchangeSchedule(context) {
    int size = ex_.size, rank = ex_.rank;
    phases_.push_back(Phase{size, [this, size, rank](int i) {
                              return blocks((rank - i + size) % size, (rank + i) % size);
                            },
                            batch_steps, recvs_first});
  }
};

}  // namespace

ScratchBuffer own_copy_staging(const PlanContext& context) {
  const Exchange& ex = context.exchange;
  return context.comm->scratch.acquire(copy_staging_bytes(ex.send.block(ex.rank), ex.recv.block(ex.rank)));
}

std::unique_ptr<Plan> make_linear_schedule(const PlanContext& context, int batch_steps, bool recvs_first) {
  return std::make_unique<LinearSchedule>(context, batch_steps, recvs_first);
}

Cost batched_steps_cost(const ExchangeFacts& facts, long long batch_steps, double messages_per_step,
                        double bytes_per_message) {
  Cost cost;
  const double steps = (double)facts.nonempty_blocks / facts.ranks;  // a rank's non-empty steps
  if (steps <= 0 || messages_per_step <= 0) return cost;
  if (bytes_per_message < 0) bytes_per_message = (double)facts.total_bytes / facts.nonempty_blocks;
  const long long batch = std::max(1LL, std::min<long long>(batch_steps, facts.ranks));
  if (batch == 1) {
    // One step per round: rounds to peers on the own node cost the intra-node
    // latency, the others the inter-node one.
    RoundCost round = linear_round(facts, messages_per_step, bytes_per_message);
    const double total = round.intra.messages + round.inter.messages;
    for (bool intra : {true, false}) {
      RoundCost level;
      level.rounds = steps * ((intra ? round.intra.messages : round.inter.messages) / total);
      (intra ? level.intra : level.inter) =
          LevelCounts{messages_per_step, bytes_per_message * messages_per_step};
      level.nic_sharers = round.nic_sharers;
      level.ranks = round.ranks;
      level.nodes = round.nodes;
      level.busiest_messages = round.busiest_messages;
      level.busiest_bytes = round.busiest_bytes;
      if (level.rounds > 0) cost.rounds.push_back(level);
    }
    return cost;
  }
  // The first batch holds the own block's step too.
  const double batches = std::ceil((double)facts.ranks / (double)batch);
  RoundCost round = linear_round(facts, steps / batches * messages_per_step, bytes_per_message);
  round.rounds = batches;
  cost.rounds.push_back(round);
  return cost;
}

}  // namespace mpix
