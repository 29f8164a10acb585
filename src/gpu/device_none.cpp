// The device side in builds without CUDA: every buffer is host memory.
#include "../core/error.hpp"
#include "device.hpp"

namespace mpix {

struct DeviceState {};

bool device_available() { return false; }
std::string device_unavailable_reason() { return "this build has no CUDA (meson option cuda, nvcc not found)"; }
MemoryType device_memory_type(const void*) { return MemoryType::host; }

static int no_device(const char* what) {
  return fail(MPIX_ERR_DEVICE, format("%s: %s", what, device_unavailable_reason().c_str()));
}

int device_state_create(DeviceState** state) {
  *state = nullptr;
  return no_device("CUDA IPC");
}
void device_state_destroy(DeviceState*) {}
int device_expose(char*, long long, Exposure*) { return no_device("cudaIpcGetMemHandle"); }
int device_copy(DeviceState*, int, char*, const Exposure&, long long, long long, CopyDirection, long long) {
  return no_device("CUDA IPC copy");
}
int device_synchronize(DeviceState*) { return MPIX_SUCCESS; }
int device_host_alloc(std::size_t, void** ptr) {
  *ptr = nullptr;
  return no_device("cudaMallocHost");
}
void device_host_free(void*) {}
int device_copy_to_host(void*, const void*, std::size_t) { return no_device("cudaMemcpy"); }
int device_copy_to_device(void*, const void*, std::size_t) { return no_device("cudaMemcpy"); }
int device_memcpy(void*, const void*, std::size_t) { return no_device("cudaMemcpy"); }

}  // namespace mpix
