#include "large_count.hpp"

#include <climits>

#include "error.hpp"

namespace mpix {

LargeCountPolicy& large_count_policy() {
  static LargeCountPolicy policy{INT_MAX, kMpiHasLargeCountCalls};
  return policy;
}

namespace {

// `count` elements of `type` as one uncommitted datatype: `count / limit` chunks of
// `limit` elements (themselves built the same way if there are more than `limit`
// chunks), then the remaining elements, resized to the extent of `count` elements.
int build_count_type(MPI_Datatype type, MPI_Count count, MPI_Datatype* out) {
  const MPI_Count limit = large_count_policy().int_limit;
  if (count <= limit) {
    MPIX_CHECK_MPI(MPI_Type_contiguous((int)count, type, out));
    return MPIX_SUCCESS;
  }
  MPI_Aint lb = 0, extent = 0;
  MPIX_CHECK_MPI(MPI_Type_get_extent(type, &lb, &extent));
  MPI_Datatype chunk = MPI_DATATYPE_NULL, chunks = MPI_DATATYPE_NULL;
  MPIX_CHECK_MPI(MPI_Type_contiguous((int)limit, type, &chunk));
  int rc = build_count_type(chunk, count / limit, &chunks);
  MPI_Type_free(&chunk);
  MPIX_TRY(rc);
  const MPI_Count rest = count % limit;
  if (rest == 0) {
    *out = chunks;
    return MPIX_SUCCESS;
  }
  int lengths[2] = {1, (int)rest};
  MPI_Aint displs[2] = {0, (MPI_Aint)(count - rest) * extent};
  MPI_Datatype types[2] = {chunks, type};
  MPI_Datatype joined = MPI_DATATYPE_NULL;
  rc = MPI_Type_create_struct(2, lengths, displs, types, &joined);
  MPI_Type_free(&chunks);
  MPIX_CHECK_MPI(rc);
  // A struct's extent may be padded for alignment; count elements have count extents.
  rc = MPI_Type_create_resized(joined, lb, (MPI_Aint)count * extent, out);
  MPI_Type_free(&joined);
  MPIX_CHECK_MPI(rc);
  return MPIX_SUCCESS;
}

int post_block(bool send, const Block& block, int peer, int tag, MPI_Comm comm, MPI_Request* request) {
  MPI_Datatype type = block.layout->type;
  if (fits_int(block.count)) {
    if (send) MPIX_CHECK_MPI(MPI_Isend(block.base, (int)block.count, type, peer, tag, comm, request));
    else MPIX_CHECK_MPI(MPI_Irecv(block.base, (int)block.count, type, peer, tag, comm, request));
    return MPIX_SUCCESS;
  }
#ifdef MPIX_HAVE_MPI_C_CALLS
  if (large_count_policy().use_c_calls) {
    if (send) MPIX_CHECK_MPI(MPI_Isend_c(block.base, block.count, type, peer, tag, comm, request));
    else MPIX_CHECK_MPI(MPI_Irecv_c(block.base, block.count, type, peer, tag, comm, request));
    return MPIX_SUCCESS;
  }
#endif
  MPI_Datatype whole = MPI_DATATYPE_NULL;
  MPIX_TRY(make_count_type(type, block.count, &whole));
  int rc = send ? MPI_Isend(block.base, 1, whole, peer, tag, comm, request)
                : MPI_Irecv(block.base, 1, whole, peer, tag, comm, request);
  MPI_Type_free(&whole);
  MPIX_CHECK_MPI(rc);
  return MPIX_SUCCESS;
}

}  // namespace

int make_count_type(MPI_Datatype type, MPI_Count count, MPI_Datatype* out) {
  MPIX_TRY(build_count_type(type, count, out));
  MPIX_CHECK_MPI(MPI_Type_commit(out));
  return MPIX_SUCCESS;
}

int isend_block(const Block& block, int peer, int tag, MPI_Comm comm, MPI_Request* request) {
  return post_block(true, block, peer, tag, comm, request);
}

int irecv_block(const Block& block, int peer, int tag, MPI_Comm comm, MPI_Request* request) {
  return post_block(false, block, peer, tag, comm, request);
}

bool fits_int_calls(const Exchange& ex) {
  for (const BufferSide* side : {&ex.send, &ex.recv})
    for (int i = 0; i < ex.size; ++i)
      if (!fits_int(side->counts[i]) || !(ex.uniform || fits_int(side->displs[i]))) return false;
  return true;
}

int MpiAlltoall::prepare(const Exchange& ex) {
  const BufferSide* sides[2] = {&ex.send, &ex.recv};
  if (fits_int_calls(ex)) {
    call_ = Call::ints;
    for (int s = 0; s < 2 && !ex.uniform; ++s) {
      int_counts_[s].assign(sides[s]->counts.begin(), sides[s]->counts.end());
      int_displs_[s].assign(sides[s]->displs.begin(), sides[s]->displs.end());
    }
    return MPIX_SUCCESS;
  }
  if (kMpiHasLargeCountCalls && large_count_policy().use_c_calls) {
    call_ = Call::c_calls;
    return MPIX_SUCCESS;
  }
  call_ = Call::datatypes;
  zeros_.assign(ex.size, 0);
  for (int s = 0; s < 2; ++s) {
    int_counts_[s].assign(ex.size, 0);
    block_types_[s].assign(ex.size, MPI_BYTE);
    for (int i = 0; i < ex.size; ++i) {
      Block block = sides[s]->block(i);
      if (block.count == 0) continue;
      MPI_Datatype whole = MPI_DATATYPE_NULL, placed = MPI_DATATYPE_NULL;
      MPIX_TRY(make_count_type(block.layout->type, block.count, &whole));
      int one = 1;
      MPI_Aint address = 0;
      int rc = MPI_Get_address(block.base, &address);
      if (rc == MPI_SUCCESS) rc = MPI_Type_create_struct(1, &one, &address, &whole, &placed);
      MPI_Type_free(&whole);
      MPIX_CHECK_MPI(rc);
      owned_.keep(placed);
      MPIX_CHECK_MPI(MPI_Type_commit(&placed));
      block_types_[s][i] = placed;
      int_counts_[s][i] = 1;
    }
  }
  return MPIX_SUCCESS;
}

int MpiAlltoall::post(const Exchange& ex, MPI_Comm comm, MPI_Request* request) const {
  const BufferSide &send = ex.send, &recv = ex.recv;
  if (!request && call_ != Call::ints) return fail(MPIX_ERR_UNSUPPORTED, "internal: a blocking large-count pmpi call");
  switch (call_) {
    case Call::ints: {
      const int send_count = (int)send.counts[0], recv_count = (int)recv.counts[0];
      if (ex.uniform && request)
        MPIX_CHECK_MPI(MPI_Ialltoall(send.buf, send_count, send.layout.type, recv.buf, recv_count, recv.layout.type,
                                     comm, request));
      else if (ex.uniform)
        MPIX_CHECK_MPI(
            MPI_Alltoall(send.buf, send_count, send.layout.type, recv.buf, recv_count, recv.layout.type, comm));
      else if (request)
        MPIX_CHECK_MPI(MPI_Ialltoallv(send.buf, int_counts_[0].data(), int_displs_[0].data(), send.layout.type,
                                      recv.buf, int_counts_[1].data(), int_displs_[1].data(), recv.layout.type,
                                      comm, request));
      else
        MPIX_CHECK_MPI(MPI_Alltoallv(send.buf, int_counts_[0].data(), int_displs_[0].data(), send.layout.type,
                                     recv.buf, int_counts_[1].data(), int_displs_[1].data(), recv.layout.type, comm));
      return MPIX_SUCCESS;
    }
    case Call::c_calls:
#ifdef MPIX_HAVE_MPI_C_CALLS
      if (ex.uniform)
        MPIX_CHECK_MPI(MPI_Ialltoall_c(send.buf, send.counts[0], send.layout.type, recv.buf, recv.counts[0],
                                       recv.layout.type, comm, request));
      else
        MPIX_CHECK_MPI(MPI_Ialltoallv_c(send.buf, send.counts.data(), send.displs.data(), send.layout.type,
                                        recv.buf, recv.counts.data(), recv.displs.data(), recv.layout.type,
                                        comm, request));
      return MPIX_SUCCESS;
#else
      break;
#endif
    case Call::datatypes:
      MPIX_CHECK_MPI(MPI_Ialltoallw(MPI_BOTTOM, int_counts_[0].data(), zeros_.data(), block_types_[0].data(),
                                    MPI_BOTTOM, int_counts_[1].data(), zeros_.data(), block_types_[1].data(),
                                    comm, request));
      return MPIX_SUCCESS;
  }
  return fail(MPIX_ERR_UNSUPPORTED, "internal: large-count MPI calls chosen but not built");
}

}  // namespace mpix
