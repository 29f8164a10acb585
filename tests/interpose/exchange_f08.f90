! An ordinary Fortran MPI program (use mpi_f08), built without mpix: MPI_ALLTOALL and
! MPI_ALLTOALLV, in place and not, on MPI_COMM_WORLD and a split. Each rank prints
! a checksum of each receive buffer; the interpose tests compare runs with and
! without LD_PRELOAD.
program exchange_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, size, c
  type(MPI_Comm) :: half, comm
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  do c = 1, 2
    comm = MPI_COMM_WORLD
    if (c == 2) comm = half
    call exchange(comm, c)
  end do
  call MPI_Comm_free(half, ierr)
  call MPI_Finalize(ierr)
contains
  subroutine exchange(comm, c)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: c
    integer :: n, me, i, ierr, in_place
    integer, allocatable :: sendbuf(:), recvbuf(:), counts(:), displs(:)
    call MPI_Comm_rank(comm, me, ierr)
    call MPI_Comm_size(comm, n, ierr)
    allocate(sendbuf(4 * n), recvbuf(4 * n), counts(n), displs(n))
    do in_place = 0, 1
      do i = 1, 4 * n
        sendbuf(i) = 1000 * me + i
        recvbuf(i) = -1
      end do
      if (in_place == 1) then
        recvbuf = sendbuf
        call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, 2, MPI_INTEGER, comm, ierr)
      else
        call MPI_Alltoall(sendbuf, 2, MPI_INTEGER, recvbuf, 2, MPI_INTEGER, comm, ierr)
      end if
      write (*, '(A,I0,A,I0,A,I0,A,I0,A,I0)') 'rank ', rank, ' comm ', c, ' alltoall in_place=', in_place, &
          ' ierr=', ierr, ' sum=', sum(recvbuf * [(i, i = 1, 4 * n)])
      do i = 1, n
        counts(i) = mod(me + i - 1, 3)   ! symmetric: what me sends to i-1 is what i-1 sends to me
        displs(i) = 4 * (n - i)
      end do
      recvbuf = -1
      if (in_place == 1) then
        recvbuf = sendbuf
        call MPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_DATATYPE_NULL, recvbuf, counts, displs, &
            MPI_INTEGER, comm, ierr)
      else
        call MPI_Alltoallv(sendbuf, counts, displs, MPI_INTEGER, recvbuf, counts, displs, MPI_INTEGER, comm, ierr)
      end if
      write (*, '(A,I0,A,I0,A,I0,A,I0,A,I0)') 'rank ', rank, ' comm ', c, ' alltoallv in_place=', in_place, &
          ' ierr=', ierr, ' sum=', sum(recvbuf * [(i, i = 1, 4 * n)])
    end do
    deallocate(sendbuf, recvbuf, counts, displs)
  end subroutine exchange
end program exchange_f08
