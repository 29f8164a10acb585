/**
 * @file mpix.h
 * @brief mpix: non-uniform and sparse all-to-all communication for MPI.
 *
 * The whole public API. Usable from C99 and C++; includes only <mpi.h>.
 * Every function returns MPIX_SUCCESS (0) or a positive MPIX_ERR_* code; after an
 * error, MPIX_Last_error_message() says what was wrong and the communicator stays
 * usable. Nothing in the library aborts, exits or prints (unless MPIX_VERBOSE=1),
 * also under MPI's default handler MPI_ERRORS_ARE_FATAL, and a call that needs MPI
 * before MPI_Init or after MPI_Finalize fails with MPIX_ERR_MPI (the MPIX_Info
 * calls and MPIX_Comm_locality/_region, which make no MPI call, work then); the error codes and what
 * to do about each are listed in docs/user-guide.md ("Errors").
 *
 * Threads. With MPI_THREAD_MULTIPLE, different threads may call the library at the
 * same time on different MPIX_Comms (each made from its own MPI communicator).
 * Below it, a call MPI's level does not allow (from a thread other than the main
 * one under SINGLE or FUNNELED, or while another thread is in the library under
 * SERIALIZED) fails with MPIX_ERR_ARG before any MPI call. An
 * MPIX_Comm, and the requests made on it, are used by one thread at a time, as MPI
 * requires of collectives on one communicator. An MPIX_Info may be shared by
 * threads that do not change it. MPIX_Last_error_message() is per thread. The
 * library's only process-wide state is this: while a thread waits for requests
 * inside the library, MPI_COMM_WORLD and MPI_COMM_SELF have MPI_ERRORS_RETURN (MPI
 * raises errors of MPI_Wait and its kind there, not on the library's communicator;
 * the user's handlers are back when no thread is waiting in the library). So an
 * MPI error of another thread at that moment is returned to it rather than fatal,
 * and a handler set on MPI_COMM_WORLD or MPI_COMM_SELF by another thread during a
 * library call is replaced by the one from before the call. Environment variables
 * are read during calls: do not change them while another thread is in the library.
 */
#ifndef MPIX_MPIX_H
#define MPIX_MPIX_H

/* In C++, Open MPI 4 and older MPICH declare the MPI-2 C++ bindings (removed in
 * MPI-3) from <mpi.h>, which then need their own library (-lmpi_cxx): a C++
 * program that includes only this header would not link. mpix uses MPI's C API
 * only, so the bindings are left out, as PETSc does; a program that wants them
 * includes <mpi.h> before this header. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @name Handles */
/**@{*/
typedef struct MPIX_Comm_s MPIX_Comm;       /**< an MPI_Comm plus cached locality */
typedef struct MPIX_Info_s MPIX_Info;       /**< string key/value hints */
typedef struct MPIX_Request_s MPIX_Request; /**< a persistent collective */
/**@}*/

/** @name Error codes */
/**@{*/
#define MPIX_SUCCESS 0
#define MPIX_ERR_ARG 1          /**< an invalid argument (count, buffer, handle, datatype) */
#define MPIX_ERR_INFO_KEY 2     /**< an unknown info key */
#define MPIX_ERR_INFO_VALUE 3   /**< an info value that is malformed or out of range */
#define MPIX_ERR_UNSUPPORTED 4  /**< the algorithm asked for does not apply to this call, or the call is past a limit of the library (message sizes, intercommunicators) */
#define MPIX_ERR_NO_MEM 5       /**< memory allocation failed */
#define MPIX_ERR_MPI 6          /**< an MPI call inside the library failed */
#define MPIX_ERR_DEVICE 7       /**< a device (GPU) call failed */
#define MPIX_ERR_TUNING_FILE 8  /**< the tuning file or the machine file is missing or malformed */
/**@}*/

/** A short, static description of an error code; never NULL. */
const char* MPIX_Error_string(int code);

/** Details of this thread's last error, e.g. "mpix_radix=1: must be 2..P".
 *  Empty string if no error happened yet; never NULL. */
const char* MPIX_Last_error_message(void);

/** @name Communicator and locality */
/**@{*/

/** Collective. Wraps @p mpi_comm: duplicates it for the library's own traffic (no
 *  library message ever matches a user receive or probe on @p mpi_comm) and detects
 *  nodes with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). If the environment variable
 *  MPIX_PPN is set to a positive integer, nodes are emulated as with
 *  MPIX_Comm_update_locality(); ranks with different (or malformed) MPIX_PPN all
 *  fail with MPIX_ERR_ARG. An intercommunicator fails with MPIX_ERR_UNSUPPORTED. */
int MPIX_Comm_init(MPIX_Comm** comm, MPI_Comm mpi_comm);

/** Collective. Frees the communicator and every sub-communicator it cached;
 *  sets *comm = NULL. Persistent requests on it must be freed first: a rank that
 *  still has one gets MPIX_ERR_ARG and keeps its communicator (free the requests,
 *  then call again); this check is local, so the other ranks' calls complete (the
 *  frees MPI makes here do not wait for that rank's). */
int MPIX_Comm_free(MPIX_Comm** comm);

/** Collective; the same @p ppn on all ranks, else MPIX_ERR_ARG on every rank and
 *  the layout stays as it was. Treat every @p ppn consecutive ranks as
 *  one node, whatever the hardware says; the last node is smaller when @p ppn does
 *  not divide the size. @p ppn <= 0 restores detection. Cached node and group
 *  communicators are rebuilt lazily. MPIX_ERR_ARG while persistent requests on
 *  @p comm are alive (their plans use the old layout). */
int MPIX_Comm_update_locality(MPIX_Comm* comm, int ppn);

/** Local. The node layout: number of nodes, this rank's node, the number of ranks
 *  on this node and this rank's index among them. Any output may be NULL. */
int MPIX_Comm_locality(const MPIX_Comm* comm, int* num_nodes, int* node,
                       int* local_size, int* local_rank);

/** The communicator passed to MPIX_Comm_init (not the library's duplicate). */
MPI_Comm MPIX_Comm_mpi(const MPIX_Comm* comm);

/** Collective (same @p ranks_per_region on all ranks, else MPIX_ERR_ARG on every
 *  rank). Like MPIX_Comm_update_locality one level down: treat every
 *  @p ranks_per_region consecutive ranks of a node as one region (socket, NUMA
 *  domain); the last region of a node is smaller when it does not divide the node.
 *  @p ranks_per_region <= 0 restores detection (MPI_COMM_TYPE_HW_GUIDED by package
 *  where the MPI has it, else with hwloc the package each rank is bound to, else
 *  one region per node). The environment variable MPIX_REGION_SIZE has this effect
 *  at MPIX_Comm_init. MPIX_ERR_ARG while persistent requests on @p comm are alive.
 *  The hint mpix_locality=region makes node_aware, personalized_loc and
 *  nonblocking_loc aggregate per region instead of per node. */
int MPIX_Comm_update_regions(MPIX_Comm* comm, int ranks_per_region);

/** Local. The region layout within this rank's node: number of regions on the
 *  node, this rank's region, the number of ranks in it and this rank's index among
 *  them. Any output may be NULL. */
int MPIX_Comm_region(const MPIX_Comm* comm, int* num_regions, int* region, int* region_size,
                     int* region_rank);
/**@}*/

/** @name Hints
 *  Keys: mpix_alltoall_algorithm, mpix_alltoallv_algorithm,
 *  mpix_alltoall_crs_algorithm, mpix_alltoallv_crs_algorithm, mpix_radix,
 *  mpix_block_count, mpix_stride, mpix_max_queue, mpix_segment_bytes, mpix_seed,
 *  mpix_ipc_threshold, mpix_memcpy_threshold, mpix_tuning_file, mpix_machine_file,
 *  mpix_check_args, mpix_plan_reuse, mpix_early_start, mpix_recv_counts_known,
 *  mpix_cuda_aware, mpix_locality, mpix_lane_group.
 *  See docs/user-guide.md for values and ranges. Precedence: an info key, then the
 *  environment variable of the same name in upper case (MPIX_RADIX, ...; one set to
 *  the empty string counts as unset), then the built-in selection. The same hints
 *  must be given on all ranks (mpix_recv_counts_known excepted, above); ranks that
 *  ask for different algorithms, locality levels or parameters fail together. A
 *  parameter the algorithm does not use (mpix_radix for a direct exchange) is
 *  ignored; mpix_radix is 2..P for tuna and bruck, 2..Q (the ranks per node) for
 *  tuna_hier_staggered and tuna_hier_coalesced. */
/**@{*/
int MPIX_Info_init(MPIX_Info** info);
/** Rejects an unknown key (MPIX_ERR_INFO_KEY) and a value that is wrong on its own
 *  (MPIX_ERR_INFO_VALUE): not a number, an unknown algorithm name, radix < 2. */
int MPIX_Info_set(MPIX_Info* info, const char* key, const char* value);
/** Copies at most @p valuelen - 1 characters of the value and a terminating NUL;
 *  *flag is 1 if the key is set, 0 if not. */
int MPIX_Info_get(const MPIX_Info* info, const char* key, int valuelen, char* value,
                  int* flag);
/** Frees the info and sets *info = NULL; a NULL *info, or a copy of a freed info
 *  (here or in any call that takes one), is an error, as for the other handles. */
int MPIX_Info_free(MPIX_Info** info);
/**@}*/

/** @name Dense exchanges
 *  Collective. Results are identical, byte for byte, to MPI_Alltoall /
 *  MPI_Alltoallv with the same arguments, for every algorithm and datatype.
 *  MPI_IN_PLACE as @p sendbuf is accepted (then the send arguments are ignored).
 *  A blocking call that repeats the previous blocking call of its operation on
 *  @p comm on every rank (the same buffers, counts, displacements, datatypes and
 *  hints; any contents) runs that call's plan again: it pays the agreement but not
 *  the planning, and (not in place) not the agreement either, from the third
 *  identical call on, where the plan's own messages can tell every rank of a change:
 *  bruck, tuna, tuna_carried, tuna_hier_*, node_aware and the direct exchanges
 *  (docs/user-guide.md, "Plan reuse by blocking calls").
 *  The plan is kept until a call differs, @p comm's node or region layout changes,
 *  or @p comm is freed; mpix_plan_reuse=false keeps none. */
/**@{*/
int MPIX_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPIX_Info* info, MPIX_Comm* comm);
int MPIX_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype,
                   MPIX_Info* info, MPIX_Comm* comm);
/**@}*/

/** @name Large counts
 *  MPI-4's large-count forms (as MPI_Alltoall_c, MPI_Alltoallv_c): counts are
 *  MPI_Count, displacements MPI_Aint (in elements of the datatype, as in MPI);
 *  otherwise the same arguments and results as MPIX_Alltoall / MPIX_Alltoallv.
 *
 *  Every dense call, int form or large-count form, every algorithm, works past
 *  2^31 bytes per rank and per block: byte offsets are computed in MPI_Aint, and a
 *  block of more than INT_MAX elements is sent with MPI's own large-count calls
 *  where the MPI has them (MPI-4: MPI_Isend_c, MPI_Ialltoallv_c, MPI_Pack_c; MPICH
 *  4), else as one element of a derived datatype that holds the whole block (Open
 *  MPI 4.1), with MPI_Ialltoallw for the pmpi algorithm. With the int forms a
 *  block is at most INT_MAX elements, but MPIX_Alltoall's count x P may exceed
 *  INT_MAX. The limit is memory: algorithms that stage or forward blocks (tuna,
 *  the hierarchical ones, node_aware, non-contiguous datatypes) take scratch of
 *  the order of the blocks they carry, taken when the call plans; a rank that
 *  cannot get it fails with MPIX_ERR_NO_MEM. */
/**@{*/
int MPIX_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    MPIX_Info* info, MPIX_Comm* comm);
int MPIX_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPIX_Info* info, MPIX_Comm* comm);
/** The persistent forms (see "Persistent exchanges"). */
int MPIX_Alltoall_plan_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                         MPIX_Info* info, MPIX_Comm* comm, MPIX_Request** request);
int MPIX_Alltoallv_plan_c(const void* sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPIX_Info* info, MPIX_Comm* comm,
                          MPIX_Request** request);
/**@}*/

/** @name Persistent exchanges
 *  A _plan call is collective and plans once (algorithm, schedule, scratch,
 *  metadata): MPI-4's persistent collectives, named _plan rather than _init because
 *  Open MPI 4.1's <mpi-ext.h> already declares MPIX_Alltoall(v)_init and libmpi
 *  exports them.
 *  Counts and buffer addresses are fixed for the life of the request; buffer
 *  contents may change between starts. MPIX_Start only posts the first round of
 *  messages; the exchange progresses and completes in MPIX_Wait (or MPIX_Test). Requests on one
 *  communicator must be started in the same order on all ranks, and may be completed in any
 *  order: every MPIX_Wait and MPIX_Test, and every collective mpix call while it waits
 *  for other ranks to make it, also moves the process's other started requests on (the
 *  program's own MPI calls do not: the user guide's "What can still hang"). */
/**@{*/
int MPIX_Alltoall_plan(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       MPIX_Info* info, MPIX_Comm* comm, MPIX_Request** request);
int MPIX_Alltoallv_plan(const void* sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPIX_Info* info, MPIX_Comm* comm,
                        MPIX_Request** request);
/** Starts an inactive request; MPIX_ERR_ARG if it is already active. */
int MPIX_Start(MPIX_Request* request);
/** Completes an active request (returns at once for an inactive one).
 *  @p status may be MPI_STATUS_IGNORE. */
int MPIX_Wait(MPIX_Request* request, MPI_Status* status);
/** Local. Progresses an active request without blocking: *flag = 1 once it is
 *  complete (it is then inactive, as after MPIX_Wait), else 0. An inactive request
 *  gives *flag = 1 at once. A loop of MPIX_Test until *flag gives what MPIX_Wait
 *  gives. @p status may be MPI_STATUS_IGNORE. */
int MPIX_Test(MPIX_Request* request, int* flag, MPI_Status* status);
/** Frees an inactive request and sets *request = NULL. */
int MPIX_Request_free(MPIX_Request** request);
/**@}*/

/** @name Sparse dynamic data exchange (SDDE)
 *  Each rank knows only what it sends. Outputs (*src, *recvcounts, *rdispls,
 *  *recvvals) are allocated by the library and freed with MPIX_Free.
 *  *recv_nnz and *recv_size are outputs only (their values on entry are ignored,
 *  as in MPI Advance's functions), unless the hint mpix_recv_counts_known=true
 *  says that the values passed in are the true ones: then they must be >= 0, the
 *  library may skip finding them. Where every rank gives the hint, the values are
 *  checked against what is sent before any message (MPIX_ERR_ARG on every rank if
 *  they differ); where only some ranks give it, a value that differs from what
 *  arrives fails that rank alone (docs/sdde.md, "Errors"). A message of
 *  2 GiB or more fails with MPIX_ERR_UNSUPPORTED before anything is sent. */
/**@{*/
int MPIX_Alltoall_crs(int send_nnz, const int* dest, int sendcount,
                      MPI_Datatype sendtype, const void* sendvals, int* recv_nnz,
                      int** src, int recvcount, MPI_Datatype recvtype,
                      void** recvvals, MPIX_Info* info, MPIX_Comm* comm);
int MPIX_Alltoallv_crs(int send_nnz, int send_size, const int* dest,
                       const int* sendcounts, const int* sdispls,
                       MPI_Datatype sendtype, const void* sendvals, int* recv_nnz,
                       int* recv_size, int** src, int** recvcounts, int** rdispls,
                       MPI_Datatype recvtype, void** recvvals, MPIX_Info* info,
                       MPIX_Comm* comm);
/** Frees memory the library allocated for an output; NULL is a no-op. */
int MPIX_Free(void* ptr);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* MPIX_MPIX_H */
