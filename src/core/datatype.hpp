// What the library needs to know of an MPI datatype to move blocks of it: where a
// block lives, how many bytes it carries, and whether those bytes are one run in
// memory (then they can be copied or sliced directly, otherwise they are packed).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace mpix {

struct TypeLayout {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  long long size = 0;  // bytes of data in one element (MPI_Type_size)
  // The type map, in its order, is one gapless run of ascending addresses
  // (type_in_order); size == true_extent alone does not say so.
  bool in_order = false;

  // A block of `count` elements is one run of count*size bytes at true_lb, in the
  // order MPI packs them.
  bool contiguous(MPI_Count count) const {
    return in_order && true_extent == size && (count <= 1 || extent == size);
  }
  // Byte range [lo, hi) that `count` elements starting at byte offset 0 touch.
  // Element k starts k extents on, so with a negative extent (MPI allows one) the
  // later elements lie below the first.
  MPI_Aint span_lo(MPI_Count count) const {
    return count > 0 ? true_lb + std::min<MPI_Aint>(0, (MPI_Aint)(count - 1) * extent) : 0;
  }
  MPI_Aint span_hi(MPI_Count count) const {
    return count > 0 ? true_lb + std::max<MPI_Aint>(0, (MPI_Aint)(count - 1) * extent) + true_extent : 0;
  }
};

// Simulated time of local copies (docs/user-guide.md, "Simulation"). Every byte the
// library copies, packs, unpacks or rearranges goes through charge_copy: in the SMPI
// build (MPIX_SIMULATED) the calling rank's simulated clock advances by
// bytes / copy bandwidth, so that copies cost time although SMPI ignores the real
// CPU time between MPI calls; in other builds it is nothing. The bandwidth is
// MPIX_SIM_COPY_BANDWIDTH (bytes per second) or kDefaultCopyBandwidth.
constexpr double kDefaultCopyBandwidth = 10e9;
#ifdef MPIX_SIMULATED
void charge_copy(long long bytes);
// The copy bandwidth from the environment; MPIX_ERR_ARG for a malformed value
// (checked by MPIX_Comm_init, so that a typo is an error, not a silent default).
int copy_bandwidth_from_environment(double* bytes_per_second);
#else
inline void charge_copy(long long) {}
#endif

// Fills `layout`; MPIX_ERR_ARG naming `what` for MPI_DATATYPE_NULL.
int describe_type(MPI_Datatype type, const char* what, TypeLayout* layout);

// Whether the type map of `type`, in its order, is one gapless run of ascending
// addresses: then the bytes of [true_lb, true_lb + size) are what MPI_Pack makes of
// one element. A type whose size equals its true extent may still repeat or reorder
// its elements (an indexed type of ints at {0, 0, 2}: 12 bytes over 12, int 0 twice
// and int 1 never; {1, 0}: 8 over 8, swapped). Decided from the constructors
// (MPI_Type_get_contents); a combiner it does not follow (subarray, darray) or a
// failed query answers false, which costs a pack, never a wrong byte.
bool type_in_order(MPI_Datatype type);

// MPI datatypes owned by a plan or request, freed with it (unless MPI is finalized).
class OwnedTypes {
 public:
  OwnedTypes() = default;
  OwnedTypes(const OwnedTypes&) = delete;
  OwnedTypes& operator=(const OwnedTypes&) = delete;
  ~OwnedTypes();
  // Takes ownership of `type`.
  MPI_Datatype keep(MPI_Datatype type) {
    types_.push_back(type);
    return type;
  }
  // Replaces a committed derived *type by a duplicate that this object owns (the
  // same handle given twice, by the same duplicate); a named or uncommitted type
  // stays as it is. A persistent request packs with such copies: MPI lets a program
  // free a datatype that a communication still uses (MPI_Type_free: it completes
  // normally), and MPI's own persistent collectives keep working after it. `comm`:
  // one whose errors return.
  int own_copy(MPI_Datatype* type, MPI_Comm comm);

 private:
  std::vector<MPI_Datatype> types_;
  std::vector<std::pair<MPI_Datatype, MPI_Datatype>> copies_;  // (given, duplicate), also in types_
};

// MPIX_ERR_ARG naming `what` for a datatype that communication would refuse
// (uncommitted); `comm` is one whose errors return.
int check_committed(MPI_Datatype type, const char* what, MPI_Comm comm);

// One block of a buffer: `count` elements of `layout.type` at `base`.
struct Block {
  char* base = nullptr;
  MPI_Count count = 0;
  const TypeLayout* layout = nullptr;

  long long bytes() const { return (long long)count * layout->size; }
  bool contiguous() const { return layout->contiguous(count); }
  char* first_byte() const { return base + layout->true_lb; }
};

// Sending or receiving a non-contiguous block, MPI packs or unpacks it through a
// contiguous buffer (MPICH does): a copy of its bytes, charged by the library at
// every such send and receive it posts (SMPI moves derived datatypes for free).
inline void charge_mpi_pack(const Block& block) {
  if (!block.contiguous()) charge_copy(block.bytes());
}

// Packs `block` into `out` (count*size bytes); direct copy where contiguous. Any
// size: MPI_Pack's int sizes are worked around as in large_count.hpp.
int pack_block(const Block& block, char* out, MPI_Comm comm);
// Unpacks `block.bytes()` bytes from `in` into `block`.
int unpack_block(const char* in, const Block& block, MPI_Comm comm);
// Copies a block to another of the same type signature (the own block of an
// exchange), through `staging` (copy_staging_bytes of them, from the plan's
// scratch) when either side is not contiguous.
std::size_t copy_staging_bytes(const Block& from, const Block& to);
int copy_block(const Block& from, const Block& to, char* staging, MPI_Comm comm);
int copy_block(const Block& from, const Block& to, std::vector<char>& staging, MPI_Comm comm);

}  // namespace mpix
