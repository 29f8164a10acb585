// Communicators: node detection and its emulation (a smaller last node),
// sub-communicators, regions inside nodes.
#include <catch2/catch.hpp>
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/comm.hpp"
#include "harness.hpp"


using harness::all_ranks;
using harness::Comm;
using harness::message_has;
using harness::SmallExchange;

TEST_CASE("locality: detection, emulation, a smaller last node", "[locality]") {
  // Detection ignores MPIX_PPN when it is unset; this test sets and restores it.
  const char* saved = std::getenv("MPIX_PPN");
  std::string saved_value = saved ? saved : "";
  unsetenv("MPIX_PPN");
  int size = harness::world_size(), rank = harness::world_rank();
  {
    Comm c;
    int nodes = 0, node = -1, local_size = 0, local_rank = -1;
    REQUIRE(MPIX_Comm_locality(c.comm, &nodes, &node, &local_size, &local_rank) == MPIX_SUCCESS);
    // This machine is one node.
    CHECK(nodes == 1);
    CHECK(node == 0);
    CHECK(local_size == size);
    CHECK(local_rank == rank);

    for (int ppn : {1, 2, 3, 5}) {
      INFO("ppn=" << ppn);
      REQUIRE(MPIX_Comm_update_locality(c.comm, ppn) == MPIX_SUCCESS);
      REQUIRE(MPIX_Comm_locality(c.comm, &nodes, &node, &local_size, &local_rank) == MPIX_SUCCESS);
      CHECK(nodes == (size + ppn - 1) / ppn);
      CHECK(node == rank / ppn);
      CHECK(local_rank == rank % ppn);
      CHECK(local_size == std::min(ppn, size - node * ppn));
      MPI_Comm node_comm, group_comm;
      REQUIRE(c.comm->locality.node_comm(&node_comm) == MPIX_SUCCESS);
      REQUIRE(c.comm->locality.group_comm(&group_comm) == MPIX_SUCCESS);
      int n = 0, r = 0;
      MPI_Comm_size(node_comm, &n);
      MPI_Comm_rank(node_comm, &r);
      CHECK(n == local_size);
      CHECK(r == local_rank);
      MPI_Comm_size(group_comm, &n);
      MPI_Comm_rank(group_comm, &r);
      int with_my_local_rank = 0;
      for (int q = 0; q < size; ++q) with_my_local_rank += q % ppn == local_rank;
      CHECK(n == with_my_local_rank);
      CHECK(r == node);
      // An exchange on the emulated layout.
      SmallExchange ex;
      CHECK(ex.run(nullptr, c.comm) == MPIX_SUCCESS);
      CHECK(all_ranks(ex.correct()));
    }
    REQUIRE(MPIX_Comm_update_locality(c.comm, 0) == MPIX_SUCCESS);
    REQUIRE(MPIX_Comm_locality(c.comm, &nodes, nullptr, nullptr, nullptr) == MPIX_SUCCESS);
    CHECK(nodes == 1);
  }
  {
    setenv("MPIX_PPN", "2", 1);
    Comm c;
    int nodes = 0;
    MPIX_Comm_locality(c.comm, &nodes, nullptr, nullptr, nullptr);
    CHECK(nodes == (size + 1) / 2);
    setenv("MPIX_PPN", "two", 1);
    MPIX_Comm* bad = nullptr;
    CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_PPN=two"));
    CHECK(bad == nullptr);
    // Below INT_MIN: refused, not wrapped (-4294967295 had become ppn 1).
    setenv("MPIX_PPN", "-4294967295", 1);
    CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_PPN=-4294967295 (environment): out of range"));
    CHECK(bad == nullptr);
  }
  if (saved) setenv("MPIX_PPN", saved_value.c_str(), 1);
  else unsetenv("MPIX_PPN");
  CHECK(MPIX_Comm_init(nullptr, MPI_COMM_WORLD) == MPIX_ERR_ARG);
  MPIX_Comm* none = nullptr;
  CHECK(MPIX_Comm_init(&none, MPI_COMM_NULL) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_free(nullptr) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_locality(nullptr, nullptr, nullptr, nullptr, nullptr) == MPIX_ERR_ARG);
  CHECK(MPIX_Comm_mpi(nullptr) == MPI_COMM_NULL);
}

TEST_CASE("sub-communicators of MPI_COMM_WORLD work", "[locality]") {
  // Odd ranks and even ranks each form a communicator.
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, harness::world_rank() % 2, 0, &half);
  {
    Comm c(half);
    int size = 0, rank = 0;
    MPI_Comm_size(half, &size);
    MPI_Comm_rank(half, &rank);
    std::vector<int> send(size), recv(size, -1);
    for (int j = 0; j < size; ++j) send[j] = rank * 10 + j;
    harness::Info info{{"mpix_alltoall_algorithm", "random_sendrecv"}};
    CHECK(MPIX_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, info.info, c.comm) == MPIX_SUCCESS);
    bool ok = true;
    for (int i = 0; i < size; ++i) ok = ok && recv[i] == i * 10 + rank;
    CHECK(all_ranks(ok));
  }
  MPI_Comm_free(&half);
}

TEST_CASE("regions: detection, emulation, agreement", "[regions]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  Comm guard;
  for (int ppn : {0, 1, 2, 3, 4}) {
    REQUIRE(MPIX_Comm_update_locality(guard.comm, ppn) == MPIX_SUCCESS);
    int local_size = 0, local_rank = 0;
    MPIX_Comm_locality(guard.comm, nullptr, nullptr, &local_size, &local_rank);
    for (int per_region : {0, 1, 2, 3}) {
      INFO("ppn=" << ppn << " ranks_per_region=" << per_region);
      REQUIRE(MPIX_Comm_update_regions(guard.comm, per_region) == MPIX_SUCCESS);
      int regions = 0, region = -1, region_size = 0, region_rank = -1;
      REQUIRE(MPIX_Comm_region(guard.comm, &regions, &region, &region_size, &region_rank) == MPIX_SUCCESS);
      CHECK(regions >= 1);
      CHECK(region >= 0);
      CHECK(region < regions);
      CHECK(region_rank >= 0);
      CHECK(region_rank < region_size);
      if (per_region > 0) {
        CHECK(regions == (local_size + per_region - 1) / per_region);
        CHECK(region == local_rank / per_region);
        CHECK(region_rank == local_rank % per_region);
        CHECK(region_size == std::min(per_region, local_size - region * per_region));
      }
      MPI_Comm region_comm = MPI_COMM_NULL;
      REQUIRE(guard.comm->regions.region_comm(&region_comm) == MPIX_SUCCESS);
      int comm_size = 0, comm_rank = 0;
      MPI_Comm_size(region_comm, &comm_size);
      MPI_Comm_rank(region_comm, &comm_rank);
      CHECK(comm_size == region_size);
      CHECK(comm_rank == region_rank);
      // The region level over all nodes: every region inside one node, the regions
      // of a node covering it, this rank where MPIX_Comm_region says.
      const mpix::Locality& nodes = guard.comm->locality;
      const mpix::Locality& level = guard.comm->regions.level();
      bool nested = level.local_rank() == region_rank && (int)level.node_ranks(level.node()).size() == region_size;
      std::vector<int> covered(nodes.num_nodes(), 0);
      for (int u = 0; u < level.num_nodes(); ++u) {
        const std::vector<int>& members = level.node_ranks(u);
        nested = nested && !members.empty();
        for (int r : members) nested = nested && nodes.node_of(r) == nodes.node_of(members[0]);
        if (!members.empty()) covered[nodes.node_of(members[0])] += (int)members.size();
      }
      for (int n = 0; n < nodes.num_nodes(); ++n) nested = nested && covered[n] == (int)nodes.node_ranks(n).size();
      CHECK(nested);
      CHECK(guard.comm->regions.divides_nodes() == (level.num_nodes() > nodes.num_nodes()));
    }
  }
  // The hwloc fallback of detection (the MPI's hardware-guided split comes first):
  // a package index, or -1 (not bound inside one package, or no hwloc). This
  // machine may have one package only: detection then gives one region per node,
  // which the loop above checked.
  const int package = mpix::package_of_binding();
  CHECK(package >= -1);
#ifndef MPIX_HAVE_HWLOC
  CHECK(package == -1);
#endif
  REQUIRE(MPIX_Comm_update_locality(guard.comm, 0) == MPIX_SUCCESS);
  if (size > 1) {
    int rc = MPIX_Comm_update_regions(guard.comm, rank == 0 ? 2 : 3);
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_Comm_update_regions: regions: ranks differ in ranks_per_region"));
  }
  // Any value <= 0 restores detection, INT_MIN too (it was once the marker of a
  // malformed MPIX_REGION_SIZE, and read an unset variable).
  CHECK(MPIX_Comm_update_regions(guard.comm, INT_MIN) == MPIX_SUCCESS);
  CHECK(guard.comm->regions.ranks_per_region() == 0);
  // Still usable, and the layout survives a node update.
  REQUIRE(MPIX_Comm_update_regions(guard.comm, 1) == MPIX_SUCCESS);
  REQUIRE(MPIX_Comm_update_locality(guard.comm, 2) == MPIX_SUCCESS);
  int region_size = 0;
  MPIX_Comm_region(guard.comm, nullptr, nullptr, &region_size, nullptr);
  CHECK(region_size == 1);
  SmallExchange ex;
  CHECK(ex.run(nullptr, guard.comm) == MPIX_SUCCESS);
  CHECK(all_ranks(ex.correct()));
  // A persistent request alive on the last rank only: every rank fails (none is
  // left waiting in the others' collectives) and the regions stay as they were.
  {
    std::vector<int> send(size, rank), recv(size);
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoall_plan(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, nullptr, guard.comm, &request) ==
            MPIX_SUCCESS);
    if (rank != size - 1) MPIX_Request_free(&request);
    CHECK(MPIX_Comm_update_regions(guard.comm, 2) == MPIX_ERR_ARG);
    CHECK(message_has(rank == size - 1 ? "persistent request(s) still use" : "another rank failed"));
    MPIX_Comm_region(guard.comm, nullptr, nullptr, &region_size, nullptr);
    CHECK(region_size == 1);
    if (request) MPIX_Request_free(&request);
    CHECK(MPIX_Comm_update_regions(guard.comm, 1) == MPIX_SUCCESS);
  }

  setenv("MPIX_REGION_SIZE", "two", 1);
  MPIX_Comm* bad = nullptr;
  CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
  CHECK(message_has("MPIX_REGION_SIZE=two (environment): not an integer"));
  CHECK(bad == nullptr);
  // Only one rank's value is malformed: every rank fails, that one with its value.
  setenv("MPIX_REGION_SIZE", rank == 0 ? "-2147483649" : "2", 1);
  CHECK(MPIX_Comm_init(&bad, MPI_COMM_WORLD) == MPIX_ERR_ARG);
  CHECK(message_has(rank == 0 ? "MPIX_REGION_SIZE=-2147483649 (environment): out of range" : "another rank failed"));
  CHECK(bad == nullptr);
  setenv("MPIX_REGION_SIZE", "2", 1);
  Comm from_env;
  int per = 0;
  MPIX_Comm_region(from_env.comm, nullptr, nullptr, &per, nullptr);
  int local_size = 0;
  MPIX_Comm_locality(from_env.comm, nullptr, nullptr, &local_size, nullptr);
  CHECK(from_env.comm->regions.ranks_per_region() == 2);
  unsetenv("MPIX_REGION_SIZE");
}
