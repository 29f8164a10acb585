// Where ranks live: nodes detected through MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
// or emulated as blocks of `ppn` consecutive ranks (the last node may be smaller),
// and the communicators that follow from that, created on first use and cached.
// The same class describes the region level (regions.hpp), whose "nodes" are the
// regions of all nodes: algorithms that aggregate per node take the level as a
// parameter (Level, locality_level() in src/core/comm.hpp).
#pragma once
#include <mpi.h>

#include <vector>

namespace mpix {

// The locality level an algorithm aggregates at (hint mpix_locality).
enum class Level { node, region };

class Locality {
 public:
  Locality() = default;
  Locality(const Locality&) = delete;
  Locality& operator=(const Locality&) = delete;
  ~Locality() { free_comms(); }

  // Collective on `parent`: ppn <= 0 detects shared-memory nodes, ppn > 0 emulates.
  int init(MPI_Comm parent, int ppn);
  // Collective on `parent`: a level nested in another one's units, given the unit
  // and the rank inside it of every rank of `parent` (the same tables everywhere).
  // Its node_comm is split from `enclosing` (this rank's enclosing unit), so that
  // creating it involves that unit only.
  int init_nested(MPI_Comm parent, MPI_Comm enclosing, const std::vector<int>& rank_unit,
                  const std::vector<int>& rank_local);
  // Collective: frees the cached sub-communicators.
  void free_comms();

  int ppn() const { return ppn_; }  // 0: detected
  int num_nodes() const { return (int)node_ranks_.size(); }
  int node() const { return rank_node_[rank_]; }
  int local_size() const { return (int)node_ranks_[node()].size(); }
  int local_rank() const { return rank_local_[rank_]; }
  int node_of(int rank) const { return rank_node_[rank]; }
  int local_rank_of(int rank) const { return rank_local_[rank]; }
  // Ranks of `node` in order of local rank.
  const std::vector<int>& node_ranks(int node) const { return node_ranks_[node]; }
  // True when every node has the same number of ranks.
  bool uniform_nodes() const;

  // Collective on first use: this rank's node, ordered by local rank.
  int node_comm(MPI_Comm* comm);
  // Collective on first use: the ranks with this rank's local rank, one per node,
  // ordered by node.
  int group_comm(MPI_Comm* comm);

 private:
  void set_tables(const std::vector<int>& rank_node, const std::vector<int>& rank_local);
  MPI_Comm parent_ = MPI_COMM_NULL, enclosing_ = MPI_COMM_NULL;
  int rank_ = 0, ppn_ = 0;
  std::vector<int> rank_node_, rank_local_;
  std::vector<std::vector<int>> node_ranks_;
  MPI_Comm node_comm_ = MPI_COMM_NULL, group_comm_ = MPI_COMM_NULL;
};

}  // namespace mpix
