// Bad input to the SDDE (MPIX_Alltoall(v)_crs) under MPI's default error handlers,
// as test_robust.cpp for the dense calls: recv_nnz and recv_size are outputs unless
// mpix_recv_counts_known says otherwise, wrong known totals and uncommitted types
// fail on every rank instead of hanging, and messages too large are refused before
// anything is sent.
#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/registry.hpp"
#include "harness.hpp"

using harness::all_ranks;
using harness::Comm;
using harness::message_has;

namespace {

// Rank r sends one int to r+1 and r+2 (fewer when there are fewer ranks).
struct SparseExchange {
  int size = harness::world_size(), rank = harness::world_rank();
  std::vector<int> dest, vals, counts, displs;
  SparseExchange() {
    for (int d = 1; d <= std::min(2, size - 1); ++d) {
      dest.push_back((rank + d) % size);
      vals.push_back(rank * 100 + dest.back());
      counts.push_back(1);
      displs.push_back((int)displs.size());
    }
  }
  int senders() const { return (int)dest.size(); }
  // Every source r - d sent rank*... : the values are checked by source.
  bool correct(int nnz, const int* src, const int* recvvals) const {
    if (nnz != senders()) return false;
    for (int i = 0; i < nnz; ++i)
      if (recvvals[i] != src[i] * 100 + rank) return false;
    return true;
  }
};

}  // namespace

TEST_CASE("SDDE: recv_nnz and recv_size are outputs; values passed in are ignored", "[sdde]") {
  Comm c;
  SparseExchange ex;
  for (int garbage : {-1, 0, 32000}) {
    for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallCrs)) {
      INFO("alltoall_crs " << name << ", recv_nnz passed in " << garbage);
      harness::Info info{{"mpix_alltoall_crs_algorithm", name}};
      int recv_nnz = garbage, *src = nullptr;
      void* recvvals = nullptr;
      int rc = MPIX_Alltoall_crs(ex.senders(), ex.dest.data(), 1, MPI_INT, ex.vals.data(), &recv_nnz, &src, 1,
                                 MPI_INT, &recvvals, info.info, c.comm);
      CHECK(all_ranks(rc == MPIX_SUCCESS));
      if (rc == MPIX_SUCCESS) CHECK(all_ranks(ex.correct(recv_nnz, src, (const int*)recvvals)));
      MPIX_Free(src);
      MPIX_Free(recvvals);
    }
    for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallvCrs)) {
      INFO("alltoallv_crs " << name << ", recv_nnz and recv_size passed in " << garbage);
      harness::Info info{{"mpix_alltoallv_crs_algorithm", name}};
      int recv_nnz = garbage, recv_size = garbage, *src = nullptr, *counts = nullptr, *displs = nullptr;
      void* recvvals = nullptr;
      int rc = MPIX_Alltoallv_crs(ex.senders(), ex.senders(), ex.dest.data(), ex.counts.data(), ex.displs.data(),
                                  MPI_INT, ex.vals.data(), &recv_nnz, &recv_size, &src, &counts, &displs, MPI_INT,
                                  &recvvals, info.info, c.comm);
      CHECK(all_ranks(rc == MPIX_SUCCESS));
      if (rc == MPIX_SUCCESS) {
        CHECK(recv_size == ex.senders());
        std::vector<int> in_order(recv_nnz);
        for (int i = 0; i < recv_nnz; ++i) in_order[i] = ((const int*)recvvals)[displs[i]];
        CHECK(all_ranks(ex.correct(recv_nnz, src, in_order.data())));
      }
      for (void* p : {(void*)src, (void*)counts, (void*)displs, recvvals}) MPIX_Free(p);
    }
  }
}

TEST_CASE("SDDE: mpix_recv_counts_known=true uses the values, and wrong totals fail everywhere", "[sdde]") {
  Comm c;
  SparseExchange ex;
  harness::Info known{{"mpix_recv_counts_known", "true"}};
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallCrs)) {
    INFO("alltoall_crs " << name);
    known.set("mpix_alltoall_crs_algorithm", name);
    for (int wrong : {0, 1}) {
      int recv_nnz = ex.senders() + (wrong && ex.rank == 0 ? 31999 : 0), *src = nullptr;
      void* recvvals = nullptr;
      int rc = MPIX_Alltoall_crs(ex.senders(), ex.dest.data(), 1, MPI_INT, ex.vals.data(), &recv_nnz, &src, 1,
                                 MPI_INT, &recvvals, known.info, c.comm);
      if (wrong) {
        CHECK(all_ranks(rc == MPIX_ERR_ARG));
        // The wrong rank is named; the others are told the totals.
        CHECK((ex.rank == 0 ? message_has("but recv_nnz=") && message_has("and this rank is sent ")
                            : message_has("mpix_recv_counts_known=true, but the recv_nnz passed in add up to")));
      } else {
        CHECK(all_ranks(rc == MPIX_SUCCESS));
        if (rc == MPIX_SUCCESS) CHECK(all_ranks(ex.correct(recv_nnz, src, (const int*)recvvals)));
      }
      MPIX_Free(src);
      MPIX_Free(recvvals);
    }
    int negative = -1, *src = nullptr;
    void* recvvals = nullptr;
    CHECK(all_ranks(MPIX_Alltoall_crs(ex.senders(), ex.dest.data(), 1, MPI_INT, ex.vals.data(), &negative, &src,
                                      1, MPI_INT, &recvvals, known.info, c.comm) == MPIX_ERR_ARG));
  }
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallvCrs)) {
    INFO("alltoallv_crs " << name);
    known.set("mpix_alltoallv_crs_algorithm", name);
    int recv_nnz = ex.senders(), recv_size = ex.senders() + (ex.rank == 0 ? 5 : 0);
    int *src = nullptr, *counts = nullptr, *displs = nullptr;
    void* recvvals = nullptr;
    int rc = MPIX_Alltoallv_crs(ex.senders(), ex.senders(), ex.dest.data(), ex.counts.data(), ex.displs.data(),
                                MPI_INT, ex.vals.data(), &recv_nnz, &recv_size, &src, &counts, &displs, MPI_INT,
                                &recvvals, known.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    CHECK((ex.rank == 0 ? message_has("but recv_size=") && message_has("of 4 bytes)")
                        : message_has("the recv_size passed in add up to")));
  }
}

TEST_CASE("SDDE: known counts wrong on two ranks by amounts that cancel fail everywhere", "[sdde][hang]") {
  // The totals agree, so a check of totals alone let rank 0 wait for ever for a
  // message that never comes; the weighted sums find it, and rank 0 is named.
  Comm c;
  SparseExchange ex;
  if (ex.size < 2) return;
  harness::Info known{{"mpix_recv_counts_known", "true"}};
  const int error = ex.rank == 0 ? 1 : ex.rank == 1 ? -1 : 0;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallCrs)) {
    INFO("alltoall_crs " << name);
    known.set("mpix_alltoall_crs_algorithm", name);
    int recv_nnz = ex.senders() + error, *src = nullptr;
    void* recvvals = nullptr;
    int rc = MPIX_Alltoall_crs(ex.senders(), ex.dest.data(), 1, MPI_INT, ex.vals.data(), &recv_nnz, &src, 1, MPI_INT,
                               &recvvals, known.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    if (ex.rank == 0)
      CHECK(message_has(mpix::format("MPIX_Alltoall_crs: mpix_recv_counts_known=true, but recv_nnz=%d was passed in, "
                                     "and this rank is sent %s", ex.senders() + 1,
                                     mpix::counted(ex.senders(), "message").c_str()).c_str()));
    else if (ex.rank > 1)
      CHECK(message_has("the recv_nnz or recv_size passed in on another rank differ from what is sent to it"));
    MPIX_Free(src);
    MPIX_Free(recvvals);
  }
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallvCrs)) {
    INFO("alltoallv_crs " << name);
    known.set("mpix_alltoallv_crs_algorithm", name);
    int recv_nnz = ex.senders(), recv_size = ex.senders() + error;
    int *src = nullptr, *counts = nullptr, *displs = nullptr;
    void* recvvals = nullptr;
    int rc = MPIX_Alltoallv_crs(ex.senders(), ex.senders(), ex.dest.data(), ex.counts.data(), ex.displs.data(),
                                MPI_INT, ex.vals.data(), &recv_nnz, &recv_size, &src, &counts, &displs, MPI_INT,
                                &recvvals, known.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    if (ex.rank == 1)
      CHECK(message_has(mpix::format("recv_size=%d (%s) was passed in, and this rank is sent %s (%s of 4 bytes)",
                                     ex.senders() - 1, mpix::counted(4 * (ex.senders() - 1), "byte").c_str(),
                                     mpix::counted(4 * ex.senders(), "byte").c_str(),
                                     mpix::counted(ex.senders(), "element").c_str())
                            .c_str()));
    // Nothing is left in flight: a correct call works.
    recv_size = ex.senders();
    rc = MPIX_Alltoallv_crs(ex.senders(), ex.senders(), ex.dest.data(), ex.counts.data(), ex.displs.data(), MPI_INT,
                            ex.vals.data(), &recv_nnz, &recv_size, &src, &counts, &displs, MPI_INT, &recvvals,
                            known.info, c.comm);
    CHECK(all_ranks(rc == MPIX_SUCCESS));
    for (void* p : {(void*)src, (void*)counts, (void*)displs, recvvals}) MPIX_Free(p);
  }
}

TEST_CASE("SDDE: an uncommitted datatype on one rank fails on every rank", "[sdde][hang]") {
  Comm c;
  SparseExchange ex;
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(1, MPI_INT, &uncommitted);
  const MPI_Datatype type = ex.rank == (ex.size > 1 ? 1 : 0) ? uncommitted : MPI_INT;
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallCrs)) {
    INFO("alltoall_crs " << name);
    harness::Info info{{"mpix_alltoall_crs_algorithm", name}};
    int recv_nnz = 0, *src = nullptr;
    void* recvvals = nullptr;
    int rc = MPIX_Alltoall_crs(ex.senders(), ex.dest.data(), 1, type, ex.vals.data(), &recv_nnz, &src, 1, MPI_INT,
                               &recvvals, info.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
    CHECK(all_ranks(src == nullptr && recvvals == nullptr));
  }
  for (const std::string& name : mpix::algorithm_names(mpix::kAlltoallvCrs)) {
    INFO("alltoallv_crs " << name);
    harness::Info info{{"mpix_alltoallv_crs_algorithm", name}};
    int recv_nnz = 0, recv_size = 0, *src = nullptr, *counts = nullptr, *displs = nullptr;
    void* recvvals = nullptr;
    int rc = MPIX_Alltoallv_crs(ex.senders(), ex.senders(), ex.dest.data(), ex.counts.data(), ex.displs.data(),
                                MPI_INT, ex.vals.data(), &recv_nnz, &recv_size, &src, &counts, &displs, type,
                                &recvvals, info.info, c.comm);
    CHECK(all_ranks(rc == MPIX_ERR_ARG));
  }
  MPI_Type_free(&uncommitted);
}

TEST_CASE("SDDE: a message of 4 GiB is refused before anything is sent", "[sdde]") {
  Comm c;
  const int size = harness::world_size(), rank = harness::world_rank();
  if (size < 2) return;
  MPI_Datatype mib;
  MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib);
  MPI_Type_commit(&mib);
  char small[16] = {0};  // never read: the call fails before sending
  for (const char* name : {"personalized", "nonblocking"}) {
    INFO("algorithm " << name);
    harness::Info info{{"mpix_alltoall_crs_algorithm", name}};
    int dest = (rank + 1) % size, recv_nnz = 0, *src = nullptr;
    void* recvvals = nullptr;
    // Rank 0 sends 4096 MiB to rank 1; the others send nothing.
    int rc = MPIX_Alltoall_crs(rank == 0 ? 1 : 0, &dest, 4096, mib, small, &recv_nnz, &src, 4096, mib, &recvvals,
                               info.info, c.comm);
    if (rank == 0) {
      CHECK(rc == MPIX_ERR_UNSUPPORTED);
      CHECK(message_has("MPIX_Alltoall_crs: the message to rank 1 (dest[0]) has 4294967296 bytes"));
    }
    CHECK(all_ranks(rc == MPIX_ERR_UNSUPPORTED));  // the code spread by the agreement
  }
  MPI_Type_free(&mib);
}
