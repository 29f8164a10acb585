/* Forming the communication package of a distributed sparse matrix-vector product
 * with MPIX_Alltoallv_crs, then using it.
 *
 * The rows of A (and the entries of x in y = A x) are split in contiguous blocks
 * over the ranks. Each rank knows which entries of x its rows need from other ranks
 * (its off-process columns), but not which of its own entries other ranks need:
 * that is the sparse dynamic data exchange. Every rank sends each owner the list of
 * columns it needs from it; what a rank receives is its send side: for each
 * requesting rank, the indices of x to send it at every product.
 *
 *   mpicc.mpich spmv_pattern.c $(pkg-config --cflags --libs mpix) -lm -o spmv_pattern
 *   mpiexec.mpich -n 4 ./spmv_pattern matrix.mtx [algorithm]
 *   (mpix outside the loader's default path: see alltoallv_basic.c)
 *
 * Any Matrix Market file does; the install has west0132.mtx beside this file
 * (HB/west0132 of the SuiteSparse Matrix Collection, https://sparse.tamu.edu).
 *
 * The optional algorithm is one of MPIX_Alltoallv_crs's (personalized, nonblocking,
 * personalized_loc, nonblocking_loc); without it the library chooses. The product is
 * checked against a serial one on every rank; the exit status is 0 if it matches.
 */
#include <math.h>
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int rows, cols;
  int nnz;           /* this rank's entries */
  int *row, *col;    /* global indices */
  double* val;
} LocalMatrix;

/* Block partition: rank r owns [first(n, P, r), first(n, P, r + 1)). */
static int first(int n, int size, int r) { return (int)((long long)n * r / size); }
static int owner(int n, int size, int i) {
  int r = (int)((long long)i * size / n);
  while (first(n, size, r + 1) <= i) ++r;
  while (first(n, size, r) > i) --r;
  return r;
}

/* The value of x[j]: known everywhere, so that every rank can check its rows. */
static double x_value(int j) { return 1.0 + 0.5 * (j % 7); }

/* Reads the entries of rows [r0, r1) of a Matrix Market coordinate file (pattern
 * entries are 1; symmetric files are expanded). Returns 0 on success. */
static int read_rows(const char* path, int rank, int size, LocalMatrix* a) {
  FILE* f = fopen(path, "r");
  if (!f) return 1;
  char line[1024];
  if (!fgets(line, sizeof line, f) || strncmp(line, "%%MatrixMarket matrix coordinate", 32) != 0) {
    fclose(f);
    return 1;
  }
  int symmetric = strstr(line, "symmetric") != NULL, pattern = strstr(line, "pattern") != NULL;
  do {
    if (!fgets(line, sizeof line, f)) {
      fclose(f);
      return 1;
    }
  } while (line[0] == '%');
  long long entries = 0;
  if (sscanf(line, "%d %d %lld", &a->rows, &a->cols, &entries) != 3 || a->rows < 1 || a->cols < 1 || entries < 0 ||
      (symmetric && a->rows != a->cols)) {
    fclose(f);
    return 1;
  }
  int r0 = first(a->rows, size, rank), r1 = first(a->rows, size, rank + 1);
  int capacity = 16;
  a->nnz = 0;
  a->row = malloc(capacity * sizeof(int));
  a->col = malloc(capacity * sizeof(int));
  a->val = malloc(capacity * sizeof(double));
  long long k = 0;
  for (; k < entries && fgets(line, sizeof line, f); ++k) {
    int i = 0, j = 0;
    double v = 1.0;
    /* An entry outside the matrix would index past the arrays sized by it. */
    if (sscanf(line, "%d %d %lf", &i, &j, &v) < 2 || i < 1 || j < 1 || i > a->rows || j > a->cols) break;
    if (pattern) v = 1.0;
    for (int mirror = 0; mirror < (symmetric && i != j ? 2 : 1); ++mirror) {
      int gi = (mirror ? j : i) - 1, gj = (mirror ? i : j) - 1;
      if (gi < r0 || gi >= r1) continue;
      if (a->nnz == capacity) {
        capacity *= 2;
        a->row = realloc(a->row, capacity * sizeof(int));
        a->col = realloc(a->col, capacity * sizeof(int));
        a->val = realloc(a->val, capacity * sizeof(double));
      }
      a->row[a->nnz] = gi;
      a->col[a->nnz] = gj;
      a->val[a->nnz] = v;
      a->nnz++;
    }
  }
  fclose(f);
  if (k < entries) { /* a bad entry, or fewer than announced */
    free(a->row);
    free(a->col);
    free(a->val);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: spmv_pattern matrix.mtx [algorithm]\n");
    MPI_Finalize();
    return 2;
  }
  LocalMatrix a;
  int bad = read_rows(argv[1], rank, size, &a), any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) {
    if (rank == 0) fprintf(stderr, "spmv_pattern: cannot read %s as a Matrix Market coordinate file\n", argv[1]);
    MPI_Finalize();
    return 2;
  }
  const int r0 = first(a.rows, size, rank), r1 = first(a.rows, size, rank + 1);
  const int c0 = first(a.cols, size, rank), c1 = first(a.cols, size, rank + 1);

  /* The receive side of the package: the off-process columns, by owner, sorted. */
  char* needed = calloc((size_t)a.cols, 1);
  for (int k = 0; k < a.nnz; ++k)
    if (a.col[k] < c0 || a.col[k] >= c1) needed[a.col[k]] = 1;
  int* per_owner = calloc((size_t)size, sizeof(int));
  int halo = 0;
  for (int j = 0; j < a.cols; ++j)
    if (needed[j]) {
      per_owner[owner(a.cols, size, j)]++;
      halo++;
    }
  int recv_procs = 0;
  for (int q = 0; q < size; ++q) recv_procs += per_owner[q] > 0;
  int *procs = malloc((recv_procs + 1) * sizeof(int)), *counts = malloc((recv_procs + 1) * sizeof(int));
  int *displs = malloc((recv_procs + 1) * sizeof(int)), *columns = malloc((halo + 1) * sizeof(int));
  int* halo_slot = malloc((size_t)a.cols * sizeof(int)); /* global column -> position in the halo */
  for (int q = 0, p = 0, at = 0; q < size; ++q) {
    if (!per_owner[q]) continue;
    procs[p] = q;
    counts[p] = per_owner[q];
    displs[p] = at;
    for (int j = first(a.cols, size, q); j < first(a.cols, size, q + 1); ++j)
      if (needed[j]) {
        halo_slot[j] = at;
        columns[at++] = j;
      }
    p++;
  }

  /* The SDDE: tell every owner which of its entries this rank needs. */
  MPIX_Comm* comm;
  MPIX_Comm_init(&comm, MPI_COMM_WORLD);
  MPIX_Info* info = NULL;
  if (argc > 2) {
    MPIX_Info_init(&info);
    if (MPIX_Info_set(info, "mpix_alltoallv_crs_algorithm", argv[2]) != MPIX_SUCCESS) {
      if (rank == 0) fprintf(stderr, "spmv_pattern: %s\n", MPIX_Last_error_message());
      MPI_Finalize();
      return 2;
    }
  }
  int send_procs = -1, send_size = -1; /* unknown: the library finds them */
  int *to = NULL, *send_counts = NULL, *send_displs = NULL;
  void* send_columns = NULL;
  int rc = MPIX_Alltoallv_crs(recv_procs, halo, procs, counts, displs, MPI_INT, columns, &send_procs, &send_size,
                              &to, &send_counts, &send_displs, MPI_INT, &send_columns, info, comm);
  if (rc != MPIX_SUCCESS) {
    fprintf(stderr, "rank %d: MPIX_Alltoallv_crs: %s: %s\n", rank, MPIX_Error_string(rc), MPIX_Last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int* send_index = send_columns;

  /* The package in use: y = A x with halo exchange on the user's communicator. */
  double* x = malloc((size_t)(c1 - c0 + 1) * sizeof(double));
  for (int j = c0; j < c1; ++j) x[j - c0] = x_value(j);
  double* halo_x = malloc((size_t)(halo + 1) * sizeof(double));
  double* send_x = malloc((size_t)(send_size + 1) * sizeof(double));
  MPI_Request* requests = malloc((size_t)(recv_procs + send_procs + 1) * sizeof(MPI_Request));
  int nreq = 0;
  for (int p = 0; p < recv_procs; ++p)
    MPI_Irecv(halo_x + displs[p], counts[p], MPI_DOUBLE, procs[p], 0, MPI_COMM_WORLD, &requests[nreq++]);
  int wrong_owner = 0;
  for (int p = 0; p < send_procs; ++p) {
    for (int k = send_displs[p]; k < send_displs[p] + send_counts[p]; ++k) {
      int j = send_index[k];
      if (j < c0 || j >= c1) wrong_owner = 1; /* asked for an entry this rank does not own */
      send_x[k] = j >= c0 && j < c1 ? x[j - c0] : 0.0;
    }
    MPI_Isend(send_x + send_displs[p], send_counts[p], MPI_DOUBLE, to[p], 0, MPI_COMM_WORLD, &requests[nreq++]);
  }
  MPI_Status* statuses = malloc((size_t)(nreq + 1) * sizeof(MPI_Status));
  MPI_Waitall(nreq, requests, statuses);
  free(statuses);

  double* y = calloc((size_t)(r1 - r0 + 1), sizeof(double));
  double* serial = calloc((size_t)(r1 - r0 + 1), sizeof(double));
  for (int k = 0; k < a.nnz; ++k) {
    int i = a.row[k] - r0, j = a.col[k];
    double xj = j >= c0 && j < c1 ? x[j - c0] : halo_x[halo_slot[j]];
    y[i] += a.val[k] * xj;
    serial[i] += a.val[k] * x_value(j);
  }
  double err = 0.0, norm = 0.0;
  for (int i = 0; i < r1 - r0; ++i) {
    err = fmax(err, fabs(y[i] - serial[i]));
    norm = fmax(norm, fabs(serial[i]));
  }
  double local[2] = {err / fmax(norm, 1.0), (double)wrong_owner}, global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int messages = send_procs, most = 0;
  MPI_Allreduce(&messages, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const int ok = global[0] <= 1e-12 && global[1] == 0;
  if (rank == 0)
    printf("%s: %d x %d on %d ranks; the busiest rank sends to %d ranks; SpMV %s (max relative error %.3g)\n", argv[1],
           a.rows, a.cols, size, most, ok ? "matches the serial product" : "DIFFERS from the serial product",
           global[0]);

  MPIX_Free(to);
  MPIX_Free(send_counts);
  MPIX_Free(send_displs);
  MPIX_Free(send_columns);
  if (info) MPIX_Info_free(&info);
  MPIX_Comm_free(&comm);
  free(a.row), free(a.col), free(a.val), free(needed), free(per_owner), free(procs), free(counts), free(displs);
  free(columns), free(halo_slot), free(x), free(halo_x), free(send_x), free(requests), free(y), free(serial);
  MPI_Finalize();
  return ok ? 0 : 1;
}
