#include "locality.hpp"

#include <algorithm>
#include <map>

#include "../core/error.hpp"
#include "../core/library_comm.hpp"

namespace mpix {

void Locality::free_comms() {
  if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  if (group_comm_ != MPI_COMM_NULL) MPI_Comm_free(&group_comm_);
}

void Locality::set_tables(const std::vector<int>& rank_node, const std::vector<int>& rank_local) {
  rank_node_ = rank_node;
  rank_local_ = rank_local;
  int nodes = rank_node.empty() ? 0 : *std::max_element(rank_node.begin(), rank_node.end()) + 1;
  node_ranks_.assign(nodes, {});
  for (std::size_t r = 0; r < rank_node.size(); ++r) node_ranks_[rank_node[r]].push_back((int)r);
  for (auto& ranks : node_ranks_)
    std::sort(ranks.begin(), ranks.end(),
              [&](int a, int b) { return rank_local_[a] < rank_local_[b]; });
}

bool Locality::uniform_nodes() const {
  for (const auto& ranks : node_ranks_)
    if (ranks.size() != node_ranks_[0].size()) return false;
  return true;
}

int Locality::init_nested(MPI_Comm parent, MPI_Comm enclosing, const std::vector<int>& rank_unit,
                          const std::vector<int>& rank_local) {
  free_comms();
  parent_ = parent;
  enclosing_ = enclosing;
  ppn_ = 0;
  MPIX_CHECK_MPI(MPI_Comm_rank(parent, &rank_));
  set_tables(rank_unit, rank_local);
  return MPIX_SUCCESS;
}

int Locality::init(MPI_Comm parent, int ppn) {
  free_comms();
  parent_ = parent;
  enclosing_ = MPI_COMM_NULL;
  int size = 0;
  MPIX_CHECK_MPI(MPI_Comm_size(parent, &size));
  MPIX_CHECK_MPI(MPI_Comm_rank(parent, &rank_));
  ppn_ = ppn > 0 ? ppn : 0;
  std::vector<int> rank_node(size), rank_local(size);
  if (ppn_ > 0) {
    for (int r = 0; r < size; ++r) {
      rank_node[r] = r / ppn_;
      rank_local[r] = r % ppn_;
    }
    set_tables(rank_node, rank_local);
    return MPIX_SUCCESS;
  }
  // Detection: the shared-memory communicator is this rank's node; nodes are
  // numbered by their lowest rank so that the numbering is the same everywhere.
  MPIX_CHECK_MPI(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm_));
  name_library_comm(node_comm_, "node");
  int local_rank = 0, leader = 0;
  MPIX_CHECK_MPI(MPI_Comm_rank(node_comm_, &local_rank));
  MPIX_CHECK_MPI(MPI_Allreduce(&rank_, &leader, 1, MPI_INT, MPI_MIN, node_comm_));
  int mine[2] = {leader, local_rank};
  std::vector<int> all(2 * size);
  MPIX_CHECK_MPI(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, parent));
  std::map<int, int> node_of_leader;
  for (int r = 0; r < size; ++r) node_of_leader.emplace(all[2 * r], 0);
  int next = 0;
  for (auto& entry : node_of_leader) entry.second = next++;
  for (int r = 0; r < size; ++r) {
    rank_node[r] = node_of_leader[all[2 * r]];
    rank_local[r] = all[2 * r + 1];
  }
  set_tables(rank_node, rank_local);
  return MPIX_SUCCESS;
}

int Locality::node_comm(MPI_Comm* comm) {
  if (node_comm_ == MPI_COMM_NULL) {
    MPIX_CHECK_MPI(MPI_Comm_split(enclosing_ != MPI_COMM_NULL ? enclosing_ : parent_, node(), local_rank(),
                                  &node_comm_));
    name_library_comm(node_comm_, "node");
  }
  *comm = node_comm_;
  return MPIX_SUCCESS;
}

int Locality::group_comm(MPI_Comm* comm) {
  if (group_comm_ == MPI_COMM_NULL) {
    MPIX_CHECK_MPI(MPI_Comm_split(parent_, local_rank(), node(), &group_comm_));
    name_library_comm(group_comm_, "group");
  }
  *comm = group_comm_;
  return MPIX_SUCCESS;
}

}  // namespace mpix
