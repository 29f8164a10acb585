// Pieces shared by the log-time and hierarchical exchanges (bruck.cpp,
// hierarchical.cpp, node_aware.cpp): byte runs and the messages made of them, the
// staging of non-contiguous user blocks, a plan that runs as a sequence of stages,
// and the TuNA core: a tunable-radix, two-phase, non-uniform Bruck exchange over
// any subset of the communicator's ranks (paper 000, section III, Algorithm 1),
// which the hierarchical exchanges run inside each node (section IV). The pieces
// are defined in stages.cpp, the TuNA core in bruck.cpp.
#pragma once
#include <mpi.h>

#include <climits>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "../core/breakdown.hpp"
#include "../core/plan.hpp"
#include "../core/registry.hpp"
#include "../core/scratch.hpp"
#include "../core/schedule.hpp"

namespace mpix {

// Tag offsets of these plans (each plan owns tag .. tag + 7).
enum BruckTag : int {
  kTagMetadata = 0,   // TuNA block sizes, at init
  kTagRound = 1,      // TuNA data rounds
  kTagInter = 2,      // inter-node phase of hierarchical TuNA
  kTagAggregate = 3,  // node-aware aggregation messages
  kTagAggregateMeta = 4,
  kTagGroupCore = 5,   // tuna_hier_coalesced's TuNA inside a lane group: its metadata here, its rounds at 6
  kTagGroupSizes = 7,  // the sizes of what the lanes bring for the group's other members, at init
};

// A run of bytes: where a piece of data is, or where it goes.
struct Piece {
  char* addr = nullptr;
  long long bytes = 0;
};

// A message made of pieces, sent or received without copying: one run as MPI_BYTE,
// several as an hindexed type of bytes on MPI_BOTTOM. Empty pieces are left out.
class PieceMessage {
 public:
  PieceMessage() = default;
  PieceMessage(const PieceMessage&) = delete;
  PieceMessage& operator=(const PieceMessage&) = delete;
  ~PieceMessage();

  int build(const std::vector<Piece>& pieces, int peer);
  // Nothing to move: no message is posted.
  bool empty() const { return message_.empty(); }
  long long bytes() const { return bytes_; }
  const Message& message() const { return message_; }

 private:
  TypeLayout layout_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  Message message_;
  long long bytes_ = 0;
};

// The blocks of one side of an exchange as runs of bytes: a contiguous block is its
// own run; a non-contiguous one gets a place in a staging buffer, packed there by
// pack() (send side, at start) or unpacked from there by unpack() (receive side,
// at the end of wait). Only the peers selected at init are covered.
class ByteSide {
 public:
  void init(const BufferSide& side, const std::vector<bool>& used, ScratchPool& pool);
  char* addr(int peer) const { return addr_[peer]; }
  Piece piece(int peer) const { return Piece{addr_[peer], side_->block_bytes(peer)}; }
  int pack(MPI_Comm comm) const;
  int unpack(MPI_Comm comm) const;
  std::size_t staging_bytes() const { return staging_.size(); }

 private:
  const BufferSide* side_ = nullptr;
  std::vector<char*> addr_;
  std::vector<int> staged_;  // peers whose block lives in the staging buffer
  ScratchBuffer staging_;
};

// One stage of a StagePlan: posts its requests (locally), then, once they are
// complete, finishes (copies, or a sub-plan's wait).
struct Stage {
  std::function<int(std::vector<MPI_Request>&)> post;
  std::function<int()> done;   // may be empty
  bool blocking_done = false;  // done() may block: run only where the plan may block (wait)
  // A later part of the previous stage's round (same peers): not a new round.
  bool continues_round = false;
  // What its posting, waiting and done() count as (breakdown.hpp).
  TimePhase phase = TimePhase::exchange;
  // A stage whose work is a sub-plan's (no requests of its own): advances it without
  // blocking, *complete once done() would not block, so that test() never waits.
  std::function<int(bool* complete)> poll = nullptr;  // may be empty
};

// A plan run as stages. start() posts stages up to the first that has requests
// (or whose done() may block); wait() does the rest, test() as much as it can
// without blocking. A stage with requests counts as a round.
class StagePlan : public Plan {
 public:
  int start() override;
  int wait() override;
  int test(bool* done) override;

 protected:
  std::vector<Stage> stages_;
  std::function<int()> before_start_, after_wait_;
  MPI_Comm stage_comm_ = MPI_COMM_NULL;  // of the requests, for error messages

 private:
  int advance(bool may_block);
  int progress(bool blocking, bool* done);
  std::size_t stage_ = 0;
  bool posted_ = false;
  bool round_counted_ = false;
  std::vector<MPI_Request> requests_;
};

// The change bit of a repeated blocking call (plan.hpp, start_carrying) where a
// plan's messages carry it: while `carrying`, every message starts with a word, the
// OR of the bits its sender has seen (its own included), and is sent even where it
// has no block to bring. A rank that has seen a change sends the word alone, since
// a changed rank's blocks may be in buffers of a call the plan was not made for.
// A receive is posted for the word and the blocks, and takes either; a rank whose
// own call changed (`mine`) receives into `discard`, not into its pieces (which may
// be in such buffers), before it has seen any word: so every message is received
// whole, whatever its sender knew.
struct ChangeBit {
  bool carrying = false;
  bool seen = false;
  bool mine = false;
  char* discard = nullptr;  // mine: room for the largest stage's receives
};

// A StagePlan whose messages can carry the change bit (plan.hpp, start_carrying):
// the bit of the running start, and the room a changed rank's receives go to.
class CarryingStagePlan : public StagePlan {
 public:
  int start() override;
  bool carries_change() const override { return carries_; }
  int start_carrying(bool changed) override;
  bool change_seen() const override { return bit_.seen; }

 protected:
  ChangeBit bit_;
  bool carries_ = false;
  long long discard_bytes_ = 0;  // set by a carrying plan: bit_.discard's size
  std::vector<char> discard_;    // only while a changed rank's call runs
};

// A message of a plan that can carry the change bit: `plain` as start() sends or
// receives it (not posted when empty); `flagged`, the word in front of the same
// pieces; the word alone, which a rank that has seen a change sends.
// The flagged message is built at its first carrying post, so that plans never
// run that way (persistent ones) make no second datatype.
class CarriedMessage {
 public:
  CarriedMessage() = default;
  CarriedMessage(const CarriedMessage&) = delete;
  CarriedMessage& operator=(const CarriedMessage&) = delete;

  int build(std::vector<Piece> pieces, int peer);
  // Posts the message as `bit` says, a send (counted into `stats`) or a receive;
  // *request stays MPI_REQUEST_NULL where nothing is posted (an empty plain message
  // while not carrying).
  // A receive of a changed rank goes to bit.discard + discard_at.
  int post(bool send, const ChangeBit& bit, Traffic& traffic, int tag_offset, PlanStats& stats,
           MPI_Request* request, long long discard_at = 0);
  // After a carrying receive completed: ORs the word it brought into `bit`.
  void received(ChangeBit* bit) const { bit->seen = bit->seen || word_ != 0; }
  bool empty() const { return plain_.empty(); }
  // Bytes of the message while carrying (the word and the blocks).
  long long carried_bytes() const { return (long long)sizeof word_ + plain_.bytes(); }

 private:
  PieceMessage plain_, flagged_;
  std::vector<Piece> pieces_;  // for flagged_, until it is built
  bool flagged_built_ = false;
  long long word_ = 0;  // sent, or received
  int peer_ = -1;
};

// Posts every receive of `recvs`, then every send of `sends`, as `bit` says
// (CarriedMessage::post); a changed rank's receives lie one after another in
// bit.discard. The requests posted are appended to `requests`.
int post_carried(const std::vector<std::unique_ptr<CarriedMessage>>& recvs,
                 const std::vector<std::unique_ptr<CarriedMessage>>& sends, const ChangeBit& bit, Traffic& traffic,
                 int tag_offset, PlanStats& stats, std::vector<MPI_Request>& requests);

// What the flat and hierarchical TuNA plans share: every block but the own one as
// byte runs of the user's buffers; before each start the non-contiguous send blocks
// are packed and the own block copied; after each wait the non-contiguous receive
// blocks are unpacked. A plan whose messages are CarriedMessages that reach every
// rank from every rank calls carry_change() at init: its repeated blocking calls
// then run without the agreement (plan_reuse.hpp).
class ByteExchangePlan : public CarryingStagePlan {
 protected:
  void init_sides(const PlanContext& context);
  // After init_sides: once a change is seen, the start's packing and own-block copy
  // and the wait's unpacking are left out (they touch the user's buffers).
  void carry_change();
  std::size_t side_staging_bytes() const { return send_.staging_bytes() + recv_.staging_bytes(); }

  Exchange ex_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  ByteSide send_, recv_;

 private:
  std::vector<char> own_staging_;
};

// The radix TuNA and Bruck use when the user leaves it to the library (paper 000,
// section V-A): 2 below 512 B per block (latency-bound), about sqrt(P) up to 8 KiB
// (the U-shaped middle), P above (bandwidth-bound).
// A block whose size a plan learned from metadata and that differs from what
// recvcounts gives (send and receive counts disagree between two ranks).
struct SizeMismatch {
  int source = -1;  // -1: none found on this rank
  long long announced = 0, expected = 0;
  void check(int from, long long announced_bytes, long long expected_bytes) {
    if (source >= 0 || announced_bytes == expected_bytes) return;
    source = from;
    announced = announced_bytes;
    expected = expected_bytes;
  }
};

// At init, before any data moves: MPIX_ERR_ARG if this rank found a mismatch,
// instead of receiving other bytes into a block. Local: the count checksum of the
// call's agreement (core/agreement.hpp) has already failed every rank for counts
// that disagree, so a mismatch here means two mismatches cancelled in it.
int report_size_mismatch(const SizeMismatch& mismatch, const char* algorithm, MPI_Comm comm);

// a mod q in 0..q-1, also for negative a (the rank at a distance behind).
int modulo(long long a, int q);

int default_radix(int ranks, long long max_block_bytes);

// Rounds of a radix-r Bruck over Q ranks: one per (x, z) with z r^x < Q.
int bruck_rounds(int ranks, int radix);
// Slots of TuNA's temporary buffer T (section III-C): B = Q - (K + 1).
int tuna_temp_blocks(int ranks, int radix);

// The most T may take beyond the B slots of the tight schedule for its rounds to
// be one message each: 64 MiB, as tuna_carried's round buffers (a decision: past
// it the blocks are large, where a message more per round costs little against
// their bytes, and memory may be short).
constexpr double kTunaOnePartRoom = 64.0 * 1024 * 1024;

// No limit (tuna_rounds' room or eager_bytes).
constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// What the TuNA core exchanges. Members are ranks of `comm`; member i's block for
// member t is made of pieces[t] pieces (one for a flat exchange; one per
// destination rank routed through t in the hierarchical exchanges).
struct BruckSetup {
  MPI_Comm comm = MPI_COMM_NULL;
  int tag = 0;
  std::vector<int> members;  // ranks in comm, in member order
  int me = 0;                // this rank's index in members
  int radix = 2;
  // >= 0: every piece everywhere has this many bytes (uniform Bruck: no metadata).
  // < 0: the sizes travel in a metadata exchange at init (TuNA).
  long long uniform_bytes = -1;
  long long max_piece = 0;          // M: no piece anywhere is larger
  std::vector<int> pieces;          // by target member
  std::vector<std::vector<Piece>> out;  // [t][k]: this rank's data for member t (t != me)
  double one_part_room = kTunaOnePartRoom;  // tuna_one_part's room for T (see there)
  // The machine profile's eager limit (tuna_rounds), for exchanges whose rounds
  // cross nodes (bruck, tuna; not the hierarchical TuNAs, see there). Every member
  // runs one schedule: all take it from the call's profile, whose text the
  // agreement compares.
  double eager_bytes = kNoLimit;
  // A block's bytes in a round's message as the agreed facts expect them (the
  // mean; for blocks of pieces, all its pieces): the same on every member.
  double block_bytes = 0;
};

// Where T's blocks live (section III-C), as a schedule that depends only on the
// member count and the radix, so every member computes the same one. The paper's
// T has B = Q - (K + 1) slots: one per block that is not direct (two or more
// non-zero digits).
//
// The paper gives each such block its own slot, t = o - 1 - dx (r - 1) - dz. That
// is enough only if a round's sends are finished before its receives land (the
// paper's code packs the outgoing blocks into a separate send buffer first, and
// receives into another: 2 r^(w-1) blocks of room besides T). Here the rounds are
// zero-copy: blocks leave from T and arrive into T in the same non-blocking round,
// so a block that moves on while another with the same index arrives to stay
// (three or more non-zero digits, r < sqrt(Q)) needs its slot twice, and no fixed
// mapping fits in B slots (P = 8, r = 2 needs 5 of 4). So slots are handed out
// from a free list, blocks that leave T placed first, and where a round's staying
// arrivals outnumber the free slots, either
// - (`one_part`, what plans run unless that would take more than kTunaOnePartRoom
//   bytes more than B slots: tuna_one_part) T gets one more slot: every round is one
//   message. T then holds at most B + 2 r^(w-1) slots, the paper's code's T and
//   round buffers (tests check that for every Q <= 70 and radix, and up to Q =
//   1024 for radices 2-8, sqrt Q and above); in those cases at most 1.43 B (Q =
//   1024, r = 2; at Q = 64, r = 2, 73 slots for B = 57, where the 12 messages of
//   the rounds in parts become 6). Except (`eager_blocks`, tuna_rounds) a round
//   whose one message would carry more blocks than an eager message holds (past
//   the MPI library's eager limit its send waits for the receive: a rendezvous)
//   while each of its parts would not: that round goes in parts, below the limit,
//   and its parts' messages cost less than the wait (in simulation, the dragonfly
//   as 64 nodes of 1, `bruck` r = 4 at 4 KiB: 136.1 us in parts, in
//   bench/results/unseen-dragonfly-ppn1.csv, where the row of commit 8a117f5 has
//   158.4 in one message, and the strongest peer, peer:ialltoallv, 38.3; three of
//   its nine rounds are 16 blocks = 64 KiB, 13 and 3 in parts); or
// - the round is split into parts, and T stays exactly B slots: part 0 carries
//   every block that needs no free slot and as many as fit; part j + 1 the next
//   ones, into the slots that the sends of parts <= j vacated. All of a round's
//   sends are posted with part 0; the receive of part j + 1 is posted once the
//   sends of part j are complete, so the parts cannot deadlock (part 0's receives
//   wait for nothing), but each costs a message and that wait: in simulation
//   (fattree, 64 nodes of 1, 256 B) a persistent `bruck` r = 2 took 24.8 us in
//   parts, 17.2 in one part each round (bench/results/blocking-persistent-bruck-
//   ppn1.txt; SMPI's own Bruck 12.4). Should a case ever lack a free slot with
//   nothing left to free, one more slot is added rather than failing (the
//   schedule test would catch it).
struct TunaSchedule {
  struct Hop {
    int index = 0;      // relative block index i (digit x is z)
    int part = 0;       // which message of the round carries it
    int from_slot = -1; // T slot it leaves from; -1: from the send buffer
    int to_slot = -1;   // T slot it arrives into; -1: it has arrived (final)
  };
  struct Round {
    int distance = 0, pw = 1, parts = 1;
    // The most blocks a part carries where the round needs parts in T's slots (it
    // went in parts, or T took slots more for one message); 0 where it needs none.
    int split_largest = 0;
    std::vector<Hop> hops;  // by part, then index
  };
  std::vector<Round> rounds;
  int slots = 0;
};
TunaSchedule tuna_schedule(int ranks, int radix, bool one_part = false, int eager_blocks = INT_MAX);

// T's slots with one message per round (tuna_schedule with one_part).
int tuna_one_part_slots(int ranks, int radix);
// Whether the plans of Q = `ranks` members at `radix`, whose T slots hold
// `slot_bytes` each, run one message per round (T within `room` bytes more than
// B slots).
bool tuna_one_part(int ranks, int radix, double slot_bytes, double room = kTunaOnePartRoom);
// How the plans run their rounds (tuna_schedule's arguments): one message per
// round if tuna_one_part (T's slots of `slot_bytes`, the largest block), but where
// that message would reach `eager_bytes` and the round's parts would each stay
// below it (eager_blocks: the most blocks of `block_bytes` below the limit). A
// round's message is counted with blocks of the mean size (block_bytes, from the
// agreed facts, so that every member runs one schedule): for blocks of varied
// sizes the messages of a round vary about it, and the largest block would count
// a round of 256 blocks of 0-256 B (32 KiB, eager) as past a 64 KiB limit.
struct TunaRounds {
  bool one_part = true;
  int eager_blocks = INT_MAX;
};
TunaRounds tuna_rounds(int ranks, int radix, double slot_bytes, double block_bytes, double room, double eager_bytes);
// The room the communicator's plans give (MPIX_Comm_s::tuna_one_part_room).
double tuna_one_part_room(const MPIX_Comm_s* comm);

// The cost model's view of the TuNA core over `members` ranks of a node-ordered
// communicator: every round of the schedule its plans run (tuna_rounds, with
// slots of `pieces` x facts.max_block, blocks of `block_bytes`, `room` and
// `eager_bytes`; kNoLimit for both: one message per round, as tuna_carried's own
// round buffers) moves its blocks of `block_bytes` (in
// `pieces` pieces) in one message per part; with `metadata`, each
// round also sends the pieces' sizes once, at init. `intra_only`: the members are
// one node's ranks; else rounds whose distance crosses a node boundary (for
// consecutive ranks on nodes of facts.max_ppn) cost an inter-node message. Every
// byte a round sends is copied twice (TunaCore packs each forwarded block into the
// round's message and copies each arriving one out of its slot: the breakdown's
// local copies, e.g. 16.6 KB for tuna r = 2 at P = 256, 16 B, against 2 x 1024
// block-hops x 8 B). The schedule's shape is computed once per (members, radix) and kept,
// and once more per eager limit that splits one of its rounds (tuna_shape).
void add_tuna_rounds(Cost* cost, const ExchangeFacts& facts, int members, int radix, double block_bytes,
                     int pieces, bool intra_only, bool metadata, double room, double eager_bytes);

// The TuNA core. Rounds (x, z) for x < w = ceil(log_r Q), 1 <= z < r, z r^x < Q:
// slot i (the block for member me + i, by the index array: no data rotation) goes to
// member me + z r^x when digit x of i is z. A block arriving where it belongs goes to
// its final place; one still travelling goes into T (slots of max_piece bytes per
// piece, placed by tuna_schedule(); one message per round where tuna_one_part).
class TunaCore {
 public:
  TunaCore() = default;
  TunaCore(const TunaCore&) = delete;
  TunaCore& operator=(const TunaCore&) = delete;

  // Collective over the members when sizes travel: runs the K metadata rounds and
  // learns the size of every piece that will pass through this rank.
  int plan(BruckSetup setup, PlanStats* init_stats);
  // Bytes of piece k from member `origin` to this rank (after plan()).
  long long arriving_bytes(int origin, int k) const { return arriving_[origin][k]; }
  int pieces_for_me() const { return setup_.pieces[setup_.me]; }
  // Where arriving pieces go: in[origin][k] (origin != me), with the bytes the
  // receiver declares. Allocates T; builds the messages.
  int bind(const std::vector<std::vector<Piece>>& in, ScratchPool& pool);

  int rounds() const { return (int)rounds_.size(); }
  std::size_t scratch_bytes() const { return temp_.size(); }
  // The longest receive of a stage while carrying the change bit (after bind()).
  long long max_carried_receive() const;
  // Appends one stage per part of every round to `stages`, counting into `*stats`;
  // their time counts as `phase`. Their messages carry `*bit` while it is carrying:
  // the rounds reach every member from every member (the path from j to i takes one
  // round per non-zero radix-r digit of i - j, in the order the rounds run), so
  // after the last one every member has the OR of all members' bits.
  void add_stages(std::vector<Stage>* stages, PlanStats* stats, ChangeBit* bit,
                  TimePhase phase = TimePhase::exchange);

 private:
  struct Out {  // a piece leaving in a round
    int index, k, part, from_slot;
    long long bytes;
  };
  struct In {  // a piece arriving in a round
    int index, origin, k, part, to_slot;
    long long bytes;
  };
  struct Part {
    std::unique_ptr<CarriedMessage> send, recv;
    MPI_Request send_request = MPI_REQUEST_NULL;  // posted with part 0
  };
  struct Round {
    int send_peer = -1, recv_peer = -1;  // ranks in comm
    std::vector<Out> outs;
    std::vector<In> ins;
    std::vector<Part> parts;
  };
  int post(int round, int part, std::vector<MPI_Request>& requests, PlanStats& stats, const ChangeBit& bit);
  char* temp_piece(int slot, int k) const;

  BruckSetup setup_;
  int q_ = 0, radix_ = 2, temp_slots_ = 0, max_pieces_ = 0;
  std::vector<Round> rounds_;
  std::vector<std::vector<long long>> arriving_;  // [origin][k]
  ScratchBuffer temp_;
};

}  // namespace mpix
