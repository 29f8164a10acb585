/* What a first MPIX_Alltoall of small blocks would cost with its agreement carried
 * in the exchange's own rounds (bench/fused-agreement-probe runs it under SMPI; a
 * measurement for a design, not mpix code).
 *
 * A radix-2 Bruck makes ceil(log2 P) rounds, round k to rank + 2^k and from
 * rank - 2^k: the pattern of a dissemination allreduce, which depends on P alone.
 * If every first call ran that pattern with the agreement's record (19 long longs,
 * reduced by maxima) in front of each message, bad input could not make ranks wait
 * for different messages, and where every rank's block size and choice agree the
 * data would be complete when the agreement is. Each row is the slowest rank's time
 * after a barrier (the second of two runs), as mpix-bench times a call:
 *   allreduce             MPI_Allreduce of the record (mpix's agreement today)
 *   mpi_alltoall          MPI_Alltoall (SMPI's Bruck under --cfg=smpi/alltoall:bruck)
 *   bruck                 the radix-2 Bruck alone (blocks packed per round)
 *   allreduce_then_bruck  what a first call pays today, for this exchange
 *   fused                 the record in front of each round's message, receives
 *                         posted before the sends for blocks of up to 64 bytes
 *                         (a sender with larger blocks would send the record alone,
 *                         so no message outgrows its receive)
 *   fused_probe           the same, each receive sized by MPI_Probe first
 *   record_alone          the dissemination of the record without data
 *
 *   fused_agreement_probe [block_bytes]   (default 16) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRecord = 19, kTag = 7, kCapacityBlock = 64 };

static char *send_blocks, *recv_blocks, *rotated, *outgoing, *incoming;

static void make_record(long long* record, int rank, int block) {
  for (int i = 0; i < kRecord; ++i) record[i] = (long long)rank * i + block;
}

static void allreduce(int ranks, int rank, int block) {
  long long record[kRecord], agreed[kRecord];
  (void)ranks;
  make_record(record, rank, block);
  MPI_Allreduce(record, agreed, kRecord, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
}

/* Round k sends the blocks whose distance (after the rotation) has bit k set. With
 * `record`, the record goes in front and is reduced on arrival; `posted_block` > 0
 * posts each receive for blocks of that size; `probe` sizes it by MPI_Probe. */
static void bruck(int ranks, int rank, int block, int record, int posted_block, int probe) {
  long long mine[kRecord];
  const size_t head = record ? sizeof mine : 0;
  make_record(mine, rank, block);
  for (int j = 0; j < ranks; ++j)
    memcpy(rotated + (size_t)j * block, send_blocks + (size_t)((rank + j) % ranks) * block, block);
  for (int distance = 1; distance < ranks; distance <<= 1) {
    const int to = (rank + distance) % ranks, from = (rank - distance + ranks) % ranks;
    size_t blocks = 0;
    memcpy(outgoing, mine, head);
    for (int j = 0; j < ranks; ++j)
      if (j & distance) memcpy(outgoing + head + blocks++ * block, rotated + (size_t)j * block, block);
    const size_t bytes = head + blocks * block;
    MPI_Request send_request, recv_request;
    if (probe) {
      MPI_Status status;
      int count = 0;
      MPI_Isend(outgoing, (int)bytes, MPI_BYTE, to, kTag, MPI_COMM_WORLD, &send_request);
      MPI_Probe(from, kTag, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, MPI_BYTE, &count);
      MPI_Recv(incoming, count, MPI_BYTE, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      const size_t posted = posted_block > 0 ? head + blocks * (size_t)posted_block : bytes;
      MPI_Irecv(incoming, (int)posted, MPI_BYTE, from, kTag, MPI_COMM_WORLD, &recv_request);
      MPI_Isend(outgoing, (int)bytes, MPI_BYTE, to, kTag, MPI_COMM_WORLD, &send_request);
      MPI_Wait(&recv_request, MPI_STATUS_IGNORE);
    }
    MPI_Wait(&send_request, MPI_STATUS_IGNORE);
    if (record) {
      const long long* theirs = (const long long*)incoming;
      for (int i = 0; i < kRecord; ++i)
        if (theirs[i] > mine[i]) mine[i] = theirs[i];
    }
    blocks = 0;
    for (int j = 0; j < ranks; ++j)
      if (j & distance) memcpy(rotated + (size_t)j * block, incoming + head + blocks++ * block, block);
  }
  for (int j = 0; j < ranks; ++j)
    memcpy(recv_blocks + (size_t)((rank - j + ranks) % ranks) * block, rotated + (size_t)j * block, block);
}

static void mpi_alltoall(int ranks, int rank, int block) {
  (void)ranks, (void)rank;
  MPI_Alltoall(send_blocks, block, MPI_BYTE, recv_blocks, block, MPI_BYTE, MPI_COMM_WORLD);
}
static void bruck_alone(int ranks, int rank, int block) { bruck(ranks, rank, block, 0, 0, 0); }
static void allreduce_then_bruck(int ranks, int rank, int block) {
  allreduce(ranks, rank, block);
  bruck(ranks, rank, block, 0, 0, 0);
}
static void fused(int ranks, int rank, int block) { bruck(ranks, rank, block, 1, kCapacityBlock, 0); }
static void fused_probe(int ranks, int rank, int block) { bruck(ranks, rank, block, 1, 0, 1); }
static void record_alone(int ranks, int rank, int block) { (void)block; bruck(ranks, rank, 0, 1, 0, 0); }

static double slowest(void (*run)(int, int, int), int ranks, int rank, int block) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  run(ranks, rank, block);
  const double elapsed = MPI_Wtime() - start;
  double worst = 0;
  MPI_Reduce(&elapsed, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int ranks = 0, rank = 0;
  const int block = argc > 1 ? atoi(argv[1]) : 16;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (block < 0 || block > kCapacityBlock) {
    if (rank == 0) fprintf(stderr, "fused_agreement_probe: block_bytes must be 0..%d\n", kCapacityBlock);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t bytes = (size_t)ranks * kCapacityBlock + sizeof(long long) * kRecord;
  send_blocks = calloc(bytes, 1), recv_blocks = calloc(bytes, 1), rotated = calloc(bytes, 1);
  outgoing = calloc(bytes, 1), incoming = calloc(bytes, 1);
  const struct {
    const char* name;
    void (*run)(int, int, int);
  } rows[] = {{"allreduce", allreduce},
              {"mpi_alltoall", mpi_alltoall},
              {"bruck", bruck_alone},
              {"allreduce_then_bruck", allreduce_then_bruck},
              {"fused", fused},
              {"fused_probe", fused_probe},
              {"record_alone", record_alone}};
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
    slowest(rows[r].run, ranks, rank, block);
    const double seconds = slowest(rows[r].run, ranks, rank, block);
    if (rank == 0) printf("%s %.2f\n", rows[r].name, seconds * 1e6);
  }
  free(send_blocks), free(recv_blocks), free(rotated), free(outgoing), free(incoming);
  MPI_Finalize();
  return 0;
}
