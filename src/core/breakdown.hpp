// Where the time of a call goes: seconds per phase (MPI_Wtime; in the simulated
// build the simulated clock, so exact) of this process, for docs/performance.md's
// "Where the time goes" (mpix-bench prints it). Off unless MPIX_BREAKDOWN is set
// (to anything but empty or 0) when first asked: then every marker is a branch.
//
// Algorithms mark a phase with one TimeScope (or a Stage's phase, bruck.hpp). The
// times are exclusive: a phase nested in another is charged to itself only, so the
// phases of a call add up to the call's time. A flat exchange (TimePhase::exchange)
// nested in an intra- or inter-node phase (node_aware's node-local alltoallv) is
// charged to that level. Time outside every scope is not counted. A diagnostic of
// one process, not thread-safe (SMPI gives every simulated rank its own copy).
#pragma once

namespace mpix {

enum class TimePhase : int {
  other,       // inside a call, outside every phase below (argument checks, start/wait glue)
  agreement,   // the per-call agreement and the agreements on received sizes
  planning,    // choosing the algorithm and building its plan (MPI calls it makes)
  metadata,    // rounds that carry block sizes
  intra_node,  // data phases among the ranks of a node
  inter_node,  // data phases between nodes
  exchange,    // data rounds of a flat (single-level) exchange
  local_copy,  // bytes the library copies, packs or unpacks (charge_copy)
  count
};
constexpr int kTimePhaseCount = (int)TimePhase::count;
const char* time_phase_name(TimePhase phase);

struct Breakdown {
  double seconds[kTimePhaseCount] = {};
};

extern int breakdown_state;  // -1: MPIX_BREAKDOWN not read yet; 0: off; 1: on
bool read_breakdown_setting();
inline bool breakdown_enabled() { return breakdown_state > 0 || (breakdown_state < 0 && read_breakdown_setting()); }
// The seconds per phase since the last reset.
void breakdown_reset();
Breakdown breakdown_read();

// Charges the time from construction to destruction to `phase` (exclusive of
// nested scopes).
class TimeScope {
 public:
  explicit TimeScope(TimePhase phase) {
    if (breakdown_enabled()) enter(phase);
  }
  ~TimeScope() {
    if (active_) leave();
  }
  TimeScope(const TimeScope&) = delete;
  TimeScope& operator=(const TimeScope&) = delete;

 private:
  void enter(TimePhase phase);
  void leave();
  bool active_ = false;
  TimePhase previous_ = TimePhase::other;
};

}  // namespace mpix
