// The device side of the direct copies: memory types and the CUDA IPC engine.
// Implemented by cuda_ipc.cu in builds with CUDA (MPIX_HAVE_CUDA) and by
// device_none.cpp otherwise, where every buffer is host memory.
#pragma once
#include "direct_copy.hpp"

namespace mpix {

struct DeviceState;  // IPC handle cache, streams and events of one MPIX_Comm

// True in builds with CUDA and a usable device (a driver and at least one GPU).
bool device_available();
// Why device_available() is false, for messages and test skips.
std::string device_unavailable_reason();
MemoryType device_memory_type(const void* ptr);

// nullptr with MPIX_ERR_DEVICE when there is no device.
int device_state_create(DeviceState** state);
// Closes every opened IPC handle, destroys the streams and events.
void device_state_destroy(DeviceState* state);
int device_expose(char* local, long long bytes, Exposure* out);
// Enqueues a copy on the library's stream of `peer`: a copy kernel below
// `memcpy_threshold` bytes, cudaMemcpyAsync from there on (paper 004, III-A).
int device_copy(DeviceState* state, int peer, char* local, const Exposure& remote, long long remote_offset,
                long long bytes, CopyDirection direction, long long memcpy_threshold);
// Waits for the copies enqueued since the last call.
int device_synchronize(DeviceState* state);

// Staging of device buffers for algorithms that move host memory only
// (MPI not CUDA-aware): copies between device and pinned host memory.
int device_host_alloc(std::size_t bytes, void** ptr);  // pinned
void device_host_free(void* ptr);
int device_copy_to_host(void* host, const void* device, std::size_t bytes);
int device_copy_to_device(void* device, const void* host, std::size_t bytes);
// A copy between any two buffers of this process (cudaMemcpyDefault).
int device_memcpy(void* to, const void* from, std::size_t bytes);

}  // namespace mpix
