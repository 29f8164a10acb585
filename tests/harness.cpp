#include "harness.hpp"

#include "core/registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

namespace harness {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

bool nodes_emulated() {
  const char* ppn = std::getenv("MPIX_PPN");
  return ppn && *ppn;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

namespace {
struct TempFiles {
  std::set<std::string> paths;
  ~TempFiles() {
    for (const std::string& path : paths) std::remove(path.c_str());
  }
};
}  // namespace

std::string temp_file(const std::string& stem, const std::string& text) {
  static TempFiles files;
  const std::string path = "/tmp/mpix_test_" + stem + "_" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << text;
  files.paths.insert(path);
  return path;
}

std::string unbounded_machine_file() {
  return temp_file("unbounded", "inter_bandwidth = 1e15\nintra_bandwidth = 1e15\ncopy_bandwidth = 1e15\n");
}

bool all_ranks(bool ok, MPI_Comm comm) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}

namespace {
// Frees the test datatypes when MPI_Finalize deletes MPI_COMM_SELF's attributes.
int free_types_at_finalize(MPI_Comm, int, void* attribute, void*) {
  auto* types = static_cast<std::vector<MPI_Datatype>*>(attribute);
  for (MPI_Datatype& type : *types) MPI_Type_free(&type);
  return MPI_SUCCESS;
}
}  // namespace

bool message_has(const char* text) { return std::strstr(MPIX_Last_error_message(), text) != nullptr; }

const std::vector<TypeCase>& type_cases() {
  static std::vector<TypeCase> cases = [] {
    MPI_Datatype contiguous, vector;
    MPI_Type_contiguous(3, MPI_INT, &contiguous);
    MPI_Type_commit(&contiguous);
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vector);  // 2 doubles with a hole: extent 24, size 16
    MPI_Type_commit(&vector);
    // Size equal to the true extent, but not what a copy of those bytes would give:
    // two ints swapped, and (sent only: a receive may not repeat) int 0 twice,
    // int 1 left out.
    MPI_Datatype reversed, repeated;
    const int swapped[] = {1, 0}, twice[] = {0, 0, 2};
    MPI_Type_create_indexed_block(2, 1, swapped, MPI_INT, &reversed);
    MPI_Type_commit(&reversed);
    MPI_Type_create_indexed_block(3, 1, twice, MPI_INT, &repeated);
    MPI_Type_commit(&repeated);
    static std::vector<MPI_Datatype> owned = {contiguous, vector, reversed, repeated};
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_types_at_finalize, &key, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, &owned);
    std::vector<TypeCase> list{
        {"byte", MPI_BYTE, MPI_BYTE, 1, 1, 1},
        {"int", MPI_INT, MPI_INT, 1, 1, (int)sizeof(int)},
        {"double", MPI_DOUBLE, MPI_DOUBLE, 1, 1, (int)sizeof(double)},
        {"contiguous", contiguous, contiguous, 1, 1, 3 * (int)sizeof(int)},
        {"vector", vector, vector, 1, 1, 2 * (int)sizeof(double)},
        {"mixed", MPI_INT, contiguous, 3, 1, 3 * (int)sizeof(int)},
        {"reversed", reversed, reversed, 1, 1, 2 * (int)sizeof(int)},
    };
    // The reference is MPI's own call, and Open MPI 4.1's MPI_Alltoall at 16 ranks
    // delivers this one wrong (rank 0's block arrives as 0, garbage, 2 where the
    // type map says 0, 0, 2; measured 2026-11-28): with MPICH only.
#ifdef MPICH_VERSION
    list.push_back({"repeated", repeated, contiguous, 1, 1, 3 * (int)sizeof(int)});
#endif
    return list;
  }();
  return cases;
}

const TypeCase& type_case(const std::string& name) {
  for (const TypeCase& c : type_cases())
    if (c.name == name) return c;
  throw std::invalid_argument("no type case " + name);
}

Info::Info(std::initializer_list<std::pair<const char*, std::string>> pairs) {
  MPIX_Info_init(&info);
  for (const auto& p : pairs) set(p.first, p.second);
}

void Info::set(const char* key, const std::string& value) {
  if (MPIX_Info_set(info, key, value.c_str()) != MPIX_SUCCESS)
    throw std::invalid_argument(MPIX_Last_error_message());  // "MPIX_Info_set: ..."
}

Info::~Info() {
  if (info) MPIX_Info_free(&info);
}

std::string DenseCase::describe() const {
  std::string text = alltoall ? "alltoall" : "alltoallv";
  text += " algorithm=" + (algorithm.empty() ? std::string("auto") : algorithm);
  text += " dist=" + std::string(mpix::workload::distribution_name(dist));
  text += " S=" + std::to_string(max_bytes) + " types=" + types;
  text += mode == Mode::blocking ? " blocking" : mode == Mode::persistent ? " persistent" : " tested";
  if (in_place) text += " in-place";
  if (large_count) text += " _c";
  for (const auto& k : keys) text += std::string(" ") + k.first + "=" + k.second;
  return text;
}

namespace {

constexpr std::size_t kGuard = 64;

struct Side {
  std::vector<int> counts, displs;
  MPI_Datatype type;
  std::vector<unsigned char> storage;  // guard + data + guard
  unsigned char* data() { return storage.data() + kGuard; }
};

// Lays blocks out with gaps between them (and, on the receive side, in reverse
// order of peers) so that canaries sit between blocks, not only around them.
// Alltoall's blocks are packed in rank order (`packed`).
void lay_out(Side& side, MPI_Datatype type, const std::vector<int>& counts, bool reverse, bool packed) {
  int size = (int)counts.size();
  side.type = type;
  side.counts = counts;
  side.displs.assign(size, 0);
  long long cursor = 0;
  for (int k = 0; k < size; ++k) {
    int peer = reverse && !packed ? size - 1 - k : k;
    if (!packed) cursor += reverse ? 1 : peer % 2;
    side.displs[peer] = (int)cursor;
    cursor += counts[peer];
  }
  MPI_Aint lb, extent, true_lb, true_extent;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  std::size_t bytes = (std::size_t)(cursor * extent + std::max<MPI_Aint>(true_extent, extent) + true_lb);
  side.storage.assign(bytes + 2 * kGuard, 0);
}

void fill(std::vector<unsigned char>& bytes, int rank, int start) {
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = (unsigned char)((i * 131u + (unsigned)rank * 17u + (unsigned)start * 71u + 7u) >> 1);
}

}  // namespace

bool run_dense_case(const DenseCase& c, MPIX_Comm* comm, std::string* why) {
  const int size = world_size();
  ExchangeCase e;
  e.alltoall = c.alltoall;
  e.types = &type_case(c.types);
  e.mode = c.mode;
  e.in_place = c.in_place;
  e.starts = c.starts;
  e.algorithm = c.algorithm;
  e.keys = c.keys;
  e.large_count = c.large_count;
  const int unit_bytes = e.types->unit_bytes;
  e.units = [&c, size, unit_bytes](int source, int dest) {
    long long bytes = c.alltoall ? c.max_bytes
                                 : mpix::workload::block_bytes(c.dist, c.max_bytes, source, dest, size, 12345);
    return (int)(bytes / unit_bytes);
  };
  return run_exchange(e, comm, MPI_COMM_WORLD, why);
}

const char* bad_argument_name(BadArgument bad) {
  switch (bad) {
    case BadArgument::fewer_units: return "fewer_units";
    case BadArgument::negative_count: return "negative_count";
    case BadArgument::null_buffer: return "null_buffer";
    case BadArgument::null_datatype: return "null_datatype";
    case BadArgument::uncommitted_type: return "uncommitted_type";
    case BadArgument::other_algorithm: return "other_algorithm";
    case BadArgument::unknown_algorithm: return "unknown_algorithm";
    case BadArgument::count: break;
  }
  return "?";
}

bool run_exchange(const ExchangeCase& c, MPIX_Comm* comm, MPI_Comm mpi, std::string* why) {
  int size = 0, rank = 0;
  MPI_Comm_size(mpi, &size);
  MPI_Comm_rank(mpi, &rank);
  const TypeCase& tc = *c.types;
  MPI_Datatype send_type = c.in_place ? tc.recv : tc.send;
  int send_per_unit = c.in_place ? tc.recv_per_unit : tc.send_per_unit;

  // Units of data from `source` to `dest`; symmetric for in-place, where a rank
  // sends to j from the block it receives from j.
  auto units = [&](int source, int dest) {
    if (c.in_place && source > dest) std::swap(source, dest);
    return c.units(source, dest);
  };
  std::vector<int> send_counts(size), recv_counts(size);
  for (int peer = 0; peer < size; ++peer) {
    send_counts[peer] = units(rank, peer) * send_per_unit;
    recv_counts[peer] = units(peer, rank) * tc.recv_per_unit;
  }
  Side send, recv, reference;
  lay_out(send, send_type, send_counts, false, c.alltoall);
  lay_out(recv, tc.recv, recv_counts, true, c.alltoall);
  lay_out(reference, tc.recv, recv_counts, true, c.alltoall);

  Info info;
  if (!c.algorithm.empty()) info.set(c.alltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm", c.algorithm);
  for (const auto& k : c.keys) info.set(k.first, k.second);

  const void* sendbuf = c.in_place ? MPI_IN_PLACE : (const void*)send.data();
  void* recvbuf = recv.data();
  MPI_Datatype recv_type = tc.recv;
  MPI_Datatype uncommitted = MPI_DATATYPE_NULL;
  const char* algorithm_variable = c.alltoall ? "MPIX_ALLTOALL_ALGORITHM" : "MPIX_ALLTOALLV_ALGORITHM";
  std::string rank_algorithm = c.algorithm;  // this rank's (empty: auto)
  if (c.bad.rank == rank) {
    // Where the fault drawn does not apply (no bytes to shrink, to receive or to
    // type), a negative count stands in for it.
    BadArgument bad = c.bad.argument;
    const int peer = c.bad.peer % size;
    long long received = 0;
    for (int n : recv_counts) received += n;
    if (bad == BadArgument::fewer_units) {
      const bool sending = c.bad.peer % 2 == 0 && !c.in_place;
      std::vector<int>& counts = sending ? send.counts : recv.counts;
      std::vector<int>& firsts = sending ? send_counts : recv_counts;  // alltoall's one count
      const int unit = sending ? send_per_unit : tc.recv_per_unit;
      bad = BadArgument::negative_count;
      for (int k = 0; k < size; ++k) {
        const int j = c.alltoall ? 0 : (peer + k) % size;
        // In place, a rank's block to itself is sent from where it is received:
        // one count, and shrinking it keeps the call valid (alone, an alltoall's
        // one count is that block's).
        if (counts[j] < unit || (c.in_place && (c.alltoall ? size == 1 : j == rank))) continue;
        counts[j] -= unit;
        firsts[j] -= unit;
        bad = BadArgument::fewer_units;
        break;
      }
    }
    if ((bad == BadArgument::null_buffer || bad == BadArgument::null_datatype ||
         bad == BadArgument::uncommitted_type) && received == 0)
      bad = BadArgument::negative_count;
    // An unknown name in an info fails MPIX_Info_set already; the environment
    // gives it to the call, where the info names no algorithm.
    if (bad == BadArgument::unknown_algorithm && !c.algorithm.empty()) bad = BadArgument::other_algorithm;
    // Alone, a rank's algorithm differs from no one's.
    if (bad == BadArgument::other_algorithm && size == 1) bad = BadArgument::negative_count;
    switch (bad) {
      case BadArgument::negative_count:
        if (c.in_place) {
          recv.counts[peer] = -1;
          recv_counts[0] = -1;
        } else {
          send.counts[peer] = -1;
          send_counts[0] = -1;
        }
        break;
      case BadArgument::null_buffer: recvbuf = nullptr; break;
      case BadArgument::null_datatype: recv_type = MPI_DATATYPE_NULL; break;
      case BadArgument::uncommitted_type:
        MPI_Type_contiguous(1, c.in_place ? tc.recv : send_type, &uncommitted);
        (c.in_place ? recv_type : send_type) = uncommitted;
        break;
      case BadArgument::other_algorithm: {
        std::vector<std::string> names = mpix::algorithm_names(c.alltoall ? mpix::kAlltoall : mpix::kAlltoallv);
        names.erase(std::remove(names.begin(), names.end(), c.algorithm), names.end());
        rank_algorithm = names[(std::size_t)peer % names.size()];
        info.set(c.alltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm", rank_algorithm);
        break;
      }
      case BadArgument::unknown_algorithm:
        setenv(algorithm_variable, "no_such_algorithm", 1);
        break;
      case BadArgument::fewer_units:
      case BadArgument::count: break;
    }
  }
  // The large-count forms take the same arguments widened to MPI_Count / MPI_Aint.
  std::vector<MPI_Count> wide_counts[2];
  std::vector<MPI_Aint> wide_displs[2];
  for (int s = 0; s < 2; ++s) {
    const Side& side = s == 0 ? send : recv;
    wide_counts[s].assign(side.counts.begin(), side.counts.end());
    wide_displs[s].assign(side.displs.begin(), side.displs.end());
  }
  auto call_c = [&](MPIX_Request** request) {
    if (c.alltoall) {
      if (request)
        return MPIX_Alltoall_plan_c(sendbuf, send_counts[0], send_type, recvbuf, recv_counts[0], recv_type,
                                    info.info, comm, request);
      return MPIX_Alltoall_c(sendbuf, send_counts[0], send_type, recvbuf, recv_counts[0], recv_type, info.info, comm);
    }
    if (request)
      return MPIX_Alltoallv_plan_c(sendbuf, wide_counts[0].data(), wide_displs[0].data(), send_type, recvbuf,
                                   wide_counts[1].data(), wide_displs[1].data(), recv_type, info.info, comm, request);
    return MPIX_Alltoallv_c(sendbuf, wide_counts[0].data(), wide_displs[0].data(), send_type, recvbuf,
                            wide_counts[1].data(), wide_displs[1].data(), recv_type, info.info, comm);
  };
  auto call = [&](MPIX_Request** request) {
    if (c.large_count) return call_c(request);
    if (c.alltoall) {
      if (request)
        return MPIX_Alltoall_plan(sendbuf, send_counts[0], send_type, recvbuf, recv_counts[0], recv_type,
                                  info.info, comm, request);
      return MPIX_Alltoall(sendbuf, send_counts[0], send_type, recvbuf, recv_counts[0], recv_type, info.info, comm);
    }
    if (request)
      return MPIX_Alltoallv_plan(sendbuf, send.counts.data(), send.displs.data(), send_type, recvbuf,
                                 recv.counts.data(), recv.displs.data(), recv_type, info.info, comm, request);
    return MPIX_Alltoallv(sendbuf, send.counts.data(), send.displs.data(), send_type, recvbuf,
                          recv.counts.data(), recv.displs.data(), recv_type, info.info, comm);
  };

  bool ok = true;
  auto problem = [&](const std::string& text) {
    if (ok && why) *why = text;
    ok = false;
  };
  if (c.bad.rank >= 0) {
    // The call fails on every rank, with a message, and writes nothing; but a
    // blocking call whose rank may have started its spread-out exchange before
    // the agreement (`auto` or `nonblocking`: speculation.hpp) may have written
    // its receive blocks, as MPI leaves them after an error, never the guards
    // around them.
    const bool may_start = c.mode == Mode::blocking && !c.in_place &&
                           (rank_algorithm.empty() || rank_algorithm == "nonblocking");
    auto written = [&](const std::vector<unsigned char>& before) {
      if (before.size() != recv.storage.size()) return true;
      std::vector<bool> writable(before.size(), false);
      if (may_start) {
        MPI_Aint lb, extent, true_lb, true_extent;
        MPI_Type_get_extent(recv.type, &lb, &extent);
        MPI_Type_get_true_extent(recv.type, &true_lb, &true_extent);
        for (std::size_t peer = 0; peer < recv.counts.size(); ++peer) {
          if (recv.counts[peer] <= 0) continue;
          const long long first = (long long)kGuard + recv.displs[peer] * (long long)extent + true_lb;
          const long long end = first + (recv.counts[peer] - 1) * (long long)extent + true_extent;
          for (long long i = std::max(0LL, first); i < std::min(end, (long long)before.size()); ++i)
            writable[(std::size_t)i] = true;
        }
      }
      for (std::size_t i = 0; i < before.size(); ++i)
        if (!writable[i] && before[i] != recv.storage[i]) return true;
      return false;
    };
    fill(send.storage, rank, 0);
    fill(recv.storage, rank + 1000, 0);
    const std::vector<unsigned char> before = recv.storage;
    MPIX_Request* request = nullptr;
    const int rc = c.mode == Mode::blocking ? call(nullptr) : call(&request);
    if (rc == MPIX_SUCCESS) problem("the call succeeded");
    else if (std::strlen(MPIX_Last_error_message()) == 0) problem("an error without a message");
    if (written(before)) problem("the failed call wrote into the receive buffer");
    if (request) MPIX_Request_free(&request);
    if (uncommitted != MPI_DATATYPE_NULL) MPI_Type_free(&uncommitted);
    if (c.bad.rank == rank && c.bad.argument == BadArgument::unknown_algorithm) unsetenv(algorithm_variable);
    return all_ranks(ok, mpi);
  }
  MPIX_Request* request = nullptr;
  if (c.mode != Mode::blocking) {
    int rc = call(&request);
    if (rc != MPIX_SUCCESS) problem(std::string("init: ") + MPIX_Error_string(rc) + ": " + MPIX_Last_error_message());
  }
  // A failed init leaves nothing to run; the ranks agree on that before going on.
  bool runnable = c.mode == Mode::blocking || all_ranks(request != nullptr, mpi);
  for (int start = 0; runnable && start < c.starts; ++start) {
    fill(send.storage, rank, start);
    fill(recv.storage, rank + 1000, start);
    reference.storage = recv.storage;
    int rc = c.mode == Mode::blocking ? call(nullptr) : MPIX_Start(request);
    if (rc == MPIX_SUCCESS && request && c.mode == Mode::tested) {
      MPI_Status status;
      for (int done = 0; rc == MPIX_SUCCESS && !done;) rc = MPIX_Test(request, &done, &status);
      int count = -1;
      MPI_Get_count(&status, MPI_BYTE, &count);
      if (rc == MPIX_SUCCESS && count != 0) problem("MPIX_Test: the status of a completed exchange is not empty");
    } else if (rc == MPIX_SUCCESS && request) {
      rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
    }
    if (rc != MPIX_SUCCESS) problem(std::string(MPIX_Error_string(rc)) + ": " + MPIX_Last_error_message());
    // In place, MPI's reference runs out of place from a copy of the receive
    // buffer, which the standard makes equivalent: MPICH 4.0.2's in-place
    // MPI_Alltoallv fails with "Message truncated" for non-contiguous types past
    // ~64 KiB per block (2 ranks, a resized struct, 5000 elements each way, and a
    // plain-MPI reproducer then shows corrupted memory; test_random seed 3 at 4
    // ranks found it).
    Side in_place_copy;
    const void* reference_send = sendbuf;
    const Side& reference_side = c.in_place ? reference : send;
    if (c.in_place) {
      in_place_copy.storage = reference.storage;
      reference_send = in_place_copy.data();
    }
    if (c.alltoall)
      MPI_Alltoall(reference_send, send_counts[0], send_type, reference.data(), recv_counts[0], tc.recv, mpi);
    else
      MPI_Alltoallv(reference_send, reference_side.counts.data(), reference_side.displs.data(), send_type,
                    reference.data(), reference.counts.data(), reference.displs.data(), tc.recv, mpi);
    if (recv.storage != reference.storage) {
      std::size_t i = 0;
      while (recv.storage[i] == reference.storage[i]) ++i;
      long long offset = (long long)i - (long long)kGuard;
      problem("start " + std::to_string(start) + ": receive buffer differs from MPI_Alltoallv at byte offset " +
              std::to_string(offset) + " of " + std::to_string(recv.storage.size() - 2 * kGuard));
    }
  }
  if (request) MPIX_Request_free(&request);
  return all_ranks(ok, mpi);
}

}  // namespace harness
