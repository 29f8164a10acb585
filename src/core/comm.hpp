// MPIX_Comm: the user's communicator, the library's duplicate of it (all library
// traffic goes there, so it never meets the user's messages), the node layout and
// the scratch pool of its plans.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../gpu/direct_copy.hpp"
#include "../topology/locality.hpp"
#include "carried_agreement.hpp"
#include "model.hpp"
#include "../topology/regions.hpp"
#include "scratch.hpp"
#include "tuning.hpp"

namespace mpix {

struct ReusablePlan;  // plan_reuse.hpp

// Counters of this rank's part in the last SDDE call on a communicator
// (MPIX_Alltoall(v)_crs), read by the tests and mpix-bench.
struct SddeStats {
  std::string algorithm;              // the one that ran (after auto)
  long long messages = 0;             // point-to-point messages or RMA puts to other ranks
  long long bytes = 0;                // their bytes (payload and record headers)
  long long inter_node_messages = 0;  // of those, to ranks on other nodes
  long long inter_node_bytes = 0;
  int collectives = 0;                // reductions, barriers and fences (not the agreement)
};

// The window of the rma SDDE algorithm, kept between calls (its creation is
// collective and costly) and freed with the communicator.
struct SddeWindow {
  MPI_Win win = MPI_WIN_NULL;
  char* base = nullptr;
  MPI_Aint bytes = 0;
  unsigned long long epoch = 0;  // calls that used this window; marks arrivals
};

// Block sizes below this (bytes) may be exchanged before their agreement, each
// under a tag of its own (MPIX_Comm_s::speculation_tag_base).
constexpr long long kSpeculationTags = 1LL << 20;

// What the last blocking MPIX_Alltoall(v) on a communicator ran, after `auto` (read
// by mpix-bench, whose rows time the blocking call): a persistent request for the
// same exchange may choose otherwise, as its starts pay no agreement or planning.
struct DenseChoice {
  std::string algorithm, params;
  double predicted_seconds = 0;
  // The blocks arrived with the agreement (carried_agreement.hpp): the call ran no
  // plan of `algorithm`.
  bool carried_blocks = false;
  // What the rounds of the last blocking call's agreement moved from this rank
  // (its blocks as payload, where it sent them).
  PlanStats carried;
};

}  // namespace mpix

struct MPIX_Comm_s {
  MPI_Comm user_comm = MPI_COMM_NULL;
  MPI_Comm lib_comm = MPI_COMM_NULL;
  int size = 0, rank = 0;
  mpix::Locality locality;
  mpix::Regions regions;  // inside each node (src/topology/regions.hpp)
  mpix::ScratchPool scratch;
  unsigned long long persistent_plans = 0, blocking_plans = 0;  // made so far
  unsigned long long tag_slots = 4096;  // (MPI_TAG_UB + 1 - speculation's) / 8, read at init
  int live_requests = 0;  // requests whose plans use the pool and the communicators
  std::map<std::string, mpix::TuningTable> tuning_tables;  // by path, read once
  std::map<std::string, mpix::MachineProfile> machine_profiles;  // by path, read once
  std::set<std::string> verbose_reported;  // decisions MPIX_VERBOSE=1 reported
  MPI_Op agreement_op = MPI_OP_NULL;  // the one agreement of dense calls (agreement.cpp)
  MPI_Datatype agreement_type = MPI_DATATYPE_NULL;
  unsigned long long agreements = 0;  // made so far (read by the tests)
  // Blocking calls agree in lanes with groups of this many ranks, or (0) in
  // Bruck's rounds over all ranks (agreed with the layout: choose_carry_pattern,
  // carried_agreement.hpp).
  int lane_group = 0;
  int lane_batch = mpix::kLaneBatch;  // lanes in flight per rank (the tests set fewer)
  // Blocking calls whose exchange started before the agreement (speculation.hpp):
  // whether this rank starts it where the model says (0), only after the agreement
  // where other ranks did (-1), never (-2) or wherever it may (1) (the tests), and
  // how many calls the exchange so started completed (this rank having started
  // late, after the agreement, in some of them) or was abandoned (read by the
  // tests).
  int speculation = 0;
  unsigned long long speculations_finished = 0, speculations_late = 0, speculations_abandoned = 0;
  // Whether such a call's agreement goes between the exchange's messages
  // (CarriedAgreement::progress) where the model says (0), never (-1), or, looking
  // at it after every that many messages, always (> 0; the tests); how many calls'
  // did.
  int speculation_interleave = 0;
  unsigned long long speculations_interleaved = 0;
  // Whether the blocking calls that repeat one whose blocks its agreement carried
  // carry theirs again instead of running a plan: where the model says (0,
  // price_carrying_again in before_agreement.hpp), never (-1) or always (1) (the
  // tests).
  int carry_again = 0;
  // The most the TuNA core's T may take beyond its B slots for one message per
  // round (tuna_one_part, src/alltoallv/bruck.hpp); < 0: the library's room
  // (kTunaOnePartRoom); the tests set 0 to run the rounds in parts.
  double tuna_one_part_room = -1;
  mpix::SddeStats sdde_stats;    // of the last SDDE call
  mpix::SddeWindow sdde_window;  // of the rma SDDE algorithm
  mpix::DirectCopy direct_copy;  // pids, CMA permission, CUDA IPC handles (ipc_hybrid)
  // The plan of the last blocking MPIX_Alltoall [0] and MPIX_Alltoallv [1], run
  // again while every rank repeats that call (plan_reuse.hpp). Not counted
  // in live_requests; released by release_reusable_plans.
  mpix::ReusablePlan* reusable_plans[2] = {nullptr, nullptr};
  mpix::DenseChoice blocking_choices[2];  // the same two: what they ran
  // A blocking int-count MPIX_Alltoallv's counts [0: send, 1: receive] and
  // displacements widened to the large-count form, kept between calls so that a
  // repeated call allocates nothing (one collective at a time per communicator).
  std::vector<MPI_Count> widened_counts[2];
  std::vector<MPI_Aint> widened_displs[2];

  // Each plan gets 8 tags of its own, so that plans active at the same time on one
  // communicator never match each other's messages. Plans are created collectively
  // in the same order everywhere, so every rank hands out the same tags. Persistent
  // plans take theirs from the lower half of the tag space, blocking calls (dense,
  // SDDE, the carried agreement) from the upper half: a blocking call's plan runs
  // only inside its call, so however many calls a persistent plan outlives (one
  // started before them and waited after them), none shares its tags. Within a half,
  // tags come round again after MPI_TAG_UB / 16 plans (2^24 with MPICH 4.0, 2048 at
  // the least MPI allows), which a persistent plan alive that long would have to see
  // start alongside.
  int next_plan_tag(bool persistent) {
    if (persistent) return (int)(persistent_plans++ % (tag_slots / 2)) * 8;
    const int tag = next_blocking_tag();
    ++blocking_plans;
    return tag;
  }
  // The tag the next blocking call's plan gets (its agreement's, which ends first).
  int next_blocking_tag() const { return (int)(tag_slots / 2 + blocking_plans % (tag_slots / 2)) * 8; }
  // Above the plans' tags, where MPI_TAG_UB leaves room (-1: not), the tags of an
  // exchange started before its agreement (speculation.hpp): base + b for blocks of
  // b bytes, 0 < b < kSpeculationTags, so that a message matches only a receive
  // of its own length and no rank's bad arguments can make one longer than its
  // receive. Every such message is received inside its call, and messages of
  // one sender and tag match in the order sent, so calls reuse them.
  long long speculation_tag_base = -1;
  unsigned long long plans_created() const { return persistent_plans + blocking_plans; }
};

namespace mpix {

// Whether this rank prints the decision `key` under MPIX_VERBOSE: rank 0 only;
// every call at level 2, each distinct decision once per communicator at level 1.
bool reports(MPIX_Comm_s* comm, const std::string& key);

// Frees the plans kept for reuse by blocking calls (plan_reuse.hpp): before the
// communicator or its layout goes, which they were made with.
void release_reusable_plans(MPIX_Comm_s* comm);
// Whether the plan kept for the blocking MPIX_Alltoall (or MPIX_Alltoallv) runs
// again without the agreement, its messages carrying the change (read by the tests).
bool kept_plan_carries(const MPIX_Comm_s* comm, bool alltoall);

// The units an algorithm aggregates at (hint mpix_locality): the regions of all
// nodes when asked for and some node has several, else the nodes (a communicator
// without a region level aggregates per node either way).
inline Locality& locality_level(MPIX_Comm_s* comm, Level level) {
  return level == Level::region && comm->regions.divides_nodes() ? comm->regions.level() : comm->locality;
}

}  // namespace mpix
