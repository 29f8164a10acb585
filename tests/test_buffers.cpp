// Buffers: direct copies between processes (ipc_hybrid), MPI_BOTTOM with absolute
// addresses, device memory through every algorithm, and which datatypes may be
// copied as bytes.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "core/comm.hpp"
#include "core/datatype.hpp"
#include "core/registry.hpp"
#include "core/request.hpp"
#include "gpu/device.hpp"
#include "gpu/staging.hpp"
#ifdef MPIX_HAVE_CUDA
#include <cuda_runtime.h>
#endif
#include "harness.hpp"


using harness::all_ranks;
using harness::Comm;
using harness::message_has;

TEST_CASE("ipc_hybrid: direct copies, CMA off, disagreeing sizes", "[ipc]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  const int block = 1024;  // ints: 4 KiB per block
  std::vector<int> send((std::size_t)size * block), recv((std::size_t)size * block, -1);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < block; ++k) send[(std::size_t)j * block + k] = rank * 1000003 + j * 7 + k;
  harness::Info info{{"mpix_alltoall_algorithm", "ipc_hybrid"}, {"mpix_ipc_threshold", "0"}};
  for (const char* setting : {"write", "read", "off"}) {
    setenv("MPIX_CMA", setting, 1);
    Comm guard;
    int local_size = 0;
    MPIX_Comm_locality(guard.comm, nullptr, nullptr, &local_size, nullptr);
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoall_plan(send.data(), block, MPI_INT, recv.data(), block, MPI_INT, info.info, guard.comm,
                               &request) == MPIX_SUCCESS);
    for (int start = 0; start < 2; ++start) {
      std::fill(recv.begin(), recv.end(), -1);
      REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
      REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
      bool ok = true;
      for (int i = 0; i < size; ++i)
        for (int k = 0; k < block; ++k) ok = ok && recv[(std::size_t)i * block + k] == i * 1000003 + rank * 7 + k;
      CHECK(all_ranks(ok));
    }
    const bool cma = guard.comm->direct_copy.cma();
    INFO("MPIX_CMA=" << setting << ", CMA " << (cma ? "on" : "off: " + guard.comm->direct_copy.cma_off_reason()));
    CHECK(cma == (std::string(setting) != "off"));
    CHECK(request->plan->stats.messages == (cma ? size - local_size : size - 1));
    MPIX_Request_free(&request);
    unsetenv("MPIX_CMA");
  }

  // Rank 1 sends two ints to rank 0, which expects one: a direct pair (one node).
  Comm guard;
  int local_size = 0;
  MPIX_Comm_locality(guard.comm, nullptr, nullptr, &local_size, nullptr);
  if (size >= 2 && local_size >= 2 && guard.comm->direct_copy.cma()) {
    std::vector<int> counts(size, 1), displs(size), rcounts(size, 1);
    for (int j = 0; j < size; ++j) displs[j] = 2 * j;
    if (rank == 1) counts[0] = 2;
    std::vector<int> out(2 * size, 0), in(2 * size + 1, -1);
    harness::Info v{{"mpix_alltoallv_algorithm", "ipc_hybrid"}, {"mpix_ipc_threshold", "0"}};
    int rc = MPIX_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(), rcounts.data(),
                            displs.data(), MPI_INT, v.info, guard.comm);
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(in[2 * size] == -1);
    if (rank == 0) CHECK(in[1] == -1);  // nothing written beyond the expected block
  }

  setenv("MPIX_CMA", "sideways", 1);
  {
    Comm bad;
    int rc = MPIX_Alltoall(send.data(), block, MPI_INT, recv.data(), block, MPI_INT, info.info, bad.comm);
    CHECK(rc == MPIX_ERR_ARG);
    CHECK(message_has("MPIX_CMA=sideways"));
    // The call's name in front, as for every other message.
    CHECK(std::string(MPIX_Last_error_message()).rfind("MPIX_Alltoall: ", 0) == 0);
  }
  unsetenv("MPIX_CMA");
}

// Receivers read the senders' blocks (MPIX_CMA=read) where the exposures of a
// sender look evenly spaced. Rank 0 sends one block to ranks 1 and 2 (legal MPI),
// its exposures A, A, A + 2 s, A + 3 s, ...: the first step of 0 was taken for no
// stride yet, so the spacing came out as s and rank 2 read at A + s.
TEST_CASE("ipc_hybrid: a sender's block shared by two peers, read directly", "[ipc]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 4) return;
  const int block = 512;  // ints
  std::vector<int> send((std::size_t)size * block), counts(size, block), sdispls(size), rdispls(size);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = rank * 1000003 + (int)k;
  for (int j = 0; j < size; ++j) {
    sdispls[j] = rank != 0 ? j * block : j == 0 ? 3 * block : j <= 2 ? 0 : (j - 1) * block;
    rdispls[j] = j * block;
  }
  std::vector<int> expected((std::size_t)size * block, -1), recv((std::size_t)size * block, -1);
  MPI_Alltoallv(send.data(), counts.data(), sdispls.data(), MPI_INT, expected.data(), counts.data(), rdispls.data(),
                MPI_INT, MPI_COMM_WORLD);
  setenv("MPIX_CMA", "read", 1);
  {
    Comm guard;
    REQUIRE(MPIX_Comm_update_locality(guard.comm, size) == MPIX_SUCCESS);  // one node
    harness::Info info{{"mpix_alltoallv_algorithm", "ipc_hybrid"}, {"mpix_ipc_threshold", "0"}};
    REQUIRE(MPIX_Alltoallv(send.data(), counts.data(), sdispls.data(), MPI_INT, recv.data(), counts.data(),
                           rdispls.data(), MPI_INT, info.info, guard.comm) == MPIX_SUCCESS);
    INFO("CMA " << (guard.comm->direct_copy.cma() ? "on" : "off: " + guard.comm->direct_copy.cma_off_reason()));
    CHECK(all_ranks(recv == expected));
  }
  unsetenv("MPIX_CMA");
}

// A direct copy the kernel refuses fails its own pair only: rank 1's receive block
// from rank 0 is read-only, so rank 0's write into it fails (EFAULT); rank 0 still
// copies its blocks to the other ranks, which succeed with MPI's result. (The first
// version stopped copying at the first failure and failed every later peer too.)
TEST_CASE("ipc_hybrid: a refused direct copy fails its own pair only", "[ipc]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 3) return;
  const long page = sysconf(_SC_PAGESIZE);
  const int block = (int)(page / sizeof(int));  // one page per block
  std::vector<int> send((std::size_t)size * block), expected((std::size_t)size * block);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = rank * 1000003 + (int)k;
  MPI_Alltoall(send.data(), block, MPI_INT, expected.data(), block, MPI_INT, MPI_COMM_WORLD);
  void* mapped = mmap(nullptr, (std::size_t)size * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapped != MAP_FAILED);
  int* recv = static_cast<int*>(mapped);
  std::fill(recv, recv + (std::size_t)size * block, -1);
  if (rank == 1) REQUIRE(mprotect(recv, (std::size_t)page, PROT_READ) == 0);  // the block from rank 0
  setenv("MPIX_CMA", "write", 1);
  {
    Comm guard;
    REQUIRE(MPIX_Comm_update_locality(guard.comm, size) == MPIX_SUCCESS);  // one node
    harness::Info info{{"mpix_alltoall_algorithm", "ipc_hybrid"}, {"mpix_ipc_threshold", "0"}};
    const int rc = MPIX_Alltoall(send.data(), block, MPI_INT, recv, block, MPI_INT, info.info, guard.comm);
    if (all_ranks(guard.comm->direct_copy.cma())) {
      INFO("rank " << rank << ": " << MPIX_Last_error_message());
      if (rank == 0) {
        CHECK(rc == MPIX_ERR_DEVICE);
        CHECK(message_has("rank 1"));
        CHECK(std::equal(recv + block, recv + (std::size_t)size * block, expected.begin() + block));
      } else if (rank == 1) {
        CHECK(rc == MPIX_ERR_DEVICE);
        CHECK(message_has("rank 0 could not copy its block into this rank's buffer"));
        CHECK(recv[0] == -1);
        CHECK(std::equal(recv + block, recv + (std::size_t)size * block, expected.begin() + block));
      } else {
        CHECK(rc == MPIX_SUCCESS);
        CHECK(std::equal(recv, recv + (std::size_t)size * block, expected.begin()));
      }
      // The communicator works again once the memory does.
      if (rank == 1) REQUIRE(mprotect(recv, (std::size_t)page, PROT_READ | PROT_WRITE) == 0);
      std::fill(recv, recv + (std::size_t)size * block, -1);
      CHECK(MPIX_Alltoall(send.data(), block, MPI_INT, recv, block, MPI_INT, info.info, guard.comm) == MPIX_SUCCESS);
      CHECK(all_ranks(std::equal(recv, recv + (std::size_t)size * block, expected.begin())));
    }
  }
  unsetenv("MPIX_CMA");
  munmap(mapped, (std::size_t)size * page);
}

// Memory types and device buffers. Host memory is always recognised as such (also
// in CUDA builds on a machine without a GPU or driver: not an error). The device
// part needs a GPU: without one it says why and checks nothing more.
// MPI_BOTTOM (NULL in MPICH and Open MPI) with absolute addresses is legal MPI: in
// the displacements (alltoallv_c) or in the datatype (alltoall, a type whose lower
// bound is an address); a NULL with relative displacements is refused.
TEST_CASE("MPI_BOTTOM with absolute addresses, every algorithm", "[bottom]") {
  const int size = harness::world_size(), rank = harness::world_rank();
  const int block = 3;
  Comm guard;
  std::vector<int> send((std::size_t)size * block), recv((std::size_t)size * block);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < block; ++k) send[(std::size_t)j * block + k] = rank * 1000 + j * 10 + k;
  auto received_right = [&] {
    bool ok = true;
    for (int i = 0; i < size; ++i)
      for (int k = 0; k < block; ++k) ok = ok && recv[(std::size_t)i * block + k] == i * 1000 + rank * 10 + k;
    return ok;
  };
  auto address = [](const void* p) {
    MPI_Aint a = 0;
    MPI_Get_address(p, &a);
    return a;
  };
  std::vector<MPI_Count> counts(size, block);
  std::vector<MPI_Aint> sdispls(size), rdispls(size);
  for (int j = 0; j < size; ++j) {  // in units of the extent of MPI_INT
    sdispls[j] = address(&send[(std::size_t)j * block]) / (MPI_Aint)sizeof(int);
    rdispls[j] = address(&recv[(std::size_t)j * block]) / (MPI_Aint)sizeof(int);
  }
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
    INFO("alltoallv_c " << name);
    harness::Info info{{"mpix_alltoallv_algorithm", name}};
    std::fill(recv.begin(), recv.end(), -1);
    int rc = MPIX_Alltoallv_c(MPI_BOTTOM, counts.data(), sdispls.data(), MPI_INT, MPI_BOTTOM, counts.data(),
                              rdispls.data(), MPI_INT, info.info, guard.comm);
    if (name == "ipc_hybrid" && all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;
    CHECK(all_ranks(rc == MPIX_SUCCESS && received_right()));
  }
  // In place: the receive blocks are the send blocks, at absolute addresses (before,
  // the library sized its copy of them from address 0 and failed for memory).
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallv)) {
    INFO("alltoallv_c in place " << name);
    harness::Info info{{"mpix_alltoallv_algorithm", name}};
    recv = send;
    int rc = MPIX_Alltoallv_c(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, MPI_BOTTOM, counts.data(),
                              rdispls.data(), MPI_INT, info.info, guard.comm);
    if (name == "ipc_hybrid" && all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;
    CHECK(all_ranks(rc == MPIX_SUCCESS && received_right()));
  }
  {
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoallv_plan_c(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, MPI_BOTTOM, counts.data(),
                                  rdispls.data(), MPI_INT, nullptr, guard.comm, &request) == MPIX_SUCCESS);
    for (int start = 0; start < 2; ++start) {
      recv = send;
      REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
      REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
      CHECK(all_ranks(received_right()));
    }
    MPIX_Request_free(&request);
  }
  {
    MPIX_Request* request = nullptr;
    REQUIRE(MPIX_Alltoallv_plan_c(MPI_BOTTOM, counts.data(), sdispls.data(), MPI_INT, MPI_BOTTOM, counts.data(),
                                  rdispls.data(), MPI_INT, nullptr, guard.comm, &request) == MPIX_SUCCESS);
    for (int start = 0; start < 2; ++start) {
      std::fill(recv.begin(), recv.end(), -1);
      REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
      REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
      CHECK(all_ranks(received_right()));
    }
    MPIX_Request_free(&request);
  }
  // Alltoall: block j of a type whose lower bound is the first block's address.
  MPI_Datatype send_type, recv_type, send_block, recv_block;
  const int lengths[1] = {block};
  MPI_Aint send_at[1] = {address(send.data())}, recv_at[1] = {address(recv.data())};
  MPI_Type_create_hindexed(1, lengths, send_at, MPI_INT, &send_block);
  MPI_Type_create_hindexed(1, lengths, recv_at, MPI_INT, &recv_block);
  MPI_Type_create_resized(send_block, send_at[0], block * (MPI_Aint)sizeof(int), &send_type);
  MPI_Type_create_resized(recv_block, recv_at[0], block * (MPI_Aint)sizeof(int), &recv_type);
  MPI_Type_commit(&send_type);
  MPI_Type_commit(&recv_type);
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
    INFO("alltoall " << name);
    harness::Info info{{"mpix_alltoall_algorithm", name}};
    std::fill(recv.begin(), recv.end(), -1);
    int rc = MPIX_Alltoall(MPI_BOTTOM, 1, send_type, MPI_BOTTOM, 1, recv_type, info.info, guard.comm);
    if (name == "ipc_hybrid" && all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;
    CHECK(all_ranks(rc == MPIX_SUCCESS && received_right()));
    INFO("in place");
    recv = send;
    rc = MPIX_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, MPI_BOTTOM, 1, recv_type, info.info, guard.comm);
    CHECK(all_ranks(rc == MPIX_SUCCESS && received_right()));
  }
  for (MPI_Datatype* t : {&send_type, &recv_type, &send_block, &recv_block}) MPI_Type_free(t);
  // The same with blocks that are not contiguous (every other int), so that the
  // library packs and unpacks them from MPI_BOTTOM (MPICH's MPI_Pack refuses a NULL
  // buffer whatever the type): the holes stay as they were.
  {
    std::vector<int> sparse_send((std::size_t)size * block * 2, -7), sparse_recv(sparse_send.size());
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < block; ++k) sparse_send[((std::size_t)j * block + k) * 2] = rank * 1000 + j * 10 + k;
    MPI_Datatype every_other, types[2], placed[2];
    MPI_Type_create_hvector(block, 1, 2 * (MPI_Aint)sizeof(int), MPI_INT, &every_other);
    MPI_Aint at[2] = {address(sparse_send.data()), address(sparse_recv.data())};
    const int one[1] = {1};
    for (int side = 0; side < 2; ++side) {
      MPI_Type_create_hindexed(1, one, &at[side], every_other, &placed[side]);
      MPI_Type_create_resized(placed[side], at[side], 2 * block * (MPI_Aint)sizeof(int), &types[side]);
      MPI_Type_commit(&types[side]);
    }
    for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
      INFO("alltoall, every other int, " << name);
      harness::Info info{{"mpix_alltoall_algorithm", name}};
      std::fill(sparse_recv.begin(), sparse_recv.end(), -1);
      int rc = MPIX_Alltoall(MPI_BOTTOM, 1, types[0], MPI_BOTTOM, 1, types[1], info.info, guard.comm);
      if (name == "ipc_hybrid" && all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;
      auto sparse_right = [&](int hole) {
        bool ok = true;
        for (int i = 0; i < size; ++i)
          for (int k = 0; k < block; ++k) {
            const std::size_t at_k = ((std::size_t)i * block + k) * 2;
            ok = ok && sparse_recv[at_k] == i * 1000 + rank * 10 + k && sparse_recv[at_k + 1] == hole;
          }
        return ok;
      };
      CHECK(all_ranks(rc == MPIX_SUCCESS && sparse_right(-1)));
      INFO("in place");
      sparse_recv = sparse_send;
      rc = MPIX_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, MPI_BOTTOM, 1, types[1], info.info, guard.comm);
      CHECK(all_ranks(rc == MPIX_SUCCESS && sparse_right(-7)));
    }
    for (MPI_Datatype* t : {&types[0], &types[1], &placed[0], &placed[1], &every_other}) MPI_Type_free(t);
  }
  // NULL with displacements relative to a buffer: a mistake, named.
  std::vector<MPI_Aint> relative(size);
  for (int j = 0; j < size; ++j) relative[j] = (MPI_Aint)j * block;
  int rc = MPIX_Alltoallv_c(send.data(), counts.data(), relative.data(), MPI_INT, nullptr, counts.data(),
                            relative.data(), MPI_INT, nullptr, guard.comm);
  CHECK(all_ranks(rc == MPIX_ERR_ARG));
  CHECK(message_has("recvbuf is NULL but"));
  CHECK(message_has("MPI_BOTTOM takes absolute addresses"));
  // The same far from address 0 (400 KB on): no page there is mapped.
  std::vector<MPI_Aint> far(relative);
  for (MPI_Aint& displ : far) displ += 100000;
  rc = MPIX_Alltoallv_c(send.data(), counts.data(), relative.data(), MPI_INT, nullptr, counts.data(), far.data(),
                        MPI_INT, nullptr, guard.comm);
  CHECK(all_ranks(rc == MPIX_ERR_ARG));
  CHECK(message_has("recvbuf is NULL but"));
}

TEST_CASE("in place with a receive type of negative extent, every algorithm", "[datatype]") {
  // Element k of the receive buffer is the int 8k bytes below element 0 (the 4
  // bytes after each int are a gap MPI never touches): the blocks' span lies below
  // the buffer's address. The expectation is computed here, not by MPI.
  const int size = harness::world_size(), rank = harness::world_rank();
  const int block = 3;
  const long long elements = (long long)size * block;
  Comm guard;
  MPI_Datatype downward;
  MPI_Type_create_resized(MPI_INT, 0, -8, &downward);
  MPI_Type_commit(&downward);
  std::vector<char> memory((std::size_t)elements * 8 + 128);
  char* const base = memory.data() + 64 + (elements - 1) * 8;
  auto fill = [&](bool sent) {  // sent: what this rank sends; else what it must receive
    std::fill(memory.begin(), memory.end(), (char)0x5C);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < block; ++k) {
        const int value = sent ? rank * 1000 + j * 10 + k : j * 1000 + rank * 10 + k;
        std::memcpy(base - 8LL * (j * block + k), &value, sizeof value);
      }
  };
  fill(false);
  const std::vector<char> expected = memory;
  std::vector<int> counts(size, block), displs(size);
  for (int j = 0; j < size; ++j) displs[j] = j * block;
  for (mpix::Op op : {mpix::kAlltoall, mpix::kAlltoallv}) {
    for (const std::string& name : mpix::algorithm_names(op)) {
      for (bool persistent : {false, true}) {
        INFO((op == mpix::kAlltoall ? "alltoall " : "alltoallv ") << name << (persistent ? " plan" : ""));
        harness::Info info{{op == mpix::kAlltoall ? "mpix_alltoall_algorithm" : "mpix_alltoallv_algorithm", name}};
        MPIX_Request* request = nullptr;
        int rc = op == mpix::kAlltoall
                     ? MPIX_Alltoall_plan(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, block, downward, info.info,
                                          guard.comm, &request)
                     : MPIX_Alltoallv_plan(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, base, counts.data(),
                                           displs.data(), downward, info.info, guard.comm, &request);
        if (name == "ipc_hybrid" && all_ranks(rc == MPIX_ERR_UNSUPPORTED)) continue;
        REQUIRE(all_ranks(rc == MPIX_SUCCESS));
        fill(true);
        if (persistent) {
          rc = MPIX_Start(request);
          if (rc == MPIX_SUCCESS) rc = MPIX_Wait(request, MPI_STATUS_IGNORE);
        } else if (op == mpix::kAlltoall) {
          rc = MPIX_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, block, downward, info.info, guard.comm);
        } else {
          rc = MPIX_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, base, counts.data(), displs.data(),
                              downward, info.info, guard.comm);
        }
        MPIX_Request_free(&request);
        CHECK(all_ranks(rc == MPIX_SUCCESS && memory == expected));
      }
    }
  }
  MPI_Type_free(&downward);
}

TEST_CASE("memory types; device buffers through every algorithm", "[device]") {
  std::vector<int> host(16);
  CHECK(mpix::memory_type(host.data()) == mpix::MemoryType::host);
  CHECK(mpix::memory_type(nullptr) == mpix::MemoryType::host);
  bool aware = true;
  harness::Info no{{"mpix_cuda_aware", "false"}}, yes{{"mpix_cuda_aware", "true"}};
  REQUIRE(mpix::mpi_cuda_aware(no.info, &aware) == MPIX_SUCCESS);
  CHECK(!aware);
  REQUIRE(mpix::mpi_cuda_aware(yes.info, &aware) == MPIX_SUCCESS);
  CHECK(aware);
  if (!mpix::device_available()) {
    if (harness::world_rank() == 0)
      std::printf("SKIPPED: device buffer tests: %s\n", mpix::device_unavailable_reason().c_str());
    return;
  }
#ifdef MPIX_HAVE_CUDA
  const int size = harness::world_size(), rank = harness::world_rank();
  const int block = 256;
  std::vector<int> send((std::size_t)size * block), recv((std::size_t)size * block);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < block; ++k) send[(std::size_t)j * block + k] = rank * 100003 + j * 7 + k;
  void *dsend = nullptr, *drecv = nullptr;
  REQUIRE(cudaMalloc(&dsend, send.size() * sizeof(int)) == cudaSuccess);
  REQUIRE(cudaMalloc(&drecv, recv.size() * sizeof(int)) == cudaSuccess);
  CHECK(mpix::memory_type(dsend) == mpix::MemoryType::device);
  cudaMemcpy(dsend, send.data(), send.size() * sizeof(int), cudaMemcpyHostToDevice);
  Comm guard;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoall)) {
    INFO(name);
    harness::Info info{{"mpix_alltoall_algorithm", name}, {"mpix_ipc_threshold", "0"}};
    cudaMemset(drecv, 0xff, recv.size() * sizeof(int));
    int rc = MPIX_Alltoall(dsend, block, MPI_INT, drecv, block, MPI_INT, info.info, guard.comm);
    // ipc_hybrid refuses (on every rank) what it cannot move and says why.
    if (name == "ipc_hybrid" && rc == MPIX_ERR_UNSUPPORTED) {
      CHECK(message_has("ipc_hybrid"));
      continue;
    }
    REQUIRE(rc == MPIX_SUCCESS);
    cudaMemcpy(recv.data(), drecv, recv.size() * sizeof(int), cudaMemcpyDeviceToHost);
    bool ok = true;
    for (int i = 0; i < size; ++i)
      for (int k = 0; k < block; ++k) ok = ok && recv[(std::size_t)i * block + k] == i * 100003 + rank * 7 + k;
    CHECK(all_ranks(ok));
  }
  // Memory kinds that differ between ranks (rank 0 device, the others host): no
  // rank copies with an engine that cannot reach its peer's memory; ipc_hybrid
  // sends every block as a message (or refuses on every rank: no CUDA-aware MPI).
  {
    harness::Info info{{"mpix_alltoall_algorithm", "ipc_hybrid"}, {"mpix_ipc_threshold", "0"}};
    std::vector<int> host_recv(recv.size(), -1);
    void* send_buffer = rank == 0 ? dsend : (void*)send.data();
    void* recv_buffer = rank == 0 ? drecv : (void*)host_recv.data();
    int rc = MPIX_Alltoall(send_buffer, block, MPI_INT, recv_buffer, block, MPI_INT, info.info, guard.comm);
    CHECK(all_ranks(rc == MPIX_SUCCESS) != all_ranks(rc == MPIX_ERR_UNSUPPORTED));
    std::vector<int> sent(send.size());
    if (rank == 0) cudaMemcpy(sent.data(), dsend, sent.size() * sizeof(int), cudaMemcpyDeviceToHost);
    CHECK((rank == 0 ? sent : send) == send);  // no rank wrote into a send buffer
    if (all_ranks(rc == MPIX_SUCCESS)) {
      if (rank == 0) cudaMemcpy(host_recv.data(), drecv, host_recv.size() * sizeof(int), cudaMemcpyDeviceToHost);
      bool ok = true;
      for (int i = 0; i < size; ++i)
        for (int k = 0; k < block; ++k) ok = ok && host_recv[(std::size_t)i * block + k] == i * 100003 + rank * 7 + k;
      CHECK(all_ranks(ok));
    }
  }
  cudaFree(dsend);
  cudaFree(drecv);
#endif
}

// Regions inside nodes: detected (whatever the hardware says, a partition of the
// node) and emulated with sizes that divide the node and that do not (the last
// region of a node smaller), on emulated nodes of several sizes; the region
// communicator matches; values that differ between ranks fail on every rank.

TEST_CASE("datatypes: a type map is in order only where copying its bytes equals packing it", "[datatype]") {
  // Each case is built, checked against what MPI_Pack makes of one element, and freed.
  struct Case {
    const char* name;
    bool in_order;
    MPI_Datatype type;
  };
  std::vector<Case> cases;
  auto add = [&cases](const char* name, bool in_order, MPI_Datatype type) {
    MPI_Type_commit(&type);
    cases.push_back({name, in_order, type});
  };
  MPI_Datatype t = MPI_DATATYPE_NULL, inner = MPI_DATATYPE_NULL;
  const int up[] = {0, 1, 2}, swapped[] = {1, 0}, twice[] = {0, 0, 2}, lengths[] = {2, 0, 1};
  const int gapless[] = {0, 2, 2}, one[] = {1, 1};
  MPI_Aint bytes_up[] = {0, 4}, bytes_down[] = {4, 0}, struct_up[] = {0, 8}, struct_gap[] = {0, 12};
  MPI_Datatype int_double[] = {MPI_INT, MPI_DOUBLE}, double_int[] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_contiguous(4, MPI_INT, &t), add("contiguous", true, t);
  MPI_Type_vector(3, 2, 2, MPI_INT, &t), add("vector, stride = blocklength", true, t);
  MPI_Type_vector(1, 5, 9, MPI_INT, &t), add("vector of one block", true, t);
  MPI_Type_vector(2, 1, -1, MPI_INT, &t), add("vector, stride -1", false, t);
  MPI_Type_create_hvector(2, 1, 4, MPI_INT, &t), add("hvector, 4-byte stride", true, t);
  MPI_Type_indexed(3, lengths, gapless, MPI_INT, &t), add("indexed with an empty block", true, t);
  MPI_Type_create_indexed_block(3, 1, up, MPI_INT, &t), add("indexed_block ascending", true, t);
  MPI_Type_create_indexed_block(2, 1, swapped, MPI_INT, &t), add("indexed_block swapped", false, t);
  MPI_Type_create_indexed_block(3, 1, twice, MPI_INT, &t), add("indexed_block repeated", false, t);
  MPI_Type_create_hindexed(2, one, bytes_up, MPI_INT, &t), add("hindexed ascending", true, t);
  MPI_Type_create_hindexed(2, one, bytes_down, MPI_INT, &t), add("hindexed swapped", false, t);
  MPI_Type_create_struct(2, one, struct_up, double_int, &t), add("struct double, int", true, t);
  MPI_Type_create_struct(2, one, struct_gap, double_int, &t), add("struct with a gap", false, t);
  MPI_Type_create_struct(2, one, bytes_down, int_double, &t), add("struct overlapping", false, t);
  MPI_Type_create_resized(MPI_INT, -4, 12, &t), add("resized int", true, t);
  MPI_Type_create_resized(MPI_INT, 0, 8, &inner);
  MPI_Type_contiguous(2, inner, &t), add("contiguous of a resized int (holes)", false, t);
  MPI_Type_contiguous(1, inner, &t), add("one resized int", true, t);
  MPI_Type_free(&inner);
  MPI_Type_create_indexed_block(2, 1, swapped, MPI_INT, &inner);
  MPI_Type_contiguous(1, inner, &t), add("contiguous of a swapped pair", false, t);
  MPI_Type_dup(inner, &t), add("dup of a swapped pair", false, t);
  MPI_Type_free(&inner);
  const int sizes[] = {4}, subsizes[] = {4}, starts[] = {0};
  MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t), add("subarray (not followed)", false, t);

  for (Case& c : cases) {
    INFO(c.name);
    mpix::TypeLayout layout;
    REQUIRE(mpix::describe_type(c.type, "type", &layout) == MPIX_SUCCESS);
    CHECK(layout.contiguous(1) == c.in_order);
    mpix::TypeLayout again;  // the answer kept with the type
    REQUIRE(mpix::describe_type(c.type, "type", &again) == MPIX_SUCCESS);
    CHECK(again.contiguous(1) == c.in_order);
    // Where the library would copy, the copy is what MPI packs.
    if (layout.contiguous(1)) {
      std::vector<unsigned char> memory((std::size_t)layout.true_extent), packed(memory.size());
      for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = (unsigned char)(i * 7 + 1);
      int position = 0;
      MPI_Pack(memory.data() - layout.true_lb, 1, c.type, packed.data(), (int)packed.size(), &position,
               MPI_COMM_SELF);
      CHECK(packed == memory);
    }
    MPI_Type_free(&c.type);
  }
  // A handle MPI hands out again after a free does not keep the old type's answer.
  for (int round = 0; round < 4; ++round) {
    const bool in_order = round % 2 == 0;
    const int displacements[] = {in_order ? 0 : 1, in_order ? 1 : 0};
    MPI_Datatype t;
    MPI_Type_create_indexed_block(2, 1, displacements, MPI_INT, &t);
    MPI_Type_commit(&t);
    mpix::TypeLayout layout;
    REQUIRE(mpix::describe_type(t, "type", &layout) == MPIX_SUCCESS);
    CHECK(layout.contiguous(1) == in_order);
    MPI_Type_free(&t);
  }
}

TEST_CASE("datatypes freed while a persistent request lives, every algorithm", "[datatype][persistent]") {
  // MPI lets a program free a datatype that a persistent request was made with;
  // the request must still run (it crashed in MPI_Pack at MPIX_Start).
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  // Two ints with a hole between them (extent 3 ints), and two ints in a row.
  auto make_types = [](MPI_Datatype* holes, MPI_Datatype* pair) {
    MPI_Type_vector(2, 1, 2, MPI_INT, holes);
    MPI_Type_commit(holes);
    MPI_Type_contiguous(2, MPI_INT, pair);
    MPI_Type_commit(pair);
  };
  MPI_Datatype holes_ref, pair_ref;  // for MPI's reference, kept
  make_types(&holes_ref, &pair_ref);
  std::vector<int> counts(size), displs(size);
  int units = 0;
  for (int j = 0; j < size; ++j) counts[j] = 1 + (rank + j) % 2, displs[j] = units, units += counts[j];
  for (const mpix::Op op : {mpix::kAlltoallv, mpix::kAlltoall}) {
    const bool v = op == mpix::kAlltoallv;
    for (const std::string& name : mpix::algorithm_names(op)) {
      for (const bool in_place : {false, true}) {
        INFO(name << (v ? " alltoallv" : " alltoall") << (in_place ? " in place" : ""));
        harness::Info info{{v ? "mpix_alltoallv_algorithm" : "mpix_alltoall_algorithm", name}};
        MPI_Datatype holes, pair;
        make_types(&holes, &pair);
        // Sent with holes, received as pairs; in place (and alltoall) one type on both sides.
        MPI_Datatype send_type = holes, recv_type = in_place || !v ? holes : pair;
        const int units_total = v ? units : size;
        std::vector<int> send(3 * units_total + 1), recv(3 * units_total + 1, -1);
        MPIX_Request* request = nullptr;
        const void* sendbuf = in_place ? MPI_IN_PLACE : send.data();
        int rc = v ? MPIX_Alltoallv_plan(sendbuf, counts.data(), displs.data(), send_type, recv.data(),
                                         counts.data(), displs.data(), recv_type, info.info, c.comm, &request)
                   : MPIX_Alltoall_plan(sendbuf, 1, send_type, recv.data(), 1, recv_type, info.info, c.comm,
                                        &request);
        MPI_Type_free(&holes);
        MPI_Type_free(&pair);
        if (rc == MPIX_ERR_UNSUPPORTED) continue;  // in place where the algorithm has none
        REQUIRE(rc == MPIX_SUCCESS);
        for (int start = 0; start < 2; ++start) {
          std::vector<int>& source = in_place ? recv : send;
          for (std::size_t x = 0; x < source.size(); ++x) source[x] = rank * 100000 + start * 10000 + (int)x;
          if (!in_place) std::fill(recv.begin(), recv.end(), -1);
          std::vector<int> expected = recv;  // MPI's result, from the same contents
          const void* ref_sendbuf = in_place ? MPI_IN_PLACE : send.data();
          MPI_Datatype ref_recv = in_place || !v ? holes_ref : pair_ref;
          if (v)
            MPI_Alltoallv(ref_sendbuf, counts.data(), displs.data(), holes_ref, expected.data(), counts.data(),
                          displs.data(), ref_recv, MPI_COMM_WORLD);
          else
            MPI_Alltoall(ref_sendbuf, 1, holes_ref, expected.data(), 1, ref_recv, MPI_COMM_WORLD);
          REQUIRE(MPIX_Start(request) == MPIX_SUCCESS);
          REQUIRE(MPIX_Wait(request, MPI_STATUS_IGNORE) == MPIX_SUCCESS);
          CHECK(all_ranks(recv == expected));
        }
        CHECK(MPIX_Request_free(&request) == MPIX_SUCCESS);
      }
    }
  }
  MPI_Type_free(&holes_ref);
  MPI_Type_free(&pair_ref);
}
