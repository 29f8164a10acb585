// The device side in builds with CUDA (MPIX_HAVE_CUDA): memory types through
// cudaPointerGetAttributes, and the CUDA IPC copy engine of ipc_hybrid (paper 004,
// III-A): IPC handles of the peers' allocations opened once and cached, copies on
// the library's own stream, a copy kernel for small blocks and cudaMemcpyAsync for
// large ones. Without a device or a driver every buffer is host memory.
#include <cuda.h>  // CUresult and CUdeviceptr only: the driver is reached through the runtime
#include <cuda_runtime.h>

#include <cstring>
#include <list>
#include <map>
#include <vector>

#include "../core/error.hpp"
#include "device.hpp"

namespace mpix {

namespace {

// Handles opened per peer before the least recently used one is closed.
constexpr std::size_t kHandlesPerPeer = 32;

struct Availability {
  bool available = false;
  std::string reason;
};

const Availability& availability() {
  static const Availability state = [] {
    Availability a;
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      a.reason = std::string("no CUDA device: ") + cudaGetErrorString(rc);
      cudaGetLastError();  // not sticky: clear it
    } else if (count == 0) {
      a.reason = "no CUDA device";
    } else {
      a.available = true;
    }
    return a;
  }();
  return state;
}

int cuda_fail(cudaError_t rc, const char* what) {
  cudaGetLastError();
  return fail(MPIX_ERR_DEVICE, format("%s: %s", what, cudaGetErrorString(rc)));
}

#define MPIX_CHECK_CUDA(call)                                  \
  do {                                                         \
    cudaError_t mpix_cuda_rc_ = (call);                        \
    if (mpix_cuda_rc_ != cudaSuccess) return cuda_fail(mpix_cuda_rc_, #call); \
  } while (0)

// The allocation that holds `ptr`: cuMemGetAddressRange, reached through the
// runtime's driver entry points so that the library does not link libcuda (a
// machine without a driver must still load it).
using GetAddressRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);

int allocation_base(const void* ptr, char** base) {
  static GetAddressRange get_range = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &status) !=
            cudaSuccess ||
        status != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return (GetAddressRange)fn;
  }();
  if (!get_range) return fail(MPIX_ERR_DEVICE, "cuMemGetAddressRange: not available from the driver");
  CUdeviceptr start = 0;
  size_t bytes = 0;
  if (get_range(&start, &bytes, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
    return fail(MPIX_ERR_DEVICE, "cuMemGetAddressRange: the pointer is not in a device allocation");
  *base = (char*)(uintptr_t)start;
  return MPIX_SUCCESS;
}

// Copies `bytes` bytes, 16 at a time where both ends allow it (paper 004's
// kernel-based IPC: lower overhead than cudaMemcpyAsync for small blocks).
__global__ void copy_kernel(char* to, const char* from, size_t bytes) {
  const size_t stride = (size_t)blockDim.x * gridDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if ((((uintptr_t)to | (uintptr_t)from) & 15) == 0) {
    const size_t vectors = bytes / 16;
    for (size_t v = i; v < vectors; v += stride) ((uint4*)to)[v] = ((const uint4*)from)[v];
    for (size_t b = vectors * 16 + i; b < bytes; b += stride) to[b] = from[b];
  } else {
    for (size_t b = i; b < bytes; b += stride) to[b] = from[b];
  }
}

}  // namespace

// One peer's opened handles, least recently used last.
struct OpenedHandle {
  unsigned char handle[64];
  char* mapped = nullptr;
};

struct DeviceState {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  std::map<int, std::list<OpenedHandle>> opened;  // by peer rank

  // The mapped base of `remote`'s allocation in this process. A cached entry is
  // reused only if its handle is byte for byte the exposed one (a freed and
  // reallocated buffer has a new handle); a failed open closes the peer's cached
  // handles (the mapping limit, or a stale mapping of the same memory) and retries once.
  int map(int peer, const Exposure& remote, char** base) {
    std::list<OpenedHandle>& cache = opened[peer];
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (std::memcmp(it->handle, remote.ipc_handle, sizeof it->handle) != 0) continue;
      cache.splice(cache.begin(), cache, it);
      *base = cache.front().mapped;
      return MPIX_SUCCESS;
    }
    cudaIpcMemHandle_t handle;
    static_assert(sizeof handle == sizeof remote.ipc_handle, "cudaIpcMemHandle_t is 64 bytes");
    std::memcpy(&handle, remote.ipc_handle, sizeof handle);
    void* mapped = nullptr;
    cudaError_t rc = cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess);
    if (rc != cudaSuccess) {
      cudaGetLastError();
      close_peer(peer);
      rc = cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess);
      if (rc != cudaSuccess) return cuda_fail(rc, "cudaIpcOpenMemHandle (after closing the cached handles)");
    }
    if (cache.size() >= kHandlesPerPeer) {
      // Copies queued on the stream may still use the mapping (as in close_peer).
      MPIX_CHECK_CUDA(cudaStreamSynchronize(stream));
      cudaIpcCloseMemHandle(cache.back().mapped);
      cache.pop_back();
    }
    OpenedHandle entry;
    std::memcpy(entry.handle, remote.ipc_handle, sizeof entry.handle);
    entry.mapped = (char*)mapped;
    cache.push_front(entry);
    *base = entry.mapped;
    return MPIX_SUCCESS;
  }

  void close_peer(int peer) {
    // Copies still queued may use the mappings.
    if (stream) cudaStreamSynchronize(stream);
    for (OpenedHandle& entry : opened[peer]) cudaIpcCloseMemHandle(entry.mapped);
    opened[peer].clear();
  }
};

bool device_available() { return availability().available; }
std::string device_unavailable_reason() { return availability().reason; }

MemoryType device_memory_type(const void* ptr) {
  if (!ptr || !device_available()) return MemoryType::host;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return MemoryType::host;
  }
  // Managed memory is reachable from the host (and CMA); IPC cannot export it.
  return attributes.type == cudaMemoryTypeDevice ? MemoryType::device : MemoryType::host;
}

int device_state_create(DeviceState** state) {
  *state = nullptr;
  if (!device_available())
    return fail(MPIX_ERR_DEVICE, format("CUDA IPC: %s", device_unavailable_reason().c_str()));
  auto* made = new DeviceState;
  cudaError_t rc = cudaStreamCreateWithFlags(&made->stream, cudaStreamNonBlocking);
  if (rc == cudaSuccess) rc = cudaEventCreateWithFlags(&made->done, cudaEventDisableTiming);
  if (rc != cudaSuccess) {
    device_state_destroy(made);
    return cuda_fail(rc, "CUDA IPC: creating the library's stream and event");
  }
  *state = made;
  return MPIX_SUCCESS;
}

void device_state_destroy(DeviceState* state) {
  if (!state) return;
  if (state->stream) cudaStreamSynchronize(state->stream);
  for (auto& peer : state->opened)
    for (OpenedHandle& entry : peer.second) cudaIpcCloseMemHandle(entry.mapped);
  if (state->done) cudaEventDestroy(state->done);
  if (state->stream) cudaStreamDestroy(state->stream);
  delete state;
}

int device_expose(char* local, long long, Exposure* out) {
  char* base = nullptr;
  MPIX_TRY(allocation_base(local, &base));
  cudaIpcMemHandle_t handle;
  MPIX_CHECK_CUDA(cudaIpcGetMemHandle(&handle, base));
  std::memcpy(out->ipc_handle, &handle, sizeof handle);
  out->alloc_offset = (std::uint64_t)(local - base);
  return MPIX_SUCCESS;
}

int device_copy(DeviceState* state, int peer, char* local, const Exposure& remote, long long remote_offset,
                long long bytes, CopyDirection direction, long long memcpy_threshold) {
  char* base = nullptr;
  MPIX_TRY(state->map(peer, remote, &base));
  char* there = base + remote.alloc_offset + remote_offset;
  char* to = direction == CopyDirection::write ? there : local;
  const char* from = direction == CopyDirection::write ? local : there;
  if (bytes >= memcpy_threshold) {
    MPIX_CHECK_CUDA(cudaMemcpyAsync(to, from, (size_t)bytes, cudaMemcpyDeviceToDevice, state->stream));
  } else {
    const int threads = 256;
    const long long blocks = std::min<long long>((bytes + 16 * threads - 1) / (16 * threads), 1024);
    copy_kernel<<<(unsigned)std::max<long long>(blocks, 1), threads, 0, state->stream>>>(to, from, (size_t)bytes);
    MPIX_CHECK_CUDA(cudaGetLastError());
  }
  return MPIX_SUCCESS;
}

int device_synchronize(DeviceState* state) {
  if (!state) return MPIX_SUCCESS;
  MPIX_CHECK_CUDA(cudaEventRecord(state->done, state->stream));
  MPIX_CHECK_CUDA(cudaEventSynchronize(state->done));
  return MPIX_SUCCESS;
}

int device_host_alloc(std::size_t bytes, void** ptr) {
  *ptr = nullptr;
  if (bytes == 0) return MPIX_SUCCESS;
  MPIX_CHECK_CUDA(cudaMallocHost(ptr, bytes));
  return MPIX_SUCCESS;
}

void device_host_free(void* ptr) {
  if (ptr) cudaFreeHost(ptr);
}

int device_copy_to_host(void* host, const void* device, std::size_t bytes) {
  if (bytes) MPIX_CHECK_CUDA(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
  return MPIX_SUCCESS;
}

int device_copy_to_device(void* device, const void* host, std::size_t bytes) {
  if (bytes) MPIX_CHECK_CUDA(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  return MPIX_SUCCESS;
}

int device_memcpy(void* to, const void* from, std::size_t bytes) {
  if (bytes) MPIX_CHECK_CUDA(cudaMemcpy(to, from, bytes, cudaMemcpyDefault));
  return MPIX_SUCCESS;
}

}  // namespace mpix
