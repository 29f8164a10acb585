// Inbox: the receive side of every SDDE algorithm (see sdde.hpp).
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "../core/error.hpp"
#include "sdde.hpp"

namespace mpix {

SddeResult::~SddeResult() {
  std::free(src);
  std::free(counts);
  std::free(displs);
  std::free(vals);
}

Inbox::~Inbox() {
  for (Entry& entry : entries_) std::free(entry.owned);
  std::free(buffer_);
}

void Inbox::note(int code, const std::string& message) {
  if (error_ != MPIX_SUCCESS) return;
  error_ = code;
  message_ = message;
}

// Bytes of `elements` consecutive elements of the receive type laid out as MPI lays
// out a receive buffer (element k at k * extent). The entry points accept only
// receive types with true_lb >= 0 and true_extent <= extent, so the span starts at
// the buffer's first byte and elements do not overlap.
MPI_Aint Inbox::span(long long elements) const {
  return elements > 0 ? call_.recv_layout.span_hi((int)elements) : 0;
}

int Inbox::expect(long long messages, long long bytes) {
  const TypeLayout& layout = call_.recv_layout;
  long long elements = 0;
  if (call_.op == kAlltoallCrs) {
    elements = messages * call_.recvcount;
  } else {
    if (bytes < 0) return MPIX_SUCCESS;  // counts unknown: sized at the end
    elements = bytes / layout.size;      // a remainder is found per message
  }
  if (elements > INT_MAX) {
    note(MPIX_ERR_UNSUPPORTED, format("%s: %lld elements are sent to this rank; more than INT_MAX are not "
                                      "supported", call_.name, elements));
    return MPIX_SUCCESS;
  }
  entries_.reserve((std::size_t)messages);
  if (elements == 0) return MPIX_SUCCESS;
  buffer_ = static_cast<char*>(std::malloc((std::size_t)span(elements)));
  // Out of memory: noted, and the messages are dropped, so that the protocol still
  // completes on every rank.
  if (!buffer_)
    note(MPIX_ERR_NO_MEM, format("%s: out of memory for %lld received elements", call_.name, elements));
  else
    capacity_ = elements;
  return MPIX_SUCCESS;
}

long long Inbox::admit(int source, long long nbytes) {
  const TypeLayout& layout = call_.recv_layout;
  if (nbytes % layout.size != 0) {
    note(MPIX_ERR_ARG, format("%s: the message from rank %d has %lld bytes, not a whole number of "
                              "recvtype elements (%lld bytes each)",
                              call_.name, source, nbytes, layout.size));
    return -1;
  }
  long long count = nbytes / layout.size;
  if (call_.op == kAlltoallCrs && count != call_.recvcount) {
    note(MPIX_ERR_ARG, format("%s: the message from rank %d has %s of recvtype, but recvcount "
                              "is %d (sendcount and recvcount disagree)",
                              call_.name, source, counted(count, "element").c_str(), call_.recvcount));
    return -1;
  }
  if (buffer_ && used_ + count > capacity_) {
    note(MPIX_ERR_ARG, format("%s: the message from rank %d (%s) exceeds the %s "
                              "announced to this rank",
                              call_.name, source, counted(count, "element").c_str(),
                              counted(capacity_, "element").c_str()));
    return -1;
  }
  if (call_.known_size >= 0 && used_ + count > call_.known_size) {
    note(MPIX_ERR_ARG, format("%s: recv_size=%lld was passed in, but the message from rank %d brings "
                              "the total to %s",
                              call_.name, call_.known_size, source, counted(used_ + count, "element").c_str()));
    return -1;
  }
  if (used_ + count > INT_MAX) {
    note(MPIX_ERR_UNSUPPORTED, format("%s: %lld elements or more are sent to this rank; more than INT_MAX are "
                                      "not supported", call_.name, used_ + count));
    return -1;
  }
  if (error_ != MPIX_SUCCESS) return -1;  // after an error, only drain
  return count;
}

// Receives and drops a message that is wrong for the call, so that its sender's
// request completes and the protocol finishes everywhere.
int Inbox::drain(ProbedMessage* message, long long nbytes) {
  if (nbytes > INT_MAX) nbytes = 0;  // MPI reports the truncation; the error is noted already
  std::vector<char> sink((std::size_t)nbytes + 1);
  MPI_Status status;
  int rc = receive_probed(sink.data(), (int)nbytes, MPI_PACKED, message, &status);
  int error_class = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
  if (rc != MPI_SUCCESS && error_class != MPI_ERR_TRUNCATE) return fail_mpi(rc, "MPI_Mrecv (dropping a message)");
  return MPIX_SUCCESS;
}

int Inbox::receive(ProbedMessage* message, const MPI_Status& status) {
  const int source = status.MPI_SOURCE;
  MPI_Count nbytes = 0;
#ifdef MPIX_SIMULATED
  // SMPI 3.32 has no MPI_Get_elements_x ("Not yet implemented"); in bytes,
  // MPI_Get_count tells the same below 2 GiB, and MPI_UNDEFINED above.
  int bytes = 0;
  MPIX_CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &bytes));
  nbytes = bytes == MPI_UNDEFINED ? (MPI_Count)INT_MAX + 1 : bytes;
#else
  MPIX_CHECK_MPI(MPI_Get_elements_x(&status, MPI_BYTE, &nbytes));
#endif
  if (nbytes > INT_MAX) {
    note(MPIX_ERR_UNSUPPORTED, format("%s: the message from rank %d has %lld bytes; messages of 2 GiB "
                                      "or more are not supported",
                                      call_.name, source, (long long)nbytes));
    return drain(message, nbytes);
  }
  long long count = admit(source, nbytes);
  if (count < 0) return drain(message, nbytes);
  Entry entry{source, (int)count, used_};
  if (buffer_) {
    // Straight into the output, with the receive type (which MPI unpacks into).
    charge_mpi_pack(Block{buffer_ + (MPI_Aint)used_ * call_.recv_layout.extent, (int)count, &call_.recv_layout});
    MPIX_CHECK_MPI(receive_probed(buffer_ + (MPI_Aint)used_ * call_.recv_layout.extent, (int)count,
                                  call_.recv_layout.type, message, MPI_STATUS_IGNORE));
  } else {
    // Packed, exactly the probed size; MPI_PACKED matches a message of any type.
    entry.owned = static_cast<char*>(std::malloc((std::size_t)nbytes + 1));
    if (!entry.owned) {
      note(MPIX_ERR_NO_MEM, format("%s: out of memory for a message of %lld bytes", call_.name,
                                   (long long)nbytes));
      return drain(message, nbytes);
    }
    int rc = receive_probed(entry.owned, (int)nbytes, MPI_PACKED, message, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      std::free(entry.owned);
      return fail_mpi(rc, "MPI_Mrecv");
    }
  }
  entries_.push_back(entry);
  used_ += count;
  return MPIX_SUCCESS;
}

int Inbox::add_packed(int source, const char* bytes, long long nbytes) {
  long long count = admit(source, nbytes);
  if (count < 0) return MPIX_SUCCESS;
  Entry entry{source, (int)count, used_};
  if (buffer_) {
    Block block{buffer_ + (MPI_Aint)used_ * call_.recv_layout.extent, (int)count, &call_.recv_layout};
    MPIX_TRY(unpack_block(bytes, block, comm_));
  } else {
    entry.packed = bytes;
  }
  entries_.push_back(entry);
  used_ += count;
  return MPIX_SUCCESS;
}

int Inbox::finish(SddeResult* result) {
  if (error_ == MPIX_SUCCESS && call_.known_nnz >= 0 && call_.known_nnz != messages())
    note(MPIX_ERR_ARG, format("%s: recv_nnz=%lld was passed in, but %s arrived", call_.name,
                              call_.known_nnz, counted(messages(), "message").c_str()));
  if (error_ == MPIX_SUCCESS && call_.known_size >= 0 && call_.known_size != used_)
    note(MPIX_ERR_ARG, format("%s: recv_size=%lld was passed in, but %s arrived", call_.name,
                              call_.known_size, counted(used_, "element").c_str()));
  if (error_ != MPIX_SUCCESS) return fail(error_, message_);

  const std::size_t n = entries_.size();
  // Outputs are never NULL (one byte at least), so that a caller may tell "nothing
  // received" from "not called"; MPIX_Free frees them all alike.
  result->src = static_cast<int*>(std::malloc(n * sizeof(int) + 1));
  if (call_.op == kAlltoallvCrs) {
    result->counts = static_cast<int*>(std::malloc(n * sizeof(int) + 1));
    result->displs = static_cast<int*>(std::malloc(n * sizeof(int) + 1));
  }
  if (buffer_) {
    result->vals = buffer_;  // exactly what the reduction announced
    buffer_ = nullptr;
  } else {
    result->vals = static_cast<char*>(std::malloc((std::size_t)span(used_) + 1));
  }
  if (!result->src || !result->vals ||
      (call_.op == kAlltoallvCrs && (!result->counts || !result->displs)))
    return fail(MPIX_ERR_NO_MEM, format("%s: out of memory for the outputs", call_.name));
  for (std::size_t i = 0; i < n; ++i) {
    const Entry& entry = entries_[i];
    result->src[i] = entry.source;
    if (result->counts) result->counts[i] = entry.count;
    if (result->displs) result->displs[i] = (int)entry.offset;
    const char* packed = entry.owned ? entry.owned : entry.packed;
    if (!packed) continue;  // received in place
    Block block{result->vals + (MPI_Aint)entry.offset * call_.recv_layout.extent, entry.count,
                &call_.recv_layout};
    MPIX_TRY(unpack_block(packed, block, comm_));
  }
  result->nnz = (int)n;
  result->size = used_;
  return MPIX_SUCCESS;
}

}  // namespace mpix
