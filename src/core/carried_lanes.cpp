// The carried agreement in lanes (carried_agreement.hpp, CarriedAgreement), with
// its cost model and the choice of its pattern for a communicator.
//
// Three phases, each node alike (nodes of one size, ppn ranks):
// 1. Inside the node, Bruck's radix-2 rounds over the local ranks bring each
//    rank, its owner, the node's blocks for the ranks it sends to, with the
//    dissemination of the node's record.
// 2. Between nodes, the lanes: one message from each owner to the rank of the
//    same local rank on each node it serves, carrying the node's record and the
//    node's blocks for a group of that node's ranks.
// 3. Inside each group, Bruck's radix-2 rounds over its members spread what the
//    lanes brought, with the dissemination of the other nodes' records.
// With groups of one rank (lane_group 1) phase 3 is empty: that is the coalesced
// hierarchical TuNA at radix 2 (paper 000, Algorithm 3), N - 1 lane messages per
// rank. Groups of g ranks send (N - 1) / g lane messages per rank for log2(g)
// more rounds inside the node, which the model weighs (choose_lane_group): each
// message saved is a send and a receive overhead between nodes; the node's bytes
// between nodes are the same, each byte crosses once, so where the lanes are
// bound by the node's injection the groups save nothing (docs/performance.md,
// "Lane groups").
//
// The groups and their rows are topology/lane_groups.hpp's. Each node's record
// reaches each group once, so the sums stay exact.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "carried_agreement.hpp"
#include "carried_rounds.hpp"
#include "comm.hpp"
#include "error.hpp"
#include "info.hpp"
#include "../topology/lane_groups.hpp"
#include "progress.hpp"

namespace mpix {

namespace {

// The lane groups of a layout (topology/lane_groups.hpp), with phase 1's slots.
struct LaneSlots : LaneGroups {
  using LaneGroups::LaneGroups;
  // An owner's slots in phase 1: its own block, then its rows' blocks, row by
  // row, one per rank of its group.
  int width() const {
    const int last = ppn - first(ppn - 1);
    return 1 + std::max(rows(0, group) * group, rows(0, last) * last);
  }
  // The local rank, on node + *k (0: this node), whose block is `owner`'s slot
  // `s`; -1 where the slot holds none.
  int destination(int owner, int s, int* k) const {
    *k = 0;
    if (s == 0) return owner;
    const int size = this->size(owner), member = owner - first(owner);
    *k = offset(member, size, (s - 1) / size);
    return *k < nodes ? first(owner) + (s - 1) % size : -1;
  }
};

}  // namespace

int agree_in_lanes(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all, bool* delivered,
                   PlanStats* moved) {
  const Locality& locality = comm->locality;
  const int nodes = locality.num_nodes(), ppn = locality.local_size();
  const int node = locality.node(), local = locality.local_rank();
  const std::vector<int>& mates = locality.node_ranks(node);
  const MPI_Comm lib_comm = comm->lib_comm;
  const bool sized = !mine.facts.uniform;
  const LaneSlots groups(nodes, ppn, comm->lane_group);
  const int width = groups.width(), first = groups.first(local), group_size = groups.size(local);
  const int member = local - first, my_rows = groups.rows(member, group_size), most_rows = groups.rows(0, group_size);
  const Rotation widest{kCarriedBlockLimit, sized, nullptr, nullptr};

  // Phase 1's slots: j * width + s, owner local + j's slot s, until the rounds
  // bring there the block of local rank local - j for this rank's slot s.
  ScratchBuffer rotated;
  Rotation rotation = make_rotation(comm, blocks, sized, ppn * width, true, &rotated);
  // Phases 2 and 3's: (jp * most_rows + row) * ppn + j, the block that member
  // member - jp's lane of row `row` brought from local rank (its local rank - j)
  // of that node, for member member + jp, until phase 3 brings there those for
  // this member.
  auto arrival = [&](int jp, int row, int j) { return (jp * most_rows + row) * ppn + j; };
  ScratchBuffer arrived_blocks;
  Rotation arrivals = make_rotation(comm, blocks, sized, group_size * most_rows * ppn, false, &arrived_blocks);

  int most_blocks = 0;
  for (int distance = 1; distance < ppn; distance <<= 1)
    most_blocks = std::max(most_blocks, blocks_in_round(ppn, distance) * width);
  for (int distance = 1; distance < group_size; distance <<= 1)
    most_blocks = std::max(most_blocks, blocks_in_round(group_size, distance) * most_rows * ppn);
  const int batch = std::min(std::max(1, my_rows), std::max(1, comm->lane_batch));
  const std::size_t lane_room = kPackedRecordMaxBytes + widest.room(ppn * group_size);
  const std::size_t round_room = 2 * kPackedRecordMaxBytes + widest.room(most_blocks);
  ScratchBuffer outgoing = comm->scratch.acquire(std::max(round_room, (std::size_t)batch * lane_room));
  // What the rounds inside the node may bring (a round's message takes the room
  // of its slots, a lane message lane_room, whatever they bring).
  std::size_t all_rounds = (std::size_t)my_rows * lane_room;
  for (int distance = 1; distance < ppn; distance <<= 1)
    all_rounds += 2 * kPackedRecordMaxBytes + widest.room(blocks_in_round(ppn, distance) * width);
  for (int distance = 1; distance < group_size; distance <<= 1)
    all_rounds += 2 * kPackedRecordMaxBytes + widest.room(blocks_in_round(group_size, distance) * most_rows * ppn);
  Arrivals incoming(comm, blocks != nullptr,
                    blocks ? all_rounds : std::max(round_room, (std::size_t)batch * lane_room));
  moved->scratch_bytes = rotated.size() + arrived_blocks.size() + outgoing.size() + incoming.size();

  auto rank_at = [&](int k, int t) { return locality.node_ranks((node + k) % nodes)[t]; };
  if (blocks) {
    for (int j = 0; j < ppn; ++j)
      for (int s = 0; s < width; ++s) {
        int k = 0;
        const int t = groups.destination((local + j) % ppn, s, &k);
        if (t < 0) continue;
        MPIX_TRY(rotation.take(j * width + s, blocks->send.block(rank_at(k, t)), lib_comm));
      }
    // A slot larger than any block is never written to the receive buffer: those
    // no message fills stay so. The lanes bring this rank's own blocks without
    // their sizes, which it expects (on 8 nodes of 32 at 16 B, 32 of the 85 bytes
    // a lane message added to the blocks).
    if (sized) {
      std::fill(arrivals.sizes, arrivals.sizes + group_size * most_rows * ppn, (unsigned char)(kCarriedBlockLimit + 1));
      for (int row = 0; row < my_rows; ++row)
        for (int j = 0; j < ppn; ++j)
          arrivals.sizes[arrival(0, row, j)] =
              (unsigned char)blocks->recv
                  .block(rank_at(nodes - groups.offset(member, group_size, row), (local - j + ppn) % ppn))
                  .bytes();
    }
  }

  long long record[kRecordFields];
  encode_carried_record(mine, blocks != nullptr, comm->rank, comm->size, record);
  Dissemination node_records(ppn, record);
  const int tag = comm->next_blocking_tag();
  bool complete = blocks != nullptr;
  std::vector<int> chosen, expected, with_sizes;
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
  // One round of phase 1 or 3 with the local rank `to` and from `from`: `chosen`
  // out of `slots`, `expected` into them.
  auto round = [&](Rotation& slots, int distance, Dissemination& records, const long long* known, int to,
                   int from) {
    long long ours[2 * kRecordFields];
    const std::size_t records_out = write_records(ours, records.send(distance, ours), outgoing.data());
    sending = complete && !some_rank_declined(known);
    const std::size_t sent_bytes = records_out + (sending ? slots.write(chosen, outgoing.data() + records_out) : 0);
    ++moved->rounds;
    count_message(sent_bytes, block_bytes_of(slots));
    int received = 0;
    char* in = incoming.next();
    MPIX_TRY(exchange_round(lib_comm, outgoing.data(), sent_bytes, mates[to], in,
                            2 * kPackedRecordMaxBytes + widest.room((int)expected.size()), mates[from], tag,
                            &received));
    incoming.took((std::size_t)received);
    long long theirs[2 * kRecordFields];
    std::size_t records_in = 0;
    MPIX_TRY(read_records(in, received, records.receives(distance), mates[from], comm, theirs, &records_in));
    records.arrived(distance, theirs);
    complete = complete && slots.read(expected, in + records_in, received - (long long)records_in);
    return MPIX_SUCCESS;
  };

  // Phase 1. Slot j's owner is local + (the bits of j not yet moved) on both
  // sides of a round, so sender and receiver list the same slots.
  for (int distance = 1; distance < ppn; distance <<= 1) {
    auto slots_of = [&](int moved_bits, std::vector<int>* list) {
      list->clear();
      for (int j = 0; j < ppn; ++j) {
        if (!(j & distance)) continue;
        const int owner = (local + (j & ~moved_bits)) % ppn;
        for (int s = 0; s < width; ++s) {
          int k = 0;
          if (groups.destination(owner, s, &k) >= 0) list->push_back(j * width + s);
        }
      }
    };
    slots_of(distance - 1, &chosen);
    slots_of(2 * distance - 1, &expected);
    MPIX_TRY(round(rotation, distance, node_records, node_records.result(), (local + distance) % ppn,
                   (local - distance + ppn) % ppn));
  }
  // An alltoallv's lane message that brings no blocks, or blocks of other sizes
  // than this rank expects, leaves its slots marked as larger than any block, so
  // that none of them is written. Where every rank's checksums count right, such
  // a message means a rank declined or counts disagree, and the agreement says
  // so on every rank; so whether the blocks were delivered is decided by the
  // rounds inside the node and the agreed record, the same on every rank even
  // where the checksums missed a disagreement (chance about 2^-64).
  const bool complete_inside = complete;

  // Phase 2, in batches of at most lane_batch lanes. As in tuna_hier_coalesced's
  // inter-node phase, groups start at different rows, so that a batch's messages
  // leave a node for many nodes, not all for the next few (the partners have the
  // same local rank, so the same order).
  auto row_at = [&](int position) { return (position + local / groups.group) % my_rows; };
  long long known[kRecordFields], remote[kRecordFields];
  std::memcpy(known, node_records.result(), kRecordBytes);
  std::vector<MPI_Request> requests(2 * (std::size_t)batch);
  std::vector<MPI_Status> statuses(2 * (std::size_t)batch);
  for (int position = 0; position < my_rows; position += batch) {
    const int in_batch = std::min(batch, my_rows - position);
    ++moved->rounds;
    // `known` holds the records of this node and of the lanes' earlier batches.
    sending = complete && !some_rank_declined(known);
    char* landing = incoming.next();
    for (int b = 0; b < in_batch; ++b) {
      const int row = row_at(position + b), k = groups.offset(member, group_size, row);
      char* out = outgoing.data() + b * lane_room;
      const std::size_t record_bytes = write_records(node_records.result(), 1, out);
      chosen.clear();
      with_sizes.clear();
      for (int j = 0; j < ppn; ++j)
        for (int column = 0; column < group_size; ++column) {
          chosen.push_back(j * width + 1 + row * group_size + column);
          if (column != member) with_sizes.push_back(chosen.back());
        }
      const std::size_t sent_bytes =
          record_bytes + (sending ? rotation.write(chosen, out + record_bytes, with_sizes) : 0);
      count_message(sent_bytes, block_bytes_of(rotation));
      MPIX_CHECK_MPI(MPI_Irecv(landing + b * lane_room, (int)lane_room, MPI_BYTE, rank_at(nodes - k, local),
                               tag, lib_comm, &requests[2 * b]));
      MPIX_CHECK_MPI(
          MPI_Isend(out, (int)sent_bytes, MPI_BYTE, rank_at(k, local), tag, lib_comm, &requests[2 * b + 1]));
    }
    MPIX_TRY(wait_all_progressing(2 * in_batch, requests.data(), lib_comm, statuses.data()));
    incoming.took((std::size_t)in_batch * lane_room);
    for (int b = 0; b < in_batch; ++b) {
      const int row = row_at(position + b), k = groups.offset(member, group_size, row);
      int received = 0;
      MPIX_CHECK_MPI(MPI_Get_count(&statuses[2 * b], MPI_BYTE, &received));
      const char* in = landing + b * lane_room;
      long long theirs[kRecordFields];
      std::size_t record_bytes = 0;
      MPIX_TRY(read_records(in, received, 1, rank_at(nodes - k, local), comm, theirs, &record_bytes));
      combine_records(theirs, known);
      if (position + b == 0)
        std::memcpy(remote, theirs, kRecordBytes);
      else
        combine_records(theirs, remote);
      expected.clear();
      with_sizes.clear();
      for (int j = 0; j < ppn; ++j)
        for (int column = 0; column < group_size; ++column) {
          expected.push_back(arrival((column - member + group_size) % group_size, row, j));
          if (column != member) with_sizes.push_back(expected.back());
        }
      const bool fits =
          complete && arrivals.read(expected, in + record_bytes, received - (long long)record_bytes, with_sizes);
      if (!fits && blocks && sized)
        for (int j = 0; j < ppn; ++j) arrivals.sizes[arrival(0, row, j)] = (unsigned char)(kCarriedBlockLimit + 1);
      complete = complete && fits;
    }
  }

  // Phase 3. Slot jp's blocks came from member member - (the bits of jp already
  // moved), whose rows say which of its slots hold blocks.
  Dissemination group_records(group_size, remote);
  // `known`: this node's record and those the group has gathered so far.
  auto know_group = [&] {
    std::memcpy(known, node_records.result(), kRecordBytes);
    combine_records(group_records.result(), known);
  };
  for (int distance = 1; distance < group_size; distance <<= 1) {
    auto slots_of = [&](int moved_bits, std::vector<int>* list) {
      list->clear();
      for (int jp = 0; jp < group_size; ++jp) {
        if (!(jp & distance)) continue;
        const int source = (member - (jp & moved_bits) + group_size) % group_size;
        for (int row = 0; row < groups.rows(source, group_size); ++row)
          for (int j = 0; j < ppn; ++j) list->push_back(arrival(jp, row, j));
      }
    };
    slots_of(distance - 1, &chosen);
    slots_of(2 * distance - 1, &expected);
    know_group();
    MPIX_TRY(round(arrivals, distance, group_records, known, first + (member + distance) % group_size,
                   first + (member - distance + group_size) % group_size));
  }
  know_group();
  decode_carried_record(known, mine, all);
  *delivered = blocks_valid(sized ? complete_inside : complete, sized, *all);
  if (!*delivered) return MPIX_SUCCESS;
  for (int source = 0; source < comm->size; ++source) {
    const Block block = blocks->recv.block(source);
    const int t = locality.local_rank_of(source), k = (node - locality.node_of(source) + nodes) % nodes;
    const Rotation& holder = k == 0 ? rotation : arrivals;
    int slot = ((local - t + ppn) % ppn) * width;
    if (k > 0) {
      const int sender = (k - 1) % group_size, row = (k - 1) / group_size;
      slot = arrival((member - sender + group_size) % group_size, row, (first + sender - t + ppn) % ppn);
    }
    // As in agree_in_bruck_rounds: a block of another size than expected is not written.
    // A slot no message filled points nowhere (not written either).
    if (block.bytes() == holder.bytes(slot) && holder.slot(slot))
      MPIX_TRY(unpack_block(holder.slot(slot), block, lib_comm));
  }
  return MPIX_SUCCESS;
}

int most_lane_messages(int nodes, int ppn, int lane_group) { return LaneGroups(nodes, ppn, lane_group).most_rows(); }

bool lanes_apply(const Locality& locality) {
  return locality.num_nodes() > 1 && locality.local_size() > 1 && locality.uniform_nodes();
}

namespace {

// The rounds of agree_in_lanes with blocks of `block` bytes each (0: records
// alone), and the bytes it copies into *copied (Rotation). The counts are an average rank's,
// with the busiest rank's lanes beside them (LaneGroups::most_rows).
std::vector<RoundCost> lanes_rounds(const ExchangeFacts& facts, double block, int lane_group, double* copied) {
  const int ppn = facts.max_ppn, nodes = facts.nodes;
  const LaneGroups groups(nodes, ppn, lane_group);
  const int group = groups.group;
  std::vector<RoundCost> rounds;
  auto inside = [&](double bytes) {
    RoundCost round;
    round.intra = LevelCounts{1.0, kPackedRecordBytes + bytes};
    round.ranks = facts.ranks;
    round.nodes = nodes;
    rounds.push_back(round);
    *copied += bytes;  // into the round's message (Rotation)
  };
  *copied = rotation_copied_bytes(facts, block);
  // Phase 1: an owner's slots hold N blocks on average.
  for (int distance = 1; distance < ppn; distance <<= 1) inside((double)blocks_in_round(ppn, distance) * nodes * block);
  // Phase 2: a lane brings the receiver's own blocks without their sizes.
  const int lanes = nodes - 1;
  const double group_count = std::ceil((double)ppn / group);
  const double mean_rows = lanes * group_count / ppn, most_rows = groups.most_rows();
  const double lane_bytes = kPackedRecordBytes + ppn * group * block - (block > 0 && !facts.uniform ? ppn : 0.0);
  RoundCost round;
  round.rounds = std::ceil(most_rows / kLaneBatch);
  round.inter.messages = mean_rows / round.rounds;
  round.inter.bytes = mean_rows * lane_bytes / round.rounds;
  round.busiest_messages = most_rows / mean_rows;
  round.nic_sharers = ppn;
  round.ranks = facts.ranks;
  round.nodes = nodes;
  if (block > 0) round.busiest_bytes = std::max(round.busiest_messages, busiest_bytes_factor(facts, ppn));
  rounds.push_back(round);
  *copied += lanes * ppn * block;
  // Phase 3: a member holds its rows' blocks for every member of its group.
  for (int distance = 1; distance < group; distance <<= 1)
    inside((double)blocks_in_round(group, distance) * lanes / group * ppn * block);
  return rounds;
}

// A layout's facts with blocks of up to 16 bytes between every pair, the carried
// calls a pattern is chosen for: an alltoall's of 16 bytes, or (`sized`) an
// alltoallv's uniform in [0, 16], of 8 on average.
ExchangeFacts small_blocks(const ExchangeFacts& layout, bool sized) {
  ExchangeFacts small = layout;
  const long long mean = sized ? 8 : 16;
  small.uniform = !sized;
  small.max_block = 16;
  small.min_block = sized ? 0 : 16;
  small.total_bytes = mean * small.pairs();
  small.nonempty_blocks = small.pairs();
  small.max_rank_send = small.max_rank_recv = mean * (small.ranks - 1);
  small.max_rank_messages = small.ranks - 1;
  small.intra_node_bytes = mean * small.nodes * small.max_ppn * (small.max_ppn - 1);
  return small;
}

}  // namespace

double lanes_seconds(const ExchangeFacts& facts, const MachineProfile& profile, double block, int lane_group) {
  double copied = 0;
  const std::vector<RoundCost> rounds = lanes_rounds(facts, block, lane_group, &copied);
  // The collective's software overhead, as agreement_seconds charges the
  // dissemination, so that the two patterns compare on their messages alone.
  return rounds_seconds(rounds, profile) + copied / profile.copy_bandwidth + profile.collective_overhead;
}

int choose_lane_group(const ExchangeFacts& layout, const MachineProfile& profile) {
  if (layout.nodes < 2 || layout.max_ppn < 2 || !layout.equal_nodes()) return 0;
  // The group serves the carried calls, whose agreement is the whole call: an
  // alltoall's of 16-byte blocks and an alltoallv's of up to 16. Where the lanes
  // are bound by the node's injection, fewer lane messages save nothing and the
  // group's rounds cost (8 nodes of 32); where they are bound by their messages'
  // overheads, they save (32 nodes of 32). Among the groups within 1 % of the
  // fastest for those, the one whose agreement with records alone (a call with
  // larger blocks, whose exchange is most of its time) is cheapest.
  const ExchangeFacts alltoall = small_blocks(layout, false), alltoallv = small_blocks(layout, true);
  const int most = std::min(layout.max_ppn, layout.nodes - 1);
  std::vector<double> carried((std::size_t)most + 1);
  double fastest = 0;
  for (int lane_group = 1; lane_group <= most; ++lane_group) {
    carried[(std::size_t)lane_group] =
        carried_seconds(alltoall, profile, lane_group) + carried_seconds(alltoallv, profile, lane_group);
    if (lane_group == 1 || carried[(std::size_t)lane_group] < fastest) fastest = carried[(std::size_t)lane_group];
  }
  int best = 0;
  double cheapest = 0;
  for (int lane_group = 1; lane_group <= most; ++lane_group) {
    if (carried[(std::size_t)lane_group] > 1.01 * fastest) continue;
    const double records = blocking_agreement_seconds(layout, profile, lane_group);
    if (best == 0 || records < cheapest) {
      best = lane_group;
      cheapest = records;
    }
  }
  // Then the lanes against Bruck's rounds over all ranks, by one call of each
  // kind: the carried alltoall of 16-byte blocks, and records alone, where lanes
  // pay (N - 1) / g messages of a record each and log2 g rounds for Bruck's
  // log2 P rounds.
  auto pair = [&](int lane_group) {
    return carried_seconds(alltoall, profile, lane_group) + blocking_agreement_seconds(layout, profile, lane_group);
  };
  return pair(best) < pair(0) ? best : 0;
}

int choose_carry_pattern(MPIX_Comm_s* comm) {
  int lane_group = 0;
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
    lane_group = choose_lane_group(layout, profile);
  }
  MPIX_TRY(collective_progressing(
      comm->lib_comm, "MPI_Bcast", [&] { return MPI_Bcast(&lane_group, 1, MPI_INT, 0, comm->lib_comm); },
      [&](MPI_Request* request) { return MPI_Ibcast(&lane_group, 1, MPI_INT, 0, comm->lib_comm, request); }));
  comm->lane_group = lane_group;
  return MPIX_SUCCESS;
}

}  // namespace mpix
