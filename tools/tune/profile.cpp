// mpix-tune --profile: the machine's constants measured on the running job, written
// as a machine file (docs/tuning.md, "Machine profile").
#include "tune/profile.hpp"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "bench/bench.hpp"
#include "core/comm.hpp"
#include "core/model.hpp"

namespace {

// The median of `times` on the ranks that `measured`, the largest over the ranks.
double slowest_median(const std::vector<double>& times, bool measured, MPI_Comm comm) {
  double mine = measured ? bench::median(times) : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, comm);
  return all;
}

// `body` five times, each after a barrier: the median time of the ranks that
// `measured`, the largest over the ranks.
template <class Body>
double median_of_five(MPI_Comm comm, bool measured, Body body) {
  std::vector<double> times;
  for (int r = 0; r < 5; ++r) {
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    body();
    times.push_back(MPI_Wtime() - t0);
  }
  return slowest_median(times, measured, comm);
}

// Ping-pong of `bytes` between ranks a and b of `comm`: half the round trip, s.
double ping_pong(MPI_Comm comm, int a, int b, int bytes, int reps) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Only the pair holds the message (the job may have many ranks to a node).
  std::vector<char> buffer(rank == a || rank == b ? std::max(1, bytes) : 1);
  std::vector<double> times;
  for (int r = 0; r < reps + 2; ++r) {
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    if (rank == a) {
      MPI_Send(buffer.data(), bytes, MPI_BYTE, b, 0, comm);
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, b, 0, comm, MPI_STATUS_IGNORE);
    } else if (rank == b) {
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, a, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), bytes, MPI_BYTE, a, 0, comm);
    }
    double t = (MPI_Wtime() - t0) / 2;
    if (r >= 2) times.push_back(t);
  }
  return slowest_median(times, rank == a, comm);
}

// Rank a sends `count` empty messages to b back to back: the time per message
// beyond one latency is the sender's plus the receiver's overhead (LogGP o).
double message_cost(MPI_Comm comm, int a, int b, int count) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<MPI_Request> requests(count);
  char byte = 0;
  return median_of_five(comm, rank == a, [&] {
    if (rank == a) {
      for (int i = 0; i < count; ++i) MPI_Isend(&byte, 0, MPI_BYTE, b, 1, comm, &requests[i]);
      MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE);
      MPI_Recv(&byte, 0, MPI_BYTE, b, 2, comm, MPI_STATUS_IGNORE);
    } else if (rank == b) {
      for (int i = 0; i < count; ++i) MPI_Irecv(&byte, 0, MPI_BYTE, a, 1, comm, &requests[i]);
      MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE);
      MPI_Send(&byte, 0, MPI_BYTE, a, 2, comm);
    }
  });
}

// Ranks a and b send each other `bytes` at once (MPI_Sendrecv): the median time.
double exchange_time(MPI_Comm comm, int a, int b, int bytes) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const bool pair = rank == a || rank == b;
  std::vector<char> out(pair ? bytes : 0, 1), in(pair ? bytes : 0);
  return median_of_five(comm, rank == a, [&] {
    if (pair)
      MPI_Sendrecv(out.data(), bytes, MPI_BYTE, rank == a ? b : a, 3, in.data(), bytes, MPI_BYTE, rank == a ? b : a, 3,
                   comm, MPI_STATUS_IGNORE);
  });
}

// Every rank sends `block` bytes to every rank of the other nodes at once (an
// alltoallv whose blocks inside a node are empty): the median time of the slowest
// rank. What the network carries of an exchange spread over all node pairs, with
// the injection, the bisection and the busiest link of the routes in it.
double inter_node_exchange_time(MPI_Comm comm, const mpix::Locality& loc, int block) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int> counts(size), displs(size);
  int total = 0;
  for (int peer = 0; peer < size; ++peer) {
    counts[peer] = loc.node_of(peer) == loc.node_of(rank) ? 0 : block;
    displs[peer] = total;
    total += counts[peer];
  }
  std::vector<char> out(std::max(1, total), 1), in(std::max(1, total));
  return median_of_five(comm, true, [&] {
    MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_BYTE, in.data(), counts.data(), displs.data(), MPI_BYTE,
                  comm);
  });
}

// Every rank sends `bytes` to every rank of the other nodes at once, each message
// posted on its own (no MPI algorithm's batches in between): the median time of
// the slowest rank.
double inter_node_burst_time(MPI_Comm comm, const mpix::Locality& loc, int bytes) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int> peers;
  for (int peer = 0; peer < size; ++peer)
    if (loc.node_of(peer) != loc.node_of(rank)) peers.push_back(peer);
  std::vector<char> out(std::max<std::size_t>(1, peers.size() * bytes), 1), in(out.size());
  std::vector<MPI_Request> requests(2 * peers.size());
  return median_of_five(comm, true, [&] {
    for (std::size_t i = 0; i < peers.size(); ++i)
      MPI_Irecv(in.data() + i * bytes, bytes, MPI_BYTE, peers[i], 4, comm, &requests[i]);
    for (std::size_t i = 0; i < peers.size(); ++i)
      MPI_Isend(out.data() + i * bytes, bytes, MPI_BYTE, peers[i], 4, comm, &requests[peers.size() + i]);
    MPI_Waitall((int)requests.size(), requests.data(), MPI_STATUSES_IGNORE);
  });
}

// The smallest message whose send waits for its receive: past the MPI library's
// eager limit (rendezvous) a send completes only once the receive is posted. Rank a
// sends `bytes` while b sleeps for `delay` before it posts the receive (sleeps: on
// shared cores, a spinning b would hold a's CPU and make an eager send look slow);
// an eager send returns long before. Sizes double from 1 KiB; 0 if every send up to
// `most` bytes returned early (no limit seen).
long long eager_limit(MPI_Comm comm, int a, int b, double delay, long long most) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<char> buffer(rank == a || rank == b ? most : 0);
  for (long long bytes = 1024; bytes <= most; bytes *= 2) {
    std::vector<double> waits;
    for (int r = 0; r < 3; ++r) {
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      if (rank == a) {
        MPI_Send(buffer.data(), (int)bytes, MPI_BYTE, b, 5, comm);
        waits.push_back(MPI_Wtime() - t0);
      } else if (rank == b) {
        std::this_thread::sleep_for(std::chrono::duration<double>(delay));
        MPI_Recv(buffer.data(), (int)bytes, MPI_BYTE, a, 5, comm, MPI_STATUS_IGNORE);
      }
    }
    int waited = rank == a && bench::median(waits) > delay / 2;
    MPI_Bcast(&waited, 1, MPI_INT, a, comm);
    if (waited) return bytes;
  }
  return 0;
}

}  // namespace

int profile_main(const std::string& out_path, MPIX_Comm* comm) {
  MPI_Comm world = MPIX_Comm_mpi(comm);
  int rank = 0, size = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  const mpix::Locality& loc = comm->locality;
  mpix::MachineProfile profile;
  profile.source = out_path;
  // Rank 0 and a peer on its node, and one on another node (if there are such).
  int intra_peer = loc.node_ranks(loc.node_of(0)).size() > 1 ? loc.node_ranks(loc.node_of(0))[1] : -1;
  int inter_peer = loc.num_nodes() > 1 ? loc.node_ranks(1)[0] : -1;
  const int big = 4 << 20, count = 256;
  for (int level = 0; level < 2; ++level) {
    const int peer = level == 0 ? intra_peer : inter_peer;
    if (peer < 0) continue;
    const double latency = ping_pong(world, 0, peer, 0, 50);
    const double transfer = ping_pong(world, 0, peer, big, 5);
    const double quarter = ping_pong(world, 0, peer, big / 4, 5);
    const double burst = message_cost(world, 0, peer, count);
    const double overhead = std::max(0.0, (burst - 2 * latency) / count / 2);
    // From two sizes, so that the latency drops out; bounded by the transfer alone
    // when noise makes the difference meaningless.
    const double bandwidth = 0.75 * big / std::max(transfer - quarter, 0.75 * transfer / 4);
    if (rank == 0)
      std::fprintf(stderr, "mpix-tune: %s (ranks 0 and %d): latency %.2f us, overhead %.3f us per send and "
                   "per receive, bandwidth %.2f GB/s\n", level == 0 ? "inside a node" : "between nodes", peer,
                   latency * 1e6, overhead * 1e6, bandwidth / 1e9);
    if (level == 0) {
      profile.intra_latency = latency;
      profile.intra_send_overhead = profile.intra_recv_overhead = overhead;
      profile.intra_bandwidth = bandwidth;
    } else {
      profile.inter_latency = latency;
      profile.inter_send_overhead = profile.inter_recv_overhead = overhead;
      // The node's injection: every rank of node 0 sends to node 1 at once.
      profile.inter_bandwidth = bandwidth;
    }
  }
  if (inter_peer >= 0) {
    // Blocks large enough that the bytes, not the messages' overheads, take the
    // time: 16 MiB sent per rank, in blocks of 16 KiB to 1 MiB (more than 16 MiB
    // from 1024 peers on), and no more than an int of bytes in all.
    // Every rank knows the layout: the most peers are those of the smallest node's ranks.
    std::size_t smallest_node = loc.node_ranks(0).size();
    for (int node = 1; node < loc.num_nodes(); ++node) smallest_node = std::min(smallest_node, loc.node_ranks(node).size());
    const long long most_peers = size - (long long)smallest_node;
    const int block = (int)std::min<long long>(
        INT_MAX / most_peers, std::max<long long>(16 << 10, std::min<long long>(1 << 20, (16 << 20) / most_peers)));
    const double seconds = inter_node_exchange_time(world, loc, block);
    long long inter_pairs = 0;
    for (int node = 0; node < loc.num_nodes(); ++node) {
      const long long ranks = (long long)loc.node_ranks(node).size();
      inter_pairs += ranks * (size - ranks);
    }
    profile.alltoall_bandwidth = (double)inter_pairs * block / seconds;
    if (rank == 0)
      std::fprintf(stderr, "mpix-tune: every rank sent %d B to each rank of the other nodes at once: %.0f us, "
                   "alltoall_bandwidth = %.2f GB/s\n", block, seconds * 1e6, profile.alltoall_bandwidth / 1e9);
    // The same burst of 1-byte messages: where it takes clearly longer than the
    // messages' CPU overheads, the network was the limit, and what it carried beyond
    // the payload is each message's wire overhead. Where the CPU was the limit the
    // wire overhead is hidden (and matters as little to the model): the default stays.
    // A wire overhead of more than a few packets' headers is not one: ranks that
    // share cores (oversubscribed, or a busy machine) wait for the scheduler, and the
    // burst measures that.
    const double small = inter_node_burst_time(world, loc, 1);
    const double cpu = (double)most_peers * (profile.inter_send_overhead + profile.inter_recv_overhead);
    const double network = small - profile.inter_latency;
    const double wire = std::max(0.0, network * profile.alltoall_bandwidth / (double)inter_pairs - 1);
    const double most_plausible = 1024;
    const bool network_limited = network > 1.5 * cpu;
    if (network_limited && wire <= most_plausible) profile.inter_message_bytes = wire;
    if (rank == 0)
      std::fprintf(stderr, "mpix-tune: the same with 1 B each: %.1f us (the overheads: %.1f us): %s: "
                   "inter_message_bytes = %.0f\n", small * 1e6, cpu * 1e6,
                   !network_limited         ? "limited by the overheads, the default kept"
                   : wire > most_plausible ? "more than 1 KiB a message, noise (the CPUs shared?), the default kept"
                                           : "network-limited",
                   profile.inter_message_bytes);
  }
  {
    // Between nodes where there are two, else inside the node (TuNA's rounds cross
    // both; the library switches protocol at one size for a transport, if at all).
    const int peer = inter_peer >= 0 ? inter_peer : intra_peer;
    const long long most = 16 << 20;
    if (peer >= 0) {
      const double latency = inter_peer >= 0 ? profile.inter_latency : profile.intra_latency;
      const double delay = std::max(500e-6, 50 * latency);
      const long long limit = eager_limit(world, 0, peer, delay, most);
      profile.eager_bytes = limit > 0 ? (double)limit : 2.0 * most;
      if (rank == 0) {
        if (limit > 0)
          std::fprintf(stderr, "mpix-tune: a send of %lld B waited for its receive (posted %.0f us late)%s: "
                       "eager_bytes = %lld\n", limit, delay * 1e6,
                       limit > 1024 ? ", one of half that did not" : ", the smallest tried", limit);
        else
          std::fprintf(stderr, "mpix-tune: no send up to %lld B waited for its receive: eager_bytes = %.0f\n", most,
                       profile.eager_bytes);
      }
    }
  }
  if (inter_peer < 0 && rank == 0)
    std::fprintf(stderr, "mpix-tune: one node only: the between-node constants keep their defaults "
                 "(emulate nodes with --ppn to measure the same path as inside a node)\n");
  {
    std::vector<char> from(64 << 20, 1), to(64 << 20);
    double t0 = MPI_Wtime();
    for (int r = 0; r < 4; ++r) std::memcpy(to.data(), from.data(), from.size());
    double mine = 4.0 * from.size() / (MPI_Wtime() - t0), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MIN, world);
    profile.copy_bandwidth = all;
  }
  if (intra_peer >= 0) {
    // Copies per byte of an intra-node message: rank 0 and its peer exchange a large
    // block both ways at once; each CPU then copies its own send in and its receive
    // out (2, a shared segment) or one of them (1, a single-copy transport).
    const double seconds = exchange_time(world, 0, intra_peer, 32 << 20);
    const double copies = seconds * profile.copy_bandwidth / (32 << 20);
    profile.intra_copies = std::min(2.0, std::max(1.0, std::round(copies)));
    if (rank == 0)
      std::fprintf(stderr, "mpix-tune: an intra-node exchange of 32 MiB both ways took %.0f us: %.1f copies per byte "
                   "at the copy bandwidth (%.2f GB/s): intra_copies = %g\n", seconds * 1e6, copies,
                   profile.copy_bandwidth / 1e9, profile.intra_copies);
  }
  {
    // A collective's software cost: an allreduce of 8 bytes beyond its rounds.
    std::vector<double> times;
    for (int r = 0; r < 30; ++r) {
      double value = 1, sum = 0;
      MPI_Barrier(world);
      double t0 = MPI_Wtime();
      MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, world);
      times.push_back(MPI_Wtime() - t0);
    }
    const double all = slowest_median(times, true, world);
    const int ppn = (int)loc.node_ranks(loc.node_of(0)).size();
    const double rounds = mpix::rounds_seconds(mpix::allreduce_rounds(size, ppn, 8), profile);
    profile.collective_overhead = std::max(0.0, all - rounds);
    if (rank == 0)
      std::fprintf(stderr, "mpix-tune: an allreduce of 8 bytes took %.2f us, its rounds %.2f us: collective_overhead "
                   "= %.2f us\n", all * 1e6, rounds * 1e6, profile.collective_overhead * 1e6);
  }
  if (rank == 0) {
    std::ofstream out(out_path);
    out << "# mpix machine profile, measured by mpix-tune --profile on " << size << " ranks\n"
        << mpix::machine_profile_text(profile);
    if (!out) {
      std::fprintf(stderr, "mpix-tune: cannot write %s\n", out_path.c_str());
      return 1;
    }
    std::printf("%s", mpix::machine_profile_text(profile).c_str());
    std::fprintf(stderr, "mpix-tune: wrote %s\n", out_path.c_str());
  }
  return 0;
}
