// Device buffers in every dense algorithm (one algorithm, two copy engines; never a
// second copy of an algorithm): a call whose buffers are device memory either
// passes them through to MPI (a CUDA-aware MPI and an algorithm that only calls
// MPI: pmpi), or is staged through pinned host buffers, around the algorithm that
// then sees host memory. ipc_hybrid takes device memory itself (CUDA IPC inside
// the node, messages between nodes from device memory: that needs a CUDA-aware MPI).
#pragma once
#include <memory>
#include <string>

#include "../core/plan.hpp"
#include "direct_copy.hpp"

struct MPIX_Info_s;

namespace mpix {

// Whether the MPI library moves device memory itself: the hint mpix_cuda_aware
// (true/false; info, then MPIX_CUDA_AWARE) or else MPIX_Query_cuda_support()
// (MPICH >= 4, Open MPI's <mpi-ext.h>), else false.
int mpi_cuda_aware(const MPIX_Info_s* info, bool* aware);

// The pinned host copies of one call's device buffers.
class DeviceStaging {
 public:
  DeviceStaging() = default;
  DeviceStaging(const DeviceStaging&) = delete;
  DeviceStaging& operator=(const DeviceStaging&) = delete;
  ~DeviceStaging();
  // Device -> host before the algorithm starts (the receive side too: the bytes
  // between and around the blocks come back unchanged).
  int copy_in();
  // Host -> device once the algorithm is complete.
  int copy_out();

 private:
  friend int prepare_device_buffers(const MPIX_Info_s*, const char*, bool, Exchange*,
                                    std::unique_ptr<DeviceStaging>*);
  struct Span {
    char* device = nullptr;  // first byte of the side's blocks on the device
    char* host = nullptr;    // its pinned copy
    std::size_t bytes = 0;
  };
  int stage(BufferSide* side, Span* span);
  Span send_, recv_;
};

// Finds the memory type of the call's buffers (once per call or plan). Host
// buffers: nothing. Device buffers: pass-through for `algorithm` "pmpi" on a
// CUDA-aware MPI and for "ipc_hybrid" (not in place); otherwise `*staging` is made
// and `ex` pointed at the host copies. `in_place`: the send side is the receive side.
int prepare_device_buffers(const MPIX_Info_s* info, const char* algorithm, bool in_place, Exchange* ex,
                           std::unique_ptr<DeviceStaging>* staging);

}  // namespace mpix
