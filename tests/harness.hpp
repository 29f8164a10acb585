// Helpers shared by the test programs: agreement between ranks, datatypes to test,
// and a dense exchange checked byte for byte against MPI_Alltoallv with canaries.
#pragma once
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "mpix/mpix.h"
#include "workload.hpp"

namespace harness {

int world_rank();
int world_size();
// Whether MPIX_PPN emulates nodes (meson sets it empty where it does not).
bool nodes_emulated();
// True on every rank (of `comm`) when `ok` is true on every rank.
bool all_ranks(bool ok, MPI_Comm comm = MPI_COMM_WORLD);

// A pair of datatypes with the same signature per unit of data: a unit is
// send_per_unit elements of `send` and recv_per_unit elements of `recv`.
struct TypeCase {
  std::string name;
  MPI_Datatype send, recv;
  int send_per_unit, recv_per_unit;
  int unit_bytes;
};
// byte, int, double, contiguous (3 ints), vector (2 doubles, stride 2: holes),
// mixed (ints sent, 3-int contiguous received), reversed (2 ints in swapped order)
// and, with MPICH, repeated (sent: ints 0, 0 and 2, received as 3-int contiguous),
// whose size equals their true extent. Freed at MPI_Finalize.
const std::vector<TypeCase>& type_cases();
const TypeCase& type_case(const std::string& name);

// An MPIX_Comm over `mpi` (MPI_COMM_WORLD by default), freed at scope end.
struct Comm {
  MPIX_Comm* comm = nullptr;
  explicit Comm(MPI_Comm mpi = MPI_COMM_WORLD) { MPIX_Comm_init(&comm, mpi); }
  ~Comm() { MPIX_Comm_free(&comm); }
};

// True when this thread's last error message contains `text`.
bool message_has(const char* text);

// An MPIX_Info with the given key/value pairs (nullptr for none).
struct Info {
  MPIX_Info* info = nullptr;
  Info(std::initializer_list<std::pair<const char*, std::string>> pairs = {});
  void set(const char* key, const std::string& value);
  ~Info();
};

// A small valid alltoallv of ints on `comm`: block i->j holds i*100+j.
struct SmallExchange {
  int size = world_size(), rank = world_rank();
  std::vector<int> send, recv, counts, displs;
  SmallExchange() : send(size), recv(size, -1), counts(size, 1), displs(size) {
    for (int j = 0; j < size; ++j) {
      send[j] = rank * 100 + j;
      displs[j] = j;
    }
  }
  int run(MPIX_Info* info, MPIX_Comm* comm) {
    return MPIX_Alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(),
                          displs.data(), MPI_INT, info, comm);
  }
  bool correct() const {
    for (int i = 0; i < size; ++i)
      if (recv[i] != i * 100 + rank) return false;
    return true;
  }
};

// tested: persistent, completed by a loop of MPIX_Test instead of MPIX_Wait.
enum class Mode { blocking, persistent, tested };

struct DenseCase {
  bool alltoall = false;          // alltoall: constant blocks of max_bytes
  mpix::workload::Distribution dist = mpix::workload::Distribution::uniform;
  long long max_bytes = 256;
  std::string types = "int";
  Mode mode = Mode::blocking;
  bool in_place = false;
  int starts = 3;                 // starts (persistent) or calls (blocking: the later ones run the first
                                  // one's plan again) with changed contents
  std::string algorithm;          // empty: auto (no algorithm key)
  std::vector<std::pair<const char*, std::string>> keys;  // more info keys
  bool large_count = false;       // through MPIX_Alltoall(v)(_plan)_c
  std::string describe() const;
};

// The faults of a BadCall. Counts only shrink, so that no
// call reads or writes outside the buffers laid out for the valid case.
enum class BadArgument {
  fewer_units,         // one unit fewer in a non-empty block, sent (even bad_peer) or expected (odd)
  negative_count,      // a count of -1
  null_buffer,         // NULL receive buffer where it receives bytes
  null_datatype,       // MPI_DATATYPE_NULL as the receive type
  uncommitted_type,    // a contiguous copy of the send type, never committed
  other_algorithm,     // a valid algorithm other than the others' (auto: one named)
  unknown_algorithm,   // an algorithm name that does not exist
  count
};
const char* bad_argument_name(BadArgument bad);

// Bad arguments on one rank (test_random --invalid): rank `rank` (-1: none) makes
// its call with the fault `argument` near block `peer`.
struct BadCall {
  int rank = -1, peer = 0;
  BadArgument argument = BadArgument::fewer_units;
};

// A dense exchange given by its block sizes, on any communicator: units(source,
// dest) is the number of TypeCase units from source to dest (the same on every
// rank; for in-place only source <= dest is asked, the exchange is symmetric; for
// alltoall it must not depend on its arguments).
struct ExchangeCase {
  bool alltoall = false;
  const TypeCase* types = nullptr;
  Mode mode = Mode::blocking;
  bool in_place = false;
  int starts = 1;         // as DenseCase's
  std::string algorithm;  // empty: auto
  std::vector<std::pair<const char*, std::string>> keys;
  std::function<int(int source, int dest)> units;
  bool large_count = false;  // through MPIX_Alltoall(v)(_plan)_c
  // With a bad call, the case passes when the call (or the plan) fails on every
  // rank and no receive buffer changed.
  BadCall bad;
};

// Runs the case through MPIX on `comm` and MPI_Alltoall(v) on `mpi` (the MPI
// communicator of `comm`) with the same arguments; true on every rank of `mpi` when
// all receive buffers (guards, holes and gaps included) are equal byte for byte and
// every call succeeded. `why` gets the first problem seen on this rank.
bool run_exchange(const ExchangeCase& c, MPIX_Comm* comm, MPI_Comm mpi, std::string* why);

// Runs the case through MPIX on `comm` and MPI_Alltoallv on MPI_COMM_WORLD with
// the same arguments; true on every rank when all receive buffers (guards, holes
// and gaps included) are equal byte for byte and every call succeeded. `why` gets
// the first problem seen on this rank.
bool run_dense_case(const DenseCase& c, MPIX_Comm* comm, std::string* why);

// A file of this process holding `text` (each rank writes and reads its own, so
// that no rank reads a half-written file, nor a concurrent run of the test
// another's): /tmp/mpix_test_<stem>_<pid>. It is removed when the process exits,
// so that runs of the suite leave nothing behind.
std::string temp_file(const std::string& stem, const std::string& text);
// A machine file (temp_file) whose bandwidths have no limit: the model then prices
// carrying blocks in the agreement below any exchange after it, at any layout.
std::string unbounded_machine_file();

}  // namespace harness
