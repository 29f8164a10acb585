// Sparse dynamic data exchange: bad arguments fail on every rank with the error
// code of the rank that found them, a message larger than announced is an error on
// its receiver (never an overflow), and the communicator stays usable after.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "sdde_patterns.hpp"

using harness::all_ranks;
using harness::Comm;
using harness::message_has;
using sdde_test::names;

TEST_CASE("SDDE: invalid arguments fail on every rank; the communicator stays usable", "[sdde][errors]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  int value = rank, recv_nnz = -1, recv_size = -1;
  int *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
  void* vals = nullptr;
  int self = rank;
  auto crs = [&](int send_nnz, const int* dest, int sendcount, MPI_Datatype type, int* nnz, int** s, void** v,
                 int recvcount) {
    return MPIX_Alltoall_crs(send_nnz, dest, sendcount, type, &value, nnz, s, recvcount, MPI_INT, v, nullptr,
                             c.comm);
  };
  // Each case is wrong on one rank only (the last): that rank gets the precise
  // error, the others "another rank rejected its arguments", and nobody hangs.
  const int last = size - 1;
  auto check_case = [&](const char* what, const char* says, int rc, int code = MPIX_ERR_ARG) {
    INFO(what);
    bool good = rank == last ? rc == code && message_has(says)
                             : rc == code && message_has("another rank rejected");  // the same code everywhere
    CHECK(all_ranks(good));
  };
  int bad_dest = size;
  check_case("send_nnz < 0", "send_nnz=-1",
             crs(rank == last ? -1 : 1, &self, 1, MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("dest out of range", "dest[0]", crs(1, rank == last ? &bad_dest : &self, 1, MPI_INT, &recv_nnz, &src,
                                                  &vals, 1));
  check_case("NULL dest", "dest is NULL", crs(1, rank == last ? nullptr : &self, 1, MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("NULL recv_nnz", "recv_nnz is NULL",
             crs(1, &self, 1, MPI_INT, rank == last ? nullptr : &recv_nnz, &src, &vals, 1));
  check_case("NULL src", "src is NULL", crs(1, &self, 1, MPI_INT, &recv_nnz, rank == last ? nullptr : &src, &vals, 1));
  check_case("NULL recvvals", "recvvals is NULL",
             crs(1, &self, 1, MPI_INT, &recv_nnz, &src, rank == last ? nullptr : &vals, 1));
  check_case("negative sendcount", "sendcount=-1",
             crs(1, &self, rank == last ? -1 : 1, MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("MPI_DATATYPE_NULL", "sendtype",
             crs(1, &self, 1, rank == last ? MPI_DATATYPE_NULL : MPI_INT, &recv_nnz, &src, &vals, 1));
  check_case("sendcount and recvcount disagree", "differ from recvcount",
             crs(1, &self, 1, MPI_INT, &recv_nnz, &src, &vals, rank == last ? 2 : 1));
  if (size > 1) {
    int twice[2] = {0, 0};
    check_case("a destination listed twice", "twice",
               MPIX_Alltoall_crs(rank == last ? 2 : 1, rank == last ? twice : &self, 0, MPI_INT, nullptr, &recv_nnz,
                                 &src, 0, MPI_INT, &vals, nullptr, c.comm));
  }
  int counts[1] = {rank == last ? -2 : 1}, displs[1] = {0};
  check_case("negative sendcounts", "sendcounts[0]=-2",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, &value, &recv_nnz, &recv_size, &src, &rcounts,
                                &rdispls, MPI_INT, &vals, nullptr, c.comm));
  counts[0] = 1;
  displs[0] = rank == last ? 1 : 0;
  check_case("a message beyond send_size", "send_size=1",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, &value, &recv_nnz, &recv_size, &src, &rcounts,
                                &rdispls, MPI_INT, &vals, nullptr, c.comm));
  displs[0] = 0;
  check_case("NULL sendvals with data", "sendvals is NULL",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, rank == last ? nullptr : &value, &recv_nnz,
                                &recv_size, &src, &rcounts, &rdispls, MPI_INT, &vals, nullptr, c.comm));
  // A message past the start of sendvals: its address is not computed from
  // MPI_IN_PLACE (the sanitizer's pointer-overflow check stopped the job).
  int pair[2] = {rank, rank};
  displs[0] = 1;
  check_case("MPI_IN_PLACE as sendvals", "sendvals is MPI_IN_PLACE",
             MPIX_Alltoallv_crs(1, 2, &self, counts, displs, MPI_INT, rank == last ? MPI_IN_PLACE : pair, &recv_nnz,
                                &recv_size, &src, &rcounts, &rdispls, MPI_INT, &vals, nullptr, c.comm));
  displs[0] = 0;
  check_case("MPI_IN_PLACE as sendvals (alltoall_crs)", "sendvals is MPI_IN_PLACE",
             MPIX_Alltoall_crs(1, &self, 1, MPI_INT, rank == last ? MPI_IN_PLACE : &value, &recv_nnz, &src, 1,
                               MPI_INT, &vals, nullptr, c.comm));
  // Refused by the sender before anything is read or sent; every rank fails with its code.
  const int huge = rank == last ? 1 << 29 : 1;  // 2 GiB of ints
  check_case("a message of 2 GiB", "2 GiB or more",
             crs(1, &self, huge, MPI_INT, &recv_nnz, &src, &vals, huge), MPIX_ERR_UNSUPPORTED);
  check_case("NULL rdispls", "rdispls is NULL",
             MPIX_Alltoallv_crs(1, 1, &self, counts, displs, MPI_INT, &value, &recv_nnz, &recv_size, &src, &rcounts,
                                rank == last ? nullptr : &rdispls, MPI_INT, &vals, nullptr, c.comm));
  // Receive types whose elements the library cannot lay out in the recvvals it allocates.
  {
    MPI_Datatype below, overlapping;
    const int one = 1;
    const MPI_Aint minus_four = -4;
    MPI_Type_create_hindexed(1, &one, &minus_four, MPI_INT, &below);  // true lower bound -4
    MPI_Type_create_resized(MPI_INT, 0, 2, &overlapping);              // true extent 4 > extent 2
    MPI_Type_commit(&below);
    MPI_Type_commit(&overlapping);
    check_case("recvtype with a negative true lower bound", "recvtype has a negative true lower bound (-4)",
               MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, rank == last ? below : MPI_INT,
                                 &vals, nullptr, c.comm),
               MPIX_ERR_UNSUPPORTED);
    check_case("recvtype whose elements overlap", "recvtype's elements overlap (true extent 4 > extent 2)",
               MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1,
                                 rank == last ? overlapping : MPI_INT, &vals, nullptr, c.comm),
               MPIX_ERR_UNSUPPORTED);
    MPI_Type_free(&below);
    MPI_Type_free(&overlapping);
  }
  // Different algorithms on different ranks.
  {
    harness::Info info{{"mpix_alltoall_crs_algorithm", rank == last ? "nonblocking" : "personalized"}};
    int rc = MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, info.info, c.comm);
    CHECK(all_ranks(size == 1 ? rc == MPIX_SUCCESS : rc == MPIX_ERR_ARG && message_has("different algorithms")));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(vals);
    }
  }
  // rma exists for alltoall_crs only; unknown names are refused by MPIX_Info_set.
  {
    harness::Info info;
    CHECK(MPIX_Info_set(info.info, "mpix_alltoallv_crs_algorithm", "rma") == MPIX_ERR_INFO_VALUE);
    CHECK(MPIX_Info_set(info.info, "mpix_alltoall_crs_algorithm", "rma") == MPIX_SUCCESS);
    CHECK(MPIX_Info_set(info.info, "mpix_alltoall_crs_algorithm", "pairwise") == MPIX_ERR_INFO_VALUE);
  }
  CHECK(MPIX_Alltoall_crs(0, nullptr, 0, MPI_INT, nullptr, &recv_nnz, &src, 0, MPI_INT, &vals, nullptr, nullptr) ==
        MPIX_ERR_ARG);

  // The communicator still works: a ring exchange.
  int right = (rank + 1) % size;
  recv_nnz = -1;
  int rc = MPIX_Alltoall_crs(1, &right, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, nullptr, c.comm);
  bool ok = rc == MPIX_SUCCESS && recv_nnz == 1 && src[0] == (rank - 1 + size) % size &&
            static_cast<int*>(vals)[0] == (rank - 1 + size) % size;
  CHECK(all_ranks(ok));
  if (rc == MPIX_SUCCESS) {
    MPIX_Free(src);
    MPIX_Free(vals);
  }
}

TEST_CASE("SDDE: a message larger than announced is an error on the receiver, not an overflow",
          "[sdde][errors]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  // alltoall_crs: rank 0 sends and receives 2 ints per message, the others 1. Its
  // right neighbour gets 2 ints where it expects 1 (with size 1: its own, fine).
  std::vector<int> data = {rank, rank};
  const int count = rank == 0 ? 2 : 1;
  for (const std::string& algorithm : names(mpix::kAlltoallCrs)) {
    harness::Info info{{"mpix_alltoall_crs_algorithm", algorithm}};
    int recv_nnz = -1, *src = nullptr;
    void* vals = nullptr;
    int rc = MPIX_Alltoall_crs(1, &right, count, MPI_INT, data.data(), &recv_nnz, &src, count, MPI_INT, &vals,
                               info.info, c.comm);
    INFO(algorithm << ": rc=" << rc << " " << MPIX_Last_error_message());
    bool good;
    if (size == 1)
      good = rc == MPIX_SUCCESS;
    else if (algorithm == "rma")  // the window's slot size is agreed: all ranks refuse
      good = rc == MPIX_ERR_ARG && message_has("different message sizes");
    else if (rank == 1 % size)  // receives 2 ints, recvcount 1
      good = rc == MPIX_ERR_ARG && message_has("recvcount is 1") && src == nullptr && vals == nullptr;
    else if (rank == 0)  // receives 1 int, recvcount 2
      good = rc == MPIX_ERR_ARG && message_has("recvcount is 2");
    else
      good = rc == MPIX_SUCCESS && recv_nnz == 1 && src[0] == left;
    CHECK(all_ranks(good));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(vals);
    }
  }
  // alltoallv_crs: recv_size passed in (mpix_recv_counts_known) smaller than what
  // arrives on rank 0 and larger on rank 1, so that the totals still agree: the
  // weighted sums of the known counts' check find it before any message, on every
  // rank, and the two name their own values.
  std::vector<int> three = {1, 2, 3};
  int counts = 3, displs = 0;
  for (const std::string& algorithm : names(mpix::kAlltoallvCrs)) {
    if (size == 1) break;
    harness::Info info{{"mpix_alltoallv_crs_algorithm", algorithm}, {"mpix_recv_counts_known", "true"}};
    int recv_nnz = 1, recv_size = rank == 0 ? 2 : rank == 1 ? 4 : 3;
    int *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
    void* vals = nullptr;
    int rc = MPIX_Alltoallv_crs(1, 3, &right, &counts, &displs, MPI_INT, three.data(), &recv_nnz, &recv_size, &src,
                                &rcounts, &rdispls, MPI_INT, &vals, info.info, c.comm);
    INFO(algorithm << ": rc=" << rc << " " << MPIX_Last_error_message());
    bool good = rank == 0   ? rc == MPIX_ERR_ARG && message_has("recv_size=2") && vals == nullptr
                : rank == 1 ? rc == MPIX_ERR_ARG && message_has("recv_size=4") && vals == nullptr
                            : rc == MPIX_ERR_ARG && message_has("on another rank differ from what is sent to it");
    CHECK(all_ranks(good));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(rcounts);
      MPIX_Free(rdispls);
      MPIX_Free(vals);
    }
  }
}

// A bad mpix_locality fails on every rank, naming the hint and the value; ranks that
// disagree fail on every rank too.
TEST_CASE("SDDE: a bad or disagreeing mpix_locality fails on every rank", "[sdde][errors][regions]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  int value = rank, self = rank, recv_nnz = -1;
  int* src = nullptr;
  void* vals = nullptr;
  harness::Info refused;
  CHECK(MPIX_Info_set(refused.info, "mpix_locality", "socket") == MPIX_ERR_INFO_VALUE);
  CHECK(message_has("mpix_locality=socket"));
  CHECK(message_has("expected node or region"));
  // Through the environment on one rank: that rank names it, the others learn of it.
  const int last = size - 1;
  const char* before = std::getenv("MPIX_LOCALITY");  // the meson suite 'regions' sets it
  const std::string saved = before ? before : "";
  if (rank == last) setenv("MPIX_LOCALITY", "sockets", 1);
  int rc = MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, nullptr, c.comm);
  const bool named = rank == last ? rc == MPIX_ERR_INFO_VALUE && message_has("MPIX_LOCALITY") &&
                                        message_has("=sockets") && message_has("expected node or region")
                                  : rc == MPIX_ERR_INFO_VALUE && message_has("another rank rejected");
  CHECK(all_ranks(named));
  if (size > 1) {
    // Rank 0 wrong as well, in another way: every rank returns the larger code.
    rc = MPIX_Alltoall_crs(rank == 0 ? -1 : 1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals,
                           nullptr, c.comm);
    const bool agreed = rc == MPIX_ERR_INFO_VALUE &&
                        (rank == 0 ? message_has("send_nnz=-1") && message_has("every rank returns invalid info value")
                         : rank == last ? message_has("MPIX_LOCALITY")
                                        : message_has("another rank rejected"));
    CHECK(all_ranks(agreed));
  }
  if (rank == last && before) setenv("MPIX_LOCALITY", saved.c_str(), 1);
  if (rank == last && !before) unsetenv("MPIX_LOCALITY");
  if (size > 1) {
    harness::Info info{{"mpix_locality", rank == last ? "region" : "node"}};
    rc = MPIX_Alltoall_crs(1, &self, 1, MPI_INT, &value, &recv_nnz, &src, 1, MPI_INT, &vals, info.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG && message_has("mpix_locality")));
    if (rc == MPIX_SUCCESS) {
      MPIX_Free(src);
      MPIX_Free(vals);
    }
  }
}
