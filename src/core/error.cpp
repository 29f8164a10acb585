#include "error.hpp"

#include <cstdarg>
#include <cstdio>

#ifdef MPIX_SIMULATED
#include <simgrid/actor.h>

#include <map>
#endif

namespace {
#ifdef MPIX_SIMULATED
// SMPI runs every simulated rank in the one OS thread of the simulator, so a
// thread_local would be one variable for all of them. smpirun's default
// privatization (smpi/privatization:dlopen) gives each rank its own copy of the
// program's data, this one included; keyed by the simulated process, the message
// stays per rank also with privatization off.
std::string& last_error() {
  static std::map<aid_t, std::string> by_rank;
  return by_rank[sg_actor_self_get_pid()];
}
#else
thread_local std::string last_error_message;
std::string& last_error() { return last_error_message; }
#endif
}  // namespace

namespace mpix {

int fail(int code, std::string message) {
  last_error() = std::move(message);
  return code;
}

std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

int fail_mpi(int mpi_code, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(mpi_code, text, &length) != MPI_SUCCESS) text[0] = '\0';
  return fail(MPIX_ERR_MPI, std::string(what) + " failed: " + text);
}

}  // namespace mpix

extern "C" const char* MPIX_Error_string(int code) {
  switch (code) {
    case MPIX_SUCCESS: return "success";
    case MPIX_ERR_ARG: return "invalid argument";
    case MPIX_ERR_INFO_KEY: return "unknown info key";
    case MPIX_ERR_INFO_VALUE: return "invalid info value";
    case MPIX_ERR_UNSUPPORTED: return "algorithm not applicable to this call";
    case MPIX_ERR_NO_MEM: return "out of memory";
    case MPIX_ERR_MPI: return "MPI call failed";
    case MPIX_ERR_DEVICE: return "device call failed";
    case MPIX_ERR_TUNING_FILE: return "tuning file missing or malformed";
    default: return "unknown error code";
  }
}

extern "C" const char* MPIX_Last_error_message(void) { return last_error().c_str(); }
