#include "regions.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>

#ifdef MPIX_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "../core/comm.hpp"
#include "../core/error.hpp"
#include "../core/handles.hpp"
#include "../core/info.hpp"
#include "../core/progress.hpp"
#include "locality.hpp"

namespace mpix {

void Regions::free_comms() { level_.free_comms(); }

namespace {

int read_package_of_binding() {
#ifdef MPIX_HAVE_HWLOC
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return -1;
  int package = -1;
  hwloc_bitmap_t bound = hwloc_bitmap_alloc();
  if (bound && hwloc_topology_load(topology) == 0 &&
      (hwloc_get_cpubind(topology, bound, 0) == 0 ||
       hwloc_get_cpubind(topology, bound, HWLOC_CPUBIND_THREAD) == 0) &&
      !hwloc_bitmap_iszero(bound)) {
    // The smallest object holding every bound CPU, or its package ancestor.
    hwloc_obj_t holder = hwloc_get_obj_covering_cpuset(topology, bound);
    if (holder && holder->type != HWLOC_OBJ_PACKAGE)
      holder = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, holder);
    if (holder) package = (int)holder->logical_index;
  }
  if (bound) hwloc_bitmap_free(bound);
  hwloc_topology_destroy(topology);
  return package;
#else
  return -1;
#endif
}

}  // namespace

int package_of_binding() {
  static const int package = read_package_of_binding();
  return package;
}

namespace {

// Detection in a node (collective over `node`): the local rank that leads this
// rank's region (its lowest), from the MPI's hardware-guided split by package where
// it works on every rank of the node, else from hwloc's package of each rank's
// binding where every rank of the node has one; else 0, one region per node.
int detected_leader(MPI_Comm node, int local_rank, int* leader) {
  int guided = 0;
  *leader = 0;
#ifdef MPI_COMM_TYPE_HW_GUIDED
  MPI_Info info = MPI_INFO_NULL;
  MPIX_CHECK_MPI(MPI_Info_create(&info));
  MPI_Info_set(info, "mpi_hw_resource_type", "Package");
  MPI_Comm hardware = MPI_COMM_NULL;
  int rc = MPI_Comm_split_type(node, MPI_COMM_TYPE_HW_GUIDED, local_rank, info, &hardware);
  MPI_Info_free(&info);
  // MPI_COMM_NULL (the MPI cannot tell) or an error: not guided.
  if (rc == MPI_SUCCESS && hardware != MPI_COMM_NULL) {
    guided = MPI_Allreduce(&local_rank, leader, 1, MPI_INT, MPI_MIN, hardware) == MPI_SUCCESS;
    MPI_Comm_free(&hardware);
  }
#else
  (void)local_rank;  // Open MPI 4.1 has no MPI_COMM_TYPE_HW_GUIDED
#endif
  // Every rank of the node takes the same path.
  int all_guided = 0;
  MPIX_CHECK_MPI(MPI_Allreduce(&guided, &all_guided, 1, MPI_INT, MPI_MIN, node));
  if (all_guided) return MPIX_SUCCESS;
  *leader = 0;
#ifdef MPIX_HAVE_HWLOC
  const int package = package_of_binding();
  int local_size = 0;
  MPIX_CHECK_MPI(MPI_Comm_size(node, &local_size));
  std::vector<int> packages(local_size);
  MPIX_CHECK_MPI(MPI_Allgather(&package, 1, MPI_INT, packages.data(), 1, MPI_INT, node));
  // A rank bound to no single package (or unbound on a machine of several) makes
  // the whole node one region: regions must partition the node.
  if (std::find(packages.begin(), packages.end(), -1) == packages.end())
    *leader = (int)(std::find(packages.begin(), packages.end(), package) - packages.begin());
#endif
  return MPIX_SUCCESS;
}

}  // namespace

int Regions::init(MPI_Comm parent, Locality& locality, int ranks_per_region, int local_rc) {
  // Agreed first, so that every rank takes the same path below; and while the
  // started requests move on, so that the splits below are entered by ranks that
  // all made this call (MPIX_Comm_update_regions; agree_layout in comm.cpp).
  const bool failed = local_rc != MPIX_SUCCESS;
  const int value = ranks_per_region > 0 && !failed ? ranks_per_region : 0;
  int mine[3] = {value, -value, failed ? 1 : 0};
  int all[3];
  MPIX_TRY(allreduce_progressing(mine, all, 3, MPI_INT, MPI_MAX, parent));
  if (failed) return local_rc;  // its message is the last error still
  if (all[2]) return fail(MPIX_ERR_ARG, "regions: another rank failed its checks (its own message names the problem)");
  if (all[0] != -all[1])
    return fail(MPIX_ERR_ARG, format("regions: ranks differ in ranks_per_region: %d here, from %d to %d over all "
                                     "ranks (0: none given); MPIX_REGION_SIZE or MPIX_Comm_update_regions must be "
                                     "the same on all ranks",
                                     mine[0], -all[1], all[0]));
  free_comms();
  ranks_per_region_ = mine[0];
  MPIX_TRY(locality.node_comm(&node_));
  const int local_size = locality.local_size();
  local_rank_ = locality.local_rank();
  region_of_local_.assign(local_size, 0);
  if (ranks_per_region_ > 0) {
    for (int l = 0; l < local_size; ++l) region_of_local_[l] = l / ranks_per_region_;
  } else {
    int leader = 0;
    MPIX_TRY(detected_leader(node_, local_rank_, &leader));
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

  // The region level over all nodes: every rank's region in its node (one
  // allgather), numbered node by node, ranks inside a region by local rank.
  int size = 0;
  MPIX_CHECK_MPI(MPI_Comm_size(parent, &size));
  std::vector<int> region_in_node(size);
  const int mine_in_node = region();
  MPIX_CHECK_MPI(MPI_Allgather(&mine_in_node, 1, MPI_INT, region_in_node.data(), 1, MPI_INT, parent));
  num_nodes_ = locality.num_nodes();
  std::vector<int> rank_region(size), rank_in_region(size);
  int first = 0;  // number of the node's first region
  for (int n = 0; n < num_nodes_; ++n) {
    std::vector<int> filled;
    for (int r : locality.node_ranks(n)) {  // in local-rank order
      const int in_node = region_in_node[r];
      if (in_node >= (int)filled.size()) filled.resize(in_node + 1, 0);
      rank_region[r] = first + in_node;
      rank_in_region[r] = filled[in_node]++;
    }
    first += (int)filled.size();
  }
  return level_.init_nested(parent, node_, rank_region, rank_in_region);
}

}  // namespace mpix

using namespace mpix;

extern "C" int MPIX_Comm_update_regions(MPIX_Comm* comm, int ranks_per_region) {
  MPIX_TRY(check_handle(comm, "MPIX_Comm_update_regions", "comm"));
  LibraryEntry entry("MPIX_Comm_update_regions");  // the thread level's rules, as for MPIX_Comm_init
  MPIX_TRY(entry.rc());
  release_reusable_plans(comm);
  // Agreed in init's collectives, so that a rank whose peers freed theirs is not
  // left waiting there alone.
  int rc = MPIX_SUCCESS;
  if (comm->live_requests > 0)
    rc = fail(MPIX_ERR_ARG, format("MPIX_Comm_update_regions: %d persistent request(s) still use this "
                                   "communicator's layout; free them first", comm->live_requests));
  return finish_call("MPIX_Comm_update_regions",
                     comm->regions.init(comm->lib_comm, comm->locality, ranks_per_region, rc));
}

extern "C" int MPIX_Comm_region(const MPIX_Comm* comm, int* num_regions, int* region, int* region_size,
                                int* region_rank) {
  MPIX_TRY(check_handle(comm, "MPIX_Comm_region", "comm"));
  if (num_regions) *num_regions = comm->regions.num_regions();
  if (region) *region = comm->regions.region();
  if (region_size) *region_size = comm->regions.region_size();
  if (region_rank) *region_rank = comm->regions.region_rank();
  return MPIX_SUCCESS;
}
