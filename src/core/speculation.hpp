// A blocking MPIX_Alltoall(v)'s direct exchange started before its agreement.
//
// Every blocking call agrees before it moves data, so that bad input fails on every
// rank (agreement.hpp). Where the exchange is direct, the agreement's log P rounds
// come on top of it: on 2 nodes of 32 at 1 KiB, 5 % of the call; on a network of
// 10-20 us links, a third or more. An alltoall's facts are the same on every rank of
// a valid call (one block size everywhere), so each rank can choose from its own what
// the agreement would; an alltoallv's rank chooses from its own facts taken for every
// rank's, which is near where the blocks are alike. Where that choice is the
// spread-out exchange (`nonblocking`, all receives and sends posted at once), the
// rank posts it before the agreement, whose rounds then overlap its messages (or,
// where the posting is as long as the exchange, go between them: `agreement` in
// start()). The
// agreement counts the ranks that did (Agreement::speculated), and those that
// could not have (Agreement::unready; a rank could where its own facts chose
// otherwise, or it has no message to start). Where every rank could and the call
// is valid, the exchange
// is the call: the ranks that did not start it start it now, after the agreement
// (their peers' messages wait for them), and its receives and sends are waited
// for and the own block copied. So ranks whose own facts decide differently (an
// alltoallv's, near where the model's choice changes) pay no cleanup.
//
// Otherwise (some rank's arguments are bad, or it could not start: a block of
// 1 MiB or more, in place, device buffers, another algorithm named) every message
// any rank started is received exactly once, and none is ever longer than its
// receive: each goes under the tag of its length (MPIX_Comm_s::speculation_tag_base
// + bytes), which only a receive of that length was posted with. (A truncated
// receive is no safe way out: Open MPI 4.1's shared-memory transport writes a
// longer message past the end of the receive buffer.) An alltoall of the bytes
// each rank sent each other rank tells each receiver which of its receives will be
// matched (the others are cancelled) and which messages no receive of its own
// matches (received into scratch of their length), and a barrier keeps every rank
// in the call until every rank's dead receives are cancelled. Nothing stays in
// flight, and the call goes on as after any agreement: it fails on every rank, or
// runs the agreed plan, which rewrites every receive block. Only that path pays
// the alltoall, the cancels, the scratch and the barrier. An erroneous call may so
// have written its receive blocks, which MPI leaves undefined after an error;
// never past them.
#pragma once
#include <mpi.h>

#include <vector>

#include "dense_args.hpp"

struct MPIX_Comm_s;

namespace mpix {

class CarriedAgreement;

// Whether this rank may start an exchange of blocks of `block_bytes` before its
// agreement: the communicator has their tag (and the tests did not forbid it).
bool may_speculate(const MPIX_Comm_s* comm, long long block_bytes);

class Speculation {
 public:
  Speculation() = default;
  Speculation(const Speculation&) = delete;
  Speculation& operator=(const Speculation&) = delete;
  // Posts every receive (from rank - i, i = 1, 2, ...) and then every send (to
  // rank + i) of `ex`'s non-empty blocks on comm's library communicator, each
  // under the tag of its length. `agreement`, begun: moved on after every
  // `every` messages posted, so that its rounds travel while the rank posts.
  int start(const Exchange& ex, MPIX_Comm_s* comm, CarriedAgreement* agreement = nullptr, int every = 0);
  // Whether any message was posted (a failed start may have posted some).
  bool started() const { return !posted_.empty(); }
  // Every rank started, or could (none is Agreement::unready: such a rank calls
  // start first), and the call is valid: waits for the messages and copies the own
  // block of `ex`.
  int finish(const Exchange& ex, MPIX_Comm_s* comm);
  // Otherwise, on every rank (some rank started: the agreement's count): completes
  // every message any rank started, as above. Returns an MPIX code of an MPI
  // failure.
  int abandon(MPIX_Comm_s* comm);

 private:
  struct Posted {
    int peer;
    bool send;
    long long bytes;
  };
  std::vector<Posted> posted_;
  std::vector<MPI_Request> requests_;  // one per posted_
};

}  // namespace mpix
