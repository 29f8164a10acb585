// MPIX_Alltoall_crs / MPIX_Alltoallv_crs: not implemented yet (issue 4). The entry
// points exist so that programs written against API.md link; they fail cleanly.
#include "../core/error.hpp"

using namespace mpix;

extern "C" int MPIX_Alltoall_crs(int, const int*, int, MPI_Datatype, const void*, int*, int**, int,
                                 MPI_Datatype, void**, MPIX_Info*, MPIX_Comm*) {
  return fail(MPIX_ERR_UNSUPPORTED, "MPIX_Alltoall_crs: sparse dynamic data exchange is not implemented yet");
}

extern "C" int MPIX_Alltoallv_crs(int, int, const int*, const int*, const int*, MPI_Datatype, const void*,
                                  int*, int*, int**, int**, int**, MPI_Datatype, void**, MPIX_Info*,
                                  MPIX_Comm*) {
  return fail(MPIX_ERR_UNSUPPORTED, "MPIX_Alltoallv_crs: sparse dynamic data exchange is not implemented yet");
}
