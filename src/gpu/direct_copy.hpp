// Direct copies between the memories of processes of one node (ARCHITECTURE.md,
// "Device memory without a device"): one interface, two engines.
//   - host memory: Linux cross-memory attach (CMA), process_vm_writev into a peer's
//     buffer or process_vm_readv out of it: one copy, where a shared-memory MPI
//     path makes two (into a shared segment and out of it);
//   - device memory: CUDA IPC (cudaIpcGetMemHandle / cudaIpcOpenMemHandle), in
//     builds with CUDA (MPIX_HAVE_CUDA; src/gpu/cuda_ipc.cu).
// An algorithm (ipc_hybrid) exposes regions of its own buffers to the peers of its
// node, learns theirs, and copies with whichever engine the memory type asks for.
#pragma once
#include <mpi.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct MPIX_Comm_s;

namespace mpix {

// Where a buffer lives. Found once per call or plan (memory_type()).
enum class MemoryType { host, device };
const char* memory_type_name(MemoryType type);
// cudaPointerGetAttributes in CUDA builds; host memory without CUDA, without a
// device or without a driver (not an error: a machine without a GPU has host memory only).
MemoryType memory_type(const void* ptr);

// Which side of a pair copies. write: the sender pushes into the receiver's buffer
// (the receiver exposes where the block lands); read: the receiver pulls out of the
// sender's buffer (the sender exposes where the block is).
enum class CopyDirection { write, read };

// What a peer needs to reach a run of bytes of this process: its address in this
// process, its length and, for device memory, the IPC handle of its allocation and
// the run's offset in it. Plain data: it travels in MPI messages as bytes.
struct Exposure {
  std::uint64_t address = 0;
  std::int64_t bytes = 0;
  std::uint64_t alloc_offset = 0;  // device: offset of `address` in its allocation
  std::uint32_t device = 0;        // 1: device memory (CUDA IPC), 0: host (CMA)
  std::uint32_t reserved = 0;
  unsigned char ipc_handle[64] = {};  // cudaIpcMemHandle_t (64 bytes)
};

// The direct-copy state of one MPIX_Comm, made once (collectively) at the first
// plan that asks for it and freed with the communicator.
class DirectCopy {
 public:
  DirectCopy() = default;
  DirectCopy(const DirectCopy&) = delete;
  DirectCopy& operator=(const DirectCopy&) = delete;
  ~DirectCopy();

  // Collective on `comm` (the library's communicator): exchanges pids and the
  // physical node of every rank, and finds out whether CMA works between the
  // ranks of each physical node (a probe read of a known token from each peer:
  // Yama's ptrace_scope, a container's seccomp profile or user namespaces can all
  // refuse it with EPERM or ENOSYS). The outcome is agreed: every rank uses CMA or
  // none does. MPIX_CMA=off|read|write (environment, same on all ranks) turns it
  // off or chooses the direction (default: write). Under MPIX_VERBOSE=1, rank 0
  // says on stderr when CMA cannot be used and why.
  int setup(MPI_Comm comm);
  bool ready() const { return set_up_; }

  // Whether host blocks between ranks `a` and `b` can be copied directly.
  bool host_reachable(int a, int b) const {
    return cma_ && same_machine(a, b);
  }
  // Whether ranks `a` and `b` are processes of one machine (one kernel), whatever
  // node MPIX_PPN or mpix_locality emulates: CUDA IPC, like CMA, reaches no further.
  bool same_machine(int a, int b) const { return a != b && host_node_[a] == host_node_[b]; }
  bool cma() const { return cma_; }
  CopyDirection direction() const { return direction_; }
  const std::string& cma_off_reason() const { return cma_off_reason_; }

  // Fills `out` so that a peer can reach `bytes` bytes at `local`.
  int expose(char* local, long long bytes, MemoryType type, Exposure* out);
  // Copies `bytes` bytes between `local` (this process) and the peer's region
  // `remote` + `remote_offset`: into it (write) or out of it (read). Device copies
  // may be asynchronous until complete_device_copies().
  int copy(int peer, char* local, const Exposure& remote, long long remote_offset, long long bytes,
           CopyDirection direction, long long memcpy_threshold);
  // Waits for the device copies issued since the last call (nothing on host).
  int complete_device_copies();

 private:
  bool set_up_ = false;
  bool cma_ = false;
  CopyDirection direction_ = CopyDirection::write;
  std::string cma_off_reason_;
  std::vector<pid_t> pids_;      // by rank of the library's communicator
  std::vector<int> host_node_;   // physical node by rank (MPI_COMM_TYPE_SHARED)
  struct DeviceState* device_ = nullptr;  // CUDA IPC engine (device.hpp), made on first use
};

// Copies `bytes` bytes with CMA: writes `local` to `remote` in process `pid`, or
// reads `remote` into `local`. Repeats partial transfers. MPIX_ERR_DEVICE with the
// system's reason when the kernel refuses; `peer` (the rank of `pid`) names it.
int cma_copy(int peer, pid_t pid, char* local, std::uint64_t remote, long long bytes, CopyDirection direction);

}  // namespace mpix
