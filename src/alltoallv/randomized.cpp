// The randomized exchanges of paper 002 (section 2), for non-uniform blocks too.
// Every rank shuffles 0..P-1 with the same seed (mpix_seed, default P as in the
// paper) and so derives the same schedule without communicating.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/algorithms.hpp"
#include "../core/comm.hpp"
#include "../core/error.hpp"
#include "../core/schedule.hpp"

namespace mpix {
namespace {

// splitmix64: a fixed generator, so that every rank (and every build) draws the
// same sequence, which std::shuffle does not promise across library versions.
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Paper 002, function 1: 0..size-1 in an order drawn from `seed` (Fisher-Yates).
std::vector<int> shuffled_ranks(int size, std::uint64_t seed) {
  std::vector<int> ranks(size);
  for (int i = 0; i < size; ++i) ranks[i] = i;
  std::uint64_t state = seed;
  for (int i = size - 1; i > 0; --i) std::swap(ranks[i], ranks[next_random(state) % (std::uint64_t)(i + 1)]);
  return ranks;
}

// Requests in flight are bounded by max_queue: a wait after max_queue/2 pairs.
int queue_steps(const Params& params) { return std::max(1, params.max_queue / 2); }

// Algorithm 1: all receives, then all sends, in the shuffled order; one wait.
class RandomScatter : public ExchangeSchedule {
 public:
  explicit RandomScatter(const PlanContext& context)
      : ExchangeSchedule(context), ranks_(shuffled_ranks(ex_.size, context.params.seed)) {
    phases_.push_back(Phase{ex_.size, [this](int i) { return blocks(ranks_[i], ranks_[i]); }, ex_.size, true});
  }

 private:
  std::vector<int> ranks_;
};

// The anti-circulant schedule of algorithm 2: row m of the matrix whose first row
// is the shuffled array is that array shifted left by m; at iteration i rank m
// sends to ranks[(i + m) % P] and receives from the rank whose row holds m at
// column i, which is (index_of(m) - i) mod P.
struct AntiCirculant {
  std::vector<int> ranks;
  int rank, size, my_index;
  AntiCirculant(int size_, int rank_, std::uint64_t seed) : ranks(shuffled_ranks(size_, seed)), rank(rank_), size(size_) {
    my_index = (int)(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
  }
  int send_to(int i) const { return ranks[(i + rank) % size]; }
  int recv_from(int i) const { return ((my_index - i) % size + size) % size; }
};

// Algorithm 2: the anti-circulant schedule with a request queue.
class RandomSendrecv : public ExchangeSchedule {
 public:
  explicit RandomSendrecv(const PlanContext& context)
      : ExchangeSchedule(context), order_(ex_.size, ex_.rank, context.params.seed) {
    phases_.push_back(Phase{ex_.size, [this](int i) { return blocks(order_.recv_from(i), order_.send_to(i)); },
                            queue_steps(context.params), false});
  }

 private:
  AntiCirculant order_;
};

// Algorithm 3: blocks cut into segment_bytes slices; pass k sends slice k of every
// block in the anti-circulant order with the request queue, and a trailing
// scatter (all receives, then all sends, shuffled) moves each block's remainder
// that is shorter than a segment, as the paper prescribes for sizes that are not
// a multiple of the segment. Slices are bytes: a block whose datatype is not one
// run of bytes is packed into scratch before and unpacked after.
class RandomSegmented : public ExchangeSchedule {
 public:
  RandomSegmented(const PlanContext& context)
      : ExchangeSchedule(context),
        order_(ex_.size, ex_.rank, context.params.seed),
        segment_(context.params.segment_bytes) {
    const int size = ex_.size;
    send_bytes_.resize(size);
    recv_bytes_.resize(size);
    std::size_t send_staged = 0, recv_staged = 0;
    long long passes = 0;
    for (int peer = 0; peer < size; ++peer) {
      if (peer == ex_.rank) continue;
      Block s = ex_.send.block(peer), r = ex_.recv.block(peer);
      if (!s.contiguous()) send_staged += s.bytes();
      if (!r.contiguous()) recv_staged += r.bytes();
      passes = std::max({passes, s.bytes() / segment_, r.bytes() / segment_});
    }
    send_staging_ = context.comm->scratch.acquire(send_staged);
    recv_staging_ = context.comm->scratch.acquire(recv_staged);
    init_stats.scratch_bytes += send_staged + recv_staged;
    // Where the bytes of each block are: in the user's buffer or in the staging.
    std::size_t send_offset = 0, recv_offset = 0;
    for (int peer = 0; peer < size; ++peer) {
      Block s = ex_.send.block(peer), r = ex_.recv.block(peer);
      if (peer == ex_.rank) continue;
      send_bytes_[peer] = s.contiguous() ? s.first_byte() : send_staging_.data() + send_offset;
      recv_bytes_[peer] = r.contiguous() ? r.first_byte() : recv_staging_.data() + recv_offset;
      if (!s.contiguous()) send_offset += s.bytes();
      if (!r.contiguous()) recv_offset += r.bytes();
    }
    const int batch = queue_steps(context.params);
    phases_.push_back(Phase{size, [this](int i) { return slice_step(order_.recv_from(i), order_.send_to(i), pass()); },
                            batch, false, passes});
    phases_.push_back(Phase{size, [this](int i) { return slice_step(order_.ranks[i], order_.ranks[i], -1); },
                            size, true});
    before_start_ = [this] { return stage(true); };
    after_wait_ = [this] { return stage(false); };
  }

 private:
  // Slice k (or, for k < 0, the trailing remainder) of the blocks of a step.
  Message slice(char* bytes, long long total, int peer, long long k) const {
    if (peer == ex_.rank) return Message{};
    long long offset = k >= 0 ? k * segment_ : total / segment_ * segment_;
    long long length = k >= 0 ? (offset + segment_ <= total ? segment_ : 0) : total - offset;
    return Message{Block{bytes + offset, length, &byte_layout()}, length > 0 ? peer : -1};
  }
  Step slice_step(int recv_from, int send_to, long long k) const {
    return Step{slice(recv_bytes_[recv_from], ex_.recv.block_bytes(recv_from), recv_from, k),
                slice(send_bytes_[send_to], ex_.send.block_bytes(send_to), send_to, k)};
  }
  // Before: the own block and the packing of staged send blocks; after: unpacking.
  int stage(bool before) {
    if (before) MPIX_TRY(copy_own_block());
    for (int peer = 0; peer < ex_.size; ++peer) {
      if (peer == ex_.rank) continue;
      if (before && !ex_.send.block(peer).contiguous())
        MPIX_TRY(pack_block(ex_.send.block(peer), send_bytes_[peer], MPI_COMM_SELF));
      if (!before && !ex_.recv.block(peer).contiguous())
        MPIX_TRY(unpack_block(recv_bytes_[peer], ex_.recv.block(peer), MPI_COMM_SELF));
    }
    return MPIX_SUCCESS;
  }

  AntiCirculant order_;
  long long segment_;
  std::vector<char*> send_bytes_, recv_bytes_;
  ScratchBuffer send_staging_, recv_staging_;
};

}  // namespace

int create_random_scatter(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = std::make_unique<RandomScatter>(context);
  return MPIX_SUCCESS;
}

int create_random_sendrecv(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = std::make_unique<RandomSendrecv>(context);
  return MPIX_SUCCESS;
}

int create_random_segmented(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  *plan = std::make_unique<RandomSegmented>(context);
  return MPIX_SUCCESS;
}

// ---------------------------------------------------------------- cost models

// The shuffle changes which links are busy, not the counts: on the model's
// uniform network the randomized exchanges cost what their batches cost.
Cost cost_random_scatter(const ExchangeFacts& facts, const Params&, const MachineProfile&) {
  return batched_steps_cost(facts, facts.ranks);
}

Cost cost_random_sendrecv(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  return batched_steps_cost(facts, queue_steps(params));
}

// Pass k moves slice k of every block that has one (floor(bytes / segment) full
// slices per block), then one scatter moves the remainders.
Cost cost_random_segmented(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  Cost cost;
  if (facts.nonempty_blocks <= 0) return cost;
  const double block = (double)facts.total_bytes / facts.nonempty_blocks;
  const double segment = (double)std::max(1LL, params.segment_bytes);
  const double passes = std::floor((double)facts.max_block / segment);
  const double full_slices = std::floor(block / segment);
  const double remainder = block - full_slices * segment;
  if (passes > 0 && full_slices > 0) {
    Cost pass = batched_steps_cost(facts, queue_steps(params), full_slices / passes, segment);
    for (RoundCost& round : pass.rounds) round.rounds *= passes;
    cost.rounds = pass.rounds;
  }
  if (remainder > 0) {
    Cost rest = batched_steps_cost(facts, facts.ranks, 1, remainder);
    cost.rounds.insert(cost.rounds.end(), rest.rounds.begin(), rest.rounds.end());
  }
  // Blocks that are not one run of bytes are packed before and unpacked after.
  if (!facts.contiguous) cost.copy_bytes = 2.0 * (double)facts.total_bytes / facts.ranks;
  return cost;
}

}  // namespace mpix
