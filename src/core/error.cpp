#include "error.hpp"

#include <atomic>
#include <cctype>
#include <cstdarg>
#include <cstdio>

#ifdef MPIX_SIMULATED
#include <simgrid/actor.h>

#include <map>
#endif

namespace {
// This thread's last error message, and an error pending until the call ends.
struct ThreadErrors {
  std::string last;
  int pending_code = MPIX_SUCCESS;
  std::string pending;
  mpix::AgreedFailure agreed;
  int mpi_class = 0;  // fail_as's, until the next call begins
};

#ifdef MPIX_SIMULATED
// SMPI runs every simulated rank in the one OS thread of the simulator, so a
// thread_local would be one variable for all of them. smpirun's default
// privatization (smpi/privatization:dlopen) gives each rank its own copy of the
// program's data, this one included; keyed by the simulated process, the message
// stays per rank also with privatization off.
ThreadErrors& errors() {
  static std::map<aid_t, ThreadErrors> by_rank;
  return by_rank[sg_actor_self_get_pid()];
}
#else
thread_local ThreadErrors thread_errors;
ThreadErrors& errors() { return thread_errors; }
#endif
std::string& last_error() { return errors().last; }
}  // namespace

namespace mpix {

int fail(int code, std::string message) {
  last_error() = std::move(message);
  return code;
}

int fail_as(int mpi_class, int code, std::string message) {
  errors().mpi_class = mpi_class;
  return fail(code, std::move(message));
}

int last_mpi_error_class() { return errors().mpi_class; }

std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

std::string counted(long long count, const char* noun) {
  return format("%lld %s%s", count, noun, count == 1 ? "" : "s");
}

std::string mpi_reason(int mpi_code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(mpi_code, text, &length) != MPI_SUCCESS) text[0] = '\0';
  // MPICH appends its error stack (function calls with pointer arguments) after
  // the reason: only the reason is kept.
  std::string reason = text;
  std::size_t stack = reason.find(", error stack");
  if (stack == std::string::npos) stack = reason.find('\n');
  if (stack != std::string::npos) reason.resize(stack);
  return reason;
}

int check_mpi_running(const char* name) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized) return fail(MPIX_ERR_MPI, format("%s: MPI is not initialized (call MPI_Init first)", name));
  if (finalized)
    return fail(MPIX_ERR_MPI, format("%s: called after MPI_Finalize (free mpix objects before it)", name));
  return MPIX_SUCCESS;
}

#ifndef MPIX_SIMULATED
namespace {
std::atomic<int> threads_inside{0};

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}
}  // namespace
#endif

LibraryEntry::LibraryEntry(const char* name) {
  rc_ = check_mpi_running(name);
#ifndef MPIX_SIMULATED
  if (rc_ != MPIX_SUCCESS) return;
  int level = MPI_THREAD_MULTIPLE;
  MPI_Query_thread(&level);
  if (level >= MPI_THREAD_MULTIPLE) return;
  int main_thread = 1;
  if (level <= MPI_THREAD_FUNNELED) MPI_Is_thread_main(&main_thread);
  if (!main_thread) {
    rc_ = fail(MPIX_ERR_ARG, format("%s: called from a thread other than MPI's main one, where MPI provides %s "
                                    "(MPI_Init_thread with MPI_THREAD_SERIALIZED or more allows it)",
                                    name, level_name(level)));
    return;
  }
  counted_ = true;
  if (threads_inside.fetch_add(1) > 0)
    rc_ = fail(MPIX_ERR_ARG, format("%s: called while another thread is in the library, where MPI provides %s "
                                    "(calls at the same time need MPI_Init_thread with MPI_THREAD_MULTIPLE)",
                                    name, level_name(level)));
#endif
}

LibraryEntry::~LibraryEntry() {
#ifndef MPIX_SIMULATED
  if (counted_) threads_inside.fetch_sub(1);
#endif
}

int fail_agreed(int local_code, const std::string& local_message, int agreed, const char* call, const char* what) {
  errors().agreed = AgreedFailure{true, local_code != MPIX_SUCCESS};
  if (local_code == agreed) return fail(agreed, local_message);
  if (local_code != MPIX_SUCCESS)
    return fail(agreed, format("%s (%s here; every rank returns %s, another rank's error)", local_message.c_str(),
                               MPIX_Error_string(local_code), MPIX_Error_string(agreed)));
  return fail(agreed, format("%s: another rank %s (%s; its own message names the problem)", call, what,
                             MPIX_Error_string(agreed)));
}

AgreedFailure last_agreed_failure() { return errors().agreed; }

void mark_agreed(bool own) { errors().agreed = AgreedFailure{true, own}; }

int fail_mpi(int mpi_code, const char* what) {
  std::string function = what;
  if (function.find('(') != std::string::npos) function.resize(function.find('('));  // MPIX_CHECK_MPI's call text
  return fail(MPIX_ERR_MPI, function + " failed: " + mpi_reason(mpi_code));
}

void set_pending(int code, std::string message) {
  ThreadErrors& e = errors();
  if (code != MPIX_SUCCESS && e.pending_code != MPIX_SUCCESS) return;  // the first one counts
  e.pending_code = code;
  e.pending = std::move(message);
}

void begin_call() {
  ThreadErrors& e = errors();
  e.pending_code = MPIX_SUCCESS;
  e.pending.clear();
  e.agreed = AgreedFailure();
  e.mpi_class = 0;
}

int run_apart(const std::function<int()>& body, std::string* message) {
  const ThreadErrors saved = errors();
  begin_call();
  int rc;
  try {
    rc = body();
  } catch (const std::bad_alloc&) {
    rc = fail(MPIX_ERR_NO_MEM, "out of memory");
  }
  ThreadErrors& e = errors();
  if (rc == MPIX_SUCCESS && e.pending_code != MPIX_SUCCESS) rc = fail(e.pending_code, e.pending);
  *message = rc != MPIX_SUCCESS ? e.last : std::string();
  e = saved;
  return rc;
}

bool names_a_function(const std::string& message) {
  if (message.compare(0, 5, "MPIX_") != 0) return false;
  std::size_t end = 5;
  while (end < message.size() && (std::isalnum((unsigned char)message[end]) || message[end] == '_')) ++end;
  return end < message.size() && message[end] == ':';
}

int finish_call(const char* name, int rc) {
  ThreadErrors& e = errors();
  if (e.pending_code != MPIX_SUCCESS) {
    if (rc == MPIX_SUCCESS) rc = fail(e.pending_code, e.pending);
    e.pending_code = MPIX_SUCCESS;
    e.pending.clear();
  }
  if (rc != MPIX_SUCCESS && !names_a_function(e.last)) e.last = std::string(name) + ": " + e.last;
  return rc;
}

}  // namespace mpix

extern "C" const char* MPIX_Error_string(int code) {
  switch (code) {
    case MPIX_SUCCESS: return "success";
    case MPIX_ERR_ARG: return "invalid argument";
    case MPIX_ERR_INFO_KEY: return "unknown info key";
    case MPIX_ERR_INFO_VALUE: return "invalid info value";
    case MPIX_ERR_UNSUPPORTED: return "not supported: the algorithm does not apply, or past a limit of the library";
    case MPIX_ERR_NO_MEM: return "out of memory";
    case MPIX_ERR_MPI: return "MPI call failed";
    case MPIX_ERR_DEVICE: return "device call failed";
    case MPIX_ERR_TUNING_FILE: return "tuning or machine file missing or malformed";
    default: return "unknown error code";
  }
}

extern "C" const char* MPIX_Last_error_message(void) { return last_error().c_str(); }
