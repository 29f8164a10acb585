// TuNA with the sizes carried in front of the data (`tuna_carried`): the rounds of
// paper 000's Algorithm 1 (the schedule of tuna_schedule, bruck.cpp), where each
// message starts with the sizes of the blocks it brings. The paper learns the sizes
// in a metadata phase before the data (section III-B); here they come with the
// data, so a blocking call makes K rounds instead of 2K. For alltoall every block
// has the agreed size and no header travels.
//
// Decision (not in the paper): a receiver cannot know how long a message is before
// it arrives, so each round's receive is posted for its largest possible length,
// hops x (header + M), M the largest block of the call (agreed). The blocks then
// travel through this plan's own buffers: packed into one message per round (one
// copy out), received into the round's buffer, and copied to the receive buffer
// from there (one copy in). That is cheap for the small blocks where the K rounds
// of metadata cost as much as the data, and the cost model says where it is not;
// the buffers are bounded by kMaxCarriedBytes. A persistent plan of `tuna` pays its
// metadata once at init, but still splits rounds into parts where T is short of
// slots; which of the two starts faster is the cost model's call.
//
// The rounds reach every rank from every rank (the path from j to i takes one round
// per non-zero radix-r digit of i - j, in the order the rounds run), so a word in
// front of each message, OR-ed on the way, brings every rank's bit to every rank
// by the last round: a repeated blocking call learns so whether any rank's call
// changed, without the agreement (plan.hpp, start_carrying; plan_reuse.hpp).
// A rank that changed, or has seen a change, sends only that word.
#include <algorithm>
#include <cstring>

#include "../core/algorithms.hpp"
#include "../core/comm.hpp"
#include "../core/datatype.hpp"
#include "../core/error.hpp"
#include "../core/model.hpp"
#include "bruck.hpp"

namespace mpix {

namespace {

using Size = long long;  // the bytes of one block
constexpr double kMaxCarriedBytes = 64.0 * 1024 * 1024;

// Bytes of one header entry: the fewest that hold the call's largest block (agreed),
// 1 up to 255 bytes, 2 up to 64 KiB, 4, then 8. At 16 B blocks an 8-byte entry
// doubled the bytes a round moves, which on a narrow bisection cost a quarter of
// the exchange (docs/algorithms-logtime.md).
std::size_t size_entry_bytes(long long max_block) {
  std::size_t entry = 1;
  while (entry < sizeof(Size) && (max_block >> (8 * entry)) != 0) entry *= 2;
  return entry;
}

// Entries are little-endian whatever the host, so ranks of any byte order agree.
void put_size(char* out, Size bytes, std::size_t entry) {
  for (std::size_t b = 0; b < entry; ++b) out[b] = (char)((unsigned long long)bytes >> (8 * b));
}
Size get_size(const char* in, std::size_t entry) {
  unsigned long long bytes = 0;
  for (std::size_t b = 0; b < entry; ++b) bytes |= (unsigned long long)(unsigned char)in[b] << (8 * b);
  return (Size)bytes;
}

// The receive buffers of all rounds (blocks stay in them until forwarded), for
// `hops` blocks over all rounds.
double carried_buffer_bytes(double hops, long long max_block) {
  return hops * ((double)size_entry_bytes(max_block) + (double)max_block);
}

class TunaCarriedPlan : public ByteExchangePlan {
 public:
  int init(const PlanContext& context) {
    init_sides(context);
    after_wait_ = [this] {
      MPIX_TRY(report_size_mismatch(mismatch_, "tuna_carried", comm_));
      return recv_.unpack(comm_);
    };
    // A call that changed somewhere is made again: none of it touches the user's
    // buffers from the moment the change is seen.
    carry_change();
    tag_ = context.tag;
    header_entry_ = ex_.uniform ? 0 : size_entry_bytes(ex_.max_block_bytes);
    q_ = ex_.size;
    me_ = ex_.rank;
    if (q_ <= 1) return MPIX_SUCCESS;
    radix_ = std::max(2, context.params.radix_auto ? default_radix(q_, ex_.max_block_bytes) : context.params.radix);
    schedule_ = tuna_schedule(q_, radix_);
    const long long max_block = ex_.max_block_bytes;
    double hops = 0;
    for (const TunaSchedule::Round& round : schedule_.rounds) hops += (double)round.hops.size();
    const double buffers = carried_buffer_bytes(hops, max_block);
    if (buffers > kMaxCarriedBytes)
      return fail(MPIX_ERR_UNSUPPORTED,
                  format("tuna_carried: its round buffers would take %.0f MiB (the largest block is %lld bytes); use "
                         "tuna, which learns the sizes first", buffers / (1024.0 * 1024.0), max_block));
    std::size_t max_hops = 0;
    for (const TunaSchedule::Round& round : schedule_.rounds) {
      max_hops = std::max(max_hops, round.hops.size());
      receive_.push_back(
          context.comm->scratch.acquire(kFlagBytes + round.hops.size() * (header_entry_ + (std::size_t)max_block)));
    }
    send_buffer_ = context.comm->scratch.acquire(kFlagBytes + max_hops * (header_entry_ + (std::size_t)max_block));
    held_.assign(q_, Piece{});
    for (int k = 0; k < (int)schedule_.rounds.size(); ++k)
      stages_.push_back(Stage{[this, k](std::vector<MPI_Request>& requests) { return post(k, requests); },
                              [this, k] { return arrived(k); }, false, false});
    init_stats.scratch_bytes = send_buffer_.size() + side_staging_bytes();
    for (const ScratchBuffer& buffer : receive_) init_stats.scratch_bytes += buffer.size();
    return MPIX_SUCCESS;
  }

 private:
  static constexpr std::size_t kFlagBytes = sizeof(Size);  // the carried bit's word

  // Round k: the sizes, then the blocks, of every index the round moves, in the
  // schedule's order (after the carried bit's word, when carrying); the receive for
  // the same indices from the other side.
  int post(int k, std::vector<MPI_Request>& requests) {
    if (k == 0) mismatch_ = SizeMismatch{};
    const TunaSchedule::Round& round = schedule_.rounds[k];
    char* out = send_buffer_.data();
    const std::size_t flag_bytes = bit_.carrying ? kFlagBytes : 0;
    if (flag_bytes) {
      const Size seen = bit_.seen;
      std::memcpy(out, &seen, flag_bytes);
    }
    const std::size_t hops = bit_.seen ? 0 : round.hops.size();
    std::size_t at = flag_bytes + hops * header_entry_;
    for (std::size_t h = 0; h < hops; ++h) {
      const TunaSchedule::Hop& hop = round.hops[h];
      const Piece piece = hop.from_slot >= 0 ? held_[hop.index] : send_.piece((me_ + hop.index) % q_);
      const Size bytes = piece.bytes;
      if (header_entry_) put_size(out + flag_bytes + h * header_entry_, bytes, header_entry_);
      if (bytes > 0) std::memcpy(out + at, piece.addr, (std::size_t)bytes);
      at += (std::size_t)bytes;
    }
    charge_copy((long long)(at - flag_bytes - hops * header_entry_));
    Traffic traffic(comm_, tag_);
    const int send_peer = (me_ + round.distance) % q_, recv_peer = modulo((long long)me_ - round.distance, q_);
    requests.emplace_back();
    MPIX_TRY(traffic.irecv(Message{Block{receive_[k].data(), (MPI_Count)receive_[k].size(), &byte_layout()}, recv_peer},
                           &requests.back(), kTagRound));
    requests.emplace_back();
    return traffic.isend(Message{Block{out, (MPI_Count)at, &byte_layout()}, send_peer}, &requests.back(), stats,
                         kTagRound);
  }

  // Blocks that reached their destination go to the receive buffer; the others stay
  // in the round's buffer until a later round forwards them.
  int arrived(int k) {
    const TunaSchedule::Round& round = schedule_.rounds[k];
    const char* in = receive_[k].data();
    const std::size_t flag_bytes = bit_.carrying ? kFlagBytes : 0;
    if (flag_bytes) {
      Size seen = 0;
      std::memcpy(&seen, in, flag_bytes);
      bit_.seen = bit_.seen || seen != 0;
    }
    if (bit_.seen) return MPIX_SUCCESS;
    in += flag_bytes;
    const long long next = (long long)round.pw * radix_;
    std::size_t at = flag_bytes + round.hops.size() * header_entry_;
    long long copied = 0;
    for (std::size_t h = 0; h < round.hops.size(); ++h) {
      const TunaSchedule::Hop& hop = round.hops[h];
      Size bytes = ex_.max_block_bytes;
      if (header_entry_) bytes = get_size(in + h * header_entry_, header_entry_);
      if (bytes < 0 || bytes > ex_.max_block_bytes || at + (std::size_t)bytes > receive_[k].size())
        return fail(MPIX_ERR_ARG, format("tuna_carried: round %d brought a block of %lld bytes where the largest "
                                            "is %lld", k, (long long)bytes, ex_.max_block_bytes));
      char* data = receive_[k].data() + at;
      if (hop.to_slot < 0) {
        const int origin = modulo((long long)me_ - hop.index % next, q_);
        const Piece place = recv_.piece(origin);
        mismatch_.check(origin, bytes, place.bytes);
        if (bytes > 0 && bytes == place.bytes) {
          std::memcpy(place.addr, data, (std::size_t)bytes);
          copied += bytes;
        }
      } else {
        held_[hop.index] = Piece{data, bytes};
      }
      at += (std::size_t)bytes;
    }
    charge_copy(copied);
    return MPIX_SUCCESS;
  }

  int q_ = 1, me_ = 0, radix_ = 2;
  int tag_ = 0;
  std::size_t header_entry_ = 0;  // size_entry_bytes; none for alltoall: every block has the agreed size
  TunaSchedule schedule_;
  std::vector<ScratchBuffer> receive_;  // one per round
  ScratchBuffer send_buffer_;
  std::vector<Piece> held_;  // where the block now at index i is, once received
  SizeMismatch mismatch_;
};

}  // namespace

int create_tuna_carried(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  auto made = std::make_unique<TunaCarriedPlan>();
  MPIX_TRY(made->init(context));
  *plan = std::move(made);
  return MPIX_SUCCESS;
}

// tuna's rounds, one message each (no parts: the buffers are the plan's), every
// block with its size in front, and no metadata rounds; the copies are every block
// forwarded (out of and into the round buffers) and every block that arrives.
Cost cost_tuna_carried(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  Cost cost;
  const double block = facts.uniform ? (double)facts.max_block : facts.mean_block();
  const double header = facts.uniform ? 0.0 : (double)size_entry_bytes(facts.max_block);
  // Every round sends its message, also when its blocks are empty: the rounds are
  // laid out with a unit per block, then given their bytes.
  add_tuna_rounds(&cost, facts, facts.ranks, params.radix, 1.0, 1, false, false, kNoLimit, kNoLimit);
  double hops = 0;
  for (RoundCost& round : cost.rounds) {
    LevelCounts& level = round.inter.messages > 0 ? round.inter : round.intra;
    hops += level.bytes;
    level.bytes *= block + header;
    level.messages = 1;
  }
  cost.copy_bytes = (hops + facts.ranks - 1) * block;
  if (!facts.contiguous) cost.copy_bytes += 2.0 * (double)facts.total_bytes / facts.ranks;
  if (carried_buffer_bytes(hops, facts.max_block) > kMaxCarriedBytes) cost.valid = false;
  return cost;
}

}  // namespace mpix
