// mpix-bench: the peers, the MPI libraries' own default exchanges as a program
// calling MPI would run them: plain MPI calls from the benchmark, never through
// MPIX_Alltoall(v) (so without mpix's per-call agreement and plan). Rows peer:NAME.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "bench.hpp"

namespace bench {

namespace {

// MPICH's MPIR_CVAR_ALLTOALL_THROTTLE default: requests per batch of its scattered
// exchange (MPIR_Alltoallv_intra_scattered).
constexpr int kMpichThrottle = 32;

// MPICH's scattered exchange: in batches of `throttle` peers, receive from rank + i
// and send to rank - i (the rank itself included, as a message), then wait for the
// batch. Empty blocks post nothing.
int scattered(const PeerCall& c, int throttle) {
  int rank = 0, size = 0;
  MPI_Comm_rank(c.comm, &rank);
  MPI_Comm_size(c.comm, &size);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * (std::size_t)throttle);
  for (int first = 0; first < size; first += throttle) {
    const int batch = std::min(throttle, size - first);
    requests.clear();
    for (int i = 0; i < batch; ++i) {
      const int peer = (rank + first + i) % size;
      if (c.rcounts[peer] == 0) continue;
      requests.emplace_back();
      int rc = MPI_Irecv(c.recvbuf + c.rdispls[peer], c.rcounts[peer], MPI_BYTE, peer, 0, c.comm, &requests.back());
      if (rc != MPI_SUCCESS) return rc;
    }
    for (int i = 0; i < batch; ++i) {
      const int peer = (rank - first - i + size) % size;
      if (c.scounts[peer] == 0) continue;
      requests.emplace_back();
      int rc = MPI_Isend(c.sendbuf + c.sdispls[peer], c.scounts[peer], MPI_BYTE, peer, 0, c.comm, &requests.back());
      if (rc != MPI_SUCCESS) return rc;
    }
    int rc = MPI_Waitall((int)requests.size(), requests.data(), MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// Open MPI's basic linear exchange (ompi_coll_base_alltoallv_intra_basic_linear):
// the own block copied locally, then every receive posted, then every send (in rank
// order), then one wait for all of them.
int linear(const PeerCall& c) {
  int rank = 0, size = 0;
  MPI_Comm_rank(c.comm, &rank);
  MPI_Comm_size(c.comm, &size);
  std::copy(c.sendbuf + c.sdispls[rank], c.sendbuf + c.sdispls[rank] + c.scounts[rank], c.recvbuf + c.rdispls[rank]);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * (std::size_t)size);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank || c.rcounts[peer] == 0) continue;
    requests.emplace_back();
    int rc = MPI_Irecv(c.recvbuf + c.rdispls[peer], c.rcounts[peer], MPI_BYTE, peer, 0, c.comm, &requests.back());
    if (rc != MPI_SUCCESS) return rc;
  }
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank || c.scounts[peer] == 0) continue;
    requests.emplace_back();
    int rc = MPI_Isend(c.sendbuf + c.sdispls[peer], c.scounts[peer], MPI_BYTE, peer, 0, c.comm, &requests.back());
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_Waitall((int)requests.size(), requests.data(), MPI_STATUSES_IGNORE);
}

// The MPI library's non-blocking collective, started and waited at once. PMPI_: the
// simulated build's copy of mpix-bench (bench/smpi/pmpi_blocking.c) redirects
// world-sized MPI_Ialltoall(v) calls to the blocking, selector-driven ones for the
// smpi:NAME rows; this row is SMPI's own MPI_Ialltoall(v) (every message posted
// at once).
int ialltoallv(const PeerCall& c) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = c.uniform ? PMPI_Ialltoall(c.sendbuf, c.block, MPI_BYTE, c.recvbuf, c.block, MPI_BYTE, c.comm, &request)
                     : PMPI_Ialltoallv(c.sendbuf, c.scounts, c.sdispls, MPI_BYTE, c.recvbuf, c.rcounts, c.rdispls,
                                       MPI_BYTE, c.comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Wait(&request, MPI_STATUS_IGNORE);
}

// The MPI library's blocking collective, the call an application makes without mpix.
// In the simulated build, SMPI's MPI_Alltoall(v) under the selector of
// --cfg=smpi/alltoall(v): the smpi:NAME rows of bench/simulate.
int alltoallv(const PeerCall& c) {
  return c.uniform ? MPI_Alltoall(c.sendbuf, c.block, MPI_BYTE, c.recvbuf, c.block, MPI_BYTE, c.comm)
                   : MPI_Alltoallv(c.sendbuf, c.scounts, c.sdispls, MPI_BYTE, c.recvbuf, c.rcounts, c.rdispls,
                                   MPI_BYTE, c.comm);
}

}  // namespace

const std::vector<std::string>& peer_names() {
  static const std::vector<std::string> names = {"peer:alltoallv", "peer:ialltoallv", "peer:scattered32",
                                                 "peer:linear"};
  return names;
}

bool is_peer(const std::string& name) {
  return std::find(peer_names().begin(), peer_names().end(), name) != peer_names().end();
}

int run_peer(const std::string& name, const PeerCall& call) {
  if (name == "peer:scattered32") return scattered(call, kMpichThrottle);
  if (name == "peer:linear") return linear(call);
  if (name == "peer:alltoallv") return alltoallv(call);
  return ialltoallv(call);
}

PeerCounts peer_counts(const std::string& name, const PeerCall& c) {
  int rank = 0, size = 0;
  MPI_Comm_rank(c.comm, &rank);
  MPI_Comm_size(c.comm, &size);
  PeerCounts counts;
  counts.rounds = name == "peer:scattered32" ? (size + kMpichThrottle - 1) / kMpichThrottle : size > 1 ? 1 : 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank || c.scounts[peer] == 0) continue;
    counts.messages += 1;
    counts.payload_bytes += c.scounts[peer];
  }
  return counts;
}

}  // namespace bench
