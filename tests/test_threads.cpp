// MPI_THREAD_MULTIPLE (the thread rules of include/mpix/mpix.h): two threads per
// rank, each running collectives on its own MPIX_Comm at the same time: dense
// exchanges under several algorithms, persistent plans and SDDE calls, all checked
// against values computed from the ranks; one thread also makes calls that fail
// (counts that disagree, refused by the agreement on every rank) while the other
// thread's waits swap the error handlers. Then four threads, each starting and
// waiting for a persistent ipc_hybrid of its own. At the end MPI_COMM_WORLD and
// MPI_COMM_SELF must have their handlers back. Its own main (not Catch2's), as
// MPI_Init_thread must come first.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "mpix/mpix.h"

namespace {

std::atomic<int> failures{0};

void expect(bool ok, int thread, const std::string& what) {
  if (ok) return;
  ++failures;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "rank %d thread %d: %s (last error: %s)\n", rank, thread, what.c_str(),
               MPIX_Last_error_message());
}

// Block i -> j has (j % 3) + 1 ints of value thread * 100000 + i * 100 + j.
int block_count(int j) { return j % 3 + 1; }
int value(int thread, int i, int j) { return thread * 100000 + i * 100 + j; }

// The thread's MPIX_Comm over `mpi_comm` (nullptr, counted as a failure, if it
// cannot be made), and its size and rank.
MPIX_Comm* thread_comm(int thread, MPI_Comm mpi_comm, int* size, int* rank) {
  MPI_Comm_size(mpi_comm, size);
  MPI_Comm_rank(mpi_comm, rank);
  MPIX_Comm* comm = nullptr;
  expect(MPIX_Comm_init(&comm, mpi_comm) == MPIX_SUCCESS, thread, "MPIX_Comm_init");
  return comm;
}

void worker(int thread, MPI_Comm mpi_comm, int rounds) {
  int size = 0, rank = 0;
  MPIX_Comm* comm = thread_comm(thread, mpi_comm, &size, &rank);
  if (!comm) return;

  std::vector<int> send_counts(size), send_displs(size), recv_counts(size), recv_displs(size);
  int sent = 0, received = 0;
  for (int j = 0; j < size; ++j) {
    send_counts[j] = block_count(j);
    send_displs[j] = sent;
    sent += send_counts[j];
    recv_counts[j] = block_count(rank);
    recv_displs[j] = received;
    received += recv_counts[j];
  }
  std::vector<int> send(sent);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < send_counts[j]; ++k) send[send_displs[j] + k] = value(thread, rank, j);
  auto correct = [&](const std::vector<int>& recv) {
    for (int i = 0; i < size; ++i)
      for (int k = 0; k < recv_counts[i]; ++k)
        if (recv[recv_displs[i] + k] != value(thread, i, rank)) return false;
    return true;
  };

  const char* algorithms[] = {"pmpi", "pairwise", "nonblocking", "multipair_waitany", "random_sendrecv",
                              "tuna", "tuna_hier_coalesced", "node_aware"};
  MPIX_Info* info = nullptr;
  MPIX_Info_init(&info);
  for (int round = 0; round < rounds; ++round) {
    for (const char* algorithm : algorithms) {
      MPIX_Info_set(info, "mpix_alltoallv_algorithm", algorithm);
      std::vector<int> recv(received, -1);
      int rc = MPIX_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_INT, recv.data(),
                              recv_counts.data(), recv_displs.data(), MPI_INT, info, comm);
      expect(rc == MPIX_SUCCESS && correct(recv), thread, std::string("MPIX_Alltoallv ") + algorithm);

      // Thread 1: rank 0 sends one int more to rank 1 than rank 1 expects.
      if (thread == 1 && size > 1 && std::string(algorithm) == "pairwise") {
        std::vector<int> bad_counts(send_counts), bad_send(send);
        if (rank == 0) {
          bad_counts[1] += 1;
          bad_send.push_back(0);
        }
        std::vector<int> bad_displs(size);
        for (int j = 0, d = 0; j < size; d += bad_counts[j], ++j) bad_displs[j] = d;
        rc = MPIX_Alltoallv(bad_send.data(), bad_counts.data(), bad_displs.data(), MPI_INT, recv.data(),
                            recv_counts.data(), recv_displs.data(), MPI_INT, info, comm);
        expect(rc == MPIX_ERR_ARG, thread, "counts that disagree returned as MPIX_ERR_ARG");
      }
    }
    // A persistent plan, started twice.
    MPIX_Info_set(info, "mpix_alltoallv_algorithm", "tuna");
    std::vector<int> recv(received, -1);
    MPIX_Request* request = nullptr;
    int rc = MPIX_Alltoallv_plan(send.data(), send_counts.data(), send_displs.data(), MPI_INT, recv.data(),
                                 recv_counts.data(), recv_displs.data(), MPI_INT, info, comm, &request);
    expect(rc == MPIX_SUCCESS, thread, "MPIX_Alltoallv_plan");
    for (int start = 0; start < 2 && request; ++start) {
      std::fill(recv.begin(), recv.end(), -1);
      expect(MPIX_Start(request) == MPIX_SUCCESS && MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS &&
                 correct(recv), thread, "persistent tuna");
    }
    if (request) MPIX_Request_free(&request);

    // SDDE: one int to the right neighbour.
    for (const char* algorithm : {"personalized", "nonblocking"}) {
      MPIX_Info_set(info, "mpix_alltoall_crs_algorithm", algorithm);
      int dest = (rank + 1) % size, val = value(thread, rank, dest), recv_nnz = 32000, *src = nullptr;
      void* vals = nullptr;
      rc = MPIX_Alltoall_crs(1, &dest, 1, MPI_INT, &val, &recv_nnz, &src, 1, MPI_INT, &vals, info, comm);
      const int left = (rank - 1 + size) % size;
      expect(rc == MPIX_SUCCESS && recv_nnz == 1 && src[0] == left &&
                 static_cast<int*>(vals)[0] == value(thread, left, rank),
             thread, std::string("MPIX_Alltoall_crs ") + algorithm);
      if (rc == MPIX_SUCCESS) {
        MPIX_Free(src);
        MPIX_Free(vals);
      }
    }
  }
  MPIX_Info_free(&info);
  MPIX_Comm_free(&comm);
}

// ipc_hybrid's direct copies, started and waited many times by each of several
// threads while the others' waits move its started request on: an exchange
// completed by its own wait must not be tested again by another thread (that
// repeated its copies and its done messages, which the next start took for new
// ones: wrong blocks, double frees, hangs; seen with 3 and 4 threads).
void ipc_worker(int thread, MPI_Comm mpi_comm, int starts) {
  int size = 0, rank = 0;
  MPIX_Comm* comm = thread_comm(thread, mpi_comm, &size, &rank);
  if (!comm) return;
  const int block = 64;
  std::vector<int> send((std::size_t)size * block), recv((std::size_t)size * block);
  MPIX_Info* ipc = nullptr;
  MPIX_Info_init(&ipc);
  MPIX_Info_set(ipc, "mpix_alltoall_algorithm", "ipc_hybrid");
  MPIX_Info_set(ipc, "mpix_ipc_threshold", "0");
  MPIX_Request* request = nullptr;
  const int rc = MPIX_Alltoall_plan(send.data(), block, MPI_INT, recv.data(), block, MPI_INT, ipc, comm, &request);
  expect(rc == MPIX_SUCCESS || rc == MPIX_ERR_UNSUPPORTED, thread, "MPIX_Alltoall_plan ipc_hybrid");
  for (int start = 0; start < starts && request; ++start) {
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < block; ++k) send[(std::size_t)j * block + k] = value(thread, rank, j) + start * 7 + k;
    std::fill(recv.begin(), recv.end(), -1);
    bool ok = MPIX_Start(request) == MPIX_SUCCESS && MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS;
    for (int i = 0; i < size && ok; ++i)
      for (int k = 0; k < block && ok; ++k) ok = recv[(std::size_t)i * block + k] == value(thread, i, rank) + start * 7 + k;
    expect(ok, thread, "persistent ipc_hybrid, start " + std::to_string(start));
    if (!ok) break;
  }
  if (request) MPIX_Request_free(&request);
  MPIX_Info_free(&ipc);
  MPIX_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::printf("MPI_THREAD_MULTIPLE not provided: skipped\n");
    MPI_Finalize();
    return 77;  // meson: skipped
  }
  // One communicator per thread, made here: collectives on one communicator from
  // two threads at once would be erroneous MPI.
  MPI_Comm comms[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  std::thread second(worker, 1, comms[1], rounds);
  worker(0, comms[0], rounds);
  second.join();
  {
    const int ipc_threads = 4;
    std::vector<MPI_Comm> ipc_comms(ipc_threads);
    for (MPI_Comm& c : ipc_comms) MPI_Comm_dup(MPI_COMM_WORLD, &c);
    std::vector<std::thread> workers;
    for (int t = 1; t < ipc_threads; ++t) workers.emplace_back(ipc_worker, t, ipc_comms[t], 200);
    ipc_worker(0, ipc_comms[0], 200);
    for (std::thread& t : workers) t.join();
    for (MPI_Comm& c : ipc_comms) MPI_Comm_free(&c);
  }

  MPI_Errhandler world, self;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
  expect(world == MPI_ERRORS_ARE_FATAL, -1, "MPI_COMM_WORLD's handler is MPI_ERRORS_ARE_FATAL again");
  expect(self == MPI_ERRORS_ARE_FATAL, -1, "MPI_COMM_SELF's handler is MPI_ERRORS_ARE_FATAL again");
  MPI_Errhandler_free(&world);
  MPI_Errhandler_free(&self);

  int mine = failures.load(), all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", all ? "FAILED" : "passed", all);
  MPI_Comm_free(&comms[0]);
  MPI_Comm_free(&comms[1]);
  MPI_Finalize();
  return all ? 1 : 0;
}
