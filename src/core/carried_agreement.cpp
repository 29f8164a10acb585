#include "carried_agreement.hpp"

#include <algorithm>
#include <cstring>

#include "breakdown.hpp"
#include "comm.hpp"
#include "completion.hpp"
#include "error.hpp"

namespace mpix {

namespace {

// Blocks whose distance from this rank (after Bruck's rotation) has the bit
// `distance` set: those of round log2(distance). The same on every rank.
int blocks_in_round(int ranks, int distance) {
  int blocks = 0;
  for (int j = 0; j < ranks; ++j) blocks += (j & distance) != 0;
  return blocks;
}

// Where the blocks of one rank wait between rounds: Bruck's rotation, slot j the
// block for rank + j, then the one from rank - j. Slots of `stride` bytes; an
// alltoallv's blocks (`sized`) travel with their sizes, one byte each.
struct Rotation {
  long long stride;
  bool sized;
  char* slots;
  unsigned char* sizes;
  long long bytes(int j) const { return sized ? sizes[j] : stride; }
};

}  // namespace

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

int agree_in_bruck_rounds(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all,
                          bool* delivered, PlanStats* moved) {
  TimeScope agreeing(TimePhase::agreement);
  *delivered = false;
  *moved = PlanStats{};
  const int ranks = comm->size, rank = comm->rank;
  const MPI_Comm lib_comm = comm->lib_comm;
  const bool sized = !mine.facts.uniform;
  if (blocks && blocks->max_block_bytes > kCarriedBlockLimit)
    return fail(MPIX_ERR_ARG, "agree_in_bruck_rounds: blocks too large");
  int most_blocks = 0;
  for (int distance = 1; distance < ranks; distance <<= 1)
    most_blocks = std::max(most_blocks, blocks_in_round(ranks, distance));

  Rotation rotation{sized ? kCarriedBlockLimit : (blocks ? blocks->max_block_bytes : 0), sized, nullptr, nullptr};
  ScratchBuffer rotated = comm->scratch.acquire(blocks ? (std::size_t)(ranks * (rotation.stride + sized)) : 0);
  rotation.slots = rotated.data();
  rotation.sizes = (unsigned char*)rotated.data() + (blocks ? ranks * rotation.stride : 0);
  const std::size_t header_bytes = 2 * kRecordBytes, size_bytes = sized ? most_blocks : 0;
  ScratchBuffer outgoing =
      comm->scratch.acquire(header_bytes + (blocks ? size_bytes + (std::size_t)(most_blocks * rotation.stride) : 0));
  ScratchBuffer incoming =
      comm->scratch.acquire(header_bytes + size_bytes + (std::size_t)most_blocks * kCarriedBlockLimit);
  moved->scratch_bytes = rotated.size() + outgoing.size() + incoming.size();
  if (blocks)
    for (int j = 0; j < ranks; ++j) {
      const Block block = blocks->send.block((rank + j) % ranks);
      if (sized) rotation.sizes[j] = (unsigned char)block.bytes();
      MPIX_TRY(pack_block(block, rotation.slots + j * rotation.stride, lib_comm));
    }

  long long record[kRecordFields];
  encode_record(mine, blocks != nullptr, record);
  Dissemination dissemination(ranks, record);
  // The tag of the next plan: no plan that could be active uses it (comm.hpp), and
  // this exchange ends before that plan is made.
  const int tag = (int)(comm->plans_created % comm->tag_slots) * 8;
  bool complete = blocks != nullptr;  // every message brought blocks
  ++comm->agreements;
  for (int distance = 1; distance < ranks; distance <<= 1) {
    const int to = (rank + distance) % ranks, from = (rank - distance + ranks) % ranks;
    const int round_blocks = blocks_in_round(ranks, distance);
    const std::size_t records_out =
        (std::size_t)dissemination.send(distance, (long long*)outgoing.data()) * kRecordBytes;
    const std::size_t records_in = (std::size_t)dissemination.receives(distance) * kRecordBytes;
    std::size_t sent_bytes = records_out;
    std::size_t block_bytes = 0;
    if (blocks) {
      char* sizes = outgoing.data() + sent_bytes;
      if (sized) sent_bytes += round_blocks;
      for (int j = 0; j < ranks; ++j)
        if (j & distance) {
          const long long bytes = rotation.bytes(j);
          if (sized) *sizes++ = (char)bytes;
          // Empty blocks (no rotation buffer for 0-byte alltoall blocks) have nothing to copy.
          if (bytes > 0) std::memcpy(outgoing.data() + sent_bytes, rotation.slots + j * rotation.stride, (std::size_t)bytes);
          sent_bytes += bytes;
          block_bytes += bytes;
        }
      charge_copy((long long)(sent_bytes - records_out));
    }
    ++moved->rounds;
    ++moved->messages;
    ++moved->metadata_messages;
    moved->payload_bytes += (long long)block_bytes;
    moved->metadata_bytes += (long long)(sent_bytes - block_bytes);
    MPI_Request requests[2];
    MPI_Status statuses[2];
    const int receivable = (int)(records_in + (sized ? round_blocks : 0) + round_blocks * kCarriedBlockLimit);
    MPIX_CHECK_MPI(MPI_Irecv(incoming.data(), receivable, MPI_BYTE, from, tag, lib_comm, &requests[0]));
    MPIX_CHECK_MPI(MPI_Isend(outgoing.data(), (int)sent_bytes, MPI_BYTE, to, tag, lib_comm, &requests[1]));
    MPIX_TRY(wait_all(2, requests, lib_comm, statuses));
    int received = 0;
    MPIX_CHECK_MPI(MPI_Get_count(&statuses[0], MPI_BYTE, &received));
    if (received < (int)records_in)
      return fail(MPIX_ERR_MPI, format("agreement: rank %d received %d bytes from rank %d, fewer than its %d records",
                                       rank, received, from, (int)(records_in / kRecordBytes)));
    long long theirs[2 * kRecordFields];
    std::memcpy(theirs, incoming.data(), records_in);
    dissemination.arrived(distance, theirs);
    // A message without blocks that fit this rank's: the agreement will show why
    // (a rank sent none, or block sizes differ), and the blocks are dropped.
    if (!complete) continue;
    const char* next = incoming.data() + records_in;
    const unsigned char* sizes = (const unsigned char*)next;
    long long expected = round_blocks * rotation.stride;
    if (sized) {
      next += round_blocks;
      expected = round_blocks;
      complete = received >= (int)records_in + round_blocks;  // the sizes arrived
      for (int b = 0; complete && b < round_blocks; ++b) {
        complete = sizes[b] <= kCarriedBlockLimit;
        expected += sizes[b];
      }
    }
    complete = complete && received == (long long)records_in + expected;
    if (!complete) continue;
    for (int j = 0; j < ranks; ++j)
      if (j & distance) {
        if (sized) rotation.sizes[j] = *sizes++;
        const long long bytes = rotation.bytes(j);
        if (bytes > 0) std::memcpy(rotation.slots + j * rotation.stride, next, (std::size_t)bytes);
        next += bytes;
      }
    charge_copy(expected);
  }
  decode_record(dissemination.result(), mine, all);
  *delivered = complete && all->carried && !all->failed && !all->counts_disagree && all->algorithm != -2 &&
               all->hints_hash != -2 && (sized || all->facts.min_block == all->facts.max_block);
  if (!*delivered) return MPIX_SUCCESS;
  for (int j = 0; j < ranks; ++j) {
    const Block block = blocks->recv.block((rank - j + ranks) % ranks);
    // The agreed checksums say every block has the size its receiver expects; a
    // block that does not (their chance, about 2^-64, comes from a sum that
    // cancels) is not written.
    if (block.bytes() == rotation.bytes(j)) MPIX_TRY(unpack_block(rotation.slots + j * rotation.stride, block, lib_comm));
  }
  return MPIX_SUCCESS;
}

double carried_bruck_seconds(const ExchangeFacts& facts, const MachineProfile& profile) {
  // The rounds are the agreement's: the records alone would take them as long as
  // an agreement does (agreement_seconds). The blocks add, in each round, the
  // time their bytes take on the pair that waits longest for them (a round
  // crosses nodes for the ranks within 2^k of their node's end; those share the
  // node's injection and the bisection), and the copies into and out of Bruck's
  // rotation and the messages. An alltoallv's blocks, of the mean size, travel
  // with a byte of size each.
  const double block = facts.uniform ? (double)facts.max_block : facts.mean_block() + 1.0;
  double seconds = agreement_seconds(facts, profile) + 4.0 * facts.ranks * block / profile.copy_bandwidth;
  for (int distance = 1; distance < facts.ranks; distance <<= 1) {
    const double inter = facts.nodes > 1 ? inter_node_fraction(distance, facts.max_ppn, facts.ranks) : 0.0;
    RoundCost round;
    round.nic_sharers = inter > 0 ? std::max(1.0, inter * facts.max_ppn) : 1.0;
    round.ranks = inter > 0 ? std::max(1.0, inter * facts.ranks) : facts.ranks;
    round.nodes = facts.nodes;
    LevelCounts& level = inter > 0 ? round.inter : round.intra;
    level = LevelCounts{1.0, (double)kRecordBytes};
    const double records_alone = rounds_seconds({round}, profile);
    level.bytes += blocks_in_round(facts.ranks, distance) * block;
    seconds += rounds_seconds({round}, profile) - records_alone;
  }
  return seconds;
}

}  // namespace mpix
