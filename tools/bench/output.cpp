// mpix-bench: agreement of the ranks on failures, and the table or CSV output.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "output.hpp"

namespace bench {

// --- agreement between ranks --------------------------------------------------

// Collective: false if `rc` failed on any rank; then `*error` (on rank 0) is the
// failure of the lowest failing rank: "code text: details".
bool all_succeeded(int rc, MPI_Comm comm, std::string* error) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = rc != MPIX_SUCCESS ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return true;
  std::string text;
  if (rank == first) text = std::string(MPIX_Error_string(rc)) + ": " + MPIX_Last_error_message();
  if (first != 0) {
    const int tag = 7001;
    if (rank == first) {
      MPI_Send(text.data(), (int)text.size(), MPI_CHAR, 0, tag, comm);
    } else if (rank == 0) {
      MPI_Status status;
      int length = 0;
      MPI_Probe(first, tag, comm, &status);
      MPI_Get_count(&status, MPI_CHAR, &length);
      text.resize(length);
      MPI_Recv(&text[0], length, MPI_CHAR, first, tag, comm, MPI_STATUS_IGNORE);
      text = "rank " + std::to_string(first) + ": " + text;
    }
  }
  *error = text;
  return false;
}

bool baseline_failed(const char* name, const std::string& error, int rank) {
  int failed = rank == 0 && !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (failed && rank == 0)
    std::fprintf(stderr, "mpix-bench: the baseline %s failed (%s); exit status 1\n", name, error.c_str());
  return failed;
}

// --- output ---------------------------------------------------------------------

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string fixed(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}


}  // namespace bench
