#include "workload.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>
#include <sstream>

namespace mpix {
namespace workload {

const std::vector<Distribution>& all_distributions() {
  static const std::vector<Distribution> list = {Distribution::constant, Distribution::uniform,
                                                 Distribution::normal,   Distribution::powerlaw,
                                                 Distribution::fft_n1,   Distribution::fft_n2};
  return list;
}

const char* distribution_name(Distribution distribution) {
  switch (distribution) {
    case Distribution::constant: return "constant";
    case Distribution::uniform: return "uniform";
    case Distribution::normal: return "normal";
    case Distribution::powerlaw: return "powerlaw";
    case Distribution::fft_n1: return "fft_n1";
    case Distribution::fft_n2: return "fft_n2";
  }
  return "?";
}

bool parse_distribution(const std::string& name, Distribution* distribution) {
  for (Distribution d : all_distributions())
    if (name == distribution_name(d)) {
      *distribution = d;
      return true;
    }
  return false;
}

bool fixed_sizes(Distribution distribution) {
  return distribution == Distribution::fft_n1 || distribution == Distribution::fft_n2;
}

namespace {

// A uniform number in [0, 1) from (seed, source, dest, draw), by splitmix64.
double uniform01(std::uint64_t seed, int source, int dest, int draw) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + ((std::uint64_t)source << 32) + (std::uint64_t)dest +
                    (std::uint64_t)draw * 0xd1b54a32d192ed03ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace

long long block_bytes(Distribution distribution, long long max_bytes, int source, int dest, int size,
                      std::uint64_t seed) {
  const double s = (double)max_bytes;
  switch (distribution) {
    case Distribution::constant: return max_bytes;
    case Distribution::uniform:
      return std::min(max_bytes, (long long)(uniform01(seed, source, dest, 0) * (s + 1)));
    case Distribution::normal: {
      // Box-Muller.
      double u1 = 1.0 - uniform01(seed, source, dest, 0), u2 = uniform01(seed, source, dest, 1);
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      double x = s / 2 + 0.24 * (s / 2) * z;
      return (long long)std::clamp(std::llround(x), 0LL, max_bytes);
    }
    case Distribution::powerlaw:
      return (long long)(s * std::pow(uniform01(seed, source, dest, 0), 20.0));
    case Distribution::fft_n1: {
      int workers = (int)std::ceil(0.625 * size), filled = (int)std::ceil(0.78125 * size);
      return source < workers && dest < filled ? 8 * 8 : 0;
    }
    case Distribution::fft_n2: return source < size - 1 ? 64 * 8 : 16 * 8;
  }
  return 0;
}

int block_first(int n, int size, int rank) { return (int)((long long)n * rank / size); }

int block_owner(int n, int size, int item) {
  int rank = (int)((long long)item * size / n);
  while (block_first(n, size, rank + 1) <= item) ++rank;
  while (block_first(n, size, rank) > item) --rank;
  return rank;
}

SpmvNeeds read_spmv_needs(std::istream& in, int size, std::string* error) {
  error->clear();
  SpmvNeeds result(size);
  std::string line;
  if (!std::getline(in, line) || line.rfind("%%MatrixMarket matrix coordinate", 0) != 0) {
    *error = "not a readable Matrix Market coordinate file";
    return result;
  }
  const bool symmetric = line.find("symmetric") != std::string::npos || line.find("hermitian") != std::string::npos;
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  long long rows = 0, cols = 0, entries = 0;
  if (!(std::istringstream(line) >> rows >> cols >> entries) || rows <= 0 || cols <= 0 || rows > INT_MAX ||
      cols > INT_MAX) {
    *error = "bad size line";
    return result;
  }
  // Both triangles of a symmetric file index rows by columns and columns by rows.
  if (symmetric && rows != cols) {
    *error = "symmetric but not square (" + std::to_string(rows) + " x " + std::to_string(cols) + ")";
    return result;
  }
  std::vector<std::map<int, std::set<int>>> needs(size);
  auto add = [&](long long i, long long j) {
    int r = block_owner((int)rows, size, (int)i), q = block_owner((int)cols, size, (int)j);
    if (q != r) needs[r][q].insert((int)j);
  };
  long long k = 0;
  for (; k < entries && std::getline(in, line); ++k) {
    long long i = 0, j = 0;
    if (!(std::istringstream(line) >> i >> j) || i < 1 || j < 1 || i > rows || j > cols) {
      *error = "bad entry '" + line + "'";
      return result;
    }
    add(i - 1, j - 1);
    if (symmetric && i != j) add(j - 1, i - 1);
  }
  if (k < entries) {
    *error = "truncated: " + std::to_string(k) + " of the " + std::to_string(entries) + " entries its size line announces";
    return result;
  }
  for (int r = 0; r < size; ++r)
    for (const auto& kv : needs[r]) result[r][kv.first].assign(kv.second.begin(), kv.second.end());
  return result;
}

}  // namespace workload
}  // namespace mpix
