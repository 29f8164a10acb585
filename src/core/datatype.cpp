#include "datatype.hpp"

#include <climits>
#include <cstring>

#include "error.hpp"

namespace mpix {

int describe_type(MPI_Datatype type, const char* what, TypeLayout* layout) {
  if (type == MPI_DATATYPE_NULL) return fail(MPIX_ERR_ARG, format("%s: MPI_DATATYPE_NULL", what));
  layout->type = type;
  MPIX_CHECK_MPI(MPI_Type_get_extent(type, &layout->lb, &layout->extent));
  MPIX_CHECK_MPI(MPI_Type_get_true_extent(type, &layout->true_lb, &layout->true_extent));
  MPI_Count size = 0;
  MPIX_CHECK_MPI(MPI_Type_size_x(type, &size));
  layout->size = size;
  return MPIX_SUCCESS;
}

int pack_block(const Block& block, char* out, MPI_Comm comm) {
  if (block.count == 0 || block.layout->size == 0) return MPIX_SUCCESS;
  if (block.contiguous()) {
    std::memcpy(out, block.first_byte(), block.bytes());
    return MPIX_SUCCESS;
  }
  if (block.bytes() > INT_MAX) return fail(MPIX_ERR_UNSUPPORTED, "a non-contiguous block over 2 GiB");
  int position = 0;
  MPIX_CHECK_MPI(MPI_Pack(block.base, block.count, block.layout->type, out, (int)block.bytes(),
                          &position, comm));
  return MPIX_SUCCESS;
}

int unpack_block(const char* in, const Block& block, MPI_Comm comm) {
  if (block.count == 0 || block.layout->size == 0) return MPIX_SUCCESS;
  if (block.contiguous()) {
    std::memcpy(block.first_byte(), in, block.bytes());
    return MPIX_SUCCESS;
  }
  if (block.bytes() > INT_MAX) return fail(MPIX_ERR_UNSUPPORTED, "a non-contiguous block over 2 GiB");
  int position = 0;
  MPIX_CHECK_MPI(MPI_Unpack(in, (int)block.bytes(), &position, block.base, block.count,
                            block.layout->type, comm));
  return MPIX_SUCCESS;
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
    std::memmove(to.first_byte(), from.first_byte(), from.bytes());
    return MPIX_SUCCESS;
  }
  MPIX_TRY(pack_block(from, staging, comm));
  return unpack_block(staging, to, comm);
}

}  // namespace mpix
