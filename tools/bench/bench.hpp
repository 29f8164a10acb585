// The pieces of mpix-bench (tools/mpix-bench.cpp): its options, the agreement of
// ranks on failures, the table/CSV output, the dense runs and the SDDE runs.
#pragma once
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "core/registry.hpp"
#include "mpix/mpix.h"
#include "workload.hpp"

namespace bench {

using mpix::workload::Distribution;
using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct Options {
  mpix::Op op = mpix::kAlltoallv;
  bool all_algorithms = true;
  std::vector<std::string> algorithms;
  std::vector<long long> sizes = {16, 256, 4096};
  std::vector<Distribution> dists = {Distribution::uniform};
  bool dist_given = false;
  int iters = 10, warmup = 2;
  bool ppn_given = false;
  int ppn = 0;
  std::vector<std::pair<std::string, std::vector<std::string>>> sweeps;
  bool csv = false, check = false, help = false;
  unsigned long long seed = 1;
  bool sizes_given = false;
  std::vector<std::string> matrices, patterns;  // SDDE
};


bool is_sdde(mpix::Op op);
// Empty on success, else what is wrong with the command line.
std::string parse_options(int argc, char** argv, Options* o);
extern const char* const kUsage;

// Collective: false if `rc` failed on any rank; then `*error` (on rank 0) is the
// failure of the lowest failing rank: "code text: details".
bool all_succeeded(int rc, MPI_Comm comm, std::string* error);
// Collective over MPI_COMM_WORLD: whether the baseline row (`name`: pmpi,
// personalized) failed, by rank 0's `error`; rank 0 then says so on stderr. Where
// MPI's own call through the library fails, the environment (a machine or tuning
// file, a hint) fails every row, and the run's exit status must say so.
bool baseline_failed(const char* name, const std::string& error, int rank);

std::string fixed(double value);
// The median of `values` (0 for none).
double median(std::vector<double> values);
// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split(const std::string& text, char separator);
// "4k" -> 4096, "1m" -> 1048576; false if not a size of at most 2^31-1 bytes.
bool parse_size(const std::string& text, long long* bytes);
// "" where every block size of `sizes` times `ranks` fits the tools' buffers, which
// are addressed with int displacements; else --sizes' error.
std::string sizes_fit(const std::vector<long long>& sizes, int ranks);

// Byte k of the block from `source` to `dest`: never 0xA5 (the fill of receive
// buffers), and different between blocks, so that a misplaced block shows.
char pattern(int source, int dest, long long k);

// One dense exchange of MPI_BYTE blocks as the peers see it (peers.cpp).
struct PeerCall {
  const char* sendbuf;
  const int *scounts, *sdispls;
  char* recvbuf;
  const int *rcounts, *rdispls;
  bool uniform;  // alltoall: every block `block` bytes
  int block;
  MPI_Comm comm;
};
struct PeerCounts {
  long long rounds = 0, messages = 0, payload_bytes = 0;  // this rank's
};
// The peers: the MPI libraries' default exchanges as plain MPI calls of the
// benchmark (never through mpix), rows peer:NAME.
const std::vector<std::string>& peer_names();
bool is_peer(const std::string& name);
// An MPI error code.
int run_peer(const std::string& name, const PeerCall& call);
PeerCounts peer_counts(const std::string& name, const PeerCall& call);

// The dense exchanges (--op alltoall | alltoallv) and the SDDE ones; each returns
// the process's exit status.
int dense_main(const Options& o, MPIX_Comm* comm, int nodes, int ppn);
int sdde_main(const Options& o, MPIX_Comm* comm, int nodes, int ppn);

}  // namespace bench
