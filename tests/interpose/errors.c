/* Errors of interposed calls, as MPI reports them (test_interpose.py mode errors):
 * each line gives the class a call returned under a counting error handler
 * (MPI_Comm_create_errhandler) and how often, and with what class, that handler was
 * called; the lines must be the same with the interposer as without it. The handler
 * is set on the communicator and on MPI_COMM_WORLD and MPI_COMM_SELF: MPICH 4.0.2
 * raises MPI_Start's errors on MPI_COMM_WORLD, the interposer on the request's
 * communicator.
 *  - MPI_Alltoall with aliased buffers, which mpix leaves to MPI (MPICH: MPI_ERR_BUFFER;
 *    Open MPI 4.1 takes them);
 *  - where the MPI has MPI_Alltoall_init (MPI-4): MPI_Start on an active request,
 *    the same after the program freed the request's communicator, and MPI_Start on
 *    a copy of a freed request's handle (raised on MPI_COMM_WORLD or MPI_COMM_SELF,
 *    both counted).
 * With the argument "fatal", only the start on an active request, under MPI's
 * default handler: the run must end there ("survived" is printed otherwise).
 * With the argument "one-rank", run with the interposer only: MPI_Alltoall,
 * MPI_Alltoallv and (MPI-4) MPI_Alltoall_init with a negative count on rank 1 alone,
 * which MPI refuses there (MPI_ERR_COUNT, printed for the check) and leaves the other
 * ranks waiting in its exchange; an MPI_Alltoallv whose rank 1 expects less than
 * rank 0 sends it (MPI_ERR_TRUNCATE); then a right MPI_Alltoall ("after", with
 * whether its blocks arrived). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int world_rank, calls, seen_class = -1;

static void count_call(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++calls;
  MPI_Error_class(*code, &seen_class);
}

static void report(const char* what, int rc, int calls_before) {
  int error_class = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
  printf("rank %d %s class=%d handler_calls=%d handler_class=%d\n", world_rank, what, error_class,
         calls - calls_before, calls > calls_before ? seen_class : -1);
}

static int finish(MPI_Comm* comm, MPI_Errhandler* counter) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_free(comm);
  MPI_Errhandler_free(counter);
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int fatal = argc > 1 && strcmp(argv[1], "fatal") == 0;
  MPI_Errhandler counter;
  MPI_Comm_create_errhandler(count_call, &counter);
  int send[64], recv[64];
  for (int i = 0; i < 64; ++i) send[i] = world_rank * 100 + i;
  int before, rc;

  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (!fatal) {
    MPI_Comm_set_errhandler(comm, counter);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, counter);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, counter);
  }

  if (argc > 1 && strcmp(argv[1], "one-rank") == 0) {
    const int bad = world_rank == 1 ? -1 : 1;
    printf("rank %d MPI_ERR_COUNT=%d\n", world_rank, MPI_ERR_COUNT);
    printf("rank %d MPI_ERR_TRUNCATE=%d\n", world_rank, MPI_ERR_TRUNCATE);
    before = calls;
    rc = MPI_Alltoall(send, bad, MPI_INT, recv, 1, MPI_INT, comm);
    report("one-rank-alltoall", rc, before);
    int counts[64], displs[64];
    for (int i = 0; i < size; ++i) counts[i] = 1, displs[i] = i;
    counts[0] = bad;
    before = calls;
    rc = MPI_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, comm);
    report("one-rank-alltoallv", rc, before);
    /* Rank 1 expects nothing from rank 0, which sends it one int: MPI truncates on
     * rank 1 and may leave rank 0 waiting (Open MPI 4.1 does). */
    int send_counts[64], recv_counts[64];
    for (int i = 0; i < size; ++i) send_counts[i] = recv_counts[i] = 1;
    if (world_rank == 1) recv_counts[0] = 0;
    before = calls;
    rc = MPI_Alltoallv(send, send_counts, displs, MPI_INT, recv, recv_counts, displs, MPI_INT, comm);
    report("one-rank-alltoallv-truncated", rc, before);
#if MPI_VERSION >= 4
    MPI_Request request = MPI_REQUEST_NULL;
    before = calls;
    rc = MPI_Alltoall_init(send, bad, MPI_INT, recv, 1, MPI_INT, comm, MPI_INFO_NULL, &request);
    report("one-rank-alltoall-init", rc, before);
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
#endif
    rc = MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comm);
    int right = 1;
    for (int i = 0; i < size; ++i) right &= recv[i] == i * 100 + world_rank;
    printf("rank %d after rc=%d %s\n", world_rank, rc, right ? "right" : "wrong");
    return finish(&comm, &counter);
  }

  if (!fatal) {
    before = calls;
    rc = MPI_Alltoall(send, 1, MPI_INT, send, 1, MPI_INT, comm);
    report("alltoall-aliased", rc, before);
  }

#if MPI_VERSION >= 4
  MPI_Request request;
  MPI_Alltoall_init(send, 2, MPI_INT, recv, 2, MPI_INT, comm, MPI_INFO_NULL, &request);
  MPI_Start(&request);
  before = calls;
  rc = MPI_Start(&request);
  if (fatal) printf("rank %d survived\n", world_rank);
  report("start-active", rc, before);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Request_free(&request);

  /* The request outlives its communicator, whose handler MPI still calls. */
  MPI_Comm gone;
  MPI_Comm_dup(MPI_COMM_WORLD, &gone);
  MPI_Comm_set_errhandler(gone, counter);
  MPI_Alltoall_init(send, 2, MPI_INT, recv, 2, MPI_INT, gone, MPI_INFO_NULL, &request);
  MPI_Comm_free(&gone);
  MPI_Start(&request);
  before = calls;
  rc = MPI_Start(&request);
  report("start-active-comm-freed", rc, before);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Request_free(&request);

  MPI_Alltoall_init(send, 2, MPI_INT, recv, 2, MPI_INT, comm, MPI_INFO_NULL, &request);
  MPI_Request copy = request;
  MPI_Request_free(&request);
  before = calls;
  rc = MPI_Start(&copy);
  report("start-freed-copy", rc, before);
#else
  (void)recv;
  (void)size;
  if (world_rank == 0) fprintf(stderr, "errors: no MPI_Alltoall_init\n");
  if (fatal) printf("rank %d survived\n", world_rank);
#endif

  return finish(&comm, &counter);
}
