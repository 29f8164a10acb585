#include "direct_copy.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "../core/error.hpp"
#include "../core/info.hpp"
#include "device.hpp"

namespace mpix {

const char* memory_type_name(MemoryType type) { return type == MemoryType::device ? "device" : "host"; }

MemoryType memory_type(const void* ptr) { return ptr ? device_memory_type(ptr) : MemoryType::host; }

int cma_copy(int peer, pid_t pid, char* local, std::uint64_t remote, long long bytes, CopyDirection direction) {
  while (bytes > 0) {
    iovec here{local, (std::size_t)bytes};
    iovec there{(void*)(std::uintptr_t)remote, (std::size_t)bytes};
    ssize_t moved = direction == CopyDirection::write ? process_vm_writev(pid, &here, 1, &there, 1, 0)
                                                      : process_vm_readv(pid, &here, 1, &there, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      const bool write = direction == CopyDirection::write;
      // EFAULT cannot tell which side's memory was refused.
      const bool fault = moved < 0 && errno == EFAULT;
      return fail(MPIX_ERR_DEVICE,
                  format("%s of %lld bytes %s rank %d (process %d): %s%s", write ? "process_vm_writev" : "process_vm_readv",
                         bytes, write ? "into the receive buffer of" : "from the send buffer of", peer, (int)pid,
                         moved < 0 ? std::strerror(errno) : "nothing moved",
                         fault ? format(" (this rank's %s block or rank %d's is not accessible memory)",
                                        write ? "send" : "receive", peer).c_str()
                               : ""));
    }
    local += moved;
    remote += (std::uint64_t)moved;
    bytes -= moved;
  }
  return MPIX_SUCCESS;
}

namespace {

// Why the kernel may refuse, for the message that says CMA is off.
std::string ptrace_scope() {
  std::ifstream file("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(file >> scope)) return "";
  return format("; kernel.yama.ptrace_scope=%d", scope);
}

enum CmaSetting { kCmaOff = 0, kCmaRead = 1, kCmaWrite = 2, kCmaBad = 3 };

CmaSetting cma_setting() {
  const char* text = std::getenv("MPIX_CMA");
  if (!text || !*text || !std::strcmp(text, "write") || !std::strcmp(text, "on")) return kCmaWrite;
  if (!std::strcmp(text, "read")) return kCmaRead;
  if (!std::strcmp(text, "off") || !std::strcmp(text, "0")) return kCmaOff;
  return kCmaBad;
}

}  // namespace

DirectCopy::~DirectCopy() {
  if (device_) device_state_destroy(device_);
}

int DirectCopy::setup(MPI_Comm comm) {
  if (set_up_) return MPIX_SUCCESS;
  int size = 0, rank = 0;
  MPIX_CHECK_MPI(MPI_Comm_size(comm, &size));
  MPIX_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  // The physical node, whatever MPIX_PPN emulates: CMA reaches processes of the
  // same kernel only.
  MPI_Comm shared = MPI_COMM_NULL;
  MPIX_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  int leader = rank;
  int rc = MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  MPIX_CHECK_MPI(rc);

  // Each rank publishes its pid, its node's leader and a token that peers read
  // back through CMA: equal bytes prove that the pid names this very process.
  static thread_local std::uint64_t token = 0;
  token = ((std::uint64_t)getpid() << 32) ^ (std::uint64_t)(std::uintptr_t)&token ^ 0x6d70697863ull;
  struct Card {
    std::int64_t pid, leader, token_address, token;
  } mine{(std::int64_t)getpid(), leader, (std::int64_t)(std::uintptr_t)&token, (std::int64_t)token};
  std::vector<Card> cards(size);
  MPIX_CHECK_MPI(MPI_Allgather(&mine, 4, MPI_INT64_T, cards.data(), 4, MPI_INT64_T, comm));
  pids_.resize(size);
  host_node_.resize(size);
  for (int r = 0; r < size; ++r) {
    pids_[r] = (pid_t)cards[r].pid;
    host_node_[r] = (int)cards[r].leader;
  }

  const CmaSetting setting = cma_setting();
  int failed_errno = 0;  // of this rank's probes; -1: a token did not match
  if (setting == kCmaRead || setting == kCmaWrite) {
    for (int r = 0; r < size && !failed_errno; ++r) {
      if (r == rank || host_node_[r] != host_node_[rank]) continue;
      std::uint64_t seen = 0;
      iovec here{&seen, sizeof seen};
      iovec there{(void*)(std::uintptr_t)cards[r].token_address, sizeof seen};
      ssize_t moved = process_vm_readv(pids_[r], &here, 1, &there, 1, 0);
      if (moved < 0) failed_errno = errno ? errno : EIO;
      else if (moved != (ssize_t)sizeof seen || seen != (std::uint64_t)cards[r].token) failed_errno = -1;
    }
  }
  // Agreed: the setting (min and max) and the first failure anywhere.
  int local[3] = {(int)setting, -(int)setting, failed_errno != 0 ? 1 : 0};
  int global[3];
  MPIX_CHECK_MPI(MPI_Allreduce(local, global, 3, MPI_INT, MPI_MAX, comm));
  int any_errno = failed_errno > 0 ? failed_errno : 0, first_errno = 0;
  MPIX_CHECK_MPI(MPI_Allreduce(&any_errno, &first_errno, 1, MPI_INT, MPI_MAX, comm));
  cma_ = false;
  // A malformed or unequal MPIX_CMA fails on every rank (a typo is not a silent default).
  if (global[0] != -global[1])
    return fail(MPIX_ERR_ARG, "MPIX_CMA (environment) differs between ranks");
  if (setting == kCmaBad)
    return fail(MPIX_ERR_ARG, format("MPIX_CMA=%s (environment): expected off, read or write", std::getenv("MPIX_CMA")));
  if (setting == kCmaOff) {
    cma_off_reason_ = "MPIX_CMA=off";
  } else if (global[2]) {
    cma_off_reason_ = first_errno > 0
                          ? format("process_vm_readv between ranks of a node failed: %s%s", std::strerror(first_errno),
                                   ptrace_scope().c_str())
                          : std::string("process_vm_readv between ranks of a node read the wrong process");
  } else {
    cma_ = true;
    direction_ = setting == kCmaRead ? CopyDirection::read : CopyDirection::write;
  }
  if (!cma_ && rank == 0 && verbose_level() > 0)
    std::fprintf(stderr, "[mpix] cross-memory attach (CMA) is off: %s; intra-node blocks of host memory go by "
                         "messages\n", cma_off_reason_.c_str());
  set_up_ = true;
  return MPIX_SUCCESS;
}

int DirectCopy::expose(char* local, long long bytes, MemoryType type, Exposure* out) {
  *out = Exposure{};
  out->address = (std::uint64_t)(std::uintptr_t)local;
  out->bytes = bytes;
  if (type == MemoryType::device) {
    out->device = 1;
    if (bytes > 0) MPIX_TRY(device_expose(local, bytes, out));
  }
  return MPIX_SUCCESS;
}

int DirectCopy::copy(int peer, char* local, const Exposure& remote, long long remote_offset, long long bytes,
                     CopyDirection direction, long long memcpy_threshold) {
  if (bytes <= 0) return MPIX_SUCCESS;
  if (remote_offset < 0 || remote_offset + bytes > remote.bytes)
    return fail(MPIX_ERR_ARG, format("direct copy of %lld bytes at offset %lld of a %lld-byte region of rank %d",
                                     bytes, remote_offset, (long long)remote.bytes, peer));
  if (remote.device) {
    if (!device_) MPIX_TRY(device_state_create(&device_));
    return device_copy(device_, peer, local, remote, remote_offset, bytes, direction, memcpy_threshold);
  }
  return cma_copy(peer, pids_[peer], local, remote.address + (std::uint64_t)remote_offset, bytes, direction);
}

int DirectCopy::complete_device_copies() { return device_ ? device_synchronize(device_) : MPIX_SUCCESS; }

}  // namespace mpix
