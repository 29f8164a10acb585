#include "comm.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>

#include "agreement.hpp"
#include "carried_agreement.hpp"
#include "datatype.hpp"
#include "error.hpp"
#include "handles.hpp"
#include "info.hpp"
#include "library_comm.hpp"
#include "progress.hpp"

using namespace mpix;

// The node layout is agreed (API.md): every rank gives the same ppn (0: detected,
// and detection itself gives every rank the same tables), or all fail together, as
// they do when any rank failed before (so no rank enters Locality::init's
// collectives alone). Collective on `comm`.
//
// It is the call's first collective, waited for while the process's started
// requests move on (progress.hpp), and it ends on no rank before every rank has
// made it: so the splits and the duplicate after it, which MPI has no
// nonblocking form of, are entered by ranks that all made this call, none of
// them still waiting for a started request that needs a peer blocked in them.
static int agree_layout(MPI_Comm comm, const char* name, int local_rc, int ppn) {
  std::string local_message = MPIX_Last_error_message();
  const int mine_ppn = ppn > 0 ? ppn : 0;
  int mine[3] = {local_rc != MPIX_SUCCESS, mine_ppn, -mine_ppn};
  int all[3];
  MPIX_TRY(allreduce_progressing(mine, all, 3, MPI_INT, MPI_MAX, comm));
  if (local_rc != MPIX_SUCCESS) return fail(local_rc, local_message);
  if (all[0])
    return fail(MPIX_ERR_ARG, format("%s: another rank failed its checks (its own message names the problem)", name));
  if (all[1] != -all[2])
    return fail(MPIX_ERR_ARG, format("%s: ranks give different node layouts: ranks per node %d here, from %d to %d "
                                     "over all ranks (0: detected; MPIX_PPN or the ppn argument differ)",
                                     name, mine_ppn, -all[2], all[1]));
  return MPIX_SUCCESS;
}

// Frees what `c` holds and `c`; MPI is running.
static void free_comm(MPIX_Comm_s* c) {
  c->regions.free_comms();
  c->locality.free_comms();
  free_agreement(c);
  handle_freed(c);
  if (c->sdde_window.win != MPI_WIN_NULL) MPI_Win_free(&c->sdde_window.win);  // SDDE rma
  if (c->lib_comm != MPI_COMM_NULL) MPI_Comm_free(&c->lib_comm);
  delete c;
}

// The communicator calls make MPI calls: the thread level's rules (LibraryEntry)
// apply to them as to the exchanges.
extern "C" int MPIX_Comm_init(MPIX_Comm** comm, MPI_Comm mpi_comm) {
  LibraryEntry entry("MPIX_Comm_init");
  MPIX_TRY(entry.rc());
  // A NULL `comm` on some ranks fails in the agreement below, with the others.
  int rc = MPIX_SUCCESS;
  if (comm) *comm = nullptr;
  else rc = fail(MPIX_ERR_ARG, "MPIX_Comm_init: comm is NULL");
  if (mpi_comm == MPI_COMM_NULL) return fail(MPIX_ERR_ARG, "MPIX_Comm_init: mpi_comm is MPI_COMM_NULL");
  // The same answer on every rank of an intercommunicator: no rank waits.
  int inter = 0;
  MPIX_CHECK_MPI(MPI_Comm_test_inter(mpi_comm, &inter));
  if (inter)
    return fail(MPIX_ERR_UNSUPPORTED, "MPIX_Comm_init: mpi_comm is an intercommunicator; the exchanges are "
                                      "defined on intracommunicators only");
  int ppn = 0;
  if (rc == MPIX_SUCCESS) rc = int_from_environment("MPIX_PPN", &ppn);
#ifdef MPIX_SIMULATED
  double bandwidth = 0;
  if (rc == MPIX_SUCCESS) rc = copy_bandwidth_from_environment(&bandwidth);
#endif
  auto* c = new (std::nothrow) MPIX_Comm_s;
  if (!c && rc == MPIX_SUCCESS) rc = fail(MPIX_ERR_NO_MEM, "MPIX_Comm_init: out of memory");
  // On the program's communicator, before the duplicate: a rank that fails here
  // (MPIX_PPN malformed, a NULL comm, no memory) fails with every other, and none
  // makes the duplicate.
  rc = agree_layout(mpi_comm, "MPIX_Comm_init", rc, ppn);
  if (rc != MPIX_SUCCESS) {
    delete c;
    return finish_call("MPIX_Comm_init", rc);
  }
  c->user_comm = mpi_comm;
  const int dup_rc = MPI_Comm_dup(mpi_comm, &c->lib_comm);
  if (dup_rc != MPI_SUCCESS) {
    delete c;
    return finish_call("MPIX_Comm_init", fail_mpi(dup_rc, "MPI_Comm_dup"));
  }
  MPI_Comm_set_errhandler(c->lib_comm, MPI_ERRORS_RETURN);
  name_library_comm(c->lib_comm, "duplicate");
  MPI_Comm_size(c->lib_comm, &c->size);
  MPI_Comm_rank(c->lib_comm, &c->rank);
  int* tag_ub = nullptr;
  int has_tag_ub = 0;
  MPI_Comm_get_attr(c->lib_comm, MPI_TAG_UB, &tag_ub, &has_tag_ub);
  if (has_tag_ub && *tag_ub >= 32767) {
    long long tags = (long long)*tag_ub + 1;
    if (tags >= 8 * mpix::kSpeculationTags) {
      tags -= mpix::kSpeculationTags;
      c->speculation_tag_base = tags;
    }
    c->tag_slots = (unsigned long long)tags / 8;
  }
  rc = c->locality.init(c->lib_comm, ppn);
  // Regions come after the nodes (a failure above is agreed, so every rank skips
  // them). Every rank reads the environment and takes part in the regions'
  // agreement, so that a malformed value on one rank fails all together.
  if (rc == MPIX_SUCCESS) {
    int ranks_per_region = 0;
    const int region_rc = int_from_environment("MPIX_REGION_SIZE", &ranks_per_region);
    rc = c->regions.init(c->lib_comm, c->locality, ranks_per_region, region_rc);
  }
  if (rc == MPIX_SUCCESS) rc = choose_carry_pattern(c);
  if (rc != MPIX_SUCCESS) {
    free_comm(c);
    return finish_call("MPIX_Comm_init", rc);  // "MPIX_PPN=two ..." gets the call's name
  }
  *comm = c;
  handle_made(c);
  return MPIX_SUCCESS;
}

extern "C" int MPIX_Comm_free(MPIX_Comm** comm) {
  if (!comm) return fail(MPIX_ERR_ARG, "MPIX_Comm_free: comm is NULL");
  MPIX_TRY(check_handle(*comm, "MPIX_Comm_free", "comm"));
  // After MPI_Finalize its communicators are gone, and freeing them would abort:
  // nothing is freed (the process is ending).
  LibraryEntry entry("MPIX_Comm_free");
  MPIX_TRY(entry.rc());
  MPIX_Comm_s* c = *comm;
  release_reusable_plans(c);
  if (c->live_requests > 0)
    return fail(MPIX_ERR_ARG, format("MPIX_Comm_free: %d persistent request(s) still use this communicator; "
                                     "free them first", c->live_requests));
  // MPI_Win_free synchronises: a peer that frees only after completing a started
  // request this rank's part of which it waits for must not find this rank blocked
  // in it. Every rank has the window or none (made by collective calls).
  if (c->sdde_window.win != MPI_WIN_NULL) MPIX_TRY(finish_call("MPIX_Comm_free", barrier_progressing(c->lib_comm)));
  free_comm(c);
  *comm = nullptr;
  return MPIX_SUCCESS;
}

extern "C" int MPIX_Comm_update_locality(MPIX_Comm* comm, int ppn) {
  MPIX_TRY(check_handle(comm, "MPIX_Comm_update_locality", "comm"));
  LibraryEntry entry("MPIX_Comm_update_locality");
  MPIX_TRY(entry.rc());
  // Plans keep the node layout and the node communicators they were made with.
  int rc = MPIX_SUCCESS;
  release_reusable_plans(comm);
  if (comm->live_requests > 0)
    rc = fail(MPIX_ERR_ARG, format("MPIX_Comm_update_locality: %d persistent request(s) still use this "
                                   "communicator's node layout; free them first", comm->live_requests));
  MPIX_TRY(agree_layout(comm->lib_comm, "MPIX_Comm_update_locality", rc, ppn));
  MPIX_TRY(comm->locality.init(comm->lib_comm, ppn));
  // The regions live inside the nodes: rebuilt on the new nodes, with their setting.
  rc = comm->regions.init(comm->lib_comm, comm->locality, comm->regions.ranks_per_region());
  if (rc == MPIX_SUCCESS) rc = choose_carry_pattern(comm);
  return finish_call("MPIX_Comm_update_locality", rc);  // "regions: ..." gets the call's name
}

extern "C" int MPIX_Comm_locality(const MPIX_Comm* comm, int* num_nodes, int* node,
                                  int* local_size, int* local_rank) {
  MPIX_TRY(check_handle(comm, "MPIX_Comm_locality", "comm"));
  if (num_nodes) *num_nodes = comm->locality.num_nodes();
  if (node) *node = comm->locality.node();
  if (local_size) *local_size = comm->locality.local_size();
  if (local_rank) *local_rank = comm->locality.local_rank();
  return MPIX_SUCCESS;
}

extern "C" MPI_Comm MPIX_Comm_mpi(const MPIX_Comm* comm) {
  return handle_live(comm) ? comm->user_comm : MPI_COMM_NULL;
}

extern "C" int MPIX_Free(void* ptr) {
  std::free(ptr);
  return MPIX_SUCCESS;
}

namespace mpix {

void name_library_comm(MPI_Comm comm, const char* what) {
  char name[MPI_MAX_OBJECT_NAME];
  std::snprintf(name, sizeof name, "%s%s", kLibraryCommPrefix, what);
  MPI_Comm_set_name(comm, name);
}

bool reports(MPIX_Comm_s* comm, const std::string& key) {
  const int level = verbose_level();
  return comm->rank == 0 && level > 0 && (level > 1 || comm->verbose_reported.insert(key).second);
}

}  // namespace mpix
