#include "handles.hpp"

#include <mutex>
#include <unordered_set>

#include "error.hpp"

namespace mpix {

namespace {

std::mutex handles_mutex;

std::unordered_set<const void*>& live_handles() {
  static std::unordered_set<const void*> handles;
  return handles;
}

}  // namespace

void handle_made(const void* handle) {
  std::lock_guard<std::mutex> lock(handles_mutex);
  live_handles().insert(handle);
}

void handle_freed(const void* handle) {
  std::lock_guard<std::mutex> lock(handles_mutex);
  live_handles().erase(handle);
}

bool handle_live(const void* handle) {
  std::lock_guard<std::mutex> lock(handles_mutex);
  return live_handles().count(handle) > 0;
}

int check_handle(const void* handle, const char* call, const char* what) {
  if (!handle) return fail(MPIX_ERR_ARG, format("%s: %s is NULL", call, what));
  if (!handle_live(handle))
    return fail(MPIX_ERR_ARG, format("%s: %s is not a live handle: freed already (a copy of a handle that its free "
                                     "set to NULL), or not made by this library", call, what));
  return MPIX_SUCCESS;
}

}  // namespace mpix
