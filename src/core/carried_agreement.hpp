// The agreement of a blocking MPIX_Alltoall or MPIX_Alltoallv carried in the
// rounds of an exchange that can carry its blocks too (docs/user-guide.md, "A
// blocking call's agreement carries its blocks"; measured beforehand by
// bench/fused-agreement-probe).
//
// Round k of a radix-2 Bruck exchange sends to rank + 2^k and receives from
// rank - 2^k: the pattern of a dissemination allreduce, which depends on P alone.
// The lanes (below) run it inside each node, then send each node's record once
// to every other node. The pattern is the communicator's, fixed with its layout.
// Every blocking call that does not run a kept plan makes its agreement this way,
// the agreement's records in front of each round's message, so no input can make
// ranks wait for different messages. The sums (bytes, checksums) are exact: where
// P is not a power of two, the last round brings the record of just the ranks not
// yet counted, built up in the earlier rounds (a second record in some of them).
//
// A rank whose own facts make the Bruck exchange `auto`'s choice for a first call
// (choose_before_agreement, before_agreement.cpp) puts its blocks behind the records, an alltoallv's
// with a byte of size each (TuNA's radix-2 schedule with its sizes carried, as
// tuna_carried r=2; in lanes, as tuna_hier_coalesced r=2). Where every rank did so and the agreement finds the call
// valid (no rank failed its checks, the same algorithm and hints, counts that
// agree, for alltoall one block size), the blocks have arrived when the agreement
// has: the call is done, at the cost of the exchange alone. Otherwise the blocks
// are dropped, nothing is written, and the call goes on as after any agreement;
// a rank stops sending blocks in the round after it learns that they cannot all
// arrive (a message without them, or records that count a rank that sent none).
//
// Every receive is posted for blocks of kCarriedBlockLimit bytes and a rank with
// a larger block, sent or received, sends its records alone, so no message
// outgrows its receive, whatever the ranks pass.
#pragma once
#include <memory>

#include "agreement.hpp"
#include "model.hpp"

struct MPIX_Comm_s;

namespace mpix {

struct Exchange;
class Locality;

// Largest block a rank puts behind its record: 64 bytes keep a round's receive
// within P/2 x 64 bytes (32 KiB at P = 1024), and from there on the record's
// rounds are a small share of a Bruck exchange that other algorithms beat.
constexpr long long kCarriedBlockLimit = 64;

// The records of a dissemination allreduce whose sums count every rank once.
// In the round of distance d (1, 2, 4, ...) a rank sends to rank + d and receives
// from rank - d. After it, a rank holds its window, the record of the 2d ranks
// that end with it, and its remainder, that of the m mod 2d ranks that end with it,
// where top is the largest power of two below P and m = P - top. The last round
// (distance top) brings the m ranks before the top ones and no more: a plain
// dissemination would count some ranks twice there, which a maximum forgives and
// a sum does not. The remainder grows by a window wherever m has a bit: in the
// round of distance d, if m & d, by this rank's window of d ranks and the
// remainder (m mod d ranks) of the rank d before, so that round's message holds
// two records where that remainder is not empty.
class Dissemination {
 public:
  Dissemination(int ranks, const long long* own_record);
  // The records this rank sends in the round of `distance`, into `out` (room for
  // two); how many.
  int send(int distance, long long* out) const;
  int receives(int distance) const;  // records the round's message brings
  void arrived(int distance, const long long* in);
  const long long* result() const { return window_; }  // after the last round

 private:
  int excess() const { return ranks_ - top_; }
  int ranks_, top_ = 1;
  long long window_[kRecordFields], remainder_[kRecordFields];
  bool has_remainder_ = false;
};

// Lane messages a rank has in flight at once in agree_in_lanes (the default of
// MPIX_Comm_s::lane_batch): at 8, a layout of up to 9 nodes (in groups of one
// rank) sends them in one batch, and a larger one keeps SimGrid's waits short
// (a wait on 31,000 messages at P = 1024 took minutes to simulate).
constexpr int kLaneBatch = 8;

// Collective on comm->lib_comm, in place of agree() for a blocking call, in the
// communicator's pattern (choose_carry_pattern): Bruck's radix-2 rounds over all
// ranks, or the lanes. `mine`'s facts.uniform: an alltoall (blocks without
// sizes). `blocks`: this rank's checked exchange if it sends its blocks (every
// block, sent or received, of at most kCarriedBlockLimit bytes), else NULL.
// `mine` (read when the record leaves: at begin() in Bruck's rounds, in end() in
// the lanes) and `blocks` must stay until end().
//
// In steps, for a rank with work of its own while the rounds travel
// (Speculation::start posts its exchange between them): begin() sends the first
// round, progress() takes in the round in flight where it has arrived and sends
// the next, without waiting, and end() waits for the rest. Only Bruck's rounds go
// in steps; in the lanes, whose rounds have several messages each, end() makes the
// whole agreement. end(): *all, the agreed record; *delivered: every rank sent its
// blocks and the call is valid, the receive buffer holds the result; *moved: the
// rounds, messages and bytes this rank sent (blocks as payload; records and sizes
// as metadata) and the scratch it used. A failure in progress() is end()'s too.
class CarriedAgreement {
 public:
  CarriedAgreement(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks);
  ~CarriedAgreement();
  CarriedAgreement(const CarriedAgreement&) = delete;
  CarriedAgreement& operator=(const CarriedAgreement&) = delete;
  int begin();
  int progress();
  int end(Agreement* all, bool* delivered, PlanStats* moved);

 private:
  struct BruckRounds;
  MPIX_Comm_s* comm_;
  const Agreement& mine_;
  const Exchange* blocks_;
  PlanStats moved_;
  std::unique_ptr<BruckRounds> bruck_;
  int failed_ = 0;  // progress()'s failure
};

// The lanes (carried_lanes.cpp; TuNA's hierarchical schedule, coalesced, paper
// 000, with the agreement's records in it): Bruck's radix-2 rounds among the
// ranks of each node, with the dissemination of the node's record, then lane
// messages between ranks of the same local rank on different nodes, each
// carrying the node's record and the node's blocks for a group of lane_group
// ranks of the receiving node, then Bruck's rounds inside each group. With
// groups of one rank, one message per pair of nodes per local rank; with groups
// of g, (N - 1) / g per rank and log2 g more rounds inside the node. Each byte
// crosses the network once, where Bruck's rounds over all ranks send log2(N)
// rounds of half the blocks between nodes and cross a node boundary in most of
// the others. For nodes of one size (the lanes pair local ranks), of at least 2
// ranks, at least 2 of them.
bool lanes_apply(const Locality& locality);

// Collective on comm->lib_comm when its layout is set: the pattern of its
// blocking calls' agreement, comm->lane_group. Rank 0 decides (choose_lane_group,
// with the machine file of its environment, else the built-in profile) and tells
// the others, since the ranks' patterns must match before any agreement could
// compare their profiles.
int choose_carry_pattern(MPIX_Comm_s* comm);
// 0 (Bruck's rounds over all ranks), or the lanes' group size from 1 to
// min(ranks per node, N - 1), by the model (`profile`): the group whose carried
// calls of small blocks (an alltoall's of 16 B, an alltoallv's of up to 16 B)
// cost least, the cheapest call with records alone among those within 1 % of
// it; then the lanes where they and Bruck's rounds price a carried call of
// 16-byte blocks and a call with records alone together lower. 0 where the lanes
// do not apply. `layout`: P, nodes and ranks per node only.
int choose_lane_group(const ExchangeFacts& layout, const MachineProfile& profile);
// The lane messages of the busiest rank of nodes of `ppn` ranks in lane groups of
// `lane_group` (at most min(ppn, nodes - 1)).
int most_lane_messages(int nodes, int ppn, int lane_group);

// The predicted time of CarriedAgreement with blocks (of facts' mean size, or an
// alltoall's one size) in a pattern (`lane_group`: 0 for Bruck's rounds, else
// the lanes' group size): for Bruck's rounds an agreement's (agreement_seconds:
// the same rounds with the record alone), the time the blocks' bytes add to each
// round, and the copies.
double carried_seconds(const ExchangeFacts& facts, const MachineProfile& profile, int lane_group);
double carried_bruck_seconds(const ExchangeFacts& facts, const MachineProfile& profile);
// The predicted time of CarriedAgreement with records alone.
double blocking_agreement_seconds(const ExchangeFacts& facts, const MachineProfile& profile, int lane_group);

}  // namespace mpix
