// Large counts (issue 11, API.md "Large counts"): the dense calls past 2^31 bytes
// per rank and per block, and the MPI-4 large-count forms MPIX_Alltoall(v)(_plan)_c.
//
// Without the memory: datatypes of huge counts and offsets are checked by their
// size and extent; exchanges whose blocks lie more than 2^32 bytes (and INT_MAX
// elements) apart run for every algorithm in sparse mappings (MAP_NORESERVE: only
// the pages touched cost memory); plans of blocks of 2^40 bytes are built and
// freed; and every large-count path (MPI's _c calls, derived datatypes, packing in
// runs, hindexed pieces, MPI_Ialltoallw) runs at small sizes by lowering the int
// limit, byte for byte against MPI for every algorithm through the _c functions.
//
// With the memory ([huge], hidden; suite 'largecount' in tests/meson.build): one
// real exchange of more than 2 GiB per rank on 2 ranks.
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "alltoallv/bruck.hpp"
#include "core/large_count.hpp"
#include "core/registry.hpp"
#include "core/request.hpp"
#include "harness.hpp"

using harness::DenseCase;
using harness::Mode;
using mpix::workload::Distribution;

namespace {

constexpr MPI_Count kGiB = 1LL << 30;

// Sets the large-count policy for a scope (what the library's tests may change).
struct PolicyScope {
  mpix::LargeCountPolicy saved;
  PolicyScope(MPI_Count int_limit, bool use_c_calls) : saved(mpix::large_count_policy()) {
    mpix::large_count_policy() = mpix::LargeCountPolicy{int_limit, use_c_calls};
  }
  ~PolicyScope() { mpix::large_count_policy() = saved; }
};
struct Policy {
  MPI_Count limit;
  bool c_calls;
};

// Test datatypes: a vector with a hole (size 16, extent 24) and an int with a
// negative lower bound (lb -4, extent 12).
struct TestTypes {
  MPI_Datatype vector = MPI_DATATYPE_NULL, shifted = MPI_DATATYPE_NULL;
  TestTypes() {
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vector);
    MPI_Type_commit(&vector);
    MPI_Type_create_resized(MPI_INT, -4, 12, &shifted);
    MPI_Type_commit(&shifted);
  }
  ~TestTypes() {
    MPI_Type_free(&vector);
    MPI_Type_free(&shifted);
  }
};

void check_count_type(MPI_Datatype type, MPI_Count count) {
  MPI_Count size = 0, whole_size = 0;
  MPI_Aint lb = 0, extent = 0, whole_lb = 0, whole_extent = 0;
  MPI_Type_size_x(type, &size);
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Datatype whole = MPI_DATATYPE_NULL;
  REQUIRE(mpix::make_count_type(type, count, &whole) == MPIX_SUCCESS);
  MPI_Type_size_x(whole, &whole_size);
  MPI_Type_get_extent(whole, &whole_lb, &whole_extent);
  INFO("count " << count << " of a type of size " << size << ", extent " << extent);
  CHECK(whole_size == count * size);
  CHECK(whole_lb == (count > 0 ? lb : 0));
  CHECK(whole_extent == (MPI_Aint)count * extent);
  MPI_Type_free(&whole);
}

// The byte every test writes at offset `index` of the block from `source` to `dest`.
unsigned char pattern(int source, int dest, long long index) {
  std::uint64_t x = (std::uint64_t)index * 0x9e3779b97f4a7c15ull + (std::uint64_t)source * 131 + (std::uint64_t)dest * 7;
  return (unsigned char)(x >> 56);
}

// A private anonymous mapping that reserves no memory: pages cost only once touched.
struct SparseRegion {
  char* data = nullptr;
  std::size_t bytes = 0;
  explicit SparseRegion(std::size_t size) : bytes(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data = p == MAP_FAILED ? nullptr : (char*)p;
  }
  ~SparseRegion() {
    if (data) munmap(data, bytes);
  }
};

constexpr unsigned char kCanary = 0x5A;
constexpr long long kGuard = 32;

}  // namespace

TEST_CASE("a count type holds any count of any datatype", "[types]") {
  TestTypes types;
  for (MPI_Datatype type : {MPI_BYTE, MPI_INT, types.vector, types.shifted})
    for (MPI_Count count : {(MPI_Count)0, (MPI_Count)5, (MPI_Count)INT_MAX + 1, 5 * (MPI_Count)INT_MAX + 3,
                            8 * kGiB, 3 * 1024 * kGiB + 1})
      check_count_type(type, count);
  // A small limit nests chunks of chunks.
  PolicyScope policy(3, false);
  for (MPI_Datatype type : {MPI_INT, types.vector, types.shifted})
    for (MPI_Count count = 0; count <= 40; ++count) check_count_type(type, count);
}

TEST_CASE("a block of any count moves between two ranks", "[p2p]") {
  TestTypes types;
  const int size = harness::world_size(), rank = harness::world_rank();
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  const int elements = 100;  // of `vector`: 3 doubles each, the second a hole
  struct Policy {
    MPI_Count limit;
    bool c_calls;
  };
  for (Policy p : {Policy{INT_MAX, true}, Policy{40, true}, Policy{40, false}, Policy{3, false}}) {
    PolicyScope policy(p.limit, p.c_calls);
    std::vector<double> send(3 * elements), recv(3 * elements, -1.0);
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = rank * 1000.0 + (double)i;
    mpix::TypeLayout layout;
    REQUIRE(mpix::describe_type(types.vector, "vector", &layout) == MPIX_SUCCESS);
    MPI_Request requests[2];
    REQUIRE(mpix::irecv_block(mpix::Block{(char*)recv.data(), elements, &layout}, from, 7, MPI_COMM_WORLD,
                              &requests[0]) == MPIX_SUCCESS);
    REQUIRE(mpix::isend_block(mpix::Block{(char*)send.data(), elements, &layout}, to, 7, MPI_COMM_WORLD,
                              &requests[1]) == MPIX_SUCCESS);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    bool ok = true;
    for (int i = 0; i < 3 * elements; ++i) ok = ok && recv[i] == (i % 3 == 1 ? -1.0 : from * 1000.0 + i);
    INFO("limit " << p.limit << (p.c_calls ? ", _c calls" : ", datatypes"));
    CHECK(ok);
  }
  // Packing in runs: a non-contiguous block of 100 elements through 40-byte runs.
  PolicyScope policy(40, false);
  mpix::TypeLayout layout;
  REQUIRE(mpix::describe_type(types.vector, "vector", &layout) == MPIX_SUCCESS);
  std::vector<double> data(3 * elements), back(3 * elements, -1.0);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = (double)i;
  std::vector<char> packed(16 * elements);
  REQUIRE(mpix::pack_block(mpix::Block{(char*)data.data(), elements, &layout}, packed.data(), MPI_COMM_SELF) ==
          MPIX_SUCCESS);
  REQUIRE(mpix::unpack_block(packed.data(), mpix::Block{(char*)back.data(), elements, &layout}, MPI_COMM_SELF) ==
          MPIX_SUCCESS);
  for (int i = 0; i < 3 * elements; ++i) CHECK(back[i] == (i % 3 == 1 ? -1.0 : (double)i));
}

TEST_CASE("offsets and messages past 2^32 bytes", "[offsets]") {
  // An address never dereferenced: only offsets from it are computed.
  char* base = reinterpret_cast<char*>(std::uintptr_t{1} << 44);
  mpix::BufferSide side;
  REQUIRE(mpix::describe_type(MPI_INT, "int", &side.layout) == MPIX_SUCCESS);
  side.buf = base;
  side.counts = {3 * (MPI_Count)INT_MAX, 7};
  side.displs = {5 * (MPI_Aint)INT_MAX, 11 * (MPI_Aint)INT_MAX};
  CHECK(side.block(0).base - base == 20 * (MPI_Aint)INT_MAX);
  CHECK(side.block(1).base - base == 44 * (MPI_Aint)INT_MAX);
  CHECK(side.block_bytes(0) == 12LL * INT_MAX);
  CHECK(side.block(0).bytes() == 12LL * INT_MAX);
  CHECK(side.layout.span_hi(side.counts[0]) == 12LL * INT_MAX);

  // One run of 5 GiB (two adjacent pieces): one message of 5 GiB of bytes.
  mpix::PieceMessage one;
  REQUIRE(one.build({{base, 3 * kGiB}, {base + 3 * kGiB, 2 * kGiB}}, 1) == MPIX_SUCCESS);
  CHECK(one.bytes() == 5 * kGiB);
  CHECK(one.message().block.count == 5 * kGiB);
  CHECK(one.message().block.bytes() == 5 * kGiB);
  // Two runs, one of 3 GiB: an hindexed type of 4 GiB.
  mpix::PieceMessage two;
  REQUIRE(two.build({{base, 3 * kGiB}, {base + 4 * kGiB, kGiB}}, 1) == MPIX_SUCCESS);
  CHECK(two.bytes() == 4 * kGiB);
  CHECK(two.message().block.count == 1);
  CHECK(two.message().block.bytes() == 4 * kGiB);
  MPI_Count size = 0;
  MPI_Type_size_x(two.message().block.layout->type, &size);
  CHECK(size == 4 * kGiB);
}

// Blocks far apart in sparse mappings: MPIX_Alltoallv_c with displacements past
// INT_MAX elements (block i of a side starts about 5 (i + 1) GB in), and
// MPIX_Alltoall_c with a datatype of extent 1 GiB (element k of block i is
// 3 i + k GiB in), for every algorithm; checked byte for byte with canaries.
TEST_CASE("every algorithm with blocks more than 2^32 bytes apart", "[sparse]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  harness::Comm comm;
  const MPI_Aint spacing = 1250LL * 1000 * 1000;  // elements of MPI_INT: 5 GB
  SparseRegion send_region((std::size_t)(size + 1) * spacing * 4), recv_region((std::size_t)(size + 1) * spacing * 4);
  REQUIRE(harness::all_ranks(send_region.data && recv_region.data));

  auto count = [&](int source, int dest) -> MPI_Count {
    return (source * 3 + dest) % 5 == 4 ? 0 : 50 + 13 * ((source + dest) % 4);
  };
  std::vector<MPI_Count> send_counts(size), recv_counts(size);
  std::vector<MPI_Aint> sdispls(size), rdispls(size);
  for (int peer = 0; peer < size; ++peer) {
    send_counts[peer] = count(rank, peer);
    recv_counts[peer] = count(peer, rank);
    sdispls[peer] = (peer + 1) * spacing + 3 * rank;
    rdispls[peer] = (size - peer) * spacing + 5 * peer + 1;  // reverse order
  }
  auto fill = [&] {
    for (int peer = 0; peer < size; ++peer) {
      unsigned char* s = (unsigned char*)send_region.data + sdispls[peer] * 4;
      for (long long i = 0; i < send_counts[peer] * 4; ++i) s[i] = pattern(rank, peer, i);
      unsigned char* r = (unsigned char*)recv_region.data + rdispls[peer] * 4;
      std::memset(r - kGuard, kCanary, (std::size_t)(recv_counts[peer] * 4 + 2 * kGuard));
    }
  };
  auto check_v = [&](std::string* why) {
    for (int peer = 0; peer < size; ++peer) {
      unsigned char* r = (unsigned char*)recv_region.data + rdispls[peer] * 4;
      const long long bytes = recv_counts[peer] * 4;
      for (long long i = -kGuard; i < bytes + kGuard; ++i) {
        unsigned char expected = i < 0 || i >= bytes ? kCanary : pattern(peer, rank, i);
        if (r[i] != expected) {
          *why = "block from rank " + std::to_string(peer) + ", byte " + std::to_string(i);
          return false;
        }
      }
    }
    return true;
  };

  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
    harness::Info info{{"mpix_alltoallv_algorithm", name}, {"mpix_segment_bytes", "64"}};
    fill();
    int rc = MPIX_Alltoallv_c(send_region.data, send_counts.data(), sdispls.data(), MPI_INT, recv_region.data,
                              recv_counts.data(), rdispls.data(), MPI_INT, info.info, comm.comm);
    std::string why;
    bool ok = rc == MPIX_SUCCESS ? check_v(&why) : (why = MPIX_Last_error_message(), false);
    INFO("alltoallv " << name << ": " << why);
    CHECK(harness::all_ranks(ok));
  }

  // Alltoall: 3 elements per block of an int type of extent 1 GiB.
  MPI_Datatype spread = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)kGiB, &spread);
  MPI_Type_commit(&spread);
  const int per_block = 3;
  const MPI_Aint margin = 1 << 20;  // room for the canaries before block 0
  auto element = [&](char* region, int peer, int k) {
    return (unsigned char*)region + margin + (peer * per_block + k) * kGiB;
  };
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
    harness::Info info{{"mpix_alltoall_algorithm", name}, {"mpix_segment_bytes", "8"}};
    for (int peer = 0; peer < size; ++peer)
      for (int k = 0; k < per_block; ++k) {
        for (int b = 0; b < 4; ++b) element(send_region.data, peer, k)[b] = pattern(rank, peer, 4 * k + b);
        std::memset(element(recv_region.data, peer, k) - kGuard, kCanary, 4 + 2 * kGuard);
      }
    int rc = MPIX_Alltoall_c(send_region.data + margin, per_block, spread, recv_region.data + margin, per_block,
                             spread, info.info, comm.comm);
    std::string why = rc == MPIX_SUCCESS ? "" : MPIX_Last_error_message();
    for (int peer = 0; peer < size && why.empty(); ++peer)
      for (int k = 0; k < per_block && why.empty(); ++k)
        for (int b = -(int)kGuard; b < 4 + kGuard; ++b) {
          unsigned char expected = b < 0 || b >= 4 ? kCanary : pattern(peer, rank, 4 * k + b);
          if (element(recv_region.data, peer, k)[b] != expected) {
            why = "element " + std::to_string(k) + " from rank " + std::to_string(peer) + ", byte " + std::to_string(b);
            break;
          }
        }
    INFO("alltoall " << name << ": " << why);
    CHECK(harness::all_ranks(why.empty()));
  }
  MPI_Type_free(&spread);
}

TEST_CASE("plans of blocks of 2^40 bytes: built without the memory, or out of memory cleanly", "[plans]") {
  const int size = harness::world_size();
  harness::Comm comm;
  const MPI_Count huge = 1024 * kGiB;  // bytes per block
  // Send and receive buffers must not share bytes (an error, as in MPI): the receive
  // buffer starts past the send buffer's P blocks, an address never touched.
  static char anchor[64];
  char* const anchor2 = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(anchor) +
                                                (std::uintptr_t)(size + 1) * (std::uintptr_t)huge);
  // Algorithms that take no scratch for contiguous blocks plan without touching
  // or allocating the blocks; the plans are freed unstarted.
  for (const char* name : {"pmpi", "pairwise", "nonblocking", "scattered", "multipair_waitany", "random_sendrecv",
                           "random_segmented"}) {
    harness::Info info{{"mpix_alltoall_algorithm", name}};
    MPIX_Request* request = nullptr;
    int rc = MPIX_Alltoall_plan_c(anchor, huge, MPI_BYTE, anchor2, huge, MPI_BYTE, info.info, comm.comm, &request);
    INFO(name << ": " << MPIX_Last_error_message());
    CHECK(harness::all_ranks(rc == MPIX_SUCCESS));
    if (request) CHECK(request->algorithm == name);
    if (request) MPIX_Request_free(&request);
  }
  std::vector<MPI_Count> counts(size, huge);
  std::vector<MPI_Aint> displs(size);
  for (int i = 0; i < size; ++i) displs[i] = (MPI_Aint)i * huge;
  {
    harness::Info info{{"mpix_alltoallv_algorithm", "pmpi"}};
    MPIX_Request* request = nullptr;
    int rc = MPIX_Alltoallv_plan_c(anchor, counts.data(), displs.data(), MPI_BYTE, anchor2, counts.data(),
                                   displs.data(), MPI_BYTE, info.info, comm.comm, &request);
    CHECK(harness::all_ranks(rc == MPIX_SUCCESS));
    if (request) MPIX_Request_free(&request);
  }
  // Counts whose bytes 64-bit offsets cannot hold are refused, not wrapped.
  {
    int rc = MPIX_Alltoall_c(anchor, (MPI_Count)1 << 62, MPI_BYTE, anchor2, (MPI_Count)1 << 62, MPI_BYTE, nullptr,
                             comm.comm);
    CHECK(harness::all_ranks(rc == MPIX_ERR_ARG));
    CHECK(harness::message_has("recvcount=4611686018427387904: more bytes than 64-bit offsets hold"));
    std::vector<MPI_Aint> far(displs);
    far[0] = (MPI_Aint)1 << 61;
    rc = MPIX_Alltoallv_c(anchor, counts.data(), displs.data(), MPI_BYTE, anchor2, counts.data(), far.data(),
                          MPI_BYTE, nullptr, comm.comm);
    CHECK(harness::all_ranks(rc == MPIX_ERR_ARG));
    CHECK(harness::message_has("rdispls[0]=2305843009213693952: more bytes than 64-bit offsets hold"));
  }
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer ends the process on an allocation it cannot make instead of
  // throwing std::bad_alloc; the out-of-memory paths are checked in other builds.
  WARN("out-of-memory cases skipped under AddressSanitizer");
#else
  // In place, the receive blocks are copied to scratch: 2^40 bytes per block is
  // more than the machine has, on every rank alike, before anything moves.
  int rc = MPIX_Alltoall_c(MPI_IN_PLACE, 0, MPI_BYTE, anchor, huge, MPI_BYTE, nullptr, comm.comm);
  CHECK(harness::all_ranks(rc == MPIX_ERR_NO_MEM));
  CHECK(harness::message_has("out of memory"));
  // A non-contiguous own block is staged for its copy.
  TestTypes types;
  harness::Info info{{"mpix_alltoallv_algorithm", "pairwise"}};
  rc = MPIX_Alltoallv_c(anchor, counts.data(), displs.data(), types.vector, anchor2, counts.data(), displs.data(),
                        types.vector, info.info, comm.comm);
  CHECK(harness::all_ranks(rc == MPIX_ERR_NO_MEM));
  // Out of memory on one rank only, after the agreement: a persistent plan fails on
  // every rank (the others made theirs, and would have started an exchange that rank
  // never joins). Rank 0's in-place blocks are 1 byte each but 2^40 bytes apart, so
  // the copy of their span cannot be made; nothing is written there.
  if (size > 1) {
    static char blocks[64];
    std::vector<MPI_Count> ones(size, 1);
    std::vector<MPI_Aint> spread(size);
    for (int i = 0; i < size; ++i) spread[i] = harness::world_rank() == 0 ? (MPI_Aint)i * huge : i;
    // pairwise's plan makes no messages; TuNA's and the hierarchical ones' exchange
    // metadata, where the others waited for rank 0.
    for (const char* name : {"pairwise", "tuna", "tuna_hier_coalesced", "node_aware"}) {
      harness::Info algorithm{{"mpix_alltoallv_algorithm", name}};
      MPIX_Request* request = nullptr;
      rc = MPIX_Alltoallv_plan_c(MPI_IN_PLACE, nullptr, nullptr, MPI_BYTE, blocks, ones.data(), spread.data(),
                                 MPI_BYTE, algorithm.info, comm.comm, &request);
      INFO(name << ": " << MPIX_Last_error_message());
      CHECK(harness::all_ranks(rc == MPIX_ERR_NO_MEM && request == nullptr));
      CHECK(harness::message_has(harness::world_rank() == 0 ? "out of memory"
                                                            : "another rank failed while building its plan"));
    }
    // The same blocking: rank 0's in-place copy is taken before the agreement, so
    // its failure is agreed like a bad argument, and no rank moves a byte.
    for (const char* name : {"auto", "pairwise", "tuna", "tuna_hier_coalesced", "node_aware"}) {
      harness::Info algorithm{{"mpix_alltoallv_algorithm", name}};
      rc = MPIX_Alltoallv_c(MPI_IN_PLACE, nullptr, nullptr, MPI_BYTE, blocks, ones.data(), spread.data(), MPI_BYTE,
                            algorithm.info, comm.comm);
      INFO(name << ": " << MPIX_Last_error_message());
      CHECK(harness::all_ranks(rc == MPIX_ERR_NO_MEM));
      CHECK(harness::message_has(harness::world_rank() == 0 ? "out of memory for the in-place copy"
                                                            : "another rank failed"));
    }
    // A blocking call whose blocks may take this much memory agrees on its plan
    // too (user guide, "What can still hang"): rank 0 alone sends a block of 2^40
    // bytes, to rank 1, the only block of the exchange; node_aware's plan stages
    // it on their node and runs out of memory there alone, while the ranks of the
    // other nodes made theirs and went on into the exchange.
    std::vector<MPI_Count> send_counts(size, 0), recv_counts(size, 0);
    if (harness::world_rank() == 0) send_counts[1] = huge;
    if (harness::world_rank() == 1) recv_counts[0] = huge;
    std::vector<MPI_Aint> at(size, 0);
    harness::Info node_aware{{"mpix_alltoallv_algorithm", "node_aware"}};
    rc = MPIX_Alltoallv_c(anchor, send_counts.data(), at.data(), MPI_BYTE, anchor2, recv_counts.data(), at.data(),
                          MPI_BYTE, node_aware.info, comm.comm);
    INFO(MPIX_Last_error_message());
    CHECK(harness::all_ranks(rc == MPIX_ERR_NO_MEM));
    CHECK(harness::message_has("out of memory"));  // the others: "another rank failed while building its plan"
  }
#endif
  // The communicator is still usable.
  std::string why;
  CHECK(harness::run_dense_case(DenseCase{false, Distribution::uniform, 200, "int", Mode::blocking, false, 1, "tuna", {}},
                                comm.comm, &why));
}

// The _c functions byte for byte against MPI for every algorithm, with the int
// limit as MPI has it and lowered to 40 so that blocks of 50 elements take the
// large-count paths: MPI's _c calls (where the MPI has them) or derived datatypes.
TEST_CASE("the _c functions equal MPI for every algorithm, on every large-count path", "[api]") {
  harness::Comm comm;
  const std::vector<std::pair<const char*, std::string>> small = {
      {"mpix_block_count", "3"}, {"mpix_stride", "3"}, {"mpix_max_queue", "4"}, {"mpix_segment_bytes", "40"}};
  std::vector<Policy> policies = {{INT_MAX, true}, {40, false}};
  if (mpix::kMpiHasLargeCountCalls) policies.push_back({40, true});
  for (Policy p : policies) {
    PolicyScope policy(p.limit, p.c_calls);
    for (bool alltoall : {false, true}) {
      for (const std::string& name : mpix::algorithm_names(alltoall ? mpix::kAlltoall : mpix::kAlltoallv)) {
        std::vector<DenseCase> cases;
        auto add = [&](Distribution dist, long long bytes, const char* types, Mode mode, bool in_place) {
          DenseCase c{alltoall, dist, bytes, types, mode, in_place, 2, name, small};
          c.large_count = true;
          cases.push_back(c);
        };
        add(alltoall ? Distribution::constant : Distribution::powerlaw, 200, "int", Mode::blocking, false);
        add(Distribution::uniform, 240, "vector", Mode::persistent, false);
        add(Distribution::uniform, 240, "mixed", Mode::blocking, false);
        add(Distribution::uniform, 192, "int", Mode::blocking, true);
        for (const DenseCase& c : cases) {
          std::string why;
          bool ok = harness::run_dense_case(c, comm.comm, &why);
          INFO("limit " << p.limit << (p.c_calls ? " _c calls " : " datatypes ") << c.describe() << ": " << why);
          CHECK(ok);
        }
      }
    }
  }
}

// pmpi's blocking call makes MPI's blocking collective only where every rank makes
// the int call (the agreement's int_counts): here rank 0's send displacements lie
// beyond the lowered int limit, so it alone would take MPI_Alltoallw (or _c), which
// a blocking MPI_Alltoallv on the other ranks would never meet.
TEST_CASE("pmpi's blocking call when one rank's counts need the large-count forms", "[api]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  harness::Comm comm;
  harness::Info info{{"mpix_alltoallv_algorithm", "pmpi"}};
  const int gap = rank == 0 ? 50 : 0;  // beyond the limit of 40 on rank 0 only
  std::vector<int> send(gap + size), recv(size, -1), counts(size, 1), sdispls(size), rdispls(size);
  for (int i = 0; i < size; ++i) {
    sdispls[i] = gap + i;
    rdispls[i] = i;
    send[gap + i] = 100 * rank + i;
  }
  std::vector<Policy> policies = {{40, false}};
  if (mpix::kMpiHasLargeCountCalls) policies.push_back({40, true});
  for (Policy p : policies) {
    PolicyScope policy(p.limit, p.c_calls);
    std::fill(recv.begin(), recv.end(), -1);
    const int rc = MPIX_Alltoallv(send.data(), counts.data(), sdispls.data(), MPI_INT, recv.data(), counts.data(),
                                  rdispls.data(), MPI_INT, info.info, comm.comm);
    INFO((p.c_calls ? "_c calls: " : "datatypes: ") << MPIX_Last_error_message());
    bool ok = rc == MPIX_SUCCESS;
    for (int i = 0; i < size; ++i) ok = ok && recv[i] == 100 * i + rank;
    CHECK(harness::all_ranks(ok));
  }
}

// More than 2 GiB per rank, on 2 ranks: MPIX_Alltoall (the int form) with count x P
// beyond INT_MAX through pmpi, then MPIX_Alltoallv_c with a block of more than 2 GiB
// (beyond INT_MAX elements of MPI_BYTE) to the other rank through the algorithms
// in MPIX_LARGECOUNT_ALGORITHMS (default "tuna"). About 5 GB of memory per rank.
TEST_CASE("a real exchange of more than 2 GiB per rank", "[.huge]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  REQUIRE(size == 2);
  harness::Comm comm;
  const long long block = 1200LL * 1000 * 1000;  // alltoall: 2.4 GB per rank
  const long long big = 2300LL * 1000 * 1000;    // alltoallv: one block of 2.3 GB > 2 GiB
  const long long own = 4096;
  const std::size_t buffer = (std::size_t)(2 * block);
  std::unique_ptr<unsigned char[]> send(new unsigned char[buffer]), recv(new unsigned char[buffer]);
  // A word at a time: the byte pattern is too slow for gigabytes.
  auto word = [](int source, int dest, std::size_t index) {
    return (std::uint64_t)index * 0x9e3779b97f4a7c15ull ^ ((std::uint64_t)source << 48) ^ ((std::uint64_t)dest << 56);
  };
  auto fill = [&](unsigned char* at, long long bytes, int dest) {
    std::uint64_t* w = (std::uint64_t*)at;
    for (long long i = 0; i < bytes / 8; ++i) w[i] = word(rank, dest, (std::size_t)i);
  };
  auto first_difference = [&](const unsigned char* at, long long bytes, int source) -> long long {
    const std::uint64_t* w = (const std::uint64_t*)at;
    for (long long i = 0; i < bytes / 8; ++i)
      if (w[i] != word(source, rank, (std::size_t)i)) return 8 * i;
    return -1;
  };

  {
    for (int peer = 0; peer < 2; ++peer) fill(send.get() + peer * block, block, peer);
    std::memset(recv.get(), 0, buffer);
    harness::Info info{{"mpix_alltoall_algorithm", "pmpi"}};
    int rc = MPIX_Alltoall(send.get(), (int)block, MPI_BYTE, recv.get(), (int)block, MPI_BYTE, info.info, comm.comm);
    INFO("MPIX_Alltoall pmpi: " << MPIX_Last_error_message());
    REQUIRE(harness::all_ranks(rc == MPIX_SUCCESS));
    long long bad = -1;
    for (int peer = 0; peer < 2 && bad < 0; ++peer) bad = first_difference(recv.get() + peer * block, block, peer);
    INFO("first difference at byte " << bad);
    CHECK(harness::all_ranks(bad < 0));
  }

  const char* env = std::getenv("MPIX_LARGECOUNT_ALGORITHMS");
  std::string list = env && *env ? env : "tuna";
  const int other = 1 - rank;
  std::vector<MPI_Count> counts(2);
  std::vector<MPI_Aint> displs(2);
  counts[other] = big;
  counts[rank] = own;
  displs[other] = 0;
  displs[rank] = big;
  for (std::size_t at = 0; at < list.size();) {
    std::size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(at, comma - at);
    at = comma + 1;
    fill(send.get(), big, other);
    fill(send.get() + big, own, rank);
    std::memset(recv.get(), 0, buffer);
    harness::Info info{{"mpix_alltoallv_algorithm", name}, {"mpix_segment_bytes", std::to_string(kGiB)}};
    int rc = MPIX_Alltoallv_c(send.get(), counts.data(), displs.data(), MPI_BYTE, recv.get(), counts.data(),
                              displs.data(), MPI_BYTE, info.info, comm.comm);
    INFO("MPIX_Alltoallv_c " << name << ": " << MPIX_Last_error_message());
    REQUIRE(harness::all_ranks(rc == MPIX_SUCCESS));
    long long bad = first_difference(recv.get(), big, other);
    if (bad < 0 && first_difference(recv.get() + big, own, rank) >= 0) bad = big;
    INFO(name << ": first difference at byte " << bad);
    CHECK(harness::all_ranks(bad < 0));
  }
}
