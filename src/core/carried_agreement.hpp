// The agreement of a blocking MPIX_Alltoall carried in the rounds of a radix-2
// Bruck exchange (docs/user-guide.md, "A blocking alltoall's agreement carries its blocks";
// measured beforehand by bench/fused-agreement-probe).
//
// Round k of a radix-2 Bruck exchange sends to rank + 2^k and receives from
// rank - 2^k: the pattern of a dissemination allreduce, which depends on P alone.
// Every blocking MPIX_Alltoall that does not run a kept plan makes its agreement
// this way, the agreement's record in front of each round's message, so no input
// can make ranks wait for different messages. A rank whose own facts make the
// Bruck exchange `auto`'s choice for a first call (carries_blocks in dense.cpp)
// puts its blocks behind the record. Where every rank did so and the agreement
// finds the call valid (one block size everywhere, the same algorithm and hints,
// no rank failed its checks), the blocks have arrived when the agreement has: the
// call is done, at the cost of the exchange alone. Otherwise the blocks are
// dropped, nothing is written, and the call goes on as after any agreement.
//
// Every receive is posted for blocks of kCarriedBlockLimit bytes and a rank with
// larger blocks sends its record alone, so no message outgrows its receive, whatever
// the ranks pass. The record is reduced by maxima only (agreement.hpp); an
// alltoall's sums follow from its one block size.
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

// Collective on comm->lib_comm, in place of agree() for a blocking MPIX_Alltoall.
// `blocks`: this rank's checked exchange if it sends its blocks (every block of
// at most kCarriedBlockLimit bytes), else NULL. *delivered: every rank sent its
// blocks and the call is valid; the receive buffer holds the result.
int agree_in_bruck_rounds(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all,
                          bool* delivered);

// The predicted time of agree_in_bruck_rounds with blocks: an agreement's
// (agreement_seconds: the same rounds with the record alone), the time the
// blocks' bytes add to each round, and the copies.
double carried_bruck_seconds(const ExchangeFacts& facts, const MachineProfile& profile);

}  // namespace mpix
