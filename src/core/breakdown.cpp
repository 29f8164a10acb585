#include "breakdown.hpp"

#include <mpi.h>

#include <cstdlib>

#include "info.hpp"

namespace mpix {

int breakdown_state = -1;

namespace {
Breakdown totals;
TimePhase current = TimePhase::other;
int depth = 0;        // open scopes
double last_mark = 0;  // MPI_Wtime when `current` last changed

void charge(double now) {
  totals.seconds[(int)current] += now - last_mark;
  last_mark = now;
}
}  // namespace

const char* time_phase_name(TimePhase phase) {
  static const char* const names[kTimePhaseCount] = {"other",      "agreement",  "planning", "metadata",
                                                 "intra_node", "inter_node", "exchange", "local_copy"};
  const int index = (int)phase;
  return index >= 0 && index < kTimePhaseCount ? names[index] : "?";
}

bool read_breakdown_setting() {
  const char* text = std::getenv("MPIX_BREAKDOWN");
  breakdown_state = text && *text && !environment_says_off("MPIX_BREAKDOWN") ? 1 : 0;
  return breakdown_state > 0;
}

void breakdown_reset() { totals = Breakdown{}; }

Breakdown breakdown_read() { return totals; }

void TimeScope::enter(TimePhase phase) {
  const double now = MPI_Wtime();
  if (depth > 0) charge(now);
  last_mark = now;
  previous_ = current;
  // A flat exchange inside a level's phase is part of that level.
  if (phase == TimePhase::exchange && depth > 0 && (current == TimePhase::intra_node || current == TimePhase::inter_node))
    phase = current;
  current = phase;
  ++depth;
  active_ = true;
}

void TimeScope::leave() {
  charge(MPI_Wtime());
  current = previous_;
  --depth;
}

}  // namespace mpix
