// Counts of any size (issue 11, API.md "Large counts"). MPI's classic calls take
// int counts, so a block of more than INT_MAX elements (2 GiB of MPI_BYTE) needs
// either MPI-4's large-count calls (MPI_Isend_c, MPI_Ialltoallv_c, MPI_Pack_c; MPICH
// 4 has them) or, where the MPI is older (Open MPI 4.1, SMPI), a derived datatype
// that holds `count` elements as one (the method of Hammond et al., "To INT_MAX...
// and beyond!", ExaMPI 2014). Every plan moves its blocks through the functions
// here; no algorithm calls MPI_Isend/MPI_Irecv with a block's count itself.
#pragma once
#include <mpi.h>

#include <vector>

#include "datatype.hpp"
#include "plan.hpp"

namespace mpix {

// Whether this MPI declares MPI-4's large-count (_c) functions (MPI_VERSION >= 4;
// the simulated build's SMPI is MPI 3).
#if defined(MPI_VERSION) && MPI_VERSION >= 4 && !defined(MPIX_SIMULATED)
#define MPIX_HAVE_MPI_C_CALLS 1
constexpr bool kMpiHasLargeCountCalls = true;
#else
constexpr bool kMpiHasLargeCountCalls = false;
#endif

// How counts beyond int are moved. `int_limit` is the largest count passed to an
// int-count MPI call (INT_MAX); `use_c_calls` chooses MPI's _c functions over
// derived datatypes where the MPI has them. Tests lower the limit and switch the
// calls off to run every large-count path with small buffers (tests/
// test_largecount.cpp); nothing else changes them.
struct LargeCountPolicy {
  MPI_Count int_limit;
  bool use_c_calls;
};
LargeCountPolicy& large_count_policy();
// Whether a count or displacement may be passed to an int-count MPI call.
inline bool fits_int(MPI_Count value) {
  const MPI_Count limit = large_count_policy().int_limit;
  return value >= -limit && value <= limit;
}

// A committed datatype equal to `count` elements of `type` (same type signature,
// lb of `type`, extent count * extent), for a count beyond int; free it with
// MPI_Type_free (MPI lets a posted operation finish with a freed type).
int make_count_type(MPI_Datatype type, MPI_Count count, MPI_Datatype* out);

// Point-to-point of one block of any count.
int isend_block(const Block& block, int peer, int tag, MPI_Comm comm, MPI_Request* request);
int irecv_block(const Block& block, int peer, int tag, MPI_Comm comm, MPI_Request* request);

// Whether MPI's int alltoall(v) takes this rank's side of `ex`: every count and
// (alltoallv) displacement fits an int.
bool fits_int_calls(const Exchange& ex);

// MPI's own alltoall(v) of an exchange's blocks, for any counts: the int calls where
// every count and displacement fits, else MPI_Ialltoall(v)_c, else
// MPI_Ialltoallw over one datatype per block at the block's absolute address
// (MPI_BOTTOM), built once by prepare(). Nonblocking with a request; with
// `request` NULL the blocking int call, which MPI libraries run faster than a
// nonblocking collective and its wait (MPICH 4.0 at 2 ranks: 1.24 against 1.67 us
// at 16 B, bench/results/real-loop-mpich-np2.txt), and which only the int calls have (the caller makes sure that every
// rank makes it: the forms do not interoperate).
class MpiAlltoall {
 public:
  int prepare(const Exchange& ex);
  int post(const Exchange& ex, MPI_Comm comm, MPI_Request* request) const;

 private:
  enum class Call { ints, c_calls, datatypes };
  Call call_ = Call::ints;
  std::vector<int> int_counts_[2], int_displs_[2];  // [0] send, [1] receive
  std::vector<int> ones_, zeros_;
  std::vector<MPI_Datatype> block_types_[2];
  OwnedTypes owned_;
};

}  // namespace mpix
