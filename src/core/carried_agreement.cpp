#include "carried_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "breakdown.hpp"
#include "carried_rounds.hpp"
#include "comm.hpp"
#include "completion.hpp"
#include "error.hpp"
#include "info.hpp"
#include "progress.hpp"

namespace mpix {

int blocks_in_round(int ranks, int distance) {
  int blocks = 0;
  for (int j = 0; j < ranks; ++j) blocks += (j & distance) != 0;
  return blocks;
}

int Rotation::take(int j, const Block& block, MPI_Comm comm) {
  if (sized) sizes[j] = (unsigned char)block.bytes();
  if (points_at_blocks && block.contiguous()) {
    where[j] = block.first_byte();
    return MPIX_SUCCESS;
  }
  where[j] = slots + j * stride;
  return pack_block(block, slots + j * stride, comm);
}

std::size_t Rotation::write(const std::vector<int>& chosen, char* out, const std::vector<int>& with_sizes) const {
  char* next = out;
  if (sized)
    for (int j : with_sizes) *next++ = (char)sizes[j];
  for (int j : chosen) {
    // Empty blocks (no rotation buffer for 0-byte alltoall blocks) have nothing to copy.
    if (bytes(j) > 0) std::memcpy(next, where[j], (std::size_t)bytes(j));
    next += bytes(j);
  }
  charge_copy(next - out);
  return (std::size_t)(next - out);
}

bool Rotation::read(const std::vector<int>& chosen, const char* in, long long length,
                    const std::vector<int>& with_sizes) {
  const long long size_count = sized ? (long long)with_sizes.size() : 0;
  if (length < size_count) return false;
  // `with_sizes` is a subsequence of `chosen`: walked beside it, a slot takes the
  // size that travels where it has one, else keeps its own.
  long long expected = size_count;
  std::size_t next_size = 0;
  for (int j : chosen) {
    if (next_size < (std::size_t)size_count && with_sizes[next_size] == j) {
      const unsigned char size = (unsigned char)in[next_size++];
      if (size > kCarriedBlockLimit) return false;
      expected += size;
    } else {
      expected += bytes(j);
    }
  }
  if (next_size != (std::size_t)size_count || length != expected) return false;
  for (long long b = 0; b < size_count; ++b) sizes[with_sizes[(std::size_t)b]] = (unsigned char)in[b];
  const char* next = in + size_count;
  for (int j : chosen) {
    where[j] = next;
    next += bytes(j);
  }
  return true;
}

Rotation make_rotation(MPIX_Comm_s* comm, const Exchange* blocks, bool sized, int slot_count, bool with_room,
                       ScratchBuffer* held) {
  Rotation rotation{sized ? kCarriedBlockLimit : (blocks ? blocks->max_block_bytes : 0), sized, nullptr, nullptr};
  if (!blocks) {
    *held = comm->scratch.acquire(0);
    return rotation;
  }
  const std::size_t pointers = (std::size_t)slot_count * sizeof(const char*);
  const std::size_t room = with_room ? (std::size_t)slot_count * (std::size_t)rotation.stride : 0;
  // The pointers first: scratch is aligned as new char[] is, for any type.
  *held = comm->scratch.acquire(pointers + room + (sized ? (std::size_t)slot_count : 0));
  rotation.where = reinterpret_cast<const char**>(held->data());
  rotation.slots = held->data() + pointers;
  rotation.sizes = reinterpret_cast<unsigned char*>(rotation.slots + room);
  for (int j = 0; j < slot_count; ++j) rotation.where[j] = with_room ? rotation.slots + j * rotation.stride : nullptr;
  // In place (the send side is the receive side, dense_args.cpp), the blocks are
  // the receive buffer that the call writes at its end: they are packed first.
  rotation.points_at_blocks = with_room && blocks->send.buf != blocks->recv.buf;
  return rotation;
}

double rotation_copied_bytes(const ExchangeFacts& facts, double block) {
  return (facts.contiguous && !facts.in_place ? 1.0 : 2.0) * facts.ranks * block;
}

Arrivals::Arrivals(MPIX_Comm_s* comm, bool keep, std::size_t capacity)
    : keep_(keep), buffer_(comm->scratch.acquire(capacity)) {}

bool blocks_valid(bool complete, bool sized, const Agreement& all) {
  return complete && all.carried && !all.failed && !all.inconsistent && !all.counts_disagree && all.algorithm != -2 &&
         all.hints_hash != -2 && (sized || all.facts.min_block == all.facts.max_block);
}

int exchange_round(MPI_Comm comm, const char* out, std::size_t sent, int to, char* in, std::size_t receivable,
                   int from, int tag, int* received) {
  MPI_Request requests[2];
  MPI_Status statuses[2];
  MPIX_CHECK_MPI(MPI_Irecv(in, (int)receivable, MPI_BYTE, from, tag, comm, &requests[0]));
  MPIX_CHECK_MPI(MPI_Isend(out, (int)sent, MPI_BYTE, to, tag, comm, &requests[1]));
  MPIX_TRY(wait_all_progressing(2, requests, comm, statuses));
  MPIX_CHECK_MPI(MPI_Get_count(&statuses[0], MPI_BYTE, received));
  return MPIX_SUCCESS;
}

std::size_t write_records(const long long* records, int count, char* out) {
  std::size_t bytes = 0;
  for (int r = 0; r < count; ++r) bytes += pack_record(records + r * kRecordFields, out + bytes);
  return bytes;
}

int read_records(const char* in, int received, int count, int from, const MPIX_Comm_s* comm, long long* records,
                 std::size_t* used) {
  *used = 0;
  for (int r = 0; r < count; ++r) {
    const std::size_t bytes = unpack_record(in + *used, (std::size_t)received - *used, records + r * kRecordFields);
    if (bytes == 0)
      return fail(MPIX_ERR_MPI, format("agreement: rank %d received %d bytes from rank %d, which do not hold its %d "
                                       "record%s", comm->rank, received, from, count, count > 1 ? "s" : ""));
    *used += bytes;
  }
  return MPIX_SUCCESS;
}

Dissemination::Dissemination(int ranks, const long long* own) : ranks_(ranks) {
  while (top_ * 2 < ranks_) top_ *= 2;
  std::memcpy(window_, own, kRecordBytes);
}

int Dissemination::send(int distance, long long* out) const {
  if (distance == top_) {
    std::memcpy(out, excess() == top_ ? window_ : remainder_, kRecordBytes);
    return 1;
  }
  std::memcpy(out, window_, kRecordBytes);
  if (!(excess() & distance) || !has_remainder_) return 1;
  std::memcpy(out + kRecordFields, remainder_, kRecordBytes);
  return 2;
}

int Dissemination::receives(int distance) const {
  return distance != top_ && (excess() & distance) && has_remainder_ ? 2 : 1;
}

void Dissemination::arrived(int distance, const long long* in) {
  if (distance != top_ && (excess() & distance)) {
    long long grown[kRecordFields];
    std::memcpy(grown, window_, kRecordBytes);
    if (has_remainder_) combine_records(in + kRecordFields, grown);
    std::memcpy(remainder_, grown, kRecordBytes);
    has_remainder_ = true;
  }
  combine_records(in, window_);
}

// The state of a CarriedAgreement in Bruck's rounds between two of its steps: the
// round in flight (its distance, its two requests) and what the rounds before
// it brought.
struct CarriedAgreement::BruckRounds {
  BruckRounds(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, PlanStats* moved);
  int post();     // the round of `distance`
  int advance();  // takes in its message, which has arrived, and posts the next round
  bool done() const { return distance >= comm->size; }

  MPIX_Comm_s* comm;
  PlanStats* moved;
  bool sized;
  ScratchBuffer rotated, outgoing;
  Rotation rotation;
  Rotation widest{kCarriedBlockLimit, false, nullptr, nullptr};
  std::size_t header_bytes = 2 * kPackedRecordMaxBytes;
  std::unique_ptr<Arrivals> incoming;
  std::unique_ptr<Dissemination> dissemination;
  int tag = 0, distance = 1;
  bool complete;  // every message brought blocks
  std::vector<int> chosen;
  char* in = nullptr;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status statuses[2];
};

CarriedAgreement::BruckRounds::BruckRounds(MPIX_Comm_s* comm_, const Agreement& mine, const Exchange* blocks,
                                           PlanStats* moved_)
    : comm(comm_), moved(moved_), sized(!mine.facts.uniform), complete(blocks != nullptr) {
  const int ranks = comm->size;
  int most_blocks = 0;
  for (int d = 1; d < ranks; d <<= 1) most_blocks = std::max(most_blocks, blocks_in_round(ranks, d));
  rotation = make_rotation(comm, blocks, sized, ranks, true, &rotated);
  outgoing = comm->scratch.acquire(header_bytes + (blocks ? rotation.room(most_blocks) : 0));
  widest.sized = sized;
  std::size_t all_rounds = 0;
  for (int d = 1; d < ranks; d <<= 1) all_rounds += header_bytes + widest.room(blocks_in_round(ranks, d));
  incoming = std::make_unique<Arrivals>(comm, blocks != nullptr,
                                        blocks ? all_rounds : header_bytes + widest.room(most_blocks));
  moved->scratch_bytes = rotated.size() + outgoing.size() + incoming->size();
  long long record[kRecordFields];
  encode_carried_record(mine, blocks != nullptr, comm->rank, comm->size, record);
  dissemination = std::make_unique<Dissemination>(ranks, record);
  // The next blocking plan's tags: no plan that could be active uses them (comm.hpp),
  // and the agreement ends before that plan is made.
  tag = comm->next_blocking_tag();
}

int CarriedAgreement::BruckRounds::post() {
  const int ranks = comm->size, rank = comm->rank;
  const int to = (rank + distance) % ranks, from = (rank - distance + ranks) % ranks;
  chosen.clear();
  for (int j = 0; j < ranks; ++j)
    if (j & distance) chosen.push_back(j);
  long long ours[2 * kRecordFields];
  const std::size_t records_out = write_records(ours, dissemination->send(distance, ours), outgoing.data());
  std::size_t block_bytes = 0;
  // Once this rank knows the blocks cannot be delivered (a message came without
  // them, or its records show a rank that sent none), it sends its records alone.
  const bool sending = complete && !some_rank_declined(dissemination->result());
  const std::size_t sent_bytes = records_out + (sending ? rotation.write(chosen, outgoing.data() + records_out) : 0);
  if (sending)
    for (int j : chosen) block_bytes += (std::size_t)rotation.bytes(j);
  ++moved->rounds;
  ++moved->messages;
  ++moved->metadata_messages;
  moved->payload_bytes += (long long)block_bytes;
  moved->metadata_bytes += (long long)(sent_bytes - block_bytes);
  in = incoming->next();
  MPIX_CHECK_MPI(MPI_Irecv(in, (int)(header_bytes + widest.room((int)chosen.size())), MPI_BYTE, from, tag,
                           comm->lib_comm, &requests[0]));
  MPIX_CHECK_MPI(MPI_Isend(outgoing.data(), (int)sent_bytes, MPI_BYTE, to, tag, comm->lib_comm, &requests[1]));
  return MPIX_SUCCESS;
}

int CarriedAgreement::BruckRounds::advance() {
  const int from = (comm->rank - distance + comm->size) % comm->size;
  int received = 0;
  MPIX_CHECK_MPI(MPI_Get_count(&statuses[0], MPI_BYTE, &received));
  incoming->took((std::size_t)received);
  long long theirs[2 * kRecordFields];
  std::size_t records_in = 0;
  MPIX_TRY(read_records(in, received, dissemination->receives(distance), from, comm, theirs, &records_in));
  dissemination->arrived(distance, theirs);
  complete = complete && rotation.read(chosen, in + records_in, received - (long long)records_in);
  distance <<= 1;
  return done() ? MPIX_SUCCESS : post();
}

CarriedAgreement::CarriedAgreement(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks)
    : comm_(comm), mine_(mine), blocks_(blocks) {}

CarriedAgreement::~CarriedAgreement() = default;

int CarriedAgreement::begin() {
  if (blocks_ && blocks_->max_block_bytes > kCarriedBlockLimit)
    return fail(MPIX_ERR_ARG, "CarriedAgreement: blocks too large");
  ++comm_->agreements;
  if (comm_->lane_group > 0) return MPIX_SUCCESS;
  bruck_ = std::make_unique<BruckRounds>(comm_, mine_, blocks_, &moved_);
  if (blocks_)
    for (int j = 0; j < comm_->size; ++j)
      MPIX_TRY(bruck_->rotation.take(j, blocks_->send.block((comm_->rank + j) % comm_->size), comm_->lib_comm));
  // One rank has no round: its record and its own block are the result.
  return bruck_->done() ? MPIX_SUCCESS : bruck_->post();
}

int CarriedAgreement::progress() {
  if (failed_ || !bruck_ || bruck_->done()) return failed_;
  int arrived = 0;
  failed_ = test_all(2, bruck_->requests, &arrived, comm_->lib_comm, bruck_->statuses);
  if (!failed_ && arrived) failed_ = bruck_->advance();
  return failed_;
}

int CarriedAgreement::end(Agreement* all, bool* delivered, PlanStats* moved) {
  TimeScope agreeing(TimePhase::agreement);
  *delivered = false;
  if (failed_) return failed_;
  if (!bruck_) {
    MPIX_TRY(agree_in_lanes(comm_, mine_, blocks_, all, delivered, &moved_));
  } else {
    BruckRounds& r = *bruck_;
    while (!r.done()) {
      MPIX_TRY(wait_all_progressing(2, r.requests, comm_->lib_comm, r.statuses));
      MPIX_TRY(r.advance());
    }
    decode_carried_record(r.dissemination->result(), mine_, all);
    *delivered = blocks_valid(r.complete, r.sized, *all);
    if (*delivered) {
      const int ranks = comm_->size, rank = comm_->rank;
      for (int j = 0; j < ranks; ++j) {
        const Block block = blocks_->recv.block((rank - j + ranks) % ranks);
        // The agreed checksums say every block has the size its receiver expects; a
        // block that does not (their chance, about 2^-64, comes from a sum that
        // cancels) is not written.
        if (block.bytes() == r.rotation.bytes(j))
          MPIX_TRY(unpack_block(r.rotation.slot(j), block, comm_->lib_comm));
      }
    }
  }
  *moved = moved_;
  // The one sum says that something differs; the full records say what (every
  // rank has the same sum, so all of them make this allreduce, or none).
  if (all->inconsistent && !all->failed) MPIX_TRY(agree(comm_, mine_, all));
  return MPIX_SUCCESS;
}

double carried_bruck_seconds(const ExchangeFacts& facts, const MachineProfile& profile) {
  // The rounds are the agreement's: the records alone would take them as long as
  // an agreement does (agreement_seconds). The blocks add, in each round, the
  // time their bytes take on the pair that waits longest for them (a round
  // crosses nodes for the ranks within 2^k of their node's end; those share the
  // node's injection and the bisection), and the copies: each round's blocks into
  // its message, and those outside the messages (rotation_copied_bytes). An
  // alltoallv's blocks, of the mean size, travel with a byte of size each.
  const double block = carried_block(facts);
  double copied = rotation_copied_bytes(facts, block);
  for (int distance = 1; distance < facts.ranks; distance <<= 1) copied += blocks_in_round(facts.ranks, distance) * block;
  double seconds = agreement_seconds(facts, profile, kPackedRecordBytes) + copied / profile.copy_bandwidth;
  for (int distance = 1; distance < facts.ranks; distance <<= 1) {
    const double inter = facts.nodes > 1 ? inter_node_fraction(distance, facts.max_ppn, facts.ranks) : 0.0;
    RoundCost round;
    round.nic_sharers = inter > 0 ? std::max(1.0, inter * facts.max_ppn) : 1.0;
    round.ranks = inter > 0 ? std::max(1.0, inter * facts.ranks) : facts.ranks;
    round.nodes = facts.nodes;
    LevelCounts& level = inter > 0 ? round.inter : round.intra;
    level = LevelCounts{1.0, kPackedRecordBytes};
    const double records_alone = rounds_seconds({round}, profile);
    level.bytes += blocks_in_round(facts.ranks, distance) * block;
    seconds += rounds_seconds({round}, profile) - records_alone;
  }
  return seconds;
}

double carried_block(const ExchangeFacts& facts) {
  return facts.uniform ? (double)facts.max_block : facts.mean_block() + 1.0;
}

double carried_seconds(const ExchangeFacts& facts, const MachineProfile& profile, int lane_group) {
  return lane_group > 0 ? lanes_seconds(facts, profile, carried_block(facts), lane_group)
                        : carried_bruck_seconds(facts, profile);
}

double blocking_agreement_seconds(const ExchangeFacts& facts, const MachineProfile& profile, int lane_group) {
  return lane_group > 0 ? lanes_seconds(facts, profile, 0.0, lane_group)
                        : agreement_seconds(facts, profile, kPackedRecordBytes);
}

}  // namespace mpix
