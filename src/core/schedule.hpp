// The engine under every linear-time exchange: a schedule of steps, each a receive
// from one peer and a send to another, posted in batches with a wait after each
// batch. Pairwise is a batch of one step, spread-out one batch of all steps,
// scattered and multi-pair batches of `block_count` / `stride` steps, randomized
// sendrecv batches bounded by the request queue; only the step order differs.
#pragma once
#include <functional>
#include <vector>

#include "plan.hpp"
#include "registry.hpp"
#include "scratch.hpp"

namespace mpix {

// A block (or a byte slice of one) to or from `peer`; peer < 0 or no bytes: nothing.
struct Message {
  Block block;
  int peer = -1;
  bool empty() const { return peer < 0 || block.count == 0 || block.layout->size == 0; }
};

// The layout of MPI_BYTE, for byte slices of packed or contiguous blocks.
const TypeLayout& byte_layout();

// Posts a plan's messages on the library's communicator under the plan's tag and
// counts them in the plan's stats.
class Traffic {
 public:
  Traffic(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {}
  int isend(const Message& m, MPI_Request* request, PlanStats& stats, int tag_offset = 0);
  int irecv(const Message& m, MPI_Request* request, int tag_offset = 0);
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_;
  int tag_;
};

struct Step {
  Message recv, send;
};

struct Phase {
  int step_count = 0;
  std::function<Step(int)> step;  // the i-th step, computed when posted
  int batch_steps = 1;            // steps per batch; a wait after each batch
  bool recvs_first = false;       // post a batch's receives before its sends
  // The steps run this many times over (pass() says which time), so that a
  // segmented exchange of huge blocks is one phase, not one per segment.
  long long passes = 1;
};

// A plan that runs phases of batched steps. Start posts the first batch; wait
// completes it and runs the rest. A step whose peer is this rank is a local copy.
class ScheduledPlan : public Plan {
 public:
  ScheduledPlan(MPI_Comm comm, int tag, int rank) : traffic_(comm, tag), rank_(rank) {}
  // Scratch for the own block's copy when its datatypes are not contiguous.
  void set_copy_staging(ScratchBuffer staging) {
    init_stats.scratch_bytes += staging.size();
    copy_staging_ = std::move(staging);
  }
  int start() override;
  int wait() override;
  int test(bool* done) override;

  // The change bit of a repeated blocking call (plan.hpp, start_carrying), carried
  // by the messages' lengths: while carrying, every step sends one message to its
  // peer, also where its block is empty, so every rank hears from every rank. A rank
  // whose call changed sends no block where one is planned and one byte where none
  // is; the receiver reads the change from the length that arrived. That rank
  // receives into the plan's slots, never into the user's buffers. No word in front
  // of the blocks, so the user's datatypes go on the wire as start() sends them.
  bool carries_change() const override;
  int start_carrying(bool changed) override;
  bool change_seen() const override { return change_.seen; }

 protected:
  // The pass of the phase whose steps are being posted.
  long long pass() const { return pass_; }
  // Copies a local block through the plan's copy staging.
  int copy_local(const Block& from, const Block& to) {
    return copy_block(from, to, copy_staging_.data(), traffic_.comm());
  }
  std::vector<Phase> phases_;
  std::function<int()> before_start_, after_wait_;  // pack / unpack of staged blocks
  // Set by a schedule whose steps meet every other rank once on each side; it then
  // carries the change unless it stages blocks or runs several passes.
  bool may_carry_ = false;

 private:
  struct Carrying {
    bool on = false, mine = false, seen = false;
  };
  // A receive of the batch whose length tells a change: a block (a change when
  // nothing arrived) or a planned-empty block's byte (a change when it arrived).
  struct LengthCheck {
    std::size_t request;
    bool planned_empty;
  };
  int begin();
  int post_batch();  // posts the next batch, moving past finished phases
  long long slot_bytes(const Message& recv) const;
  int post_carrying(const Step& step, bool post_recv, bool post_send);
  int read_lengths();
  int progress(bool blocking, bool* done);
  Traffic traffic_;
  int rank_;
  std::size_t phase_ = 0;
  long long pass_ = 0;
  int next_step_ = 0;
  std::vector<MPI_Request> requests_;
  ScratchBuffer copy_staging_;
  Carrying change_;
  std::vector<char> slots_;  // while carrying: the batch's receives not into user buffers
  std::size_t slots_used_ = 0;
  std::vector<LengthCheck> checks_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace mpix

namespace mpix {

// Completes `requests`: blocking, or as far as they are done (*done: all of them).
// Completed requests are cleared; `statuses`, if given, then holds their statuses.
int complete_requests(std::vector<MPI_Request>& requests, bool blocking, bool* done, MPI_Comm comm,
                      std::vector<MPI_Status>* statuses = nullptr);

// Scratch for copying the own block of `context`'s exchange (empty if contiguous).
ScratchBuffer own_copy_staging(const PlanContext& context);

// Whether carrying the change bit (ScheduledPlan) is worth it for an exchange with
// the agreed `facts`: the messages it adds for empty blocks against the agreement
// it saves.
bool few_empty_blocks(const ExchangeFacts& facts);

// A scheduled plan over the blocks of a dense exchange.
class ExchangeSchedule : public ScheduledPlan {
 public:
  explicit ExchangeSchedule(const PlanContext& context)
      : ScheduledPlan(context.mpi_comm, context.tag, context.exchange.rank), ex_(context.exchange) {
    set_copy_staging(own_copy_staging(context));
    may_carry_ = few_empty_blocks(context.facts);
  }

 protected:
  // Receive the block of `recv_from`, send the block for `send_to`.
  int copy_own_block() { return copy_local(ex_.send.block(ex_.rank), ex_.recv.block(ex_.rank)); }
  Step blocks(int recv_from, int send_to) const {
    return Step{Message{ex_.recv.block(recv_from), recv_from}, Message{ex_.send.block(send_to), send_to}};
  }
  Exchange ex_;
};

}  // namespace mpix

namespace mpix {

// Step i sends to rank + i and receives from rank - i (paper 003, algorithms 1-3),
// `batch_steps` steps between waits; step 0 is the own block. Pairwise, spread-out,
// scattered and multi-pair differ only in the batch and the posting order.
std::unique_ptr<Plan> make_linear_schedule(const PlanContext& context, int batch_steps, bool recvs_first);

// The cost of a schedule of P steps (one of them the own block) in batches of
// `batch_steps`, `messages_per_step` messages of `bytes_per_message` each per
// non-local step, for the busiest rank of `facts`: the model of every linear
// exchange (pairwise, spread-out, scattered, multi-pair, randomized).
Cost batched_steps_cost(const ExchangeFacts& facts, long long batch_steps, double messages_per_step = 1,
                        double bytes_per_message = -1);

}  // namespace mpix
