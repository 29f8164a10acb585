// Factories of the algorithm families, each implemented in its module's file and
// listed once, in registry.cpp.
#pragma once
#include "registry.hpp"

namespace mpix {

// src/alltoallv/linear.cpp
int create_pmpi(const PlanContext&, std::unique_ptr<Plan>*);
int create_pairwise(const PlanContext&, std::unique_ptr<Plan>*);
int create_nonblocking(const PlanContext&, std::unique_ptr<Plan>*);
int create_scattered(const PlanContext&, std::unique_ptr<Plan>*);
// src/alltoallv/multipair.cpp
int create_multipair(const PlanContext&, std::unique_ptr<Plan>*);
int create_multipair_waitany(const PlanContext&, std::unique_ptr<Plan>*);
int create_multipair_testany(const PlanContext&, std::unique_ptr<Plan>*);
// src/alltoallv/randomized.cpp
int create_random_scatter(const PlanContext&, std::unique_ptr<Plan>*);
int create_random_sendrecv(const PlanContext&, std::unique_ptr<Plan>*);
int create_random_segmented(const PlanContext&, std::unique_ptr<Plan>*);
// src/alltoallv/bruck.cpp
int create_bruck(const PlanContext&, std::unique_ptr<Plan>*);
int create_tuna(const PlanContext&, std::unique_ptr<Plan>*);
// src/alltoallv/hierarchical.cpp
int create_tuna_hier_staggered(const PlanContext&, std::unique_ptr<Plan>*);
int create_tuna_hier_coalesced(const PlanContext&, std::unique_ptr<Plan>*);
// src/alltoallv/node_aware.cpp
int create_node_aware(const PlanContext&, std::unique_ptr<Plan>*);
// src/alltoallv/ipc_hybrid.cpp
int create_ipc_hybrid(const PlanContext&, std::unique_ptr<Plan>*);

// SDDE (MPIX_Alltoall(v)_crs): src/sdde/direct.cpp
int run_sdde_personalized(SddeContext&);
int run_sdde_nonblocking(SddeContext&);
// src/sdde/rma.cpp
int run_sdde_rma(SddeContext&);
// src/sdde/locality.cpp
int run_sdde_personalized_loc(SddeContext&);
int run_sdde_nonblocking_loc(SddeContext&);

}  // namespace mpix
