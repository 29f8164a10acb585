/* An ordinary MPI program, built without any mpix header or library: the tests of
 * libmpix_interpose.so run it with and without LD_PRELOAD and compare what it
 * prints. Each rank prints one line per exchange: a checksum of its receive
 * buffer (guards included) and the return code. Exchanges: MPI_Alltoall and
 * MPI_Alltoallv, in place and not, contiguous and strided (vector) types, on
 * MPI_COMM_WORLD, a split and a duplicate; the persistent MPI_Alltoall(v)_init
 * where the MPI has them (a datatype freed after init; Start/Wait,
 * Startall/Waitall beside point-to-point requests, Test loops); an intercommunicator (mpix leaves it to MPI); aliased
 * buffers (an error MPI reports). The communicators are freed in the order the
 * argument names ("forward" or "reverse"); one split is never freed, so that
 * MPI_Finalize must clean up after it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 8

static int world_rank;

static unsigned long long checksum(const int* values, int n) {
  unsigned long long hash = 1469598103934665603ull;
  for (int i = 0; i < n; ++i) hash = (hash ^ (unsigned)values[i]) * 1099511628211ull;
  return hash;
}

static void print(const char* comm_name, const char* what, int rc, const int* buffer, int n) {
  printf("rank %d %s %s rc=%s sum=%016llx\n", world_rank, comm_name, what, rc == MPI_SUCCESS ? "ok" : "error",
         checksum(buffer, n));
}

/* Elements rank r sends to rank j (the same as r receives from j: in place works). */
static int count_between(int r, int j) { return (r + j) % 4; }

static void fill(int* v, int n, int seed) {
  for (int i = 0; i < n; ++i) v[i] = seed * 100003 + i;
}

/* Alltoallv layout of `rank` in a communicator of `size`, with a gap of one element
 * between blocks, blocks in reverse order. Returns the buffer length in elements. */
static int layout(int rank, int size, int* counts, int* displs) {
  int end = 0;
  for (int j = size - 1; j >= 0; --j) {
    counts[j] = count_between(rank, j);
    displs[j] = end + 1;
    end += counts[j] + 1;
  }
  return end + 1;
}

static void dense(MPI_Comm comm, const char* name) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int block = 3, n = size * block * 2 + 2 * GUARD;
  int* send = malloc(n * sizeof(int));
  int* recv = malloc(n * sizeof(int));
  int* counts = malloc(size * sizeof(int));
  int* displs = malloc(size * sizeof(int));
  char what[64];

  for (int in_place = 0; in_place < 2; ++in_place) {
    fill(send, n, rank + 1);
    fill(recv, n, -rank - 1);
    memcpy(recv + GUARD, send, size * block * sizeof(int));
    int rc = MPI_Alltoall(in_place ? MPI_IN_PLACE : (void*)send, block, MPI_INT, recv + GUARD, block, MPI_INT, comm);
    snprintf(what, sizeof what, "alltoall%s", in_place ? "-in-place" : "");
    print(name, what, rc, recv, n);

    int length = layout(rank, size, counts, displs);
    fill(send, n, rank + 7);
    fill(recv, n, -rank - 7);
    memcpy(recv + GUARD, send, length * sizeof(int));
    rc = MPI_Alltoallv(in_place ? MPI_IN_PLACE : (void*)send, in_place ? NULL : counts, in_place ? NULL : displs,
                       in_place ? MPI_DATATYPE_NULL : MPI_INT, recv + GUARD, counts, displs, MPI_INT, comm);
    snprintf(what, sizeof what, "alltoallv%s", in_place ? "-in-place" : "");
    print(name, what, rc, recv, n);
  }

  /* Every other element: a strided datatype on both sides. */
  MPI_Datatype strided;
  MPI_Type_vector(block, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  fill(send, n, rank + 11);
  fill(recv, n, -rank - 11);
  int rc = MPI_Alltoall(send, 1, strided, recv + GUARD, 1, strided, comm);
  print(name, "alltoall-vector", rc, recv, n);
  MPI_Type_free(&strided);

  free(send);
  free(recv);
  free(counts);
  free(displs);
}

#if MPI_VERSION >= 4
static void persistent(MPI_Comm comm, const char* name) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int block = 2, n = size * block * 2 + 2 * GUARD;
  int* send = malloc(n * sizeof(int));
  int* recv = malloc(n * sizeof(int));
  int* vsend = malloc(n * sizeof(int));
  int* vrecv = malloc(n * sizeof(int));
  int* counts = malloc(size * sizeof(int));
  int* displs = malloc(size * sizeof(int));
  layout(rank, size, counts, displs);
  MPI_Request requests[4];
  /* A block is one element of a derived type, freed while the request lives (MPI
   * allows it; the request keeps working). */
  MPI_Datatype block_type;
  MPI_Type_contiguous(block, MPI_INT, &block_type);
  MPI_Type_commit(&block_type);
  int rc = MPI_Alltoall_init(send, 1, block_type, recv + GUARD, 1, block_type, comm, MPI_INFO_NULL, &requests[0]);
  MPI_Type_free(&block_type);
  rc |= MPI_Alltoallv_init(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, vrecv + GUARD, counts, displs, MPI_INT, comm,
                           MPI_INFO_NULL, &requests[1]);
  char what[64];
  for (int start = 0; start < 3; ++start) {
    fill(send, n, rank + 20 * start);
    fill(recv, n, -rank);
    fill(vrecv, n, rank + 30 * start);
    int token = rank, got = -1;
    if (start == 0) {  /* Start and Wait */
      rc |= MPI_Start(&requests[0]);
      rc |= MPI_Start(&requests[1]);
      rc |= MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
      rc |= MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    } else if (start == 1) {  /* Startall, Waitall beside point-to-point requests */
      rc |= MPI_Startall(2, requests);
      rc |= MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 5, comm, &requests[2]);
      rc |= MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 5, comm, &requests[3]);
      MPI_Status statuses[4];
      rc |= MPI_Waitall(4, requests, statuses);
      if (got != (rank + size - 1) % size || statuses[2].MPI_SOURCE != (rank + size - 1) % size) rc |= 1;
      if (requests[0] == MPI_REQUEST_NULL || requests[2] != MPI_REQUEST_NULL) rc |= 1;
    } else {  /* Test loops */
      rc |= MPI_Startall(2, requests);
      for (int done = 0; !done;) rc |= MPI_Test(&requests[1], &done, MPI_STATUS_IGNORE);
      /* Not MPI_Testall: MPICH 4.0.2's returns MPI_ERR_IN_STATUS for a completed
       * persistent collective. */
      int index = -1, outcount = 0;
      for (int done = 0; !done;) rc |= MPI_Testany(1, requests, &index, &done, MPI_STATUS_IGNORE);
      if (index != 0) rc |= 1;
      rc |= MPI_Start(&requests[0]);
      MPI_Status status[1];
      while (outcount == 0) rc |= MPI_Testsome(1, requests, &outcount, &index, status);
      if (outcount != 1 || index != 0) rc |= 1;
    }
    snprintf(what, sizeof what, "alltoall-init-%d", start);
    print(name, what, rc, recv, n);
    snprintf(what, sizeof what, "alltoallv-init-in-place-%d", start);
    print(name, what, rc, vrecv, n);
  }
  rc |= MPI_Request_free(&requests[0]);
  rc |= MPI_Request_free(&requests[1]);
  print(name, "init-free", rc, &rc, 0);
  free(send);
  free(recv);
  free(vsend);
  free(vrecv);
  free(counts);
  free(displs);
}
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reverse = argc > 1 && strcmp(argv[1], "reverse") == 0;

  MPI_Comm half, dup, kept;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2, size - world_rank, &kept);
  const char* half_name = world_rank % 2 ? "half-odd" : "half-even";
  const char* kept_name = world_rank < 2 ? "kept-low" : "kept-high";

  MPI_Comm comms[] = {MPI_COMM_WORLD, half, dup, kept};
  const char* names[] = {"world", half_name, "dup", kept_name};
  for (int i = 0; i < 4; ++i) dense(comms[i], names[i]);
#if MPI_VERSION >= 4
  if (world_rank == 0) fprintf(stderr, "exchange: persistent collectives\n");
  persistent(MPI_COMM_WORLD, "world");
  persistent(half, half_name);
#endif

  /* Between the even and the odd ranks: mpix leaves intercommunicators to MPI. */
  if (size >= 2) {
    MPI_Comm inter;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, world_rank % 2 ? 0 : 1, 9, &inter);
    int remote;
    MPI_Comm_remote_size(inter, &remote);
    int* send = malloc(remote * sizeof(int));
    int* recv = malloc(remote * sizeof(int));
    for (int i = 0; i < remote; ++i) send[i] = world_rank * 100 + i;
    int rc = MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, inter);
    print("inter", "alltoall", rc, recv, remote);
    free(send);
    free(recv);
    MPI_Comm_free(&inter);
  }

  /* Aliased buffers are erroneous: MPI reports it, with or without mpix. */
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int* same = calloc(size, sizeof(int));
  int rc = MPI_Alltoall(same, 1, MPI_INT, same, 1, MPI_INT, dup);
  print("dup", "alltoall-aliased", rc, same, 0);
  free(same);

  if (reverse) {
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
  } else {
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
  }
  MPI_Finalize();
  return 0;
}
