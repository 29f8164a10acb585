// Regions: the locality level between the rank and the node (a socket or a NUMA
// domain). Detected inside each node with MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED,
// "mpi_hw_resource_type") where the MPI has it (MPICH 4; Open MPI 4.1 does not), else
// one region per node; emulated as blocks of `ranks_per_region` consecutive local
// ranks of a node (the last region of a node smaller), like ppn for nodes
// (MPIX_REGION_SIZE, MPIX_Comm_update_regions). The region communicator is created
// on first use and cached, and freed with the MPIX_Comm.
#pragma once
#include <mpi.h>

#include <vector>

namespace mpix {

class Locality;

class Regions {
 public:
  Regions() = default;
  Regions(const Regions&) = delete;
  Regions& operator=(const Regions&) = delete;
  ~Regions() { free_comms(); }

  // Collective on `parent` (the library's communicator), after the node layout:
  // ranks_per_region <= 0 detects, > 0 emulates. The value is agreed between ranks:
  // different values fail on every rank with MPIX_ERR_ARG.
  int init(MPI_Comm parent, Locality& locality, int ranks_per_region);
  void free_comms();

  int ranks_per_region() const { return ranks_per_region_; }  // 0: detected
  int num_regions() const { return num_regions_; }             // in this rank's node
  int region() const { return region_of_local_[local_rank_]; }
  int region_size() const { return (int)region_members_[region()].size(); }
  int region_rank() const { return region_rank_; }
  // Region of each local rank of this rank's node.
  const std::vector<int>& region_of_local() const { return region_of_local_; }

  // Collective over the node on first use: this rank's region, ordered by local rank.
  int region_comm(MPI_Comm* comm);

 private:
  MPI_Comm node_ = MPI_COMM_NULL;  // the node communicator it was built on (owned by Locality)
  int ranks_per_region_ = 0, num_regions_ = 1, local_rank_ = 0, region_rank_ = 0;
  std::vector<int> region_of_local_;
  std::vector<std::vector<int>> region_members_;  // local ranks by region
  MPI_Comm region_comm_ = MPI_COMM_NULL;
};

// MPIX_REGION_SIZE from the environment (0 when unset); MPIX_ERR_ARG when malformed,
// and then *ranks_per_region = kMalformedRegionSize, which Regions::init turns into
// a failure on every rank.
constexpr int kMalformedRegionSize = -2147483647 - 1;
int region_size_from_environment(int* ranks_per_region);

}  // namespace mpix
