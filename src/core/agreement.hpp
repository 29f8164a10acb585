// The one agreement every dense call makes (one MPI_Allreduce on the library's
// communicator): whether any rank rejected its arguments, whether all ranks asked
// for the same algorithm and parameters, and the facts about the exchange that
// selection needs (model.hpp). One record per rank, reduced field by field with a
// maximum or a sum by an operation of the library's own; minima travel negated.
#pragma once
#include <mpi.h>

#include "model.hpp"

struct MPIX_Comm_s;

namespace mpix {

struct Agreement {
  bool failed = false;          // this rank's local checks failed
  long long algorithm = -1;     // registry index asked for; -1: auto
  long long hints_hash = 0;     // of every parameter and hint the call may use
  ExchangeFacts facts;          // this rank's part (sums and extremes are agreed)
  // count_checksum(): agreed, the wrapped sum over ranks, which is zero exactly when
  // every rank's send sizes match the receive sizes of their destinations (up to a
  // cancellation between two or more mismatches, of negligible probability).
  unsigned long long count_checksum = 0;
};

// This rank's part of the facts of `exchange` on a communicator with `locality`
// and `regions` (whose layout every rank knows: not agreed).
struct Exchange;
class Locality;
class Regions;
ExchangeFacts local_facts(const Exchange& exchange, const Locality& locality, const Regions& regions);

// This rank's part of the count checksum: sum over destinations t of
// send_bytes(t) * w(me, t), minus sum over sources o of recv_bytes(o) * w(o, me),
// modulo 2^64, with weights w(o, t) = h(o) * g(t) of odd pseudo-random h and g
// (cached per communicator). Summed over all ranks, each pair (o, t) contributes
// (sent - expected) * w(o, t), and an odd weight is invertible modulo 2^64, so one
// mismatched pair never sums to zero. It lets the one agreement find counts that
// disagree between ranks before any data moves, so that every rank fails together
// and no algorithm needs a round of its own to check the sizes it learns.
unsigned long long count_checksum(const Exchange& exchange, MPIX_Comm_s* comm);

// Collective on comm->lib_comm. `all` receives: failed if any rank failed,
// algorithm and hints_hash set to -2 if the ranks differ, and the agreed facts.
int agree(MPIX_Comm_s* comm, const Agreement& mine, Agreement* all);

// Frees what agree() created for `comm` (MPIX_Comm_free).
void free_agreement(MPIX_Comm_s* comm);

}  // namespace mpix
