// The selection model (ARCHITECTURE.md, "Selection"): the facts every rank agrees
// on about one dense exchange, the machine profile that turns counts into seconds,
// and the cost of one algorithm with given parameters, predicted from its own
// schedule (rounds, messages and bytes per level, forwarded bytes, copies).
//
// Each algorithm family writes its cost function next to its plan (linear.cpp,
// bruck.cpp, ...); the registry holds it beside the factory. select.cpp minimises
// the predicted time over the registry and over each algorithm's parameter ranges.
#pragma once
#include <string>
#include <vector>

#include "plan.hpp"

namespace mpix {

// What all ranks know about an exchange after the one agreement of the call
// (dense.cpp): the decision is made from these alone, so it is the same on every
// rank by construction. Byte counts leave out each rank's block to itself.
struct ExchangeFacts {
  int ranks = 1;                     // P
  int nodes = 1;                     // N
  int max_ppn = 1, min_ppn = 1;      // ranks on the largest and the smallest node
  // The region level (regions.hpp), when some node has several regions: the
  // regions of all nodes and the ranks of the largest; 0 when there is none.
  int regions = 0, max_region_size = 0;
  long long max_block = 0;           // largest block anywhere (send or receive side), own blocks aside
  long long min_block = 0;           // smallest block anywhere (send or receive side), own blocks aside
  long long total_bytes = 0;         // all blocks to other ranks, all ranks
  long long max_rank_send = 0;       // most bytes one rank sends to others
  long long max_rank_recv = 0;       // most bytes one rank receives from others
  long long nonempty_blocks = 0;     // blocks to other ranks with bytes, all ranks
  long long max_rank_messages = 0;   // most non-empty blocks one rank sends to others
  long long intra_node_bytes = 0;    // of total_bytes, between ranks of one node
  bool contiguous = true;            // every rank's datatypes are one run of bytes
  bool in_place = false;
  bool int_counts = true;            // every rank's counts and displacements fit an int
  bool uniform = false;              // alltoall: every block has max_block bytes
  bool persistent = false;           // a _plan call: init costs are paid once
  // Blocks between ranks of one node can be copied directly (ipc_hybrid): the
  // communicator's direct-copy probe ran (DirectCopy::setup, agreed) and found CMA.
  bool direct_copy = false;

  bool equal_nodes() const { return max_ppn == min_ppn; }
  long long pairs() const { return (long long)ranks * (ranks - 1); }
  double mean_block() const { return pairs() ? (double)total_bytes / (double)pairs() : 0.0; }
  double nonempty_fraction() const { return pairs() ? (double)nonempty_blocks / (double)pairs() : 0.0; }
  double intra_fraction() const { return total_bytes ? (double)intra_node_bytes / (double)total_bytes : 0.0; }
  std::string describe() const;  // "P=256 nodes=64x4 max=16B mean=8.0B ..."
};

// The constants of a machine (LogGP-like, per level). Defaults describe a common
// InfiniBand cluster (docs/tuning.md gives the sources); a machine file
// (mpix_machine_file / MPIX_MACHINE_FILE), written by `mpix-tune --profile` or by
// bench/simulate from a simulated platform, replaces any of them.
struct MachineProfile {
  double inter_latency = 1.5e-6;        // s, first byte between nodes
  double intra_latency = 0.4e-6;        // s, first byte inside a node
  double inter_send_overhead = 0.5e-6;  // s of CPU per message sent to another node
  double inter_recv_overhead = 0.5e-6;  // s of CPU per message received from one
  double intra_send_overhead = 0.2e-6;
  double intra_recv_overhead = 0.2e-6;
  double inter_bandwidth = 12.5e9;      // bytes/s, one node's injection (shared by its ranks)
  // Bytes a message between nodes occupies on the wire beyond its payload: packet
  // headers (InfiniBand: 26-66 B a packet) and the MPI library's envelope. Where
  // the per-message CPU overhead is small against the link (a slow network, a fast
  // CPU), many small messages are limited by these bytes, not by their overheads.
  double inter_message_bytes = 64;
  double intra_bandwidth = 10e9;        // bytes/s, between two ranks of a node
  double copy_bandwidth = 10e9;         // bytes/s, a local memcpy or (un)pack
  // Copies of each byte an intra-node message makes on the ranks' CPUs: 2 for a
  // shared-memory transport (into the shared segment, out of it), 1 for a
  // single-copy one (CMA, XPMEM, KNEM), 0 where no CPU copies (a simulated
  // loopback). In an exchange every rank sends and receives at once, so it pays
  // these copies at copy_bandwidth even where a ping-pong (intra_bandwidth, both
  // copies overlapped on two CPUs) is faster: an intra-node message moves at the
  // slower of the two.
  double intra_copies = 2;
  // s of software per collective call beyond its messages (an MPI_Allreduce of a
  // few bytes takes this more than its rounds' latencies and overheads).
  double collective_overhead = 1e-6;
  double bisection_bandwidth = 0;       // bytes/s across the job's nodes; 0: not a limit
  // bytes/s at which the network carries inter-node bytes spread evenly over the
  // job's node pairs, each pair on its route: limited by the busiest link, which on
  // a torus's rings carries more than the bisection's share (several hops a route).
  // 0: not a limit.
  double alltoall_bandwidth = 0;
  // s per posted receive an arriving message is compared with: MPI libraries match
  // against a list, so a round of k messages posted at once costs about k * k / 2
  // comparisons (SMPI does not charge it; real MPIs do).
  double match_cost = 2e-9;
  // Bytes from which a message goes by the MPI library's rendezvous protocol: its
  // send waits for the matching receive (an eager one is buffered and completes at
  // once). 64 KiB: SMPI's smpi/send-is-detached-thresh and Open MPI's TCP eager
  // limit (MPICH's ch3 sends eagerly up to 128 KiB, MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE);
  // InfiniBand and shared-memory transports often switch earlier (8-16 KiB).
  double eager_bytes = 65536;
  std::string source = "built-in defaults";
};

// Reads `key = value` lines ('#' comments) into `profile`, starting from the
// defaults; MPIX_ERR_TUNING_FILE naming the file, the line and the problem.
int load_machine_profile(const std::string& path, MachineProfile* profile);
// The text load_machine_profile reads back (mpix-tune --profile, bench/simulate).
std::string machine_profile_text(const MachineProfile& profile);

// Messages and bytes one rank sends on one level.
struct LevelCounts {
  double messages = 0;
  double bytes = 0;
};

// One group of identical rounds of a schedule, as the busiest rank sees it.
struct RoundCost {
  double rounds = 1;         // how many such rounds run one after another
  LevelCounts inter, intra;  // per round, sent (receives are assumed symmetric)
  // Ranks of one node sending between nodes at the same time in these rounds:
  // they share the node's injection bandwidth.
  double nic_sharers = 1;
  // All ranks of the job in these rounds at once, and their nodes (for the
  // bisection limit).
  double ranks = 1, nodes = 1;
  // The counts are a rank's average; the busiest rank sends this many times the
  // average messages and bytes (its overheads and its own injection are what the
  // others wait for; the node's shared injection sees the average).
  double busiest_messages = 1, busiest_bytes = 1;
};

// The predicted cost of one call (or one start, for a persistent plan's Start+Wait).
struct Cost {
  bool valid = true;                  // false: the parameters do not apply (radix > Q)
  std::vector<RoundCost> rounds;      // per start
  std::vector<RoundCost> init_rounds; // metadata at plan time
  double copy_bytes = 0;              // local copies and (un)packing per start
  double init_copy_bytes = 0;
  // Synchronisation the plans do not count as payload or metadata (PlanStats):
  // zero-byte notices per start, small collectives at init. Priced, not counted.
  std::vector<RoundCost> sync_rounds, init_sync_rounds;
  double init_collectives = 0;        // collective calls at init (collective_overhead each)
  // Counters comparable with PlanStats: a rank's average (the sum over ranks / P).
  double messages() const;           // payload messages per start
  double bytes() const;              // payload bytes per start
  double round_count() const;
  double init_messages() const;      // metadata messages at init
  double init_bytes() const;
};

// Seconds: the start (and, unless `persistent`, the init) of `cost` on `profile`.
double predict_seconds(const Cost& cost, const MachineProfile& profile, bool persistent);
double rounds_seconds(const std::vector<RoundCost>& rounds, const MachineProfile& profile);
// The rounds of an allreduce of `bytes` by recursive doubling over `ranks` ranks
// of which `ppn` share a node: log2(ppn) inside the node, the rest between nodes.
std::vector<RoundCost> allreduce_rounds(int ranks, int ppn, double bytes);

// Helpers the cost functions share.
// A round of `messages` (a rank's average) of `bytes_per_message` each to peers
// spread over the communicator, split over the levels by the node layout and the
// intra-node share of bytes of `facts`, with the busiest rank's excess.
RoundCost linear_round(const ExchangeFacts& facts, double messages, double bytes_per_message);
// How many times the average bytes the busiest rank sends in a message that
// carries `blocks` blocks: the agreed busiest rank total (P - 1 blocks) shows the
// spread of the distribution, which shrinks as 1 / sqrt(blocks) when blocks add up,
// and no message exceeds its blocks at the largest size.
double busiest_bytes_factor(const ExchangeFacts& facts, double blocks);
// Fraction of a rank's peers at distance `distance` (rank + distance) that are on
// another node, for consecutive ranks on nodes of `ppn` ranks.
double inter_node_fraction(int distance, int ppn, int ranks);
// "12.3 us": a predicted time, for MPIX_VERBOSE.
std::string microseconds(double seconds);

}  // namespace mpix
