// The one shape every algorithm has (ARCHITECTURE.md): a plan is built once from
// an exchange description, then started and waited any number of times. Blocking
// calls are init + start + wait + free.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "datatype.hpp"
#include "mpix/mpix.h"

struct MPIX_Comm_s;

namespace mpix {

enum Op : unsigned {
  kAlltoall = 1u,
  kAlltoallv = 2u,
  kAlltoallCrs = 4u,
  kAlltoallvCrs = 8u,
};
const char* op_name(Op op);

// One side (send or receive) of a dense exchange: P blocks of one datatype. Counts
// and displacements are in elements, as in MPI, and as wide as MPI-4's large-count
// calls take them (MPI_Count, MPI_Aint), so that no block or offset is limited to int.
struct BufferSide {
  char* buf = nullptr;
  std::vector<MPI_Count> counts;
  std::vector<MPI_Aint> displs;
  TypeLayout layout;

  Block block(int peer) const { return Block{buf + displs[peer] * layout.extent, counts[peer], &layout}; }
  long long block_bytes(int peer) const { return (long long)counts[peer] * layout.size; }
  // The byte range [*lo, *hi), from buf, that the blocks with data touch; false
  // when no block has any.
  bool byte_span(MPI_Aint* lo, MPI_Aint* hi) const {
    bool any = false;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      if (block_bytes((int)i) == 0) continue;
      const MPI_Aint start = displs[i] * layout.extent;
      *lo = any ? std::min(*lo, start + layout.span_lo(counts[i])) : start + layout.span_lo(counts[i]);
      *hi = any ? std::max(*hi, start + layout.span_hi(counts[i])) : start + layout.span_hi(counts[i]);
      any = true;
    }
    return any;
  }
};

// A dense exchange: alltoall is the same description with `uniform` set, so an
// algorithm that profits from equal blocks (no metadata round) can use it.
struct Exchange {
  BufferSide send, recv;
  bool uniform = false;
  int size = 0, rank = 0;
  long long max_block_bytes = 0;  // over all ranks and blocks to other ranks (agreed at init)
};

// What one start of a plan does, counted as it runs (and, for init, what init did).
struct PlanStats {
  int rounds = 0;                   // communication rounds (a wait between them)
  long long messages = 0;           // payload messages sent to other ranks
  long long payload_bytes = 0;      // payload bytes sent to other ranks
  long long metadata_messages = 0;  // messages carrying block sizes or offsets
  long long metadata_bytes = 0;
  std::size_t scratch_bytes = 0;    // scratch held by the plan
};

class Plan {
 public:
  virtual ~Plan() = default;
  // Local: posts the first round. Resets `stats` first.
  virtual int start() = 0;
  // Drives the exchange to completion.
  virtual int wait() = 0;
  // Progresses without blocking: completes what has arrived and posts what follows
  // it (a rounds-based plan moves to its next round); *done once the exchange is
  // complete, as after wait().
  virtual int test(bool* done) = 0;

  // A plan whose messages carry one bit from every rank to every rank (every rank's
  // messages reach every other rank through the rounds, each message sent after
  // what its rank received before: Bruck's rounds) lets a repeated blocking call run
  // without the agreement (plan_reuse.hpp). start_carrying(changed) starts
  // an exchange whose messages carry the bit, OR-ed on the way; with `changed` this
  // rank's call is not the one the plan was made for, and the plan reads and writes
  // none of the user's buffers, it only sends and receives its messages. After the
  // wait, change_seen() is the OR of every rank's bit; while it is set, what the
  // receive buffer holds is undefined.
  virtual bool carries_change() const { return false; }
  virtual int start_carrying(bool /*changed*/) { return MPIX_ERR_UNSUPPORTED; }  // where it does not
  virtual bool change_seen() const { return false; }

  PlanStats stats;       // of the last start
  PlanStats init_stats;  // of init (for example a metadata exchange done once)
};

}  // namespace mpix
