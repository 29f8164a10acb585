// The algorithm registry: the single list of algorithms. Each entry has its
// factory, the parameters it takes (with their ranges, checked per call) and when
// it applies. Selection, mpix-bench, mpix-tune and the tests enumerate it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "../topology/locality.hpp"
#include "model.hpp"
#include "plan.hpp"

struct MPIX_Comm_s;
struct MPIX_Info_s;

namespace mpix {

enum class Param { radix, block_count, stride, max_queue, segment_bytes, seed, ipc_threshold, memcpy_threshold,
                   locality, lane_group };
const char* param_key(Param param);

// Parameter values of one call, after info > environment > default.
struct Params {
  int radix = 2;
  bool radix_auto = true;  // choose the radix from the cost model
  int block_count = 32;    // requests per batch (MPICH's throttle default); INT_MAX: unlimited
  int stride = 8;          // pairs in flight for multi-pair
  int max_queue = 64;      // requests in flight for randomized sendrecv
  long long segment_bytes = 8192;
  unsigned long long seed = 0;  // default: the communicator size, as in paper 002
  unsigned given = 0;  // bit (1 << Param) for each parameter set by info, environment or tuning rule

  bool is_given(Param param) const { return given & (1u << (unsigned)param); }
  // ipc_hybrid (paper 004, III-A): blocks below ipc_threshold bytes go by messages;
  // device copies of memcpy_threshold bytes and more use cudaMemcpyAsync, smaller
  // ones a copy kernel (the paper's 512 KiB).
  long long ipc_threshold = 8192;
  long long memcpy_threshold = 512 * 1024;
  // node_aware and the SDDE *_loc algorithms: the units they aggregate per
  // (mpix_locality; locality_level() in comm.hpp).
  Level locality = Level::node;
  // tuna_hier_coalesced: local ranks per lane group (topology/lane_groups.hpp);
  // 1 is paper 000's Algorithm 3, one message to every other node per rank.
  int lane_group = 1;
};

// Resolves the parameters `used` for a communicator of `comm_size` ranks; fails with
// MPIX_ERR_INFO_VALUE (message names the key or variable) when out of range.
int resolve_params(const MPIX_Info_s* info, const std::vector<Param>& used, int comm_size,
                   Params* params);
// "radix=4 block_count=unlimited" for reports.
std::string describe_params(const std::vector<Param>& used, const Params& params);

struct PlanContext {
  MPIX_Comm_s* comm = nullptr;
  MPI_Comm mpi_comm = MPI_COMM_NULL;  // the library's duplicate
  int tag = 0;                        // first of the plan's 8 tags
  Exchange exchange;
  Params params;
  ExchangeFacts facts;  // agreed by all ranks (dense.cpp); what selection and cost models use
  const MachineProfile* profile = nullptr;  // the constants of the model for this call
  const MPIX_Info_s* info = nullptr;  // the call's hints (mpix_cuda_aware), during create only
};

using Factory = int (*)(const PlanContext& context, std::unique_ptr<Plan>* plan);
// The predicted cost of the algorithm with `params` on an exchange with `facts`
// (model.hpp), from the algorithm's own schedule; next to its factory.
using CostModel = Cost (*)(const ExchangeFacts& facts, const Params& params, const MachineProfile& profile);
// Empty if the algorithm applies to the call, else why not.
using Applicability = std::string (*)(const PlanContext& context);

// SDDE algorithms (MPIX_Alltoall(v)_crs) are one-shot: no plan, one run per call
// (src/sdde/sdde.hpp describes the context).
struct SddeContext;
using SddeRun = int (*)(SddeContext& context);

// What an algorithm needs beyond MPI, as bits of Algorithm::needs.
enum Need : unsigned {
  // Direct copies between the memories of processes of one node: Linux cross-memory
  // attach (process_vm_readv/writev) for host memory, CUDA IPC for device memory.
  // SimGrid's SMPI runs every simulated rank in one process and models no such
  // copy, so these algorithms do not apply in the simulated build (MPIX_SIMULATED).
  // ipc_hybrid (src/alltoallv/ipc_hybrid.cpp) needs it.
  kNeedsDirectCopy = 1u << 0,
};

#ifdef MPIX_SIMULATED
constexpr bool kSimulatedBuild = true;
#else
constexpr bool kSimulatedBuild = false;
#endif

struct Algorithm {
  const char* name;
  unsigned ops;  // bitwise or of Op
  std::vector<Param> params;
  Factory create;  // dense algorithms; nullptr for SDDE ones
  CostModel cost;  // dense algorithms that `auto` may choose; nullptr: never chosen by auto
  Applicability inapplicable;  // nullptr: applies everywhere
  const char* summary;
  SddeRun sdde = nullptr;  // SDDE algorithms (ops kAlltoallCrs/kAlltoallvCrs only)
  unsigned needs = 0;      // bitwise or of Need
};

// Empty if a build can run `algorithm` at all (by default this build), else why
// not: what Algorithm::needs asks for and the build lacks.
std::string unavailable_reason(const Algorithm& algorithm, bool simulated = kSimulatedBuild);
// Empty if `algorithm` applies to the call of `context`, else why not: first
// unavailable_reason(), then the algorithm's own `inapplicable`. Asked for
// explicitly, an inapplicable algorithm fails with MPIX_ERR_UNSUPPORTED and this text.
std::string inapplicable_reason(const Algorithm& algorithm, const PlanContext& context);

const std::vector<Algorithm>& algorithms();
const Algorithm* find_algorithm(const std::string& name, Op op);
std::vector<std::string> algorithm_names(Op op);

}  // namespace mpix
