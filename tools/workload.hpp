// Block-size distributions shared by mpix-bench and the tests. Every rank computes
// the size of every block from (source, destination, seed) alone, so a receiver
// knows its counts without communicating.
#pragma once
#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace mpix {
namespace workload {

enum class Distribution { constant, uniform, normal, powerlaw, fft_n1, fft_n2 };

const std::vector<Distribution>& all_distributions();
const char* distribution_name(Distribution distribution);
bool parse_distribution(const std::string& name, Distribution* distribution);
// True when the distribution fixes block sizes itself (the FFT ones), ignoring S.
bool fixed_sizes(Distribution distribution);

// Bytes that `source` sends to `dest` among `size` ranks, for largest block S =
// `max_bytes`:
//  constant  S;
//  uniform   uniform in [0, S] (paper 000, section V);
//  normal    mean S/2, standard deviation 0.24 S/2, clipped to [0, S] (paper 000
//            Fig. 16a: mean 1000, sd 240);
//  powerlaw  S u^20 for u uniform in [0, 1): density ~ x^-0.95 (paper 000 Fig. 16b,
//            exponent 0.95), large blocks rare;
//  fft_n1    paper 000 section VI-A, N1: ranks below ceil(0.625 P) send 8 FP64
//            (64 B) to each of the first ceil(0.78125 P) ranks, nothing else;
//  fft_n2    N2: every rank but the last sends 64 FP64 (512 B) per block, the last
//            16 FP64 (128 B).
long long block_bytes(Distribution distribution, long long max_bytes, int source, int dest, int size,
                      std::uint64_t seed);

// Block partition of n items (matrix rows, say) over P ranks: rank r owns
// [block_first(r), block_first(r + 1)).
int block_first(int n, int size, int rank);
int block_owner(int n, int size, int item);

// The SpMV pattern of a Matrix Market coordinate matrix (paper 001, section V), rows
// and x split by block_first(): needs[r][q] is the sorted set of columns of x that
// rank r needs from rank q != r (symmetric and hermitian files count both
// triangles). On a malformed file `error` says what is wrong (else it is empty).
// No MPI (the fuzz target fuzz/fuzz_matrix_market.cpp calls it).
using SpmvNeeds = std::vector<std::map<int, std::vector<int>>>;
SpmvNeeds read_spmv_needs(std::istream& in, int size, std::string* error);

}  // namespace workload
}  // namespace mpix
