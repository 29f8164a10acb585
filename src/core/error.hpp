// Error codes and this thread's last error message (API.md, "Errors").
#pragma once
#include <functional>
#include <new>
#include <string>

#include "mpix/mpix.h"

namespace mpix {

// Records `message` as this thread's last error and returns `code`, so that a
// failing check reads `return fail(MPIX_ERR_ARG, "sendcounts[2]=-1: must be >= 0")`.
int fail(int code, std::string message);
// The same for an argument error of a kind MPI gives its own error class
// (MPI_ERR_COUNT, MPI_ERR_BUFFER, MPI_ERR_TYPE, MPI_ERR_TRUNCATE): kept for this
// thread until its next call begins, so that the interposer, where it raises the
// error for MPI, returns the class MPI returns for the same fault
// (last_mpi_error_class; 0: none).
int fail_as(int mpi_class, int code, std::string message);
int last_mpi_error_class();

// After a collective call's agreement found that some rank's checks failed
// (`agreed`: the largest code of any rank): every rank returns that code, so that
// all take the same error path. A rank that failed its own checks keeps its own
// message (naming the rank's code where another rank's differs), the others say
// that another rank `what` (rejected its arguments).
int fail_agreed(int local_code, const std::string& local_message, int agreed, const char* call,
                const char* what = "rejected its arguments");

// Of this thread's last failed call: whether its error came from fail_agreed, so that
// every rank of the communicator returned it, and whether this rank's own checks
// failed there. The interposer asks (interpose.cpp): MPI, given a call that only
// some ranks' checks refuse, fails it on those and leaves the others waiting.
struct AgreedFailure {
  bool agreed = false;
  bool own = false;
};
AgreedFailure last_agreed_failure();
// Marks this thread's last error as one every rank of the communicator returns
// together, as fail_agreed does, `own` where this rank's arguments are at fault.
void mark_agreed(bool own);

// Formats like printf; for messages that carry numbers.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "1 message", "3 messages": a count with its noun, for messages.
std::string counted(long long count, const char* noun);

// Turns a failed MPI call into MPIX_ERR_MPI with MPI's own error text. `what`
// names the MPI function; a call's source text is cut to its name.
int fail_mpi(int mpi_code, const char* what);
// MPI's text for an error code, without MPICH's error stack.
std::string mpi_reason(int mpi_code);

// An error found in the middle of an exchange that the rank must still finish
// (completion.hpp): kept for this thread until the API call ends.
void set_pending(int code, std::string message);

// The start of every API entry point, and of work run apart (run_apart): no error
// pending, none agreed.
void begin_call();

// The end of every API entry point: a pending error becomes the call's error, and
// a message gets the call's name in front unless it has it already.
int finish_call(const char* name, int rc);

// "MPIX_Start: ...", a message that begins with the function it is about; not
// "MPIX_CMA=fast (environment): ...", which needs the call's name in front.
bool names_a_function(const std::string& message);

// Runs `body`, work of another request than the call's own (progress.hpp), apart
// from this thread's last message and pending error, which are left as they were:
// its code is returned (a pending error it recorded included) and its message put
// in `message`.
int run_apart(const std::function<int()>& body, std::string* message);

// MPIX_SUCCESS between MPI_Init and MPI_Finalize; else MPIX_ERR_MPI with a message.
// MPI's answer to a call outside that span is to abort the job, so every entry
// point that calls MPI asks first.
int check_mpi_running(const char* name);

// An API entry point's stay in the library. Below MPI_THREAD_MULTIPLE, MPI forbids
// calls from two threads at once (and, under SINGLE and FUNNELED, from any thread
// but the main one), and would hang or corrupt data silently: such a call is
// refused here (rc()), the other thread's call goes on. Not in the simulated build,
// whose ranks all run in the simulator's one process.
class LibraryEntry {
 public:
  explicit LibraryEntry(const char* name);
  ~LibraryEntry();
  LibraryEntry(const LibraryEntry&) = delete;
  LibraryEntry& operator=(const LibraryEntry&) = delete;
  int rc() const { return rc_; }

 private:
  int rc_ = MPIX_SUCCESS;
  bool counted_ = false;
};

// Runs an API entry point's body, turning an exhausted allocation into
// MPIX_ERR_NO_MEM: no exception leaves the library.
template <class F>
int guarded(const char* name, F&& body) {
  int rc;
  begin_call();
  LibraryEntry entry(name);
  if (entry.rc() != MPIX_SUCCESS) return entry.rc();
  try {
    rc = body();
  } catch (const std::bad_alloc&) {
    rc = fail(MPIX_ERR_NO_MEM, format("%s: out of memory", name));
  }
  return finish_call(name, rc);
}

}  // namespace mpix

// Evaluates an MPI call; on failure records it and returns MPIX_ERR_MPI.
#define MPIX_CHECK_MPI(call)                                      \
  do {                                                            \
    int mpix_mpi_rc_ = (call);                                    \
    if (mpix_mpi_rc_ != MPI_SUCCESS) return ::mpix::fail_mpi(mpix_mpi_rc_, #call); \
  } while (0)

// Propagates an MPIX error code.
#define MPIX_TRY(call)                         \
  do {                                         \
    int mpix_rc_ = (call);                     \
    if (mpix_rc_ != MPIX_SUCCESS) return mpix_rc_; \
  } while (0)
