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

}  // namespace

int agree_in_bruck_rounds(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all,
                          bool* delivered) {
  TimeScope agreeing(TimePhase::agreement);
  *delivered = false;
  const int ranks = comm->size, rank = comm->rank;
  const MPI_Comm lib_comm = comm->lib_comm;
  const long long block = blocks ? blocks->max_block_bytes : 0;
  if (blocks && block > kCarriedBlockLimit) return fail(MPIX_ERR_ARG, "agree_in_bruck_rounds: blocks too large");
  int most_blocks = 0;
  for (int distance = 1; distance < ranks; distance <<= 1)
    most_blocks = std::max(most_blocks, blocks_in_round(ranks, distance));

  // rotated[j]: the block for rank + j, then the one from rank - j (Bruck's rotation).
  ScratchBuffer rotated = comm->scratch.acquire(blocks ? (std::size_t)(ranks * block) : 0);
  ScratchBuffer outgoing = comm->scratch.acquire(kRecordBytes + (std::size_t)(most_blocks * block));
  ScratchBuffer incoming = comm->scratch.acquire(kRecordBytes + (std::size_t)most_blocks * kCarriedBlockLimit);
  if (blocks)
    for (int j = 0; j < ranks; ++j)
      MPIX_TRY(pack_block(blocks->send.block((rank + j) % ranks), rotated.data() + j * block, lib_comm));

  long long record[kRecordBytes / sizeof(long long)], theirs[kRecordBytes / sizeof(long long)];
  encode_record(mine, blocks != nullptr, record);
  // The tag of the next plan: no plan that could be active uses it (comm.hpp), and
  // this exchange ends before that plan is made.
  const int tag = (int)(comm->plans_created % comm->tag_slots) * 8;
  bool complete = blocks != nullptr;  // every message brought blocks of this rank's size
  ++comm->agreements;
  for (int distance = 1; distance < ranks; distance <<= 1) {
    const int to = (rank + distance) % ranks, from = (rank - distance + ranks) % ranks;
    const int round_blocks = blocks_in_round(ranks, distance);
    std::memcpy(outgoing.data(), record, kRecordBytes);
    long long sent_bytes = kRecordBytes;
    // Empty blocks (block 0, no rotation buffer) have nothing to copy.
    if (blocks && block > 0) {
      for (int j = 0; j < ranks; ++j)
        if (j & distance) {
          std::memcpy(outgoing.data() + sent_bytes, rotated.data() + j * block, (std::size_t)block);
          sent_bytes += block;
        }
      charge_copy(sent_bytes - (long long)kRecordBytes);
    }
    MPI_Request requests[2];
    MPI_Status statuses[2];
    MPIX_CHECK_MPI(MPI_Irecv(incoming.data(), (int)(kRecordBytes + round_blocks * kCarriedBlockLimit), MPI_BYTE, from,
                             tag, lib_comm, &requests[0]));
    MPIX_CHECK_MPI(MPI_Isend(outgoing.data(), (int)sent_bytes, MPI_BYTE, to, tag, lib_comm, &requests[1]));
    MPIX_TRY(wait_all(2, requests, lib_comm, statuses));
    int received = 0;
    MPIX_CHECK_MPI(MPI_Get_count(&statuses[0], MPI_BYTE, &received));
    if (received < (int)kRecordBytes)
      return fail(MPIX_ERR_MPI, format("agreement: rank %d received %d bytes from rank %d, less than a record",
                                       rank, received, from));
    std::memcpy(theirs, incoming.data(), kRecordBytes);
    reduce_maxima(theirs, record);
    // A message without blocks of this rank's size: the agreement will show why
    // (a rank sent none, or block sizes differ), and the blocks are dropped.
    complete = complete && received == (int)kRecordBytes + round_blocks * block;
    if (complete && block > 0) {
      const char* next = incoming.data() + kRecordBytes;
      for (int j = 0; j < ranks; ++j)
        if (j & distance) {
          std::memcpy(rotated.data() + j * block, next, (std::size_t)block);
          next += block;
        }
      charge_copy((long long)round_blocks * block);
    }
  }
  decode_record(record, mine, all);
  set_alltoall_sums(comm->locality, &all->facts);
  // Maxima cannot compare checksums; an alltoall's counts agree where its one
  // block size does, which plan_dense checks.
  all->counts_disagree = false;
  *delivered = complete && all->carried && !all->failed && all->algorithm != -2 && all->hints_hash != -2 &&
               all->facts.min_block == all->facts.max_block;
  if (*delivered)
    for (int j = 0; j < ranks; ++j)
      MPIX_TRY(unpack_block(rotated.data() + j * block, blocks->recv.block((rank - j + ranks) % ranks), lib_comm));
  return MPIX_SUCCESS;
}

double carried_bruck_seconds(const ExchangeFacts& facts, const MachineProfile& profile) {
  // The rounds are the agreement's: the record alone would take them as long as
  // an agreement does (agreement_seconds). The blocks add, in each round, the
  // time their bytes take on the pair that waits longest for them (a round
  // crosses nodes for the ranks within 2^k of their node's end; those share the
  // node's injection and the bisection), and the copies into and out of Bruck's
  // rotation and the messages.
  const double block = (double)facts.max_block;
  double seconds = agreement_seconds(facts, profile) + 4.0 * facts.ranks * block / profile.copy_bandwidth;
  for (int distance = 1; distance < facts.ranks; distance <<= 1) {
    const double inter = facts.nodes > 1 ? inter_node_fraction(distance, facts.max_ppn, facts.ranks) : 0.0;
    RoundCost round;
    round.nic_sharers = inter > 0 ? std::max(1.0, inter * facts.max_ppn) : 1.0;
    round.ranks = inter > 0 ? std::max(1.0, inter * facts.ranks) : facts.ranks;
    round.nodes = facts.nodes;
    LevelCounts& level = inter > 0 ? round.inter : round.intra;
    level = LevelCounts{1.0, (double)kRecordBytes};
    const double record_alone = rounds_seconds({round}, profile);
    level.bytes += blocks_in_round(facts.ranks, distance) * block;
    seconds += rounds_seconds({round}, profile) - record_alone;
  }
  return seconds;
}

}  // namespace mpix
