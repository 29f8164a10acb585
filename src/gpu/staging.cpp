#include "staging.hpp"

#include <algorithm>
#include <cstring>

#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include "../core/error.hpp"
#include "../core/info.hpp"
#include "device.hpp"

namespace mpix {

int mpi_cuda_aware(const MPIX_Info_s* info, bool* aware) {
  std::string setting;
  MPIX_TRY(boolean_hint(info, "mpix_cuda_aware", aware, &setting));
  if (!setting.empty()) return MPIX_SUCCESS;
#if defined(MPIX_GPU_SUPPORT_CUDA) || defined(MPIX_CUDA_AWARE_SUPPORT)
  // MPICH 4 declares it with MPIX_GPU_SUPPORT_CUDA; Open MPI in <mpi-ext.h>.
  *aware = MPIX_Query_cuda_support() != 0;
#else
  *aware = false;
#endif
  return MPIX_SUCCESS;
}

DeviceStaging::~DeviceStaging() {
  device_host_free(send_.host);
  device_host_free(recv_.host);
}

int DeviceStaging::stage(BufferSide* side, Span* span) {
  // The byte span of the side's blocks, as the in-place copy measures it.
  MPI_Aint lo = 0, hi = 0;
  bool any = false;
  for (std::size_t i = 0; i < side->counts.size(); ++i) {
    if (side->counts[i] == 0) continue;
    MPI_Aint start = (MPI_Aint)side->displs[i] * side->layout.extent;
    MPI_Aint block_lo = start + side->layout.span_lo(side->counts[i]);
    MPI_Aint block_hi = start + side->layout.span_hi(side->counts[i]);
    lo = any ? std::min(lo, block_lo) : block_lo;
    hi = any ? std::max(hi, block_hi) : block_hi;
    any = true;
  }
  if (!any) return MPIX_SUCCESS;
  span->device = side->buf + lo;
  span->bytes = (std::size_t)(hi - lo);
  void* host = nullptr;
  MPIX_TRY(device_host_alloc(span->bytes, &host));
  span->host = (char*)host;
  side->buf = span->host - lo;  // the same displacements now land in the host copy
  return MPIX_SUCCESS;
}

int DeviceStaging::copy_in() {
  if (send_.bytes) MPIX_TRY(device_copy_to_host(send_.host, send_.device, send_.bytes));
  if (recv_.bytes) MPIX_TRY(device_copy_to_host(recv_.host, recv_.device, recv_.bytes));
  return MPIX_SUCCESS;
}

int DeviceStaging::copy_out() {
  if (recv_.bytes) MPIX_TRY(device_copy_to_device(recv_.device, recv_.host, recv_.bytes));
  return MPIX_SUCCESS;
}

int prepare_device_buffers(const MPIX_Info_s* info, const char* algorithm, bool in_place, Exchange* ex,
                           std::unique_ptr<DeviceStaging>* staging) {
  const MemoryType send_type = in_place ? MemoryType::host : memory_type(ex->send.buf);
  const MemoryType recv_type = memory_type(ex->recv.buf);
  if (send_type == MemoryType::host && recv_type == MemoryType::host) return MPIX_SUCCESS;
  // In place, each start copies the receive blocks into host scratch with memcpy
  // (dense.cpp), which device memory cannot be read by: staged for every algorithm.
  if (!in_place && !std::strcmp(algorithm, "ipc_hybrid")) return MPIX_SUCCESS;  // checks the MPI itself, collectively
  bool aware = false;
  MPIX_TRY(mpi_cuda_aware(info, &aware));
  if (!in_place && aware && !std::strcmp(algorithm, "pmpi")) return MPIX_SUCCESS;
  auto made = std::make_unique<DeviceStaging>();
  if (send_type == MemoryType::device) MPIX_TRY(made->stage(&ex->send, &made->send_));
  if (recv_type == MemoryType::device) MPIX_TRY(made->stage(&ex->recv, &made->recv_));
  *staging = std::move(made);
  return MPIX_SUCCESS;
}

}  // namespace mpix
