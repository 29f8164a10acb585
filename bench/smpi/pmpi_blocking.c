/* Linked into bench/simulate's own copy of mpix-bench (build-smpi/bench/mpix-bench),
 * never into the library. Only calls on a communicator as large as MPI_COMM_WORLD
 * are affected; others (node_aware's node-local phase, for example) go to SMPI's
 * MPI_Ialltoall(v) unchanged.
 *
 * 1. mpix's `pmpi` algorithm makes MPI's blocking MPI_Alltoall(v) in a blocking call
 *    (where every rank's counts fit the int call); a persistent plan (mpix-bench's
 *    persistent column) starts MPI_Ialltoall(v) and waits for it. SimGrid 3.32
 *    implements the non-blocking collectives one fixed way (every send and receive
 *    posted at once) and applies the smpi/alltoall and smpi/alltoallv selectors
 *    (ompi, mpich, mvapich2, impi, bruck, pair, ring, ...) only to the blocking
 *    calls. So that a `pmpi` started this way (by `auto`, or persistent) runs the
 *    implementation the selector names, these definitions take the place of SMPI's
 *    (its MPI_ functions are weak symbols for this very purpose, the PMPI profiling
 *    interface): they call the blocking PMPI_Alltoall(v) and return a null request,
 *    which MPI_Wait completes at once. The time of a start plus wait is then the
 *    time of the blocking call. The peers' rows (smpi:NAME, mpix-bench's
 *    peer:alltoallv) call MPI_Alltoall(v) directly and do not come here.
 * 2. mpix-bench runs `pmpi` first in every invocation, as the baseline of its
 *    speedup column, and a linear exchange at 1024 simulated ranks costs minutes of
 *    simulation. With MPIX_BENCH_PMPI=skip in the environment mpix-bench leaves its
 *    `pmpi` row out (tools/bench/dense.cpp); bench/simulate sets it for every
 *    invocation. A `pmpi` that `auto` chooses still runs here, through the
 *    selector, and moves the data: the variable only drops the baseline row, never
 *    a call.
 *
 * The program is linked with -Wl,-Bsymbolic-functions, so that its own calls bind
 * to these definitions whatever order the loader searches in. */
#include <mpi.h>

/* Whether a call is mpix-bench's `pmpi` (world-sized) rather than one of a
 * sub-communicator's. */
static int world_sized(MPI_Comm comm) {
  int size = 0, world = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  return size == world;
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!world_sized(comm))
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  *request = MPI_REQUEST_NULL;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Ialltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                   void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  if (!world_sized(comm))
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  *request = MPI_REQUEST_NULL;
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}
