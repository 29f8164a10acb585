// Regions: the locality level between the rank and the node (a socket or a NUMA
// domain). Detected inside each node with MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED,
// "mpi_hw_resource_type") where the MPI has it (MPICH 4; Open MPI 4.1 does not), else
// with hwloc where the build found it (the package the rank is bound to), else
// one region per node; emulated as blocks of `ranks_per_region` consecutive local
// ranks of a node (the last region of a node smaller), like ppn for nodes
// (MPIX_REGION_SIZE, MPIX_Comm_update_regions). Regions never cross a node: each
// is a part of one node. The region communicator is created on first use and
// cached, and freed with the MPIX_Comm.
//
// level() is the region level as a Locality whose units are the regions of all
// nodes, numbered node by node (so the algorithms that aggregate per node run per
// region with it, Level::region).
#pragma once
#include <mpi.h>
#include <mpix/mpix.h>

#include <vector>

#include "locality.hpp"

namespace mpix {

class Regions {
 public:
  Regions() = default;
  Regions(const Regions&) = delete;
  Regions& operator=(const Regions&) = delete;
  ~Regions() = default;  // level_ frees its communicators

  // Collective on `parent` (the library's communicator), after the node layout:
  // ranks_per_region <= 0 detects, > 0 emulates. The value is agreed between ranks:
  // different values fail on every rank with MPIX_ERR_ARG. A rank that failed its
  // own checks before (a malformed MPIX_REGION_SIZE, persistent requests still
  // alive) passes that error as `local_rc`: it returns it, the others fail too,
  // after the same collectives. On failure the regions stay as they were.
  int init(MPI_Comm parent, Locality& locality, int ranks_per_region, int local_rc = MPIX_SUCCESS);
  void free_comms();

  int ranks_per_region() const { return ranks_per_region_; }  // 0: detected
  int num_regions() const { return num_regions_; }             // in this rank's node
  int region() const { return region_of_local_[local_rank_]; }
  int region_size() const { return (int)region_members_[region()].size(); }
  int region_rank() const { return region_rank_; }
  // Region of each local rank of this rank's node.
  const std::vector<int>& region_of_local() const { return region_of_local_; }

  // Collective over the node on first use: this rank's region, ordered by local rank.
  int region_comm(MPI_Comm* comm) { return level_.node_comm(comm); }

  // True when some node has more than one region (else the region level is the
  // node level, and Level::region means the node).
  bool divides_nodes() const { return level_.num_nodes() > num_nodes_; }
  // The regions of all nodes as a locality level (see above).
  Locality& level() { return level_; }
  const Locality& level() const { return level_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;  // the node communicator it was built on (owned by Locality)
  int ranks_per_region_ = 0, num_regions_ = 1, local_rank_ = 0, region_rank_ = 0, num_nodes_ = 1;
  std::vector<int> region_of_local_;
  std::vector<std::vector<int>> region_members_;  // local ranks by region
  Locality level_;
};

// The hwloc fallback of detection: the logical index of the package (socket) that
// contains every CPU this process is bound to; -1 when it is not bound inside one
// package (unbound on a machine of several, or spanning several), or when the
// build has no hwloc (MPIX_HAVE_HWLOC) or hwloc fails. Read once per process:
// loading hwloc's topology takes about 0.1 s, which every new communicator paid
// (the interposer makes one per MPI communicator); a process that binds itself
// elsewhere later keeps its first answer.
int package_of_binding();

}  // namespace mpix
