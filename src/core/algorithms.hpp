// Factories of the algorithm families, each implemented in its module's file and
// listed once, in registry.cpp.
#pragma once
#include "registry.hpp"

namespace mpix {

// src/alltoallv/linear.cpp
int create_pmpi(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_pmpi(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_pairwise(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_pairwise(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_nonblocking(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_nonblocking(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_scattered(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_scattered(const ExchangeFacts&, const Params&, const MachineProfile&);
// src/alltoallv/multipair.cpp
int create_multipair(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_multipair(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_multipair_waitany(const PlanContext&, std::unique_ptr<Plan>*);
int create_multipair_testany(const PlanContext&, std::unique_ptr<Plan>*);
// src/alltoallv/randomized.cpp
int create_random_scatter(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_random_scatter(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_random_sendrecv(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_random_sendrecv(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_random_segmented(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_random_segmented(const ExchangeFacts&, const Params&, const MachineProfile&);
// src/alltoallv/bruck.cpp
int create_bruck(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_bruck(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_tuna(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_tuna(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_tuna_carried(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_tuna_carried(const ExchangeFacts&, const Params&, const MachineProfile&);
// src/alltoallv/hierarchical.cpp
int create_tuna_hier_staggered(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_tuna_hier_staggered(const ExchangeFacts&, const Params&, const MachineProfile&);
int create_tuna_hier_coalesced(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_tuna_hier_coalesced(const ExchangeFacts&, const Params&, const MachineProfile&);
// src/alltoallv/node_aware.cpp
int create_node_aware(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_node_aware(const ExchangeFacts&, const Params&, const MachineProfile&);
// src/alltoallv/ipc_hybrid.cpp
int create_ipc_hybrid(const PlanContext&, std::unique_ptr<Plan>*);
Cost cost_ipc_hybrid(const ExchangeFacts&, const Params&, const MachineProfile&);

// SDDE (MPIX_Alltoall(v)_crs): src/sdde/direct.cpp
int run_sdde_personalized(SddeContext&);
int run_sdde_nonblocking(SddeContext&);
// src/sdde/rma.cpp
int run_sdde_rma(SddeContext&);
// src/sdde/locality.cpp
int run_sdde_personalized_loc(SddeContext&);
int run_sdde_nonblocking_loc(SddeContext&);

}  // namespace mpix
