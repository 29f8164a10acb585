// Calls the library refuses with an error instead of passing them on to MPI,
// whose answer would be to abort the job, hang or corrupt data silently
// (src/core/error.hpp, LibraryEntry and check_mpi_running):
//  - before MPI_Init and after MPI_Finalize;
//  - below MPI_THREAD_MULTIPLE, a call from a thread other than the main one
//    (SINGLE, FUNNELED) or while another thread is in the library (SERIALIZED).
// Not a Catch2 program: it makes MPI_Init_thread and MPI_Finalize itself, at the
// level named by its argument (funneled or serialized).
#include <mpix/mpix.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAILED: %s (last message: %s)\n", what, MPIX_Last_error_message());
}

bool message_has(const char* text) { return std::strstr(MPIX_Last_error_message(), text) != nullptr; }

int exchange(MPIX_Comm* comm, int size) {
  std::vector<int> send((std::size_t)size, 1), recv((std::size_t)size, 0);
  return MPIX_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, nullptr, comm);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string level_name = argc > 1 ? argv[1] : "funneled";
  const int asked = level_name == "serialized" ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED;

  MPIX_Comm* early = nullptr;
  check(MPIX_Comm_init(&early, MPI_COMM_WORLD) == MPIX_ERR_MPI && message_has("MPI is not initialized"),
        "MPIX_Comm_init before MPI_Init");

  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, asked, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPIX_Comm* comm = nullptr;
  check(MPIX_Comm_init(&comm, MPI_COMM_WORLD) == MPIX_SUCCESS, "MPIX_Comm_init");
  check(exchange(comm, size) == MPIX_SUCCESS, "an exchange from the main thread");

  if (provided < MPI_THREAD_SERIALIZED) {
    // Every rank's other thread is refused, before any message: no rank waits.
    int rc = MPIX_SUCCESS;
    std::string message;
    std::thread other([&] {
      rc = exchange(comm, size);
      message = MPIX_Last_error_message();  // per thread
    });
    other.join();
    check(rc == MPIX_ERR_ARG && message.find("thread other than MPI's main one") != std::string::npos,
          "a call from another thread under MPI_THREAD_FUNNELED");
    // The communicator calls make MPI calls too: refused alike.
    MPIX_Comm* second = nullptr;
    std::thread init([&] {
      rc = MPIX_Comm_init(&second, MPI_COMM_WORLD);
      message = MPIX_Last_error_message();
    });
    init.join();
    check(rc == MPIX_ERR_ARG && second == nullptr && message.find("MPIX_Comm_init: called from a thread other") == 0,
          "MPIX_Comm_init from another thread under MPI_THREAD_FUNNELED");
    std::thread update([&] {
      rc = MPIX_Comm_update_locality(comm, 0);
      message = MPIX_Last_error_message();
    });
    update.join();
    check(rc == MPIX_ERR_ARG && message.find("thread other than MPI's main one") != std::string::npos,
          "MPIX_Comm_update_locality from another thread under MPI_THREAD_FUNNELED");
  } else if (provided < MPI_THREAD_MULTIPLE) {
    // Rank 0's main thread waits inside an exchange that rank 1 joins late; its
    // other thread calls meanwhile and is refused. (Only the thread-safe MPI
    // queries run beside the waiting one: MPI_Initialized, MPI_Query_thread.)
    std::atomic<bool> inside{false};
    int rc = MPIX_SUCCESS;
    std::string message;
    std::thread other;
    if (rank == 0 && size > 1)
      other = std::thread([&] {
        while (!inside) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        rc = exchange(comm, size);
        message = MPIX_Last_error_message();
      });
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    inside = true;
    check(exchange(comm, size) == MPIX_SUCCESS, "the main thread's exchange beside a refused call");
    if (other.joinable()) {
      other.join();
      check(rc == MPIX_ERR_ARG && message.find("another thread is in the library") != std::string::npos,
            "a call while another thread is in the library under MPI_THREAD_SERIALIZED");
    }
  }
  check(exchange(comm, size) == MPIX_SUCCESS, "an exchange after the refusals");

  MPIX_Request* request = nullptr;
  std::vector<int> send((std::size_t)size, 1), recv((std::size_t)size, 0);
  check(MPIX_Alltoall_plan(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, nullptr, comm, &request) ==
            MPIX_SUCCESS,
        "MPIX_Alltoall_plan");
  MPI_Finalize();

  check(exchange(comm, size) == MPIX_ERR_MPI && message_has("called after MPI_Finalize"),
        "MPIX_Alltoall after MPI_Finalize");
  check(MPIX_Start(request) == MPIX_ERR_MPI, "MPIX_Start after MPI_Finalize");
  check(MPIX_Request_free(&request) == MPIX_ERR_MPI && request != nullptr, "MPIX_Request_free after MPI_Finalize");
  check(MPIX_Comm_free(&comm) == MPIX_ERR_MPI && comm != nullptr && message_has("MPIX_Comm_free"),
        "MPIX_Comm_free after MPI_Finalize");
  if (failures == 0) std::printf("rank %d: ok (%s, provided %d)\n", rank, level_name.c_str(), provided);
  return failures == 0 ? 0 : 1;
}
