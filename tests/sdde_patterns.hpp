// The SDDE tests' patterns and the runner that checks one exchange of a pattern
// byte for byte (test_sdde.cpp, test_sdde_errors.cpp).
//
// Every rank computes the whole pattern (P is small), so each knows exactly what
// it must receive; the order of received messages is not specified, so results are
// compared by source.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/registry.hpp"
#include "mpix/mpix.h"

namespace sdde_test {

inline std::vector<std::string> names(mpix::Op op) { return mpix::algorithm_names(op); }

struct Msg {
  int dest;
  int units;  // units of data (a unit: send_per_unit / recv_per_unit elements of a TypeCase)
};
using Pattern = std::vector<std::vector<Msg>>;  // [source] -> its messages

// `kind` names a generated pattern (kPatterns); every rank builds the same one.
// `constant` >= 0: every message carries that many units (alltoall_crs).
Pattern make_pattern(const std::string& kind, int size, int constant);
extern const std::vector<std::string> kPatterns;

struct Run {
  bool alltoallv = true;
  std::string algorithm;     // empty: auto
  std::string types = "int"; // a harness::TypeCase
  bool known = false;        // pass recv_nnz (and recv_size) in
  bool zero_data = false;    // every byte of data is 0 (rma must still see the messages)
  bool bottom = false;       // sendvals MPI_BOTTOM, the send type moved to the buffer's absolute address
  int units = 2;             // alltoall_crs: units of every message (as in make_pattern)
  std::string locality;      // mpix_locality; empty: the environment's (MPIX_LOCALITY)
  int rc = MPIX_SUCCESS;
  std::string why;           // first problem on this rank
};

// Runs pattern `p` on `comm`; true on this rank when the call succeeded and the
// received messages are exactly those of the pattern, byte for byte.
bool run_pattern(const Pattern& p, MPIX_Comm* comm, Run& run);

// The SpMV halo exchange of a SuiteSparse matrix.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<std::pair<int, int>> entries;  // (row, col), 0-based, symmetric ones mirrored
};
Matrix read_matrix_market(const std::string& path);
// needs[r][q]: the columns (entries of x) owned by q that rank r's rows use, sorted.
std::vector<std::map<int, std::vector<int>>> halo(const Matrix& a, int size);

}  // namespace sdde_test
