#include "carried_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "breakdown.hpp"
#include "comm.hpp"
#include "completion.hpp"
#include "error.hpp"
#include "info.hpp"
#include "progress.hpp"

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
// block for rank + j, then the one from rank - j (the lanes keep one such slot per
// node, agree_in_lanes). Slots of `stride` bytes; an alltoallv's blocks (`sized`)
// travel with their sizes, one byte each.
struct Rotation {
  long long stride;
  bool sized;
  char* slots;
  unsigned char* sizes;
  long long bytes(int j) const { return sized ? sizes[j] : stride; }
  char* slot(int j) const { return slots + j * stride; }
  std::size_t room(int count) const { return (std::size_t)count * (std::size_t)(stride + sized); }

  // A message's part after the records: the sizes of `chosen` slots (alltoallv;
  // not where `sizes_known` to the receiver), then their bytes. Returns the bytes
  // written.
  std::size_t write(const std::vector<int>& chosen, char* out, bool sizes_known = false) const {
    char* next = out;
    if (sized && !sizes_known)
      for (int j : chosen) *next++ = (char)sizes[j];
    for (int j : chosen) {
      // Empty blocks (no rotation buffer for 0-byte alltoall blocks) have nothing to copy.
      if (bytes(j) > 0) std::memcpy(next, slot(j), (std::size_t)bytes(j));
      next += bytes(j);
    }
    charge_copy(next - out);
    return (std::size_t)(next - out);
  }

  // The reverse, from a message part of `length` bytes: false, and nothing read,
  // where it does not hold blocks of `chosen`'s number that fit (a rank sent its
  // records alone, or its blocks have another size: the agreement will say why).
  // `sizes_known`: the message has no sizes, the slots' are set (the receiver's
  // own counts, which the agreement's checksums compare with the sender's).
  bool read(const std::vector<int>& chosen, const char* in, long long length, bool sizes_known = false) {
    const long long count = (long long)chosen.size();
    const bool sizes_in = sized && !sizes_known;
    long long expected = sizes_in ? count : 0;
    if (sizes_in) {
      if (length < count) return false;
      for (long long b = 0; b < count; ++b) {
        if ((unsigned char)in[b] > kCarriedBlockLimit) return false;
        expected += (unsigned char)in[b];
      }
    } else {
      for (int j : chosen) expected += bytes(j);
    }
    if (length != expected) return false;
    const char* next = in + (sizes_in ? count : 0);
    for (long long b = 0; b < count; ++b) {
      const int j = chosen[(std::size_t)b];
      if (sizes_in) sizes[j] = (unsigned char)in[b];
      if (bytes(j) > 0) std::memcpy(slot(j), next, (std::size_t)bytes(j));
      next += bytes(j);
    }
    charge_copy(expected);
    return true;
  }
};

// The rotation of `slot_count` slots for `blocks` (none: records alone) in
// scratch, and its stride: kCarriedBlockLimit for an alltoallv, whose blocks
// differ, the one block size of an alltoall.
Rotation make_rotation(MPIX_Comm_s* comm, const Exchange* blocks, bool sized, int slot_count, ScratchBuffer* held) {
  Rotation rotation{sized ? kCarriedBlockLimit : (blocks ? blocks->max_block_bytes : 0), sized, nullptr, nullptr};
  *held = comm->scratch.acquire(blocks ? rotation.room(slot_count) : 0);
  rotation.slots = held->data();
  rotation.sizes = (unsigned char*)held->data() + (blocks ? slot_count * rotation.stride : 0);
  return rotation;
}

// Whether the call's blocks arrived, by the agreed record: every rank sent them
// (`complete` here) and the call is valid.
bool blocks_valid(bool complete, bool sized, const Agreement& all) {
  return complete && all.carried && !all.failed && !all.inconsistent && !all.counts_disagree && all.algorithm != -2 &&
         all.hints_hash != -2 && (sized || all.facts.min_block == all.facts.max_block);
}

// One round's exchange with a pair of ranks: the message in `out` to `to`, one of
// at most `receivable` bytes from `from` into `in`, its length in *received.
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

// The packed records in front of a message: `count` of them from `records` into
// `out`; returns their bytes.
std::size_t write_records(const long long* records, int count, char* out) {
  std::size_t bytes = 0;
  for (int r = 0; r < count; ++r) bytes += pack_record(records + r * kRecordFields, out + bytes);
  return bytes;
}

// The reverse, for the message of `received` bytes that rank `from` sent this
// one: `count` records into `records`, their bytes in *used; fails where the
// message does not begin with them.
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

namespace {

int agree_in_bruck_rounds(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all,
                          bool* delivered, PlanStats* moved) {
  const int ranks = comm->size, rank = comm->rank;
  const MPI_Comm lib_comm = comm->lib_comm;
  const bool sized = !mine.facts.uniform;
  int most_blocks = 0;
  for (int distance = 1; distance < ranks; distance <<= 1)
    most_blocks = std::max(most_blocks, blocks_in_round(ranks, distance));

  ScratchBuffer rotated;
  Rotation rotation = make_rotation(comm, blocks, sized, ranks, &rotated);
  const std::size_t header_bytes = 2 * kPackedRecordMaxBytes;
  ScratchBuffer outgoing = comm->scratch.acquire(header_bytes + (blocks ? rotation.room(most_blocks) : 0));
  Rotation widest{kCarriedBlockLimit, sized, nullptr, nullptr};
  ScratchBuffer incoming = comm->scratch.acquire(header_bytes + widest.room(most_blocks));
  moved->scratch_bytes = rotated.size() + outgoing.size() + incoming.size();
  if (blocks)
    for (int j = 0; j < ranks; ++j) {
      const Block block = blocks->send.block((rank + j) % ranks);
      if (sized) rotation.sizes[j] = (unsigned char)block.bytes();
      MPIX_TRY(pack_block(block, rotation.slot(j), lib_comm));
    }

  long long record[kRecordFields];
  encode_carried_record(mine, blocks != nullptr, comm->rank, comm->size, record);
  Dissemination dissemination(ranks, record);
  // The next blocking plan's tags: no plan that could be active uses them (comm.hpp),
  // and the agreement ends before that plan is made.
  const int tag = comm->next_blocking_tag();
  bool complete = blocks != nullptr;  // every message brought blocks
  std::vector<int> chosen;
  for (int distance = 1; distance < ranks; distance <<= 1) {
    const int to = (rank + distance) % ranks, from = (rank - distance + ranks) % ranks;
    chosen.clear();
    for (int j = 0; j < ranks; ++j)
      if (j & distance) chosen.push_back(j);
    long long ours[2 * kRecordFields];
    const std::size_t records_out = write_records(ours, dissemination.send(distance, ours), outgoing.data());
    std::size_t block_bytes = 0;
    // Once this rank knows the blocks cannot be delivered (a message came without
    // them, or its records show a rank that sent none), it sends its records alone.
    const bool sending = complete && !some_rank_declined(dissemination.result());
    const std::size_t sent_bytes = records_out + (sending ? rotation.write(chosen, outgoing.data() + records_out) : 0);
    if (sending)
      for (int j : chosen) block_bytes += (std::size_t)rotation.bytes(j);
    ++moved->rounds;
    ++moved->messages;
    ++moved->metadata_messages;
    moved->payload_bytes += (long long)block_bytes;
    moved->metadata_bytes += (long long)(sent_bytes - block_bytes);
    int received = 0;
    MPIX_TRY(exchange_round(lib_comm, outgoing.data(), sent_bytes, to, incoming.data(),
                            header_bytes + widest.room((int)chosen.size()), from, tag, &received));
    long long theirs[2 * kRecordFields];
    std::size_t records_in = 0;
    MPIX_TRY(read_records(incoming.data(), received, dissemination.receives(distance), from, comm, theirs,
                          &records_in));
    dissemination.arrived(distance, theirs);
    complete = complete && rotation.read(chosen, incoming.data() + records_in, received - (long long)records_in);
  }
  decode_carried_record(dissemination.result(), mine, all);
  *delivered = blocks_valid(complete, sized, *all);
  if (!*delivered) return MPIX_SUCCESS;
  for (int j = 0; j < ranks; ++j) {
    const Block block = blocks->recv.block((rank - j + ranks) % ranks);
    // The agreed checksums say every block has the size its receiver expects; a
    // block that does not (their chance, about 2^-64, comes from a sum that
    // cancels) is not written.
    if (block.bytes() == rotation.bytes(j)) MPIX_TRY(unpack_block(rotation.slot(j), block, lib_comm));
  }
  return MPIX_SUCCESS;
}

int agree_in_lanes(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all, bool* delivered,
                   PlanStats* moved) {
  const Locality& locality = comm->locality;
  const int nodes = locality.num_nodes(), ppn = locality.local_size();
  const int node = locality.node(), local = locality.local_rank();
  const std::vector<int>& mates = locality.node_ranks(node);
  const MPI_Comm lib_comm = comm->lib_comm;
  const bool sized = !mine.facts.uniform;
  // Slot j * nodes + m: the block for node m's rank of local rank local + j, until
  // the rounds inside the node bring there the one from local rank local - j of
  // this node for node m's rank of this local rank.
  ScratchBuffer rotated;
  Rotation rotation = make_rotation(comm, blocks, sized, comm->size, &rotated);
  // Slot (k - 1) * ppn + j: the block from local rank local - j of node node - k.
  ScratchBuffer arrived_blocks;
  Rotation arrivals = make_rotation(comm, blocks, sized, comm->size, &arrived_blocks);
  const int lanes = nodes - 1, batch = std::min(lanes, std::max(1, comm->lane_batch));
  const std::size_t lane_room = kPackedRecordMaxBytes + (std::size_t)ppn * (std::size_t)(kCarriedBlockLimit + sized);
  int most_blocks = 0;
  for (int distance = 1; distance < ppn; distance <<= 1)
    most_blocks = std::max(most_blocks, blocks_in_round(ppn, distance) * nodes);
  const std::size_t round_room = 2 * kPackedRecordMaxBytes + Rotation{kCarriedBlockLimit, sized, nullptr, nullptr}.room(most_blocks);
  ScratchBuffer outgoing = comm->scratch.acquire(std::max(round_room, (std::size_t)batch * lane_room));
  ScratchBuffer incoming = comm->scratch.acquire(std::max(round_room, (std::size_t)batch * lane_room));
  moved->scratch_bytes = rotated.size() + arrived_blocks.size() + outgoing.size() + incoming.size();
  if (blocks)
    for (int j = 0; j < ppn; ++j)
      for (int m = 0; m < nodes; ++m) {
        const Block block = blocks->send.block(locality.node_ranks(m)[(local + j) % ppn]);
        if (sized) rotation.sizes[j * nodes + m] = (unsigned char)block.bytes();
        MPIX_TRY(pack_block(block, rotation.slot(j * nodes + m), lib_comm));
      }
  // Where the block from `source` ends up: for the local rank j before this one,
  // slot j * nodes + node of the rotation if on this node, else slot
  // (k - 1) * ppn + j of the arrivals, from node node - k.
  auto final_slot = [&](int source) {
    const int m = locality.node_of(source), j = (local - locality.local_rank_of(source) + ppn) % ppn;
    return m == node ? j * nodes + node : ((node - m + nodes) % nodes - 1) * ppn + j;
  };
  // A lane brings this rank's own blocks, whose sizes it expects: they travel
  // without them (on 8 nodes of 32 at 16 B, 32 of the 85 bytes a lane message
  // added to the blocks).
  if (blocks && sized)
    for (int source = 0; source < comm->size; ++source)
      if (locality.node_of(source) != node)
        arrivals.sizes[final_slot(source)] = (unsigned char)blocks->recv.block(source).bytes();

  long long record[kRecordFields];
  encode_carried_record(mine, blocks != nullptr, comm->rank, comm->size, record);
  Dissemination node_records(ppn, record);
  const int tag = comm->next_blocking_tag();
  bool complete = blocks != nullptr;
  std::vector<int> chosen;
  auto count_message = [&](std::size_t sent_bytes, std::size_t block_bytes) {
    ++moved->messages;
    ++moved->metadata_messages;
    moved->payload_bytes += (long long)block_bytes;
    moved->metadata_bytes += (long long)(sent_bytes - block_bytes);
  };
  // As in agree_in_bruck_rounds, a rank that knows the blocks cannot be
  // delivered sends its records alone.
  bool sending = false;
  auto block_bytes_of = [&](const Rotation& from) {
    std::size_t bytes = 0;
    if (sending)
      for (int j : chosen) bytes += (std::size_t)from.bytes(j);
    return bytes;
  };
  // Inside the node: Bruck's radix-2 rounds over the local ranks, each slot j
  // moving with all its nodes' blocks, and the dissemination of the node's record.
  for (int distance = 1; distance < ppn; distance <<= 1) {
    const int to = mates[(local + distance) % ppn], from = mates[(local - distance + ppn) % ppn];
    chosen.clear();
    for (int j = 0; j < ppn; ++j)
      if (j & distance)
        for (int m = 0; m < nodes; ++m) chosen.push_back(j * nodes + m);
    long long ours[2 * kRecordFields];
    const std::size_t records_out = write_records(ours, node_records.send(distance, ours), outgoing.data());
    sending = complete && !some_rank_declined(node_records.result());
    const std::size_t sent_bytes = records_out + (sending ? rotation.write(chosen, outgoing.data() + records_out) : 0);
    ++moved->rounds;
    count_message(sent_bytes, block_bytes_of(rotation));
    int received = 0;
    MPIX_TRY(exchange_round(lib_comm, outgoing.data(), sent_bytes, to, incoming.data(), round_room, from, tag,
                            &received));
    long long theirs[2 * kRecordFields];
    std::size_t records_in = 0;
    MPIX_TRY(read_records(incoming.data(), received, node_records.receives(distance), from, comm, theirs, &records_in));
    node_records.arrived(distance, theirs);
    complete = complete && rotation.read(chosen, incoming.data() + records_in, received - (long long)records_in);
  }
  // An alltoallv's lane message that brings no blocks, or blocks of other sizes
  // than this rank expects, leaves its slots marked as larger than any block, so
  // that none of them is written. Where every rank's checksums count right, such
  // a message means a rank declined or counts disagree, and the agreement says
  // so on every rank; so whether the blocks were delivered is decided by the
  // rounds inside the node and the agreed record, the same on every rank even
  // where the checksums missed a disagreement (chance about 2^-64).
  const bool complete_inside = complete;
  auto drop_lane = [&](int k) {
    for (int j = 0; j < ppn; ++j) arrivals.sizes[(k - 1) * ppn + j] = (unsigned char)(kCarriedBlockLimit + 1);
  };
  // Between nodes: lane k sends the node's record and the blocks for node + k to
  // its rank of this local rank and receives node - k's, in batches of at most
  // kLaneBatch lanes. Each node's record arrives once, so the sums are exact. As in
  // tuna_hier_coalesced's inter-node phase, local rank t takes the lanes from
  // t + 1 on, so that a batch's messages leave a node for many nodes, not all for
  // the next few (its partners have the same local rank, so the same order).
  auto lane = [&](int position) { return (local + position - 1) % lanes + 1; };
  long long agreed[kRecordFields];
  std::memcpy(agreed, node_records.result(), kRecordBytes);
  std::vector<MPI_Request> requests(2 * (std::size_t)batch);
  std::vector<MPI_Status> statuses(2 * (std::size_t)batch);
  for (int first = 1; first <= lanes; first += batch) {
    const int in_batch = std::min(batch, lanes - first + 1);
    ++moved->rounds;
    // `agreed` holds the records of this node and of the lanes' earlier batches.
    sending = complete && !some_rank_declined(agreed);
    for (int b = 0; b < in_batch; ++b) {
      const int k = lane(first + b), to_node = (node + k) % nodes, from_node = (node - k + nodes) % nodes;
      char* out = outgoing.data() + b * lane_room;
      // The node's record, not `agreed`, which sums earlier batches.
      const std::size_t record_bytes = write_records(node_records.result(), 1, out);
      chosen.clear();
      for (int j = 0; j < ppn; ++j) chosen.push_back(j * nodes + to_node);
      const std::size_t sent_bytes = record_bytes + (sending ? rotation.write(chosen, out + record_bytes, true) : 0);
      count_message(sent_bytes, block_bytes_of(rotation));
      MPIX_CHECK_MPI(MPI_Irecv(incoming.data() + b * lane_room, (int)lane_room, MPI_BYTE,
                               locality.node_ranks(from_node)[local], tag, lib_comm, &requests[2 * b]));
      MPIX_CHECK_MPI(MPI_Isend(out, (int)sent_bytes, MPI_BYTE, locality.node_ranks(to_node)[local], tag, lib_comm,
                               &requests[2 * b + 1]));
    }
    MPIX_TRY(wait_all_progressing(2 * in_batch, requests.data(), lib_comm, statuses.data()));
    for (int b = 0; b < in_batch; ++b) {
      const int k = lane(first + b);
      int received = 0;
      MPIX_CHECK_MPI(MPI_Get_count(&statuses[2 * b], MPI_BYTE, &received));
      const char* in = incoming.data() + b * lane_room;
      long long theirs[kRecordFields];
      std::size_t record_bytes = 0;
      MPIX_TRY(read_records(in, received, 1, locality.node_ranks((node - k + nodes) % nodes)[local], comm, theirs,
                            &record_bytes));
      combine_records(theirs, agreed);
      chosen.clear();
      for (int j = 0; j < ppn; ++j) chosen.push_back((k - 1) * ppn + j);
      const bool fits = complete && arrivals.read(chosen, in + record_bytes, received - (long long)record_bytes, true);
      if (!fits && blocks && sized) drop_lane(k);
      complete = complete && fits;
    }
  }
  decode_carried_record(agreed, mine, all);
  *delivered = blocks_valid(sized ? complete_inside : complete, sized, *all);
  if (!*delivered) return MPIX_SUCCESS;
  for (int source = 0; source < comm->size; ++source) {
    const Block block = blocks->recv.block(source);
    const Rotation& holder = locality.node_of(source) == node ? rotation : arrivals;
    const int slot = final_slot(source);
    // As in agree_in_bruck_rounds: a block of another size than expected is not written.
    if (block.bytes() == holder.bytes(slot)) MPIX_TRY(unpack_block(holder.slot(slot), block, lib_comm));
  }
  return MPIX_SUCCESS;
}

}  // namespace

bool lanes_apply(const Locality& locality) {
  return locality.num_nodes() > 1 && locality.local_size() > 1 && locality.uniform_nodes();
}

int agree_carrying(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all,
                   bool* delivered, PlanStats* moved) {
  TimeScope agreeing(TimePhase::agreement);
  *delivered = false;
  *moved = PlanStats{};
  if (blocks && blocks->max_block_bytes > kCarriedBlockLimit)
    return fail(MPIX_ERR_ARG, "agree_carrying: blocks too large");
  ++comm->agreements;
  MPIX_TRY(comm->carry_in_lanes ? agree_in_lanes(comm, mine, blocks, all, delivered, moved)
                                : agree_in_bruck_rounds(comm, mine, blocks, all, delivered, moved));
  // The one sum says that something differs; the full records say what (every
  // rank has the same sum, so all of them make this allreduce, or none).
  if (all->inconsistent && !all->failed) MPIX_TRY(agree(comm, mine, all));
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
  double seconds = agreement_seconds(facts, profile, kPackedRecordBytes) + 4.0 * facts.ranks * block / profile.copy_bandwidth;
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


namespace {

// The rounds of agree_in_lanes with blocks of `block` bytes each (0: records
// alone), and the bytes it copies into *copied.
std::vector<RoundCost> lanes_rounds(const ExchangeFacts& facts, double block, double* copied) {
  const int ppn = facts.max_ppn, nodes = facts.nodes;
  std::vector<RoundCost> rounds;
  *copied = 2.0 * facts.ranks * block;  // into the rotation, out of it
  for (int distance = 1; distance < ppn; distance <<= 1) {
    const double bytes = (double)blocks_in_round(ppn, distance) * nodes * block;
    RoundCost round;
    round.intra = LevelCounts{1.0, kPackedRecordBytes + bytes};
    round.ranks = facts.ranks;
    round.nodes = nodes;
    rounds.push_back(round);
    *copied += 2.0 * bytes;
  }
  const int lanes = nodes - 1;
  // A lane brings the receiver's own blocks, without their sizes.
  const double lane_block = block > 0 && !facts.uniform ? block - 1.0 : block;
  RoundCost round;
  round.rounds = std::ceil((double)lanes / kLaneBatch);
  round.inter.messages = lanes / round.rounds;
  round.inter.bytes = lanes * (kPackedRecordBytes + ppn * lane_block) / round.rounds;
  round.nic_sharers = ppn;
  round.ranks = facts.ranks;
  round.nodes = nodes;
  if (block > 0) round.busiest_bytes = busiest_bytes_factor(facts, ppn);
  rounds.push_back(round);
  *copied += 2.0 * lanes * ppn * block;
  return rounds;
}

double lanes_seconds(const ExchangeFacts& facts, const MachineProfile& profile, double block) {
  double copied = 0;
  const std::vector<RoundCost> rounds = lanes_rounds(facts, block, &copied);
  // The collective's software overhead, as agreement_seconds charges the
  // dissemination, so that the two patterns compare on their messages alone.
  return rounds_seconds(rounds, profile) + copied / profile.copy_bandwidth + profile.collective_overhead;
}

// The block a carried exchange moves per pair, with its byte of size.
double carried_block(const ExchangeFacts& facts) {
  return facts.uniform ? (double)facts.max_block : facts.mean_block() + 1.0;
}

}  // namespace

double carried_seconds(const ExchangeFacts& facts, const MachineProfile& profile, bool lanes) {
  return lanes ? lanes_seconds(facts, profile, carried_block(facts)) : carried_bruck_seconds(facts, profile);
}

double blocking_agreement_seconds(const ExchangeFacts& facts, const MachineProfile& profile, bool lanes) {
  return lanes ? lanes_seconds(facts, profile, 0.0) : agreement_seconds(facts, profile, kPackedRecordBytes);
}

bool prefer_lanes(const ExchangeFacts& layout, const MachineProfile& profile) {
  if (layout.nodes < 2 || layout.max_ppn < 2 || !layout.equal_nodes()) return false;
  // One call of each kind: the carried exchange of 16-byte blocks (its case), and
  // records alone (a call with larger blocks), where lanes pay N - 1 messages of
  // a record each for Bruck's log2 P rounds: the pattern whose pair costs less.
  ExchangeFacts small = layout;
  small.uniform = true;
  small.max_block = small.min_block = 16;
  small.total_bytes = 16 * small.pairs();
  small.nonempty_blocks = small.pairs();
  small.max_rank_send = small.max_rank_recv = 16LL * (small.ranks - 1);
  small.max_rank_messages = small.ranks - 1;
  small.intra_node_bytes = 16LL * small.nodes * small.max_ppn * (small.max_ppn - 1);
  auto pair = [&](bool lanes) {
    return carried_seconds(small, profile, lanes) + blocking_agreement_seconds(layout, profile, lanes);
  };
  return pair(true) < pair(false);
}

int choose_carry_pattern(MPIX_Comm_s* comm) {
  int lanes = 0;
  if (comm->rank == 0 && lanes_apply(comm->locality)) {
    ExchangeFacts layout;
    layout.ranks = comm->size;
    layout.nodes = comm->locality.num_nodes();
    layout.max_ppn = layout.min_ppn = comm->locality.local_size();
    MachineProfile profile;
    std::string path, source;
    // A machine file that does not load leaves the built-in profile: the calls
    // that name it report why.
    if (lookup(nullptr, "mpix_machine_file", &path, &source) && load_machine_profile(path, &profile) != MPIX_SUCCESS)
      profile = MachineProfile{};
    lanes = prefer_lanes(layout, profile);
  }
  MPIX_TRY(collective_progressing(
      comm->lib_comm, "MPI_Bcast", [&] { return MPI_Bcast(&lanes, 1, MPI_INT, 0, comm->lib_comm); },
      [&](MPI_Request* request) { return MPI_Ibcast(&lanes, 1, MPI_INT, 0, comm->lib_comm, request); }));
  comm->carry_in_lanes = lanes != 0;
  return MPIX_SUCCESS;
}

}  // namespace mpix
