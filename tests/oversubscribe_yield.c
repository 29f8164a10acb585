/* Preloaded into the test ranks of the MPICH build (tests/meson.build): a rank that
 * finds nothing to progress 16 times in a row gives its core away (sched_yield).
 *
 * Why: the suite runs up to 16 ranks on 2 cores. Debian's MPICH (ch4:ucx) spins in
 * ucp_worker_progress while it waits and never yields (MPIR_CVAR_POLLS_BEFORE_YIELD
 * does not reach that loop), so a rank that waits for one that is not scheduled
 * burns its whole time slice: an MPI_Barrier took 35 ms at 8 ranks and 100 ms at
 * 16, against 0.07 and 0.3 ms with this. Open MPI under --oversubscribe yields on
 * its own (mpi_yield_when_idle). Only the test runs see it; the library is
 * unchanged, and nothing is timed by a test. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void*);

unsigned ucp_worker_progress(void* worker) {
  static progress_fn real_progress;
  static _Thread_local unsigned idle_polls;
  progress_fn progress = __atomic_load_n(&real_progress, __ATOMIC_ACQUIRE);
  if (!progress) {
    progress = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    __atomic_store_n(&real_progress, progress, __ATOMIC_RELEASE);
  }
  unsigned events = progress(worker);
  if (events) {
    idle_polls = 0;
  } else if (++idle_polls >= 16) {
    idle_polls = 0;
    sched_yield();
  }
  return events;
}
