// The log-time exchanges of paper 000: uniform radix-r Bruck (`bruck`, alltoall)
// and TuNA (`tuna`, section III, Algorithm 1), both on the TuNA core, which the
// hierarchical exchanges (hierarchical.cpp) run inside each node. The pieces all of
// them share (bruck.hpp) are in stages.cpp.
#include "bruck.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "../core/algorithms.hpp"
#include "../core/comm.hpp"
#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/large_count.hpp"
#include "../core/progress.hpp"

namespace mpix {

// ---------------------------------------------------------------- formulas

int default_radix(int ranks, long long max_block_bytes) {
  if (ranks <= 2) return 2;
  if (max_block_bytes < 512) return 2;
  if (max_block_bytes <= 8192) return std::max(2, (int)std::lround(std::sqrt((double)ranks)));
  return ranks;
}

int bruck_rounds(int ranks, int radix) {
  int rounds = 0;
  radix = std::max(2, radix);
  for (long long pw = 1; pw < ranks; pw *= radix)
    for (long long z = 1; z < radix && z * pw < ranks; ++z) ++rounds;
  return rounds;
}

int tuna_temp_blocks(int ranks, int radix) {
  return ranks <= 1 ? 0 : ranks - (bruck_rounds(ranks, radix) + 1);
}

// ---------------------------------------------------------------- TunaCore

int modulo(long long a, int q) { return (int)(((a % q) + q) % q); }

TunaSchedule tuna_schedule(int ranks, int radix, bool one_part, int eager_blocks) {
  TunaSchedule schedule;
  radix = std::max(2, radix);
  schedule.slots = tuna_temp_blocks(ranks, radix);
  std::vector<int> slot_of(std::max(ranks, 1), -1);  // T slot of index i while it is in T
  std::vector<int> free_slots;
  for (int t = schedule.slots - 1; t >= 0; --t) free_slots.push_back(t);
  std::vector<int> staying, released;
  for (long long pw = 1; pw < ranks; pw *= radix) {
    const long long next = pw * radix;
    for (int z = 1; z < radix && z * pw < ranks; ++z) {
      schedule.rounds.emplace_back();
      TunaSchedule::Round& round = schedule.rounds.back();
      round.distance = (int)(z * pw);
      round.pw = (int)pw;
      staying.clear();
      released.clear();
      // A block is in T if a lower digit moved it already (i mod r^x != 0); it stays
      // in T if a higher digit is still to come (i >= r^(x+1)).
      for (int i = 1; i < ranks; ++i) {
        if ((i / pw) % radix != z) continue;
        const bool in_temp = i % pw != 0;
        if (i >= next) {
          staying.push_back(i);
          continue;
        }
        round.hops.push_back(TunaSchedule::Hop{i, 0, in_temp ? slot_of[i] : -1, -1});
        if (in_temp) released.push_back(slot_of[i]);
      }
      // Blocks leaving T first: each frees a slot for the next part.
      std::stable_partition(staying.begin(), staying.end(), [pw](int i) { return i % pw != 0; });
      // Places the staying blocks; where the free slots run out, T takes a slot more
      // (one message per round) or, with `split`, the next part waits for the slots
      // that the sends of the earlier ones free. In parts, a round with nothing left
      // to free is never seen (see the header).
      const std::vector<int> free_before = free_slots, released_before = released;
      const int slots_before = schedule.slots;
      const std::size_t direct_hops = round.hops.size();
      auto place = [&](bool split) {
        int part = 0;
        for (int i : staying) {
          if (free_slots.empty()) {
            if (!split || released.empty()) {
              free_slots.push_back(schedule.slots++);
            } else {
              ++part;
              free_slots.insert(free_slots.end(), released.begin(), released.end());
              released.clear();
            }
          }
          const int to = free_slots.back();
          free_slots.pop_back();
          const bool in_temp = i % pw != 0;
          round.hops.push_back(TunaSchedule::Hop{i, part, in_temp ? slot_of[i] : -1, to});
          if (in_temp) released.push_back(slot_of[i]);
        }
        round.parts = part + 1;
      };
      place(true);
      if (round.parts > 1) {
        std::vector<int> part_blocks(round.parts, 0);
        for (const TunaSchedule::Hop& hop : round.hops) ++part_blocks[hop.part];
        round.split_largest = *std::max_element(part_blocks.begin(), part_blocks.end());
      }
      if (one_part && round.parts > 1) {
        // In one message the round would pass the eager limit (its send waits for
        // the receiver); its parts, each below it, would not: they stay.
        const bool parts_eager = round.split_largest <= eager_blocks;
        if (!parts_eager || (long long)round.hops.size() <= eager_blocks) {
          free_slots = free_before;
          released = released_before;
          schedule.slots = slots_before;
          round.hops.resize(direct_hops);
          place(false);
        }
      }
      free_slots.insert(free_slots.end(), released.begin(), released.end());
      for (const TunaSchedule::Hop& hop : round.hops) slot_of[hop.index] = hop.to_slot;
      std::stable_sort(round.hops.begin(), round.hops.end(), [](const auto& a, const auto& b) {
        return a.part != b.part ? a.part < b.part : a.index < b.index;
      });
    }
  }
  return schedule;
}

namespace {

struct RoundShape {
  int distance, hops, parts, split_largest;
};

struct ScheduleShape {
  std::vector<RoundShape> rounds;
  int slots = 0;
};

// The shapes are kept, so that selection, which prices every radix of every new
// exchange, computes each schedule once. An eager limit gives the one-message
// schedule unless it splits some round, and up to the first such round the two
// schedules are the same: so a limit that no round of the one-message schedule
// would split (every round that needs parts has its largest part past the limit
// or its one message within it) is no limit, and only limits that split a round
// (blocks of a band of sizes per radix) take schedules of their own, the most
// recent kKeptSplitShapes of them (returned by value: another thread may drop one).
ScheduleShape tuna_shape(int ranks, int radix, TunaRounds how) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, bool, int>, ScheduleShape> shapes;
  static std::vector<std::tuple<int, int, bool, int>> split_keys;  // oldest first
  constexpr std::size_t kKeptSplitShapes = 256;
  std::lock_guard<std::mutex> lock(mutex);
  auto shape_of = [&](const std::tuple<int, int, bool, int>& key) -> const ScheduleShape& {
    auto found = shapes.find(key);
    if (found != shapes.end()) return found->second;
    const TunaSchedule schedule = tuna_schedule(ranks, radix, std::get<2>(key), std::get<3>(key));
    ScheduleShape shape;
    shape.slots = schedule.slots;
    for (const TunaSchedule::Round& round : schedule.rounds)
      shape.rounds.push_back(RoundShape{round.distance, (int)round.hops.size(), round.parts, round.split_largest});
    if (std::get<3>(key) != INT_MAX) {
      if (split_keys.size() == kKeptSplitShapes) {
        shapes.erase(split_keys.front());
        split_keys.erase(split_keys.begin());
      }
      split_keys.push_back(key);
    }
    return shapes.emplace(key, std::move(shape)).first->second;
  };
  if (!how.one_part) return shape_of(std::make_tuple(ranks, radix, false, INT_MAX));
  const ScheduleShape& one_message = shape_of(std::make_tuple(ranks, radix, true, INT_MAX));
  bool splits = false;
  for (const RoundShape& round : one_message.rounds)
    splits = splits || (round.split_largest > 0 && round.split_largest <= how.eager_blocks && round.hops > how.eager_blocks);
  return splits ? shape_of(std::make_tuple(ranks, radix, true, how.eager_blocks)) : one_message;
}

}  // namespace

int tuna_one_part_slots(int ranks, int radix) {
  return tuna_shape(ranks, std::max(2, radix), TunaRounds{}).slots;
}

bool tuna_one_part(int ranks, int radix, double slot_bytes, double room) {
  const double added = tuna_one_part_slots(ranks, radix) - tuna_temp_blocks(ranks, std::max(2, radix));
  return added * slot_bytes <= room;
}

TunaRounds tuna_rounds(int ranks, int radix, double slot_bytes, double block_bytes, double room, double eager_bytes) {
  TunaRounds how;
  how.one_part = tuna_one_part(ranks, radix, slot_bytes, room);
  if (block_bytes > 0)
    how.eager_blocks = (int)std::min<double>(INT_MAX, std::max(0.0, std::ceil(eager_bytes / block_bytes) - 1));
  return how;
}

double tuna_one_part_room(const MPIX_Comm_s* comm) {
  return comm->tuna_one_part_room < 0 ? kTunaOnePartRoom : comm->tuna_one_part_room;
}

void add_tuna_rounds(Cost* cost, const ExchangeFacts& facts, int members, int radix, double block_bytes,
                     int pieces, bool intra_only, bool metadata, double room, double eager_bytes) {
  if (members <= 1) return;
  radix = std::max(2, radix);
  const TunaRounds how = tuna_rounds(members, radix, (double)pieces * facts.max_block, block_bytes, room, eager_bytes);
  const ScheduleShape schedule = tuna_shape(members, radix, how);
  for (const RoundShape& shape : schedule.rounds) {
    const double inter = intra_only || facts.nodes <= 1 ? 0.0 : inter_node_fraction(shape.distance, facts.max_ppn, members);
    RoundCost round;
    LevelCounts& level = inter > 0 ? round.inter : round.intra;
    level = LevelCounts{(double)shape.parts, shape.hops * block_bytes};
    round.nic_sharers = inter > 0 ? std::max(1.0, inter * facts.max_ppn) : 1.0;
    // Only the ranks whose partner is on another node put bytes on the network (at
    // distance 1 on nodes of 32, one in 32): the round's bisection load is theirs.
    round.ranks = inter > 0 ? std::max(1.0, inter * facts.ranks) : facts.ranks;
    round.nodes = facts.nodes;
    round.busiest_bytes = busiest_bytes_factor(facts, (double)shape.hops / shape.parts * pieces);
    if (block_bytes > 0) {
      cost->rounds.push_back(round);
      cost->copy_bytes += 2.0 * shape.hops * block_bytes;
    }
    if (metadata) {
      RoundCost sizes = round;
      (inter > 0 ? sizes.inter : sizes.intra) = LevelCounts{1.0, (double)shape.hops * pieces * sizeof(long long)};
      cost->init_rounds.push_back(sizes);
    }
  }
}

char* TunaCore::temp_piece(int slot, int k) const {
  return temp_.data() + ((long long)slot * max_pieces_ + k) * setup_.max_piece;
}

int TunaCore::plan(BruckSetup setup, PlanStats* init_stats) {
  setup_ = std::move(setup);
  q_ = (int)setup_.members.size();
  radix_ = std::max(2, setup_.radix);
  const int me = setup_.me;
  max_pieces_ = 0;
  for (int count : setup_.pieces) max_pieces_ = std::max(max_pieces_, count);
  arriving_.assign(q_, std::vector<long long>(q_ > 0 ? setup_.pieces[me] : 0, 0));
  rounds_.clear();
  if (q_ <= 1) return MPIX_SUCCESS;
  const TunaRounds how = tuna_rounds(q_, radix_, (double)max_pieces_ * setup_.max_piece, setup_.block_bytes,
                                     setup_.one_part_room, setup_.eager_bytes);
  const TunaSchedule schedule = tuna_schedule(q_, radix_, how.one_part, how.eager_blocks);
  temp_slots_ = schedule.slots;

  // Sizes of the pieces of the block with index i at this rank, as the rounds go.
  std::vector<std::vector<long long>> current(q_);
  for (int i = 1; i < q_; ++i) {
    int target = (me + i) % q_;
    for (int k = 0; k < setup_.pieces[target]; ++k) current[i].push_back(setup_.out[target][k].bytes);
  }
  std::vector<long long> sizes_out, sizes_in;
  std::vector<TunaSchedule::Hop> hops;
  for (const TunaSchedule::Round& step : schedule.rounds) {
    rounds_.emplace_back();
    Round& round = rounds_.back();
    round.parts.resize(step.parts);
    round.send_peer = setup_.members[(me + step.distance) % q_];
    round.recv_peer = setup_.members[modulo((long long)me - step.distance, q_)];
    const long long next = (long long)step.pw * radix_;
    // The metadata travels in index order, the data by part (then index order).
    hops = step.hops;
    std::sort(hops.begin(), hops.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    sizes_out.clear();
    std::size_t expected = 0;
    for (const TunaSchedule::Hop& hop : hops) {
      sizes_out.insert(sizes_out.end(), current[hop.index].begin(), current[hop.index].end());
      // Index i now holds the block of origin me - (i mod r^(x+1)).
      int origin = modulo((long long)me - hop.index % next, q_);
      expected += (std::size_t)setup_.pieces[(origin + hop.index) % q_];
    }
    sizes_in.assign(expected, setup_.uniform_bytes);
    if (setup_.uniform_bytes < 0) {
      TimeScope sizes_round(TimePhase::metadata);
      // Phase one of the round (metadata): the sizes of the blocks that follow.
      const int tag = setup_.tag + kTagMetadata;
      MPIX_TRY(sendrecv_progressing(sizes_out.data(), (int)sizes_out.size(), round.send_peer, sizes_in.data(),
                                    (int)expected, round.recv_peer, tag, setup_.comm));
      init_stats->metadata_messages += 1;
      init_stats->metadata_bytes += (long long)(sizes_out.size() * sizeof(long long));
    }
    std::size_t at = 0;
    std::vector<std::vector<long long>> arrived(q_);
    for (const TunaSchedule::Hop& hop : hops) {
      int origin = modulo((long long)me - hop.index % next, q_);
      int target = (origin + hop.index) % q_;
      arrived[hop.index].assign(sizes_in.begin() + at, sizes_in.begin() + at + setup_.pieces[target]);
      at += (std::size_t)setup_.pieces[target];
    }
    for (const TunaSchedule::Hop& hop : step.hops) {
      const int i = hop.index;
      for (int k = 0; k < (int)current[i].size(); ++k)
        round.outs.push_back(Out{i, k, hop.part, hop.from_slot, current[i][k]});
      int origin = modulo((long long)me - i % next, q_);
      for (int k = 0; k < (int)arrived[i].size(); ++k) {
        round.ins.push_back(In{i, origin, k, hop.part, hop.to_slot, arrived[i][k]});
        if (hop.to_slot < 0) arriving_[origin][k] = arrived[i][k];
      }
      current[i] = std::move(arrived[i]);
    }
  }
  return MPIX_SUCCESS;
}

int TunaCore::bind(const std::vector<std::vector<Piece>>& in, ScratchPool& pool) {
  const long long slot_bytes = (long long)max_pieces_ * setup_.max_piece;
  temp_ = pool.acquire((std::size_t)(temp_slots_ * slot_bytes));
  const int me = setup_.me;
  std::vector<Piece> send_pieces, recv_pieces;
  for (Round& round : rounds_) {
    for (int part = 0; part < (int)round.parts.size(); ++part) {
      send_pieces.clear();
      recv_pieces.clear();
      for (const Out& piece : round.outs) {
        if (piece.part != part) continue;
        char* addr = piece.from_slot >= 0 ? temp_piece(piece.from_slot, piece.k)
                                          : setup_.out[(me + piece.index) % q_][piece.k].addr;
        send_pieces.push_back(Piece{addr, piece.bytes});
      }
      for (const In& piece : round.ins) {
        if (piece.part != part) continue;
        recv_pieces.push_back(piece.to_slot < 0 ? in[piece.origin][piece.k]
                                                : Piece{temp_piece(piece.to_slot, piece.k), piece.bytes});
      }
      Part& message = round.parts[part];
      message.send = std::make_unique<CarriedMessage>();
      message.recv = std::make_unique<CarriedMessage>();
      MPIX_TRY(message.send->build(send_pieces, round.send_peer));
      MPIX_TRY(message.recv->build(recv_pieces, round.recv_peer));
    }
  }
  return MPIX_SUCCESS;
}

long long TunaCore::max_carried_receive() const {
  long long most = 0;
  for (const Round& round : rounds_)
    for (const Part& part : round.parts) most = std::max(most, part.recv->carried_bytes());
  return most;
}

int TunaCore::post(int index, int part, std::vector<MPI_Request>& requests, PlanStats& stats, const ChangeBit& bit) {
  Round& round = rounds_[index];
  Traffic traffic(setup_.comm, setup_.tag);
  // The word a round's messages carry is what this rank has seen before the round.
  if (part == 0)
    for (Part& later : round.parts) MPIX_TRY(later.send->post(true, bit, traffic, kTagRound, stats, &later.send_request));
  Part& current = round.parts[part];
  MPI_Request receive = MPI_REQUEST_NULL;
  MPIX_TRY(current.recv->post(false, bit, traffic, kTagRound, stats, &receive));
  if (receive != MPI_REQUEST_NULL) requests.push_back(receive);
  // Waiting for this part's send is what frees its T slots for the next part.
  if (current.send_request != MPI_REQUEST_NULL) {
    requests.push_back(current.send_request);
    current.send_request = MPI_REQUEST_NULL;
  }
  return MPIX_SUCCESS;
}

void TunaCore::add_stages(std::vector<Stage>* stages, PlanStats* stats, ChangeBit* bit, TimePhase phase) {
  for (int index = 0; index < rounds(); ++index)
    for (int part = 0; part < (int)rounds_[index].parts.size(); ++part)
      stages->push_back(Stage{[this, index, part, stats, bit](std::vector<MPI_Request>& requests) {
                                return post(index, part, requests, *stats, *bit);
                              },
                              [this, index, part, bit] {
                                if (bit->carrying) rounds_[index].parts[part].recv->received(bit);
                                return MPIX_SUCCESS;
                              },
                              false, part > 0, phase});
}

// ---------------------------------------------------------------- bruck, tuna

namespace {

// TuNA over all ranks (or, with `uniform`, the uniform Bruck: every block has the
// agreed size, so no metadata travels). The own block is copied at start; every
// other block moves in the core's rounds straight from the send buffer (or its
// packed copy) to the receive buffer, through T when it needs more than one hop.
class BruckPlan : public ByteExchangePlan {
 public:
  int init(const PlanContext& context, bool uniform) {
    init_sides(context);
    const int size = ex_.size, me = ex_.rank;
    const int radix = context.params.radix_auto ? default_radix(size, ex_.max_block_bytes) : context.params.radix;
    BruckSetup setup;
    setup.comm = comm_;
    setup.tag = context.tag;
    setup.members.resize(size);
    for (int i = 0; i < size; ++i) setup.members[i] = i;
    setup.me = me;
    setup.radix = radix;
    // M, the largest block anywhere, is the one agreed at init in dense.cpp (one
    // allreduce for the whole call, Algorithm 1 line 1); for the uniform Bruck it is
    // the size of every block.
    setup.uniform_bytes = uniform ? ex_.max_block_bytes : -1;
    setup.max_piece = ex_.max_block_bytes;
    setup.pieces.assign(size, 1);
    setup.out.assign(size, {});
    setup.one_part_room = tuna_one_part_room(context.comm);
    setup.eager_bytes = context.profile->eager_bytes;
    setup.block_bytes = context.facts.mean_block();
    for (int t = 0; t < size; ++t)
      if (t != me) setup.out[t] = {send_.piece(t)};
    MPIX_TRY(core_.plan(std::move(setup), &init_stats));
    if (!uniform) {  // alltoall's sizes are agreed in dense.cpp
      SizeMismatch mismatch;
      for (int o = 0; o < size; ++o)
        if (o != me) mismatch.check(o, core_.arriving_bytes(o, 0), recv_.piece(o).bytes);
      MPIX_TRY(report_size_mismatch(mismatch, "tuna", comm_));
    }
    std::vector<std::vector<Piece>> in(size);
    for (int o = 0; o < size; ++o)
      if (o != me) in[o] = {recv_.piece(o)};
    MPIX_TRY(core_.bind(in, context.comm->scratch));
    core_.add_stages(&stages_, &stats, &bit_);
    carry_change();
    discard_bytes_ = core_.max_carried_receive();
    init_stats.scratch_bytes = core_.scratch_bytes() + side_staging_bytes();
    return MPIX_SUCCESS;
  }

 private:
  TunaCore core_;
};

int create(const PlanContext& context, bool uniform, std::unique_ptr<Plan>* plan) {
  auto made = std::make_unique<BruckPlan>();
  MPIX_TRY(made->init(context, uniform));
  *plan = std::move(made);
  return MPIX_SUCCESS;
}

}  // namespace

// Bruck moves every block in every round where its distance has a non-zero digit;
// TuNA the same, after learning the sizes at init.
Cost cost_bruck(const ExchangeFacts& facts, const Params& params, const MachineProfile& profile) {
  Cost cost;
  add_tuna_rounds(&cost, facts, facts.ranks, params.radix, (double)facts.max_block, 1, false, false, kTunaOnePartRoom, profile.eager_bytes);
  return cost;
}

Cost cost_tuna(const ExchangeFacts& facts, const Params& params, const MachineProfile& profile) {
  Cost cost;
  add_tuna_rounds(&cost, facts, facts.ranks, params.radix, facts.uniform ? (double)facts.max_block : facts.mean_block(),
                  1, false, true, kTunaOnePartRoom, profile.eager_bytes);
  if (!facts.contiguous) cost.copy_bytes += 2.0 * (double)facts.total_bytes / facts.ranks;
  return cost;
}

int create_bruck(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  if (!context.exchange.uniform)
    return fail(MPIX_ERR_UNSUPPORTED, "bruck: uniform blocks only (alltoall); use tuna for alltoallv");
  return create(context, true, plan);
}

int create_tuna(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  return create(context, false, plan);
}

}  // namespace mpix
