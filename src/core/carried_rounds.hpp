// What the two patterns of the carried agreement share (carried_agreement.hpp):
// Bruck's rounds over all ranks (carried_agreement.cpp) and the lanes
// (carried_lanes.cpp). Internal to those two files.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "agreement.hpp"
#include "datatype.hpp"
#include "model.hpp"
#include "plan.hpp"
#include "scratch.hpp"

struct MPIX_Comm_s;

namespace mpix {

struct Exchange;

// Blocks whose distance from this rank (after Bruck's rotation) has the bit
// `distance` set: those of round log2(distance). The same on every rank.
int blocks_in_round(int ranks, int distance);

// Where the blocks of one rank wait between rounds: Bruck's rotation, slot j the
// block for rank + j, then the one from rank - j (the lanes keep several such
// slots per rank, agree_in_lanes). A slot is a pointer: to the caller's send
// buffer where the block is one run of bytes (not in place: there the send
// blocks are the receive buffer), to the slot's own `stride` bytes of room where
// it had to be packed, and, once a round brought it, into that round's
// message, which stays until the call ends. So a block is copied when a round
// sends it and when it is written out, not also into the rotation and out of each
// message, for the messages' memory, kept to the end (docs/performance.md, "Blocks
// read where they arrive"). An alltoallv's blocks (`sized`) travel with their
// sizes, one byte each.
struct Rotation {
  long long stride;
  bool sized;
  char* slots;  // own room, `stride` bytes per slot; none where every block arrives
  unsigned char* sizes;
  const char** where = nullptr;
  bool points_at_blocks = false;  // take() may point at a block rather than pack it
  long long bytes(int j) const { return sized ? sizes[j] : stride; }
  const char* slot(int j) const { return where[j]; }
  // The bytes a message part of `count` blocks may take.
  std::size_t room(int count) const { return (std::size_t)count * (std::size_t)(stride + sized); }

  // `block` as slot j's: pointed at where it is one run of bytes and the send
  // buffer is not the receive buffer, else packed into the slot's room.
  int take(int j, const Block& block, MPI_Comm comm);

  // A message's part after the records: the sizes of the `with_sizes` slots
  // (alltoallv; the others' sizes the receiver knows), then the bytes of the
  // `chosen` ones. Returns the bytes written.
  std::size_t write(const std::vector<int>& chosen, char* out, const std::vector<int>& with_sizes) const;
  std::size_t write(const std::vector<int>& chosen, char* out) const { return write(chosen, out, chosen); }

  // The reverse, from a message part of `length` bytes, which must stay until the
  // call ends (the slots point into it): false, and nothing read, where it does
  // not hold blocks of `chosen`'s number that fit (a rank sent its records alone,
  // or its blocks have another size: the agreement will say why). The slots not
  // in `with_sizes` (a subsequence of `chosen`) keep the sizes set (the
  // receiver's own counts, which the agreement's checksums compare with the
  // sender's).
  bool read(const std::vector<int>& chosen, const char* in, long long length, const std::vector<int>& with_sizes);
  bool read(const std::vector<int>& chosen, const char* in, long long length) {
    return read(chosen, in, length, chosen);
  }
};

// The rotation of `slot_count` slots for `blocks` (none: records alone) in
// scratch, and its stride: kCarriedBlockLimit for an alltoallv, whose blocks
// differ, the one block size of an alltoall. `with_room`: the slots have room of
// their own, for the blocks this rank packs (Rotation::take); without, they point
// nowhere until a message brings their blocks.
Rotation make_rotation(MPIX_Comm_s* comm, const Exchange* blocks, bool sized, int slot_count, bool with_room,
                       ScratchBuffer* held);

// The messages of a carried exchange's rounds, kept until the call ends where
// they bring blocks (Rotation::read points into them), in one buffer of
// `capacity` bytes; with records alone, each round's message replaces the last.
class Arrivals {
 public:
  Arrivals(MPIX_Comm_s* comm, bool keep, std::size_t capacity);
  // Where the next message goes, and the room it may take.
  char* next() const { return buffer_.data() + used_; }
  // The next message took `bytes`.
  void took(std::size_t bytes) {
    if (keep_) used_ += bytes;
  }
  std::size_t size() const { return buffer_.size(); }

 private:
  bool keep_;
  ScratchBuffer buffer_;
  std::size_t used_ = 0;
};

// The bytes a carried exchange of blocks of `block` bytes copies outside its
// messages, for the model: every block out to the receive buffer, and into the
// rotation first where Rotation::take packs it (datatypes that are not one run of
// bytes, in place).
double rotation_copied_bytes(const ExchangeFacts& facts, double block);

// Whether the call's blocks arrived, by the agreed record: every rank sent them
// (`complete` here) and the call is valid.
bool blocks_valid(bool complete, bool sized, const Agreement& all);

// One round's exchange with a pair of ranks: the message in `out` to `to`, one of
// at most `receivable` bytes from `from` into `in`, its length in *received.
int exchange_round(MPI_Comm comm, const char* out, std::size_t sent, int to, char* in, std::size_t receivable,
                   int from, int tag, int* received);

// The packed records in front of a message: `count` of them from `records` into
// `out`; returns their bytes.
std::size_t write_records(const long long* records, int count, char* out);

// The reverse, for the message of `received` bytes that rank `from` sent this
// one: `count` records into `records`, their bytes in *used; fails where the
// message does not begin with them.
int read_records(const char* in, int received, int count, int from, const MPIX_Comm_s* comm, long long* records,
                 std::size_t* used);

// The rounds of agree_in_lanes (carried_lanes.cpp).
int agree_in_lanes(MPIX_Comm_s* comm, const Agreement& mine, const Exchange* blocks, Agreement* all, bool* delivered,
                   PlanStats* moved);

// The block a carried exchange moves per pair, with its byte of size.
double carried_block(const ExchangeFacts& facts);
// The predicted time of agree_in_lanes with lane groups of `lane_group` ranks and
// blocks of `block` bytes (0: records alone).
double lanes_seconds(const ExchangeFacts& facts, const MachineProfile& profile, double block, int lane_group);

}  // namespace mpix
