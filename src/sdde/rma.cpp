// rma (paper 001 algorithm 3, MPIX_Alltoall_crs only): every rank owns a window
// with one slot per possible source; a sender puts its message into its slot on
// each destination, a fence completes all puts, and each rank collects its slots.
//
// Arrivals. The paper takes a slot whose first value is non-zero as received,
// which loses every message whose data is zero. Here each slot has a separate
// 64-bit mark; a sender puts, next to the data, the window's call number (the
// epoch, the same on every rank because calls are collective). A slot arrived in
// this call iff its mark equals this call's epoch, whatever the data. Marks of
// earlier calls are older epochs, so the window is never cleared between calls.
//
// Window: [P marks of 8 bytes][P slots of B bytes], B = the agreed message size in
// bytes (recvcount x size of recvtype, equal on all ranks, checked in the
// agreement). Data is packed before the put and unpacked from the slot, so any
// datatype works (MPI_BYTE on both sides of the put). Creation is collective and
// costly (the paper notes it can be amortised), so the window is kept on the
// MPIX_Comm and reused while it is large enough; a call that needs more replaces
// it (all ranks decide alike: the size is agreed). A window above
// kCachedWindowBytes serves one call only, so that a single large call does not
// pin memory for the communicator's lifetime. MPIX_Comm_free frees the window.
//
// Synchronization: MPI_Win_fence before the puts (no put may reach a rank still
// reading its slots of the previous call) and after them; 2 fences per call, and
// an O(P) scan of the marks, which is why the method only pays at large scale.
#include <cstdint>
#include <cstring>

#include "../core/algorithms.hpp"
#include "../core/error.hpp"
#include "sdde.hpp"

namespace mpix {
namespace {

constexpr MPI_Aint kCachedWindowBytes = 64 << 20;

int create_window(MPI_Comm comm, MPI_Aint bytes, MPI_Aint mark_bytes, SddeWindow* window) {
  MPI_Info info;
  MPIX_CHECK_MPI(MPI_Info_create(&info));
  MPI_Info_set(info, "no_locks", "true");  // fences only
  int rc = MPI_Win_allocate(bytes, 1, info, comm, &window->base, &window->win);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) return fail_mpi(rc, "MPI_Win_allocate");
  MPI_Win_set_errhandler(window->win, MPI_ERRORS_RETURN);
  window->bytes = bytes;
  window->epoch = 0;
  charge_copy(mark_bytes);
  std::memset(window->base, 0, (std::size_t)mark_bytes);  // epoch 0: never a valid mark
  return MPIX_SUCCESS;
}

}  // namespace

int run_sdde_rma(SddeContext& context) {
  const SddeCall& call = *context.call;
  MPIX_Comm_s* comm = context.comm;
  const int size = call.size, me = call.rank;
  const MPI_Aint slot = (MPI_Aint)call.message_bytes;
  const MPI_Aint mark_bytes = (MPI_Aint)size * 8;
  // Rounded up to 64 bytes: with MPICH 4.0 (ch4, shared memory), a window whose
  // size is not a multiple of 16 gets remote puts at the wrong offset (a 56-byte
  // window was written 8 bytes before the target's base); whole cache lines avoid
  // it and cost at most 63 bytes.
  const MPI_Aint need = (mark_bytes + (MPI_Aint)size * slot + 63) / 64 * 64;

  // Declared before the single-use window, so that it is released after the window
  // is freed: the puts read from it, and MPICH 4.0.2 over UCX was seen reading one in
  // MPI_Win_free's progress after the closing fence (a segfault once the buffer was
  // unmapped).
  ScratchBuffer staging = comm->scratch.acquire((std::size_t)slot * call.sends.size());
  SddeWindow single_use;
  const bool cached = need <= kCachedWindowBytes;
  SddeWindow* window = cached ? &comm->sdde_window : &single_use;
  if (window->win == MPI_WIN_NULL || window->bytes < need) {
    if (window->win != MPI_WIN_NULL) MPIX_CHECK_MPI(MPI_Win_free(&window->win));
    MPIX_TRY(create_window(context.mpi_comm, need, mark_bytes, window));
  }
  // A window that cannot be kept is freed on every way out.
  struct FreeSingleUse {
    SddeWindow* window;
    ~FreeSingleUse() {
      if (window->win != MPI_WIN_NULL) MPI_Win_free(&window->win);
    }
  } free_single_use{&single_use};

  const std::uint64_t epoch = ++window->epoch;
  for (std::size_t i = 0; i < call.sends.size(); ++i) {
    const SddeMessage& m = call.sends[i];
    MPIX_TRY(pack_block(Block{const_cast<char*>(m.buf), m.count, &call.send_layout},
                        staging.data() + (MPI_Aint)i * slot, context.mpi_comm));
  }

  const Locality& loc = comm->locality;
  MPIX_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, window->win));
  for (std::size_t i = 0; i < call.sends.size(); ++i) {
    const int dest = call.sends[i].dest;
    if (slot > 0)
      MPIX_CHECK_MPI(MPI_Put(staging.data() + (MPI_Aint)i * slot, (int)slot, MPI_BYTE, dest,
                             mark_bytes + (MPI_Aint)me * slot, (int)slot, MPI_BYTE, window->win));
    MPIX_CHECK_MPI(MPI_Put(&epoch, 1, MPI_UINT64_T, dest, (MPI_Aint)me * 8, 1, MPI_UINT64_T, window->win));
    if (dest == me) continue;
    ++context.stats->messages;
    context.stats->bytes += slot + 8;
    if (loc.node_of(dest) != loc.node()) {
      ++context.stats->inter_node_messages;
      context.stats->inter_node_bytes += slot + 8;
    }
  }
  MPIX_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, window->win));
  context.stats->collectives += 2;

  // The fence made every put visible here; the marks are read as local memory.
  std::uint64_t mark = 0;
  long long arrived = 0;
  charge_copy(mark_bytes);
  for (int s = 0; s < size; ++s) {
    std::memcpy(&mark, window->base + (MPI_Aint)s * 8, sizeof mark);
    arrived += mark == epoch;
  }
  // The count is exact, so the output is allocated once and filled from the slots.
  MPIX_TRY(context.inbox->expect(arrived, arrived * slot));
  charge_copy(mark_bytes);
  for (int s = 0; s < size; ++s) {
    std::memcpy(&mark, window->base + (MPI_Aint)s * 8, sizeof mark);
    if (mark == epoch)
      MPIX_TRY(context.inbox->add_packed(s, window->base + mark_bytes + (MPI_Aint)s * slot, slot));
  }
  return MPIX_SUCCESS;
}

}  // namespace mpix
