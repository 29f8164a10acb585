// A dense call's arguments (MPIX_Alltoall(v)[_plan], int and large-count forms): checked
// on the rank that gave them, before the agreement, and compared with the call a kept
// plan was made from (dense.cpp).
#pragma once

#include <string>

#include "comm.hpp"
#include "registry.hpp"
#include "select.hpp"

namespace mpix {

// The arguments of a dense call in the large-count form (MPI-4's _c functions:
// MPI_Count counts, MPI_Aint displacements); the int forms are converted to it.
struct DenseArgs {
  const char* name;  // of the API function, for messages
  Op op;
  const void* sendbuf;
  const MPI_Count* sendcounts;
  const MPI_Aint* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const MPI_Count* recvcounts;
  const MPI_Aint* rdispls;
  MPI_Datatype recvtype;
  MPI_Count sendcount = 0, recvcount = 0;  // alltoall
};

// Hints of one call, resolved on this rank.
struct Hints {
  const Algorithm* asked = nullptr;  // nullptr: auto
  Params params;
  std::string params_text;           // every parameter and hint the call may use, for the agreement
  bool check_args = false;
  const TuningTable* tuning = nullptr;  // auto with a tuning file
  const MachineProfile* profile = nullptr;
  bool plan_reuse = true;  // mpix_plan_reuse: a blocking call may run its previous plan again
  // mpix_early_start: 1 a blocking call starts its spread-out exchange before the
  // agreement wherever it can, -1 never (it may still start after it, where other
  // ranks started before it), 0 where the model says it pays (before_agreement.hpp).
  int early_start = 0;
};

// Local checks; fills the exchange and the hints. Everything that can fail on one
// rank alone is checked here, before the agreement.
int check_local(const DenseArgs& a, const MPIX_Info* info, MPIX_Comm_s* comm, Exchange* ex, Hints* hints);

// Whether data that a NULL buffer (MPI_BOTTOM) and absolute addresses place at
// [lowest, highest] lies in mapped memory above the first 64 KiB; otherwise the
// NULL is a mistake, refused rather than written (dense and SDDE calls alike).
bool bottom_addresses_mapped(long long lowest, long long highest);

bool same_layout(const TypeLayout& a, const TypeLayout& b);
bool same_side(const BufferSide& a, const BufferSide& b);

// Whether one side of the raw arguments `a` is `kept` again: the same buffer,
// counts, displacements and datatype layout (the plan-reuse shortcut, plan_reuse.hpp).
bool same_raw_side(const DenseArgs& a, bool send, const BufferSide& kept, MPI_Comm lib_comm);

// The registry index of the algorithm asked for (-1: auto) and the hash of every
// hint the call may use: compared between ranks (agreement) and between calls.
long long asked_index(const Hints& hints);
// FNV-1a: the same 62-bit value for the same text on every rank.
long long text_hash(const std::string& text);
long long hints_hash(const Hints& hints);

// Whether both buffers are host memory (plan reuse and the carried agreement need it).
bool host_buffers(const Exchange& ex);

// Every rank learns how many bytes each peer sends it and compares them with what
// it expects to receive (mpix_check_args=true, or the agreement found that counts
// disagree somewhere); fails, naming the pair, on every rank where they differ.
int check_counts_agree(const DenseArgs& a, const Exchange& ex, MPI_Comm comm, int* mismatch_peer);

}  // namespace mpix
