#include "regions.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>

#include "../core/comm.hpp"
#include "../core/error.hpp"
#include "../core/info.hpp"
#include "locality.hpp"

namespace mpix {

int region_size_from_environment(int* ranks_per_region) {
  *ranks_per_region = 0;
  const char* text = std::getenv("MPIX_REGION_SIZE");
  if (!text || !*text) return MPIX_SUCCESS;
  long long value = 0;
  if (!parse_integer(text, &value) || value > INT_MAX || value <= INT_MIN) {
    *ranks_per_region = kMalformedRegionSize;
    return fail(MPIX_ERR_ARG, format("MPIX_REGION_SIZE=%s (environment): not an integer", text));
  }
  *ranks_per_region = (int)value;
  return MPIX_SUCCESS;
}

void Regions::free_comms() {
  if (region_comm_ != MPI_COMM_NULL) MPI_Comm_free(&region_comm_);
}

int Regions::init(MPI_Comm parent, Locality& locality, int ranks_per_region) {
  free_comms();
  // Agreed first, so that every rank takes the same path below.
  const bool malformed = ranks_per_region == kMalformedRegionSize;
  const int value = ranks_per_region > 0 ? ranks_per_region : 0;
  int mine[3] = {value, -value, malformed ? 1 : 0};
  int all[3];
  MPIX_CHECK_MPI(MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, parent));
  if (malformed) return fail(MPIX_ERR_ARG, format("MPIX_REGION_SIZE=%s (environment): not an integer",
                                                  std::getenv("MPIX_REGION_SIZE")));
  if (all[2]) return fail(MPIX_ERR_ARG, "regions: another rank has a malformed MPIX_REGION_SIZE");
  if (all[0] != -all[1])
    return fail(MPIX_ERR_ARG, format("regions: ranks differ in ranks_per_region (here %d, elsewhere up to %d): "
                                     "MPIX_REGION_SIZE or MPIX_Comm_update_regions must be the same on all ranks",
                                     mine[0], all[0]));
  ranks_per_region_ = mine[0];
  MPIX_TRY(locality.node_comm(&node_));
  const int local_size = locality.local_size();
  local_rank_ = locality.local_rank();
  region_of_local_.assign(local_size, 0);
  if (ranks_per_region_ > 0) {
    for (int l = 0; l < local_size; ++l) region_of_local_[l] = l / ranks_per_region_;
  } else {
    // Detection: the MPI's hardware-guided split of the node, by package (socket).
    int leader = local_rank_;
#ifdef MPI_COMM_TYPE_HW_GUIDED
    MPI_Info info = MPI_INFO_NULL;
    MPIX_CHECK_MPI(MPI_Info_create(&info));
    MPI_Info_set(info, "mpi_hw_resource_type", "Package");
    MPI_Comm hardware = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(node_, MPI_COMM_TYPE_HW_GUIDED, local_rank_, info, &hardware);
    MPI_Info_free(&info);
    // MPI_COMM_NULL (the MPI cannot tell) or an error: one region per node.
    if (rc == MPI_SUCCESS && hardware != MPI_COMM_NULL) {
      rc = MPI_Allreduce(&local_rank_, &leader, 1, MPI_INT, MPI_MIN, hardware);
      MPI_Comm_free(&hardware);
      if (rc != MPI_SUCCESS) leader = 0;
    } else {
      leader = 0;
    }
#else
    leader = 0;  // Open MPI 4.1 has no MPI_COMM_TYPE_HW_GUIDED
#endif
    std::vector<int> leaders(local_size);
    MPIX_CHECK_MPI(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, node_));
    // Regions numbered by their lowest local rank, the same on every rank.
    std::map<int, int> number;
    for (int l : leaders) number.emplace(l, 0);
    int next = 0;
    for (auto& entry : number) entry.second = next++;
    for (int l = 0; l < local_size; ++l) region_of_local_[l] = number[leaders[l]];
  }
  num_regions_ = region_of_local_.empty() ? 1 : *std::max_element(region_of_local_.begin(), region_of_local_.end()) + 1;
  region_members_.assign(num_regions_, {});
  for (int l = 0; l < local_size; ++l) region_members_[region_of_local_[l]].push_back(l);
  const std::vector<int>& members = region_members_[region()];
  region_rank_ = (int)(std::find(members.begin(), members.end(), local_rank_) - members.begin());
  return MPIX_SUCCESS;
}

int Regions::region_comm(MPI_Comm* comm) {
  if (region_comm_ == MPI_COMM_NULL) MPIX_CHECK_MPI(MPI_Comm_split(node_, region(), local_rank_, &region_comm_));
  *comm = region_comm_;
  return MPIX_SUCCESS;
}

}  // namespace mpix

using namespace mpix;

extern "C" int MPIX_Comm_update_regions(MPIX_Comm* comm, int ranks_per_region) {
  if (!comm) return fail(MPIX_ERR_ARG, "MPIX_Comm_update_regions: comm is NULL");
  if (comm->live_requests > 0)
    return fail(MPIX_ERR_ARG, format("MPIX_Comm_update_regions: %d persistent request(s) still use this "
                                     "communicator's layout; free them first", comm->live_requests));
  return comm->regions.init(comm->lib_comm, comm->locality, ranks_per_region);
}

extern "C" int MPIX_Comm_region(const MPIX_Comm* comm, int* num_regions, int* region, int* region_size,
                                int* region_rank) {
  if (!comm) return fail(MPIX_ERR_ARG, "MPIX_Comm_region: comm is NULL");
  if (num_regions) *num_regions = comm->regions.num_regions();
  if (region) *region = comm->regions.region();
  if (region_size) *region_size = comm->regions.region_size();
  if (region_rank) *region_rank = comm->regions.region_rank();
  return MPIX_SUCCESS;
}
