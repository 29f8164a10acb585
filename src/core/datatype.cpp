#include "datatype.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "breakdown.hpp"
#include "error.hpp"
#include "large_count.hpp"

#ifdef MPIX_SIMULATED
#include <simgrid/actor.h>
#endif

namespace mpix {

#ifdef MPIX_SIMULATED
int copy_bandwidth_from_environment(double* bytes_per_second) {
  *bytes_per_second = kDefaultCopyBandwidth;
  const char* text = std::getenv("MPIX_SIM_COPY_BANDWIDTH");
  if (!text || !*text) return MPIX_SUCCESS;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0) || value > 1e18)
    return fail(MPIX_ERR_ARG, format("MPIX_SIM_COPY_BANDWIDTH=%s (environment): expected bytes per second, "
                                     "a number > 0 such as 10e9", text));
  *bytes_per_second = value;
  return MPIX_SUCCESS;
}

// A sleep of the calling simulated rank, as SMPI's own smpi_usleep() does it but
// without rounding to microseconds: SMPI's timer of real computation is stopped
// around it (smpi_bench_end/begin), so the charge is the same whether or not SMPI
// also times real computation (smpi/simulate-computation). A sleep rather than an
// execution (smpi_execute_benched) so that the charge does not depend on the
// platform's host speed or on how many ranks share a host's cores.
void charge_copy(long long bytes) {
  if (bytes <= 0) return;
  TimeScope copying(TimePhase::local_copy);
  // Read once per rank (SMPI's privatization gives each rank its own copy of the
  // program's statics); MPIX_Comm_init has rejected a malformed value already.
  static const double bandwidth = [] {
    double value = kDefaultCopyBandwidth;
    copy_bandwidth_from_environment(&value);
    return value;
  }();
  smpi_bench_end();
  sg_actor_sleep_for((double)bytes / bandwidth);
  smpi_bench_begin();
}
#endif

namespace {

// Decoding a derived type's constructors takes MPI calls and allocations per
// constructor, twice per exchange; the answer stays with the type as an attribute,
// which MPI deletes when the type is freed, so a handle MPI reuses never sees a stale one.
// Per rank (SMPI privatizes statics); created on first use, freed by MPI_Finalize.
int in_order_keyval() {
  static const int keyval = [] {
    int created = MPI_KEYVAL_INVALID;
    if (MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &created, nullptr) != MPI_SUCCESS)
      return (int)MPI_KEYVAL_INVALID;
    return created;
  }();
  return keyval;
}

bool cached_type_in_order(MPI_Datatype type) {
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  if (MPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) == MPI_SUCCESS &&
      combiner == MPI_COMBINER_NAMED)
    return true;
  const int keyval = in_order_keyval();
  if (keyval == MPI_KEYVAL_INVALID) return type_in_order(type);
  void* value = nullptr;
  int found = 0;
  if (MPI_Type_get_attr(type, keyval, &value, &found) == MPI_SUCCESS && found) return value == (void*)2;
  const bool in_order = type_in_order(type);
  MPI_Type_set_attr(type, keyval, in_order ? (void*)2 : (void*)1);
  return in_order;
}

}  // namespace

int describe_type(MPI_Datatype type, const char* what, TypeLayout* layout) {
  if (type == MPI_DATATYPE_NULL) return fail_as(MPI_ERR_TYPE, MPIX_ERR_ARG, format("%s: MPI_DATATYPE_NULL", what));
  layout->type = type;
  MPIX_CHECK_MPI(MPI_Type_get_extent(type, &layout->lb, &layout->extent));
  MPIX_CHECK_MPI(MPI_Type_get_true_extent(type, &layout->true_lb, &layout->true_extent));
  MPI_Count size = 0;
  MPIX_CHECK_MPI(MPI_Type_size_x(type, &size));
  layout->size = size;
  layout->in_order = layout->true_extent == size && cached_type_in_order(type);
  return MPIX_SUCCESS;
}

namespace {

// The arguments `type` was made with (MPI_Type_get_contents): its integers,
// addresses and, from MPI-4, large counts in one sequence, the order in which the
// int and the large-count constructors both list them (MPI-4.0, section 5.1.13),
// and its old types, the derived ones freed with it.
struct TypeContents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<long long> values;
  std::vector<MPI_Datatype> types;

  TypeContents() = default;
  TypeContents(const TypeContents&) = delete;
  TypeContents& operator=(const TypeContents&) = delete;
  ~TypeContents() {
    for (MPI_Datatype& old : types) {
      int integers = 0, addresses = 0, datatypes = 0, combiner = MPI_COMBINER_NAMED;
      if (MPI_Type_get_envelope(old, &integers, &addresses, &datatypes, &combiner) == MPI_SUCCESS &&
          combiner != MPI_COMBINER_NAMED)
        MPI_Type_free(&old);
    }
  }
};

bool decode(MPI_Datatype type, TypeContents* contents) {
#ifdef MPIX_HAVE_MPI_C_CALLS
  MPI_Count integers = 0, addresses = 0, large_counts = 0, datatypes = 0;
  if (MPI_Type_get_envelope_c(type, &integers, &addresses, &large_counts, &datatypes, &contents->combiner) !=
      MPI_SUCCESS)
    return false;
  if (contents->combiner == MPI_COMBINER_NAMED) return true;
  std::vector<int> ints((std::size_t)integers);
  std::vector<MPI_Aint> addrs((std::size_t)addresses);
  std::vector<MPI_Count> counts((std::size_t)large_counts);
  contents->types.resize((std::size_t)datatypes);
  if (MPI_Type_get_contents_c(type, integers, addresses, large_counts, datatypes, ints.data(), addrs.data(),
                              counts.data(), contents->types.data()) != MPI_SUCCESS) {
    contents->types.clear();
    return false;
  }
  // A constructor takes either ints and addresses or large counts.
  if (large_counts > 0 && integers + addresses > 0) return false;
  contents->values.assign(counts.begin(), counts.end());
#else
  int integers = 0, addresses = 0, datatypes = 0;
  if (MPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &contents->combiner) != MPI_SUCCESS)
    return false;
  if (contents->combiner == MPI_COMBINER_NAMED) return true;
  std::vector<int> ints((std::size_t)integers);
  std::vector<MPI_Aint> addrs((std::size_t)addresses);
  contents->types.resize((std::size_t)datatypes);
  if (MPI_Type_get_contents(type, integers, addresses, datatypes, ints.data(), addrs.data(),
                            contents->types.data()) != MPI_SUCCESS) {
    contents->types.clear();
    return false;
  }
#endif
  contents->values.insert(contents->values.end(), ints.begin(), ints.end());
  contents->values.insert(contents->values.end(), addrs.begin(), addrs.end());
  return true;
}

// Blocks of a type's map, in its order: `count` elements of `old`, the first at
// byte `displacement` of the type's origin, each next one extent(old) further.
// They make one ascending gapless run when every block does (its old type in
// order, and elements that abut: count <= 1 or extent == size) and each block
// starts where the one before it ended. Empty blocks take no place in the map.
class RunCheck {
 public:
  bool add(long long displacement, long long count, MPI_Datatype old) {
    if (count < 0) return false;
    // An indexed type's blocks share one old type: it is looked at once.
    if (old != old_.type && describe_type(old, "", &old_) != MPIX_SUCCESS) return false;
    if (count == 0 || old_.size == 0) return true;
    long long start = 0, bytes = 0;
    if (!old_.in_order || (count > 1 && old_.extent != old_.size) ||
        __builtin_add_overflow(displacement, (long long)old_.true_lb, &start) ||
        __builtin_mul_overflow(count, old_.size, &bytes))
      return false;
    if (any_ && start != end_) return false;
    any_ = true;
    return !__builtin_add_overflow(start, bytes, &end_);
  }

 private:
  TypeLayout old_;  // of the last old type seen
  bool any_ = false;
  long long end_ = 0;
};

long long extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  return MPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS ? (long long)extent : 0;
}

// Block `i` of a vector or indexed type whose displacements count extents of
// `old` (`in_extents`) or bytes.
bool add_scaled(RunCheck* run, long long displacement, bool in_extents, long long count, MPI_Datatype old) {
  long long bytes = displacement;
  if (in_extents && __builtin_mul_overflow(displacement, extent_of(old), &bytes)) return false;
  return run->add(bytes, count, old);
}

}  // namespace

bool type_in_order(MPI_Datatype type) {
  TypeContents c;
  if (!decode(type, &c)) return false;
  const std::vector<long long>& v = c.values;
  RunCheck run;
  switch (c.combiner) {
    case MPI_COMBINER_NAMED:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
      return true;
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // the same map, other bounds
      return c.types.size() == 1 && type_in_order(c.types[0]);
    case MPI_COMBINER_CONTIGUOUS:
      return v.size() == 1 && c.types.size() == 1 && run.add(0, v[0], c.types[0]);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {  // count, blocklength, stride
      if (v.size() != 3 || c.types.size() != 1) return false;
      // Blocks i and i + 1 are alike: the first two decide.
      const bool in_extents = c.combiner == MPI_COMBINER_VECTOR;
      for (long long i = 0; i < std::min(v[0], 2LL); ++i)
        if (!add_scaled(&run, i * v[2], in_extents, v[1], c.types[0])) return false;
      return v[0] >= 0;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {  // count, blocklengths[count], displacements[count]
      if (v.empty() || v[0] < 0 || v.size() != 1 + 2 * (std::size_t)v[0] || c.types.size() != 1) return false;
      const std::size_t count = (std::size_t)v[0];
      for (std::size_t i = 0; i < count; ++i)
        if (!add_scaled(&run, v[1 + count + i], c.combiner == MPI_COMBINER_INDEXED, v[1 + i], c.types[0]))
          return false;
      return true;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {  // count, blocklength, displacements[count]
      if (v.size() < 2 || v[0] < 0 || v.size() != 2 + (std::size_t)v[0] || c.types.size() != 1) return false;
      for (std::size_t i = 0; i < (std::size_t)v[0]; ++i)
        if (!add_scaled(&run, v[2 + i], c.combiner == MPI_COMBINER_INDEXED_BLOCK, v[1], c.types[0])) return false;
      return true;
    }
    case MPI_COMBINER_STRUCT: {  // count, blocklengths[count], displacements[count]; types[count]
      if (v.empty() || v[0] < 0 || v.size() != 1 + 2 * (std::size_t)v[0] || c.types.size() != (std::size_t)v[0])
        return false;
      const std::size_t count = (std::size_t)v[0];
      for (std::size_t i = 0; i < count; ++i)
        if (!run.add(v[1 + count + i], v[1 + i], c.types[i])) return false;
      return true;
    }
    default:  // subarray, darray, the deprecated Fortran-integer forms
      return false;
  }
}

// MPI has no query for "committed". Communicating with an uncommitted type fails
// only where data moves, on some ranks, and the others wait for ever (and at P = 1
// a local copy never notices); packing none of it is local and cheap, and MPICH
// and Open MPI refuse it there (MPI_ERR_TYPE), so that every rank learns of it
// through the call's agreement. An MPI whose MPI_Pack does not check passes.
static int pack_nothing(MPI_Datatype type, MPI_Comm comm) {
  char none = 0;
  int position = 0;
  return MPI_Pack(&none, 0, type, &none, 1, &position, comm);
}

// Whether `type` is derived, not one of MPI's named types.
static int is_derived(MPI_Datatype type, bool* derived) {
  int integers = 0, addresses = 0, datatypes = 0, combiner = MPI_COMBINER_NAMED;
  MPIX_CHECK_MPI(MPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner));
  *derived = combiner != MPI_COMBINER_NAMED;
  return MPIX_SUCCESS;
}

int check_committed(MPI_Datatype type, const char* what, MPI_Comm comm) {
  bool derived = false;
  MPIX_TRY(is_derived(type, &derived));
  if (!derived) return MPIX_SUCCESS;
  const int rc = pack_nothing(type, comm);
  if (rc == MPI_SUCCESS) return MPIX_SUCCESS;
  return fail_as(MPI_ERR_TYPE, MPIX_ERR_ARG,
                 format("%s: MPI refuses to use this datatype (%s); a derived datatype must be "
                        "committed with MPI_Type_commit before an exchange uses it",
                        what, mpi_reason(rc).c_str()));
}

OwnedTypes::~OwnedTypes() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Datatype& type : types_)
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
}

int OwnedTypes::own_copy(MPI_Datatype* type, MPI_Comm comm) {
  if (*type == MPI_DATATYPE_NULL) return MPIX_SUCCESS;  // the argument checks name it
  for (const auto& copy : copies_)
    if (copy.first == *type) {
      *type = copy.second;
      return MPIX_SUCCESS;
    }
  bool derived = false;
  MPIX_TRY(is_derived(*type, &derived));
  // An uncommitted type stays as it is, for check_committed to refuse: MPICH's
  // MPI_Type_dup returns a committed duplicate of it.
  if (!derived || pack_nothing(*type, comm) != MPI_SUCCESS) return MPIX_SUCCESS;
  MPI_Datatype duplicate = MPI_DATATYPE_NULL;
  MPIX_CHECK_MPI(MPI_Type_dup(*type, &duplicate));
  copies_.emplace_back(*type, keep(duplicate));
  *type = duplicate;
  return MPIX_SUCCESS;
}

namespace {

// MPI_Pack or MPI_Unpack of a non-contiguous block. Their packed size is an int:
// a larger block goes through MPI_Pack_c / MPI_Unpack_c where the MPI has them,
// else in runs of whole elements of at most int_limit bytes (packing is a byte
// copy of the data here, so runs packed one after another are the whole block).
int pack_or_unpack(bool pack, const Block& block, char* packed, MPI_Comm comm) {
  const MPI_Count bytes = block.bytes();
  MPI_Datatype type = block.layout->type;
  // MPI_BOTTOM (a null base, the type's addresses absolute): MPICH's MPI_Pack and
  // MPI_Unpack refuse a null buffer, so the block is given from its first byte,
  // with a type moved down by as much.
  if (!block.base && block.layout->true_lb != 0 && fits_int(bytes) && fits_int(block.count)) {
    int length = (int)block.count;
    MPI_Aint displacement = -(MPI_Aint)block.layout->true_lb;
    MPI_Datatype shifted = MPI_DATATYPE_NULL;
    MPIX_CHECK_MPI(MPI_Type_create_struct(1, &length, &displacement, &type, &shifted));
    int rc = MPI_Type_commit(&shifted);
    char* first = block.first_byte();
    int position = 0;
    if (rc == MPI_SUCCESS)
      rc = pack ? MPI_Pack(first, 1, shifted, packed, (int)bytes, &position, comm)
                : MPI_Unpack(packed, (int)bytes, &position, first, 1, shifted, comm);
    MPI_Type_free(&shifted);
    return rc == MPI_SUCCESS ? MPIX_SUCCESS : fail_mpi(rc, pack ? "MPI_Pack" : "MPI_Unpack");
  }
  if (fits_int(bytes)) {
    int position = 0;
    if (pack) MPIX_CHECK_MPI(MPI_Pack(block.base, (int)block.count, type, packed, (int)bytes, &position, comm));
    else MPIX_CHECK_MPI(MPI_Unpack(packed, (int)bytes, &position, block.base, (int)block.count, type, comm));
    return MPIX_SUCCESS;
  }
#ifdef MPIX_HAVE_MPI_C_CALLS
  if (large_count_policy().use_c_calls) {
    MPI_Count position = 0;
    if (pack) MPIX_CHECK_MPI(MPI_Pack_c(block.base, block.count, type, packed, bytes, &position, comm));
    else MPIX_CHECK_MPI(MPI_Unpack_c(packed, bytes, &position, block.base, block.count, type, comm));
    return MPIX_SUCCESS;
  }
#endif
  const MPI_Count per_run = large_count_policy().int_limit / block.layout->size;
  if (per_run == 0)
    return fail(MPIX_ERR_UNSUPPORTED, format("a non-contiguous datatype of %lld bytes per element: more than "
                                             "INT_MAX, and this MPI has no MPI_Pack_c", block.layout->size));
  for (MPI_Count first = 0; first < block.count; first += per_run) {
    Block run{block.base + first * block.layout->extent, std::min(per_run, block.count - first), block.layout};
    MPIX_TRY(pack_or_unpack(pack, run, packed + first * block.layout->size, comm));
  }
  return MPIX_SUCCESS;
}

}  // namespace

int pack_block(const Block& block, char* out, MPI_Comm comm) {
  if (block.count == 0 || block.layout->size == 0) return MPIX_SUCCESS;
  charge_copy(block.bytes());
  if (block.contiguous()) {
    std::memcpy(out, block.first_byte(), block.bytes());
    return MPIX_SUCCESS;
  }
  return pack_or_unpack(true, block, out, comm);
}

int unpack_block(const char* in, const Block& block, MPI_Comm comm) {
  if (block.count == 0 || block.layout->size == 0) return MPIX_SUCCESS;
  charge_copy(block.bytes());
  if (block.contiguous()) {
    std::memcpy(block.first_byte(), in, block.bytes());
    return MPIX_SUCCESS;
  }
  return pack_or_unpack(false, block, const_cast<char*>(in), comm);
}

std::size_t copy_staging_bytes(const Block& from, const Block& to) {
  return from.contiguous() && to.contiguous() ? 0 : (std::size_t)from.bytes();
}

int copy_block(const Block& from, const Block& to, std::vector<char>& staging, MPI_Comm comm) {
  staging.resize(copy_staging_bytes(from, to));
  return copy_block(from, to, staging.data(), comm);
}

int copy_block(const Block& from, const Block& to, char* staging, MPI_Comm comm) {
  if (from.bytes() != to.bytes())
    return fail(MPIX_ERR_ARG, format("own block: sending %lld bytes but receiving %lld bytes",
                                     from.bytes(), to.bytes()));
  if (from.bytes() == 0) return MPIX_SUCCESS;
  if (from.contiguous() && to.contiguous()) {
    charge_copy(from.bytes());
    std::memmove(to.first_byte(), from.first_byte(), from.bytes());
    return MPIX_SUCCESS;
  }
  MPIX_TRY(pack_block(from, staging, comm));
  return unpack_block(staging, to, comm);
}

}  // namespace mpix
