// Forced (-include) into the interposer's own copy of the library sources: every
// MPI function the library calls becomes its PMPI_ name, so that the library's
// traffic never re-enters the interposer's MPI_Alltoall(v) (pmpi's MPI_Ialltoallv,
// the mpix_check_args MPI_Alltoall) nor a profiling tool (ARCHITECTURE.md "Use
// without code changes"). tests/packaging/test_packaging.sh fails when the
// interposer imports any MPI_ function: a new call in src/ is added here.
#ifndef MPIX_INTERPOSE_PMPI_NAMES_H
#define MPIX_INTERPOSE_PMPI_NAMES_H
#define MPI_Allgather PMPI_Allgather
#define MPI_Allreduce PMPI_Allreduce
#define MPI_Alltoall PMPI_Alltoall
#define MPI_Alltoall_init PMPI_Alltoall_init
#define MPI_Alltoallv PMPI_Alltoallv
#define MPI_Alltoallv_init PMPI_Alltoallv_init
#define MPI_Bcast PMPI_Bcast
#define MPI_Comm_dup PMPI_Comm_dup
#define MPI_Comm_free PMPI_Comm_free
#define MPI_Comm_get_attr PMPI_Comm_get_attr
#define MPI_Comm_rank PMPI_Comm_rank
#define MPI_Comm_set_errhandler PMPI_Comm_set_errhandler
#define MPI_Comm_set_name PMPI_Comm_set_name
#define MPI_Comm_size PMPI_Comm_size
#define MPI_Comm_split PMPI_Comm_split
#define MPI_Comm_split_type PMPI_Comm_split_type
#define MPI_Error_class PMPI_Error_class
#define MPI_Error_string PMPI_Error_string
#define MPI_Finalized PMPI_Finalized
#define MPI_Get_address PMPI_Get_address
#define MPI_Get_count PMPI_Get_count
#define MPI_Get_elements_x PMPI_Get_elements_x
#define MPI_Ialltoall PMPI_Ialltoall
#define MPI_Ialltoallv PMPI_Ialltoallv
#define MPI_Ibarrier PMPI_Ibarrier
#define MPI_Improbe PMPI_Improbe
#define MPI_Info_create PMPI_Info_create
#define MPI_Info_free PMPI_Info_free
#define MPI_Info_set PMPI_Info_set
#define MPI_Initialized PMPI_Initialized
#define MPI_Iprobe PMPI_Iprobe
#define MPI_Irecv PMPI_Irecv
#define MPI_Is_thread_main PMPI_Is_thread_main
#define MPI_Isend PMPI_Isend
#define MPI_Issend PMPI_Issend
#define MPI_Mprobe PMPI_Mprobe
#define MPI_Mrecv PMPI_Mrecv
#define MPI_Op_create PMPI_Op_create
#define MPI_Op_free PMPI_Op_free
#define MPI_Pack PMPI_Pack
#define MPI_Probe PMPI_Probe
#define MPI_Put PMPI_Put
#define MPI_Recv PMPI_Recv
#define MPI_Reduce_scatter_block PMPI_Reduce_scatter_block
#define MPI_Sendrecv PMPI_Sendrecv
#define MPI_Status_set_cancelled PMPI_Status_set_cancelled
#define MPI_Status_set_elements PMPI_Status_set_elements
#define MPI_Test PMPI_Test
#define MPI_Testall PMPI_Testall
#define MPI_Testany PMPI_Testany
#define MPI_Type_commit PMPI_Type_commit
#define MPI_Type_contiguous PMPI_Type_contiguous
#define MPI_Type_create_hindexed PMPI_Type_create_hindexed
#define MPI_Type_create_keyval PMPI_Type_create_keyval
#define MPI_Type_dup PMPI_Type_dup
#define MPI_Type_free PMPI_Type_free
#define MPI_Type_get_attr PMPI_Type_get_attr
#define MPI_Type_get_contents PMPI_Type_get_contents
#define MPI_Type_get_contents_c PMPI_Type_get_contents_c
#define MPI_Type_get_envelope PMPI_Type_get_envelope
#define MPI_Type_get_envelope_c PMPI_Type_get_envelope_c
#define MPI_Type_get_extent PMPI_Type_get_extent
#define MPI_Type_get_true_extent PMPI_Type_get_true_extent
#define MPI_Type_set_attr PMPI_Type_set_attr
#define MPI_Type_size_x PMPI_Type_size_x
#define MPI_Unpack PMPI_Unpack
#define MPI_Wait PMPI_Wait
#define MPI_Waitall PMPI_Waitall
#define MPI_Waitany PMPI_Waitany
#define MPI_Wtime PMPI_Wtime
#define MPI_Win_allocate PMPI_Win_allocate
#define MPI_Win_fence PMPI_Win_fence
#define MPI_Win_free PMPI_Win_free
#define MPI_Win_set_errhandler PMPI_Win_set_errhandler
#define MPI_Comm_get_errhandler PMPI_Comm_get_errhandler
#define MPI_Comm_test_inter PMPI_Comm_test_inter
#define MPI_Errhandler_free PMPI_Errhandler_free
#define MPI_Ialltoall_c PMPI_Ialltoall_c
#define MPI_Ialltoallv_c PMPI_Ialltoallv_c
#define MPI_Ialltoallw PMPI_Ialltoallw
#define MPI_Irecv_c PMPI_Irecv_c
#define MPI_Isend_c PMPI_Isend_c
#define MPI_Pack_c PMPI_Pack_c
#define MPI_Query_thread PMPI_Query_thread
#define MPI_Type_create_resized PMPI_Type_create_resized
#define MPI_Type_create_struct PMPI_Type_create_struct
#define MPI_Unpack_c PMPI_Unpack_c
#endif
