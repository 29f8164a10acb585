// The dense calls behind the C API (dense_api.cpp): a blocking call (agreement,
// choice, plan or the kept one, start, wait) and a persistent one's planning
// (dense.cpp), and a request's start and wait.
#pragma once

#include "dense_args.hpp"
#include "request.hpp"

namespace mpix {

int dense_blocking(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm);
// *out: the planned request, or NULL where planning failed.
int dense_persistent(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm, MPIX_Request_s** out);
// MPIX_Start, MPIX_Wait and MPIX_Test of a request; the waits and tests also move
// the process's other started requests on (progress.hpp).
int start_request(MPIX_Request_s* request);
int wait_request(MPIX_Request_s* request);
int test_request(MPIX_Request_s* request, bool* done);

}  // namespace mpix
