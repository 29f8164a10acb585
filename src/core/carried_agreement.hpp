// The agreement of a blocking MPIX_Alltoall or MPIX_Alltoallv carried in the
// rounds of a radix-2 Bruck exchange (docs/user-guide.md, "A blocking call's
// agreement carries its blocks"; measured beforehand by bench/fused-agreement-probe).
//
// Round k of a radix-2 Bruck exchange sends to rank + 2^k and receives from
// rank - 2^k: the pattern of a dissemination allreduce, which depends on P alone.
// Every blocking call that does not run a kept plan makes its agreement this way,
// the agreement's records in front of each round's message, so no input can make
// ranks wait for different messages. The sums (bytes, checksums) are exact: where
// P is not a power of two, the last round brings the record of just the ranks not
// yet counted, built up in the earlier rounds (a second record in some of them).
//
// A rank whose own facts make the Bruck exchange `auto`'s choice for a first call
// (carries_blocks in dense.cpp) puts its blocks behind the records, an alltoallv's
// with a byte of size each (TuNA's radix-2 schedule with its sizes carried, as
// tuna_carried r=2). Where every rank did so and the agreement finds the call
// valid (no rank failed its checks, the same algorithm and hints, counts that
// agree, for alltoall one block size), the blocks have arrived when the agreement
// has: the call is done, at the cost of the exchange alone. Otherwise the blocks
// are dropped, nothing is written, and the call goes on as after any agreement.
//
// Every receive is posted for blocks of kCarriedBlockLimit bytes and a rank with
// a larger block, sent or received, sends its records alone, so no message
// outgrows its receive, whatever the ranks pass.
#pragma once
#include "agreement.hpp"
#include "model.hpp"

struct MPIX_Comm_s;

namespace mpix {

struct Exchange;

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
constexpr int kRecordFields = (int)(kRecordBytes / sizeof(long long));
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

// Collective on comm->lib_comm, in place of agree() for a blocking call. `mine`'s
// facts.uniform: an alltoall (blocks without sizes). `blocks`: this rank's
// checked exchange if it sends its blocks (every block, sent or received, of at
// most kCarriedBlockLimit bytes), else NULL. *delivered: every rank sent its
// blocks and the call is valid; the receive buffer holds the result. *moved: the
// rounds, messages and bytes this rank sent (blocks as payload; records and sizes
// as metadata) and the scratch it used.
int agree_in_bruck_rounds(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all,
                          bool* delivered, PlanStats* moved);

// The predicted time of agree_in_bruck_rounds with blocks: an agreement's
// (agreement_seconds: the same rounds with the record alone), the time the
// blocks' bytes add to each round, and the copies.
double carried_bruck_seconds(const ExchangeFacts& facts, const MachineProfile& profile);

}  // namespace mpix
