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
};

// This rank's part of the facts of `exchange` on a communicator with `locality`
// and `regions` (whose layout every rank knows: not agreed).
struct Exchange;
class Locality;
class Regions;
ExchangeFacts local_facts(const Exchange& exchange, const Locality& locality, const Regions& regions);

// Collective on comm->lib_comm. `all` receives: failed if any rank failed,
// algorithm and hints_hash set to -2 if the ranks differ, and the agreed facts.
int agree(MPIX_Comm_s* comm, const Agreement& mine, Agreement* all);

// Frees what agree() created for `comm` (MPIX_Comm_free).
void free_agreement(MPIX_Comm_s* comm);

}  // namespace mpix
