/* Where in a program's life an interposed exchange is made, and what MPI promises
 * there (run by test_interpose.py, mode lifecycle, with and without the
 * interposer; every line printed must be the same):
 *   lifecycle world    MPI_Request_get_status on a persistent MPI_Alltoallv_init
 *                      request (MPI 4) leaves it active: the Waitany, Waitsome,
 *                      Testany or Wait after it complete it, and MPI_Start before
 *                      that is MPI_ERR_REQUEST; then a delete callback on
 *                      MPI_COMM_SELF, set after MPI_Init as a library's clean-up
 *                      is, which MPI_Finalize runs while MPI still works: it starts,
 *                      waits on and frees its persistent request and makes a
 *                      blocking MPI_Alltoall.
 *   lifecycle session  MPI 4 Sessions: a communicator made from a session's group,
 *                      without MPI_Init, MPI_Alltoall and MPI_Alltoallv on it.
 * Built without mpix. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int *send, *recv, *counts, *displs;
#if MPI_VERSION >= 4
static MPI_Request cleanup_request = MPI_REQUEST_NULL;
#endif

static void buffers(int size_) {
  send = malloc(size_ * sizeof(int));
  recv = malloc(size_ * sizeof(int));
  counts = malloc(size_ * sizeof(int));
  displs = malloc(size_ * sizeof(int));
  for (int p = 0; p < size_; ++p) {
    send[p] = rank * 100 + p;
    counts[p] = 1;
    displs[p] = p;
  }
}

/* Whether recv holds what every rank sent this one. */
static int received(void) {
  int right = 1;
  for (int p = 0; p < size; ++p) right = right && recv[p] == p * 100 + rank;
  memset(recv, 0xff, size * sizeof(int));
  return right;
}

static int cleanup(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  int rc = 0;
#if MPI_VERSION >= 4
  rc |= MPI_Start(&cleanup_request);
  rc |= MPI_Wait(&cleanup_request, MPI_STATUS_IGNORE);
  rc |= MPI_Request_free(&cleanup_request);
  printf("rank %d: finalize callback: persistent rc=%d right=%d\n", rank, rc, received());
#endif
  rc = MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
  printf("rank %d: finalize callback: blocking rc=%d right=%d\n", rank, rc, received());
  return MPI_SUCCESS;
}

static void world(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  buffers(size);
#if MPI_VERSION >= 4
  MPI_Request request;
  int rc = MPI_Alltoallv_init(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &request);
  const char* completions[] = {"waitany", "waitsome", "testany", "wait"};
  for (int k = 0; k < 4; ++k) {
    int flag = 0, index = -1, outcount = -1, indices[1];
    MPI_Status statuses[1];
    rc |= MPI_Start(&request);
    while (!flag) rc |= MPI_Request_get_status(request, &flag, MPI_STATUS_IGNORE);
    /* Complete but still active: get_status again says so, a start is refused. */
    flag = 0;
    rc |= MPI_Request_get_status(request, &flag, MPI_STATUS_IGNORE);
    const int start_rc = MPI_Start(&request);
    int start_class = MPI_SUCCESS;
    MPI_Error_class(start_rc, &start_class);
    if (k == 0) {
      rc |= MPI_Waitany(1, &request, &index, MPI_STATUS_IGNORE);
    } else if (k == 1) {
      rc |= MPI_Waitsome(1, &request, &outcount, indices, statuses);
      index = outcount == 1 ? indices[0] : -1;
    } else if (k == 2) {
      int done = 0;
      rc |= MPI_Testany(1, &request, &index, &done, MPI_STATUS_IGNORE);
      if (!done) index = -1;
    } else {
      rc |= MPI_Wait(&request, MPI_STATUS_IGNORE);
      index = 0;
    }
    printf("rank %d: get_status then %s: rc=%d flag=%d start refused=%d index=%d right=%d\n", rank,
           completions[k], rc, flag, start_class == MPI_ERR_REQUEST, index, received());
  }
  rc |= MPI_Request_free(&request);
  /* The clean-up's request, made before its callback is set. */
  rc |= MPI_Alltoallv_init(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &cleanup_request);
  printf("rank %d: persistent rc=%d\n", rank, rc);
#endif
  int keyval;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cleanup, &keyval, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
  MPI_Comm_free_keyval(&keyval);
  MPI_Finalize();
  printf("rank %d: finalized\n", rank);
}

#if MPI_VERSION >= 4
static void session(void) {
  MPI_Session session;
  MPI_Group group;
  MPI_Comm comm;
  int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
  rc |= MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
  rc |= MPI_Comm_create_from_group(group, "mpix.lifecycle", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  buffers(size);
  rc |= MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comm);
  printf("rank %d: session alltoall rc=%d right=%d\n", rank, rc, received());
  rc |= MPI_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, comm);
  printf("rank %d: session alltoallv rc=%d right=%d\n", rank, rc, received());
  MPI_Comm_free(&comm);
  MPI_Group_free(&group);
  rc |= MPI_Session_finalize(&session);
  printf("rank %d: session finalized rc=%d\n", rank, rc);
}
#endif

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "session") == 0) {
#if MPI_VERSION >= 4
    session();
#endif
  } else {
    world(argc, argv);
  }
  free(send);
  free(recv);
  free(counts);
  free(displs);
  return 0;
}
