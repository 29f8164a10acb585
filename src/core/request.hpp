// MPIX_Request: a plan with the state of a persistent collective. Visible to the
// tools and tests so that they can read a plan's counters.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "../gpu/staging.hpp"
#include "comm.hpp"
#include "datatype.hpp"
#include "plan.hpp"
#include "progress.hpp"
#include "registry.hpp"
#include "scratch.hpp"

struct MPIX_Request_s {
  explicit MPIX_Request_s(MPIX_Comm_s* owner) : comm(owner) { ++comm->live_requests; }
  ~MPIX_Request_s() {
    mpix::progress_completed(this);  // a request dropped while started (an exception) leaves no dangling entry
    plan.reset();  // before the types it packs with
    in_place_copy = mpix::ScratchBuffer();
    --comm->live_requests;
  }
  MPIX_Request_s(const MPIX_Request_s&) = delete;
  MPIX_Request_s& operator=(const MPIX_Request_s&) = delete;

  MPIX_Comm_s* comm;
  // Declared before the plan, so destroyed after it (persistent requests only).
  std::unique_ptr<mpix::OwnedTypes> types;
  // MPI_IN_PLACE with MPI_BOTTOM: the receive type moved onto in_place_copy (dense.cpp).
  std::unique_ptr<mpix::OwnedTypes> in_place_type;
  std::unique_ptr<mpix::Plan> plan;
  std::string algorithm;  // the name chosen (after auto)
  std::string params;     // its parameters, "stride=8"
  mpix::Params param_values;   // the same, as the plan used them
  mpix::ExchangeFacts facts;   // agreed at planning (what the cost model saw)
  double predicted_seconds = 0;  // the model's time for one blocking call, agreement included (0: no model)
  bool active = false;
  // Progress from other requests' waits and tests (progress.hpp).
  mpix::ProgressMutex progress_mutex;
  mpix::FinishedApart apart;

  // MPI_IN_PLACE: the receive buffer's blocks are copied here at each start and
  // sent from here, so that received blocks can overwrite them.
  mpix::ScratchBuffer in_place_copy;
  char* in_place_source = nullptr;  // first byte of the receive blocks' span, copied to the copy's first
  std::ptrdiff_t in_place_bytes = 0;
  // Device buffers staged through pinned host memory (src/gpu/staging.hpp).
  std::unique_ptr<mpix::DeviceStaging> device_staging;
};
