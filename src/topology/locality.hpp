// Where ranks live: nodes detected through MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
// or emulated as blocks of `ppn` consecutive ranks (the last node may be smaller),
// and the communicators that follow from that, created on first use and cached.
#pragma once
#include <mpi.h>

#include <vector>

namespace mpix {

class Locality {
 public:
  Locality() = default;
  Locality(const Locality&) = delete;
  Locality& operator=(const Locality&) = delete;
  ~Locality() { free_comms(); }

  // Collective on `parent`: ppn <= 0 detects shared-memory nodes, ppn > 0 emulates.
  int init(MPI_Comm parent, int ppn);
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
  MPI_Comm parent_ = MPI_COMM_NULL;
  int rank_ = 0, ppn_ = 0;
  std::vector<int> rank_node_, rank_local_;
  std::vector<std::vector<int>> node_ranks_;
  MPI_Comm node_comm_ = MPI_COMM_NULL, group_comm_ = MPI_COMM_NULL;
};

}  // namespace mpix
