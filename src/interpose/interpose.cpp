// libmpix_interpose.so: MPI_Alltoall and MPI_Alltoallv (and MPICH 4's persistent
// MPI_Alltoall(v)_init, and Open MPI's Fortran entry points) routed through mpix,
// for programs that were never changed for it (ARCHITECTURE.md "Use without code
// changes"):  LD_PRELOAD=libmpix_interpose.so mpiexec ...
//
// The library inside is the interposer's own copy, compiled with every MPI call
// renamed to PMPI_ (pmpi_names.h), so its traffic never comes back here. Whatever
// mpix does not handle goes to the PMPI_ function: intercommunicators, MPIX_INTERPOSE=0,
// and calls mpix refused (its refusals are agreed between the ranks, so all ranks
// fall back together and MPI reports the error as it would have; where only some
// ranks' arguments are wrong, all raise mpix's error instead, see leave_to_mpi).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "mpix/mpix.h"
#include "../core/error.hpp"
#include "../core/info.hpp"
#include "../core/library_comm.hpp"
#include "interpose.hpp"

namespace mpix_interpose {

namespace {

std::mutex cache_mutex;
int comm_keyval = MPI_KEYVAL_INVALID;      // the MPIX_Comm of a communicator
std::vector<MPI_Comm> cached_comms;        // communicators holding an MPIX_Comm, oldest first
std::set<std::string> reported;            // fallbacks already reported (MPIX_VERBOSE)
std::atomic<bool> finalizing{false};       // delete_at_finalize ran: calls go to MPI

// The attribute of a communicator on which some rank's MPIX_Comm_init failed: all
// ranks call PMPI_ there. The address of a byte of ours, never an MPIX_Comm.
char unusable_marker;
MPIX_Comm* const kUnusable = reinterpret_cast<MPIX_Comm*>(&unusable_marker);
// The attribute of a communicator of a libmpix linked into the program
// (library_comm.hpp): its calls are the library's own, and go to MPI.
char library_marker;
MPIX_Comm* const kLibraryOwn = reinterpret_cast<MPIX_Comm*>(&library_marker);
const char* const kLibraryOwnReason = "a communicator of the libmpix linked into the program";

bool library_comm(MPI_Comm comm) {
  char name[MPI_MAX_OBJECT_NAME] = "";
  int length = 0;
  PMPI_Comm_get_name(comm, name, &length);
  return std::strncmp(name, mpix::kLibraryCommPrefix, sizeof mpix::kLibraryCommPrefix - 1) == 0;
}

int delete_comm(MPI_Comm comm, int, void* value, void*) {
  MPIX_Comm* mpix_comm = static_cast<MPIX_Comm*>(value);
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    cached_comms.erase(std::remove(cached_comms.begin(), cached_comms.end(), comm), cached_comms.end());
  }
  if (mpix_comm != kUnusable && mpix_comm != kLibraryOwn) release_comm(comm, mpix_comm);
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else: every
// MPIX_Comm still cached (MPI_COMM_WORLD's, communicators never freed) is freed
// here, while MPI can still free their duplicates. Open MPI's Fortran MPI_FINALIZE
// calls PMPI_Finalize directly, so a wrapper of MPI_Finalize would not do.
int delete_at_finalize(MPI_Comm, int, void*, void*) {
  finalizing = true;
  free_all_persistent();
  std::vector<MPI_Comm> comms;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    comms = cached_comms;
  }
  for (MPI_Comm comm : comms) PMPI_Comm_delete_attr(comm, comm_keyval);
  PMPI_Comm_free_keyval(&comm_keyval);
  reported.clear();
  return MPI_SUCCESS;
}

// Under cache_mutex. MPI_Finalize deletes MPI_COMM_SELF's attributes in the reverse
// order of their setting, so the earlier this runs (MPI_Init), the later the
// requests and communicators are freed: after the delete callbacks of the
// program's own libraries, which may still make and free exchanges.
int create_keyvals() {
  if (comm_keyval != MPI_KEYVAL_INVALID) return MPI_SUCCESS;
  int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm, &comm_keyval, nullptr);
  if (rc != MPI_SUCCESS) return rc;
  int finalize_keyval = MPI_KEYVAL_INVALID;
  rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_at_finalize, &finalize_keyval, nullptr);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, nullptr);
  // The attribute keeps the keyval until MPI_Finalize deletes it.
  if (finalize_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&finalize_keyval);
  return rc;
}

}  // namespace

int initialized(int init_rc) {
  if (init_rc == MPI_SUCCESS && enabled()) {
    std::lock_guard<std::mutex> lock(cache_mutex);
    create_keyvals();  // see create_keyvals; else at the first exchange
  }
  return init_rc;
}

bool enabled() {
  static const bool on = !mpix::environment_says_off("MPIX_INTERPOSE");
  return on;
}

namespace {

// MPIX_VERBOSE as the library reads it (unset, empty, 0, false, no, off are quiet).
bool verbose() { return mpix::verbose_level() > 0; }

// Rank 0 of `comm` prints `line` once per `key` (MPIX_VERBOSE).
// Of an intercommunicator's two groups, whether this rank's is the one whose first
// rank comes first in MPI_COMM_WORLD (both, where a group lies outside it: spawned).
bool first_group(MPI_Comm intercomm) {
  MPI_Group local, remote, world;
  PMPI_Comm_group(intercomm, &local);
  PMPI_Comm_remote_group(intercomm, &remote);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int first = 0, local_first = MPI_UNDEFINED, remote_first = MPI_UNDEFINED;
  PMPI_Group_translate_ranks(local, 1, &first, world, &local_first);
  PMPI_Group_translate_ranks(remote, 1, &first, world, &remote_first);
  PMPI_Group_free(&local);
  PMPI_Group_free(&remote);
  PMPI_Group_free(&world);
  return local_first == MPI_UNDEFINED || remote_first == MPI_UNDEFINED || local_first < remote_first;
}

// `line` on stderr, once per `key` in this process.
void print_once(const std::string& key, const std::string& line) {
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (!reported.insert(key).second) return;
  }
  std::fprintf(stderr, "[mpix] interpose: %s\n", line.c_str());
}

// One line per communicator, from its rank 0 (of an intercommunicator, of one
// group), under MPIX_VERBOSE.
void report_once(MPI_Comm comm, const std::string& key, const std::string& line) {
  if (!verbose()) return;
  int rank = 0, inter = 0;
  if (comm != MPI_COMM_NULL) {
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_test_inter(comm, &inter);
  }
  if (rank != 0 || (inter && !first_group(comm))) return;
  print_once(key, line);
}

}  // namespace

void report_fallback(MPI_Comm comm, const char* function, const std::string& reason, int rc) {
  // A hint the user set that mpix cannot follow (a malformed MPIX_ variable, tuning or
  // machine file) is said even without MPIX_VERBOSE: the run would otherwise look as
  // if it followed it.
  // Once per job where it can be: the hints are the same on every rank, so rank 0
  // of MPI_COMM_WORLD says it.
  // Environment variables outside the info keys (MPIX_CMA) fail with MPIX_ERR_ARG,
  // and name themselves "(environment)"; hints that differ between ranks say
  // "(info or environment differ)".
  const bool configuration = rc == MPIX_ERR_INFO_KEY || rc == MPIX_ERR_INFO_VALUE || rc == MPIX_ERR_TUNING_FILE ||
                             reason.find(" (environment)") != std::string::npos ||
                             reason.find("environment differ)") != std::string::npos;
  const std::string line = std::string(function) + ": " + reason + "; calling PMPI_" + (function + 4);
  // Where ranks differ, the rank whose own hint is wrong names it, and the others say
  // "another rank": under MPIX_VERBOSE every rank prints its own message.
  const bool own = reason.find("another rank") == std::string::npos;
  if (configuration && verbose() && own) {
    print_once(std::string(function) + reason, line);
    return;
  }
  if (!configuration || verbose()) {
    report_once(comm, std::string(function) + reason, line);
    return;
  }
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  // One hint, one line: "MPIX_Alltoallv: MPIX_CMA=..." and "MPIX_Alltoallv_plan:
  // MPIX_CMA=..." are the same report. Only a function's name is dropped: a reason
  // that starts with the variable ("MPIX_CMA=x (environment): ...") keeps it.
  const std::string hint = mpix::names_a_function(reason) ? reason.substr(reason.find(": ") + 2) : reason;
  if (world_rank == 0)
    print_once(hint, line + " (MPIX_VERBOSE=1 shows every call left to MPI, and each rank's own message)");
}

int mpi_class(int mpix_code) {
  switch (mpix_code) {
    case MPIX_SUCCESS: return MPI_SUCCESS;
    case MPIX_ERR_ARG: return MPI_ERR_ARG;
    case MPIX_ERR_NO_MEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_OTHER;
  }
}

bool leave_to_mpi(MPI_Comm comm, const char* function, int rc, int* error_class) {
  const std::string message = MPIX_Last_error_message();
  const mpix::AgreedFailure agreed = mpix::last_agreed_failure();
  // Every rank got the agreed error, so every rank is here for the reduction.
  if (rc == MPIX_ERR_ARG && agreed.agreed) {
    int own = agreed.own, every_rank_own = 0;
    PMPI_Allreduce(&own, &every_rank_own, 1, MPI_INT, MPI_MIN, comm);
    if (!every_rank_own) {
      // The rank whose arguments are wrong says so even where the handler returns:
      // without the interposer, the job would have hung here. It returns the class
      // MPI returns for that fault (MPI_ERR_COUNT for a negative count), where the
      // library knows one; the others, which MPI would have left waiting, MPI_ERR_ARG.
      const int own_class = agreed.own ? mpix::last_mpi_error_class() : 0;
      *error_class = raise_error(comm, function, own_class ? own_class : mpi_class(rc), message, agreed.own);
      return false;
    }
  }
  report_fallback(comm, function, message, rc);
  return true;
}

int raise_error(MPI_Comm comm, const char* function, int error_class, const std::string& message, bool say) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &handler);
  bool fatal = handler == MPI_ERRORS_ARE_FATAL;
#if MPI_VERSION >= 4
  fatal = fatal || handler == MPI_ERRORS_ABORT;
#endif
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
  // MPI's own text for the class says nothing of what mpix found, and the program
  // has no MPIX_Last_error_message: where the handler ends the run, this line is
  // all the user gets.
  if (fatal || say || verbose()) print_once(std::string(function) + message, std::string(function) + ": " + message);
  PMPI_Comm_call_errhandler(comm, error_class);
  return error_class;  // MPI_Comm_call_errhandler returns MPI_SUCCESS once the handler returned
}

void report_routed(MPI_Comm comm, const char* function, const std::string& what) {
  report_once(comm, function, std::string(function) + ": " + what);
}

MPIX_Comm* mpix_comm_of(MPI_Comm comm, const char* function) {
  if (!enabled()) return nullptr;
  // MPI-4's Sessions make communicators without MPI_Init, where MPI_COMM_SELF and
  // MPI_COMM_WORLD, which mpix and this file use, do not exist; and after the
  // finalize callback (its requests and communicators freed) a call made from
  // another library's callback would leave a communicator no one frees.
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized || finalizing) return nullptr;
  if (comm == MPI_COMM_NULL) {
    report_fallback(comm, function, "MPI_COMM_NULL");
    return nullptr;
  }
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return nullptr;  // MPI reports the bad handle
  if (inter) {
    report_fallback(comm, function, "an intercommunicator");
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (create_keyvals() != MPI_SUCCESS) return nullptr;
  }
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, comm_keyval, &value, &found);
  if (found) {
    if (value == kUnusable) report_fallback(comm, function, "mpix could not set up this communicator");
    if (value == kLibraryOwn) report_fallback(comm, function, kLibraryOwnReason);
    return value == kUnusable || value == kLibraryOwn ? nullptr : static_cast<MPIX_Comm*>(value);
  }
  MPIX_Comm* mpix_comm = nullptr;
  if (library_comm(comm)) {
    // Local: every rank of the library's communicator has it named alike.
    report_fallback(comm, function, kLibraryOwnReason);
    mpix_comm = kLibraryOwn;
  } else {
    // Collective, as the call that got here. The ranks agree on the outcome, so that
    // all of them use mpix on this communicator or none does.
    const int rc = MPIX_Comm_init(&mpix_comm, comm);
    int ok = rc == MPIX_SUCCESS, all_ok = 0;
    std::string why = ok ? "" : MPIX_Last_error_message();
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
      if (mpix_comm) MPIX_Comm_free(&mpix_comm);
      // Only the environment (MPIX_PPN, MPIX_REGION_SIZE, ...) or MPI itself fails the set-up.
      report_fallback(comm, function, "mpix could not set up this communicator" + (why.empty() ? "" : ": " + why),
                      MPIX_ERR_INFO_VALUE);
      mpix_comm = kUnusable;
    }
  }
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    cached_comms.push_back(comm);
  }
  PMPI_Comm_set_attr(comm, comm_keyval, mpix_comm);
  return mpix_comm == kUnusable || mpix_comm == kLibraryOwn ? nullptr : mpix_comm;
}

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm) {
  MPIX_Comm* mpix_comm = mpix_comm_of(comm, "MPI_Alltoall");
  if (mpix_comm) {
    const int rc = MPIX_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, nullptr, mpix_comm);
    if (rc == MPIX_SUCCESS) return MPI_SUCCESS;
    int error_class = MPI_SUCCESS;
    if (!leave_to_mpi(comm, "MPI_Alltoall", rc, &error_class)) return error_class;
  }
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
              MPI_Comm comm) {
  MPIX_Comm* mpix_comm = mpix_comm_of(comm, "MPI_Alltoallv");
  if (mpix_comm) {
    const int rc = MPIX_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                  nullptr, mpix_comm);
    if (rc == MPIX_SUCCESS) return MPI_SUCCESS;
    int error_class = MPI_SUCCESS;
    if (!leave_to_mpi(comm, "MPI_Alltoallv", rc, &error_class)) return error_class;
  }
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

}  // namespace mpix_interpose

using namespace mpix_interpose;

extern "C" {

int MPI_Init(int* argc, char*** argv) { return initialized(PMPI_Init(argc, argv)); }

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return initialized(PMPI_Init_thread(argc, argv, required, provided));
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                  MPI_Comm comm) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

}  // extern "C"
