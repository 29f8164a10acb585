! An ordinary Fortran MPI program (use mpi_f08), built without mpix: persistent
! MPI_ALLTOALL_INIT and MPI_ALLTOALLV_INIT (MPI 4; MPICH only), started twice with
! new data. MPICH's mpi_f08 module starts, waits on and frees these requests
! through PMPI_, so the interposer must leave them to MPI. Each rank prints a
! checksum of each receive buffer; the interpose tests compare runs with and
! without LD_PRELOAD.
program persistent_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, n, i, round
  integer, allocatable :: sendbuf(:), recvbuf(:), vrecv(:), counts(:), displs(:)
  type(MPI_Request) :: dense, sparse
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  allocate(sendbuf(2 * n), recvbuf(2 * n), vrecv(2 * n), counts(n), displs(n))
  do i = 1, n
    counts(i) = mod(rank + i - 1, 3)   ! symmetric: what rank sends to i-1 is what i-1 sends to rank
    displs(i) = 2 * (i - 1)
  end do
  call MPI_Alltoall_init(sendbuf, 2, MPI_INTEGER, recvbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, &
      dense, ierr)
  call MPI_Alltoallv_init(sendbuf, counts, displs, MPI_INTEGER, vrecv, counts, displs, MPI_INTEGER, &
      MPI_COMM_WORLD, MPI_INFO_NULL, sparse, ierr)
  do round = 1, 2
    do i = 1, 2 * n
      sendbuf(i) = 1000 * rank + 100 * round + i
    end do
    recvbuf = -1
    vrecv = -1
    call MPI_Start(dense, ierr)
    call MPI_Start(sparse, ierr)
    call MPI_Wait(dense, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(sparse, MPI_STATUS_IGNORE, ierr)
    write (*, '(A,I0,A,I0,A,I0,A,I0)') 'rank ', rank, ' round ', round, ' alltoall_init sum=', &
        sum(recvbuf * [(i, i = 1, 2 * n)]), ' alltoallv_init sum=', sum(vrecv * [(i, i = 1, 2 * n)])
  end do
  call MPI_Request_free(dense, ierr)
  call MPI_Request_free(sparse, ierr)
  call MPI_Finalize(ierr)
end program persistent_f08
