#include "registry.hpp"

#include <climits>

#include "algorithms.hpp"
#include "error.hpp"
#include "info.hpp"

namespace mpix {

const char* op_name(Op op) {
  switch (op) {
    case kAlltoall: return "alltoall";
    case kAlltoallv: return "alltoallv";
    case kAlltoallCrs: return "alltoall_crs";
    case kAlltoallvCrs: return "alltoallv_crs";
  }
  return "?";
}

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> list = {
      {"pmpi", kAlltoall | kAlltoallv, {}, create_pmpi, cost_pmpi, nullptr,
       "the MPI library's own MPI_Ialltoall(v)"},
      {"pairwise", kAlltoall | kAlltoallv, {}, create_pairwise, cost_pairwise, nullptr,
       "P-1 rounds; round i sends to rank+i and receives from rank-i (paper 003 alg. 1)"},
      {"nonblocking", kAlltoall | kAlltoallv, {}, create_nonblocking, cost_nonblocking, nullptr,
       "spread-out: all receives and sends posted round-robin, one wait (paper 003 alg. 2)"},
      {"scattered", kAlltoall | kAlltoallv, {Param::block_count}, create_scattered, cost_scattered, nullptr,
       "spread-out in batches of block_count receives then sends (MPICH scattered)"},
      {"multipair", kAlltoall | kAlltoallv, {Param::stride}, create_multipair, cost_multipair, nullptr,
       "stride send/receive pairs, then wait for all of them (paper 003 alg. 3)"},
      {"multipair_waitany", kAlltoall | kAlltoallv, {Param::stride}, create_multipair_waitany,
       cost_multipair, nullptr, "stride pairs in flight, refilled as MPI_Waitany frees a slot (paper 003 alg. 4)"},
      {"multipair_testany", kAlltoall | kAlltoallv, {Param::stride}, create_multipair_testany,
       cost_multipair, nullptr, "stride pairs in flight, refilled as MPI_Testany frees a slot (paper 003 alg. 5)"},
      {"random_scatter", kAlltoall | kAlltoallv, {Param::seed}, create_random_scatter, cost_random_scatter, nullptr,
       "all receives then all sends in one shuffled rank order (paper 002 alg. 1)"},
      {"random_sendrecv", kAlltoall | kAlltoallv, {Param::seed, Param::max_queue},
       create_random_sendrecv, cost_random_sendrecv, nullptr,
       "anti-circulant schedule of a shuffled rank array, request queue of max_queue (paper 002 alg. 2)"},
      {"random_segmented", kAlltoall | kAlltoallv,
       {Param::seed, Param::max_queue, Param::segment_bytes}, create_random_segmented, cost_random_segmented, nullptr,
       "randomized sendrecv of segment_bytes slices, trailing remainders scattered (paper 002 alg. 3)"},
      {"bruck", kAlltoall, {Param::radix}, create_bruck, cost_bruck, nullptr,
       "uniform radix-r Bruck, ceil(log_r P) digits, up to w(r-1) rounds, no metadata (paper 000 sec. III-A)"},
      {"tuna", kAlltoall | kAlltoallv, {Param::radix}, create_tuna, cost_tuna, nullptr,
       "tunable-radix two-phase non-uniform Bruck, sizes exchanged at init, T of P-(K+1) blocks (paper 000 alg. 1)"},
      {"tuna_carried", kAlltoall | kAlltoallv, {Param::radix}, create_tuna_carried, cost_tuna_carried, nullptr,
       "TuNA's rounds with each block's size carried in front of it: K rounds, no metadata phase, one copy in and "
       "out per hop (paper 000 alg. 1, sizes with the data)"},
      {"tuna_hier_staggered", kAlltoall | kAlltoallv, {Param::radix, Param::block_count},
       create_tuna_hier_staggered, cost_tuna_hier_staggered, nullptr,
       "TuNA inside each node, then scattered between nodes one block per message, Q(N-1) rounds (paper 000 alg. 2)"},
      {"tuna_hier_coalesced", kAlltoall | kAlltoallv, {Param::radix, Param::block_count, Param::lane_group},
       create_tuna_hier_coalesced, cost_tuna_hier_coalesced, nullptr,
       "TuNA inside each node, then scattered between nodes Q blocks per message, N-1 rounds (paper 000 alg. 3); "
       "in lane groups of g ranks, (N-1)/g messages of Qg blocks, then a TuNA inside the group"},
      {"node_aware", kAlltoall | kAlltoallv, {Param::locality}, create_node_aware, cost_node_aware, nullptr,
       "one message per destination node (or region) to the same local rank there, then a node-local alltoallv"},
      {"ipc_hybrid", kAlltoall | kAlltoallv, {Param::ipc_threshold, Param::memcpy_threshold}, create_ipc_hybrid,
       cost_ipc_hybrid, nullptr,
       "inter-node messages posted first; intra-node blocks copied directly (CMA / CUDA IPC), self then rank+i, "
       "while they fly (paper 004 sec. III)",
       nullptr, kNeedsDirectCopy},
      // Sparse dynamic data exchange (src/sdde): one-shot, no plan (create is nullptr).
      {"personalized", kAlltoallCrs | kAlltoallvCrs, {}, nullptr, nullptr, nullptr,
       "sends, a reduce-scatter of per-destination counts, then matched probes (paper 001 alg. 1)",
       run_sdde_personalized},
      {"nonblocking", kAlltoallCrs | kAlltoallvCrs, {}, nullptr, nullptr, nullptr,
       "NBX: synchronous sends, probes, MPI_Ibarrier once the own sends completed (paper 001 alg. 2)",
       run_sdde_nonblocking},
      {"rma", kAlltoallCrs, {}, nullptr, nullptr, nullptr,
       "puts into a slot per source of a window cached on the comm, fences, arrival marks (paper 001 alg. 3)",
       run_sdde_rma},
      {"personalized_loc", kAlltoallCrs | kAlltoallvCrs, {}, nullptr, nullptr, nullptr,
       "one aggregate per destination node (personalized), then redistribution in the node (paper 001 alg. 4)",
       run_sdde_personalized_loc},
      {"nonblocking_loc", kAlltoallCrs | kAlltoallvCrs, {}, nullptr, nullptr, nullptr,
       "one aggregate per destination node (NBX), then redistribution in the node (paper 001 alg. 5)",
       run_sdde_nonblocking_loc},
  };
  return list;
}

std::string unavailable_reason(const Algorithm& algorithm, bool simulated) {
  if ((algorithm.needs & kNeedsDirectCopy) && simulated)
    return "needs direct intra-node copies (Linux CMA, CUDA IPC), which do not exist under simulation "
           "(SimGrid SMPI runs every rank in one process)";
  return "";
}

std::string inapplicable_reason(const Algorithm& algorithm, const PlanContext& context) {
  std::string why = unavailable_reason(algorithm);
  if (why.empty() && algorithm.inapplicable) why = algorithm.inapplicable(context);
  return why;
}

const Algorithm* find_algorithm(const std::string& name, Op op) {
  for (const Algorithm& algorithm : algorithms())
    if ((algorithm.ops & op) && name == algorithm.name) return &algorithm;
  return nullptr;
}

std::vector<std::string> algorithm_names(Op op) {
  std::vector<std::string> names;
  for (const Algorithm& algorithm : algorithms())
    if (algorithm.ops & op) names.push_back(algorithm.name);
  return names;
}

const char* param_key(Param param) {
  switch (param) {
    case Param::radix: return "mpix_radix";
    case Param::block_count: return "mpix_block_count";
    case Param::stride: return "mpix_stride";
    case Param::max_queue: return "mpix_max_queue";
    case Param::segment_bytes: return "mpix_segment_bytes";
    case Param::seed: return "mpix_seed";
    case Param::ipc_threshold: return "mpix_ipc_threshold";
    case Param::memcpy_threshold: return "mpix_memcpy_threshold";
    case Param::locality: return "mpix_locality";
    case Param::lane_group: return "mpix_lane_group";
  }
  return "?";
}

int resolve_params(const MPIX_Info_s* info, const std::vector<Param>& used, int comm_size,
                   Params* params) {
  params->seed = (unsigned long long)comm_size;
  for (Param param : used) {
    const char* key = param_key(param);
    std::string value, source;
    if (!lookup(info, key, &value, &source)) continue;
    MPIX_TRY(check_value(*find_key(key), value, source));
    params->given |= 1u << (unsigned)param;
    long long number = 0;
    bool is_number = parse_integer(value, &number);
    switch (param) {
      case Param::radix:
        params->radix_auto = !is_number;
        if (is_number) {
          // P = 1 has nothing to exchange; radix 2 stays valid there.
          int max_radix = comm_size < 2 ? 2 : comm_size;
          if (number > max_radix)
            return fail(MPIX_ERR_INFO_VALUE,
                        format("%s=%lld: must be 2..P (here 2..%d, P=%d)", source.c_str(), number, max_radix,
                               comm_size));
          params->radix = (int)number;
        }
        break;
      case Param::block_count: params->block_count = is_number ? (int)number : INT_MAX; break;
      case Param::stride: params->stride = (int)number; break;
      case Param::max_queue: params->max_queue = (int)number; break;
      case Param::segment_bytes: params->segment_bytes = number; break;
      case Param::seed: parse_seed(value, &params->seed); break;
      case Param::ipc_threshold: params->ipc_threshold = number; break;
      case Param::memcpy_threshold: params->memcpy_threshold = number; break;
      case Param::locality: params->locality = value == "region" ? Level::region : Level::node; break;
      case Param::lane_group: params->lane_group = (int)number; break;
    }
  }
  return MPIX_SUCCESS;
}

std::string describe_params(const std::vector<Param>& used, const Params& params) {
  std::string text;
  for (Param param : used) {
    if (!text.empty()) text += ' ';
    text += param_key(param) + 5;  // without "mpix_"
    text += '=';
    switch (param) {
      case Param::radix: text += params.radix_auto ? std::string("auto") : std::to_string(params.radix); break;
      case Param::block_count:
        text += params.block_count == INT_MAX ? std::string("unlimited") : std::to_string(params.block_count);
        break;
      case Param::stride: text += std::to_string(params.stride); break;
      case Param::max_queue: text += std::to_string(params.max_queue); break;
      case Param::segment_bytes: text += std::to_string(params.segment_bytes); break;
      case Param::seed: text += std::to_string(params.seed); break;
      case Param::ipc_threshold: text += std::to_string(params.ipc_threshold); break;
      case Param::memcpy_threshold: text += std::to_string(params.memcpy_threshold); break;
      case Param::locality: text += params.locality == Level::region ? "region" : "node"; break;
      case Param::lane_group: text += std::to_string(params.lane_group); break;
    }
  }
  return text;
}

}  // namespace mpix
