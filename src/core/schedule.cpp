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
    l.in_order = true;
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
  change_ = Carrying{};
  return begin();
}

bool ScheduledPlan::carries_change() const {
  if (!may_carry_ || before_start_ || after_wait_) return false;
  for (const Phase& phase : phases_)
    if (phase.passes != 1) return false;
  return true;
}

int ScheduledPlan::start_carrying(bool changed) {
  if (!carries_change()) return MPIX_ERR_UNSUPPORTED;
  change_ = Carrying{true, changed, changed};
  return begin();
}

int ScheduledPlan::begin() {
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

// One byte that a changed rank sends where the plan has no block.
static char change_byte = 1;

// A changed rank's receives, and the byte of a planned-empty block, go to the
// batch's slots, not to the user's buffers; 0: the receive goes to its block.
long long ScheduledPlan::slot_bytes(const Message& recv) const {
  if (change_.mine) return std::max(1LL, recv.block.bytes());
  return recv.empty() ? 1 : 0;
}

int ScheduledPlan::post_carrying(const Step& step, bool post_recv, bool post_send) {
  if (post_recv && step.recv.peer >= 0) {
    // The slots were sized by post_batch before anything of the batch was posted.
    const long long bytes = slot_bytes(step.recv);
    const Message into = bytes > 0 ? Message{Block{slots_.data() + slots_used_, bytes, &byte_layout()}, step.recv.peer}
                                   : step.recv;
    slots_used_ += (std::size_t)bytes;
    requests_.emplace_back();
    MPIX_TRY(traffic_.irecv(into, &requests_.back()));
    if (!change_.mine) checks_.push_back(LengthCheck{requests_.size() - 1, step.recv.empty()});
  }
  if (post_send && step.send.peer >= 0) {
    const bool planned_empty = step.send.empty();
    const Message sent = !change_.mine && !planned_empty
                             ? step.send
                             : Message{Block{&change_byte, change_.mine && planned_empty ? 1 : 0, &byte_layout()},
                                       step.send.peer};
    requests_.emplace_back();
    MPIX_TRY(traffic_.isend(sent, &requests_.back(), stats));
  }
  return MPIX_SUCCESS;
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
    if (change_.on) {
      // No receive of an earlier batch is pending: the slots can move.
      std::size_t batch_slot_bytes = 0;
      for (int i = next_step_; i < end; ++i) {
        Step s = phase.step(i);
        if (s.recv.peer >= 0 && s.recv.peer != rank_) batch_slot_bytes += (std::size_t)slot_bytes(s.recv);
      }
      slots_.resize(std::max(slots_.size(), batch_slot_bytes));
      slots_used_ = 0;
      checks_.clear();
    }
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
          if (!change_.mine) MPIX_TRY(copy_local(s.send.block, s.recv.block));
          continue;
        }
        if (post_send && s.send.peer == rank_) continue;
        if (change_.on) {
          MPIX_TRY(post_carrying(s, post_recv, post_send));
          continue;
        }
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
    MPIX_TRY(complete_requests(requests_, blocking, &batch_done, traffic_.comm(), change_.on ? &statuses_ : nullptr));
    if (!batch_done) return MPIX_SUCCESS;
    if (change_.on) MPIX_TRY(read_lengths());
    MPIX_TRY(post_batch());
  }
  if (after_wait_) MPIX_TRY(after_wait_());
  *done = true;
  return MPIX_SUCCESS;
}

// MPI_Get_count in bytes: MPI keeps a status's length in bytes, and MPICH, Open MPI
// and SMPI all give it so for any receive type; only "none" and "one" are asked.
int ScheduledPlan::read_lengths() {
  for (const LengthCheck& check : checks_) {
    int bytes = 0;
    MPIX_CHECK_MPI(MPI_Get_count(&statuses_[check.request], MPI_BYTE, &bytes));
    if (check.planned_empty ? bytes == 1 : bytes == 0) change_.seen = true;
  }
  checks_.clear();
  return MPIX_SUCCESS;
}

int complete_requests(std::vector<MPI_Request>& requests, bool blocking, bool* done, MPI_Comm comm,
                      std::vector<MPI_Status>* statuses) {
  int flag = 1;
  MPI_Status* out = nullptr;
  if (statuses) {
    statuses->resize(requests.size());
    out = statuses->data();
  }
  if (blocking)
    MPIX_TRY(wait_all((int)requests.size(), requests.data(), comm, out));
  else
    MPIX_TRY(test_all((int)requests.size(), requests.data(), &flag, comm, out));
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

// Carrying sends a message for every empty block too (ScheduledPlan); the agreement
// it replaces is a round of one message per rank for each of its rounds (as the
// model prices it, allreduce_rounds). Where more blocks are empty than that, on
// average per rank, the agreement stays.
bool few_empty_blocks(const ExchangeFacts& facts) {
  const long long empty = facts.pairs() - facts.nonempty_blocks;
  double rounds = 0;
  for (const RoundCost& round : allreduce_rounds(facts.ranks, facts.max_ppn, 0)) rounds += round.rounds;
  return empty <= (long long)facts.ranks * (long long)rounds;
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
