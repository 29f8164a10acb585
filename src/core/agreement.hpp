// The one agreement every dense call makes (an MPI_Allreduce on the library's
// communicator, or for a blocking call a dissemination in Bruck's rounds,
// carried_agreement.hpp): whether any rank rejected its arguments, whether all ranks asked
// for the same algorithm and parameters, whether all repeat their previous call,
// and the facts about the exchange that selection needs (model.hpp). One record per
// rank, reduced field by field with a maximum or a sum by an operation of the
// library's own; minima travel negated.
#pragma once
#include <mpi.h>

#include <cstddef>

#include "model.hpp"

struct MPIX_Comm_s;

namespace mpix {

struct Agreement {
  int failed = MPIX_SUCCESS;    // the error code of this rank's local checks
  long long algorithm = -1;     // registry index asked for; -1: auto
  long long hints_hash = 0;     // of every parameter and hint the call may use
  ExchangeFacts facts;          // this rank's part (sums and extremes are agreed)
  // Weighted sums of the bytes this rank sends to each peer and expects from each
  // (count_checksums); agreed: whether the sums over all ranks differ.
  unsigned long long sent_checksum = 0, expected_checksum = 0;
  bool counts_disagree = false;
  // Mine: this rank has no plan of an identical previous blocking call to run again
  // (plan_reuse.hpp); all: some rank has none.
  bool changed = true;
  // Mine: this rank would keep the call's plan for reuse; all: every rank would.
  bool keeps = false;
  // All: every rank sent its blocks with its record (carried_agreement.hpp).
  bool carried = false;
  // All, from a carried record: the sum that stands for the algorithm, the hash and
  // the checksums is not zero, so some of them differ (agree() says which).
  bool inconsistent = false;
  // Mine: 1 where this rank started its exchange before the agreement
  // (speculation.hpp); all: how many ranks did.
  int speculated = 0;
  // Mine: 1 where this rank neither started nor could start its exchange after the
  // agreement (as it could where it chose otherwise from its own facts, or has no
  // message to start); all: how many such ranks there are. Where there is none,
  // the call is the started exchange. Counted this way round, the field is 0, and
  // takes no byte of the packed record, in every call where no rank starts early.
  int unready = 0;
};

// The record one rank contributes, 22 long longs; reduced field by field, sums
// by addition, the rest by their maximum: by MPI_Allreduce (agree) or by a
// dissemination that counts every rank once (CarriedAgreement).
constexpr std::size_t kRecordBytes = 22 * sizeof(long long);
constexpr int kRecordFields = (int)(kRecordBytes / sizeof(long long));
void encode_record(const Agreement& mine, bool carrying, long long* record);
void combine_records(const long long* in, long long* inout);
// `all` is `mine` with the agreed fields of `agreed`.
void decode_record(const long long* agreed, const Agreement& mine, Agreement* all);
// The record of the carried agreement, whose every byte travels in every lane
// message: the algorithm, the hints' hash and the two count checksums go as one
// sum modulo 2^64, zero where all ranks agree on them, in place of five fields of
// up to 8 bytes. Rank r adds its checksums' difference (sent - expected) and, for
// the algorithm a and the hash h, a (u(r) - u(r + 1)) and h (v(r) - v(r + 1)) with
// odd pseudo-random u and v over the ring of `ranks`: equal values cancel around
// it, and a rank whose value differs by d leaves d (u(r) - u(r + 1)), not 0
// modulo 2^64 but by a chance of about 2^-60 (the weights' difference is even).
// decode_carried_record sets all->inconsistent where the sum is not 0; the call
// then makes agree()'s allreduce of the full records, which names what differs:
// only a call that fails pays it.
void encode_carried_record(const Agreement& mine, bool carrying, int rank, int ranks, long long* record);
void decode_carried_record(const long long* agreed, const Agreement& mine, Agreement* all);
// Whether some rank counted in `record` (one rank's, or a partial sum of the
// carried agreement's) sent no blocks: then no rank's blocks can be delivered.
bool some_rank_declined(const long long* record);

// A record on the wire of the carried agreement (carried_agreement.hpp), where it
// travels in every round and every lane message: most fields are flags, block
// sizes and counts of a few bytes, so each goes with the bytes its value needs
// (their number in a half-byte each in front), a minimum as its distance from its
// maximum (0 on one rank, and wherever the ranks agree) and the rest zigzag-coded.
// The sum that stands for the algorithm, the hash and the checksums
// (encode_carried_record) keeps its 8 bytes. At most kPackedRecordMaxBytes;
// kPackedRecordBytes is its typical length, for the model (a node's record of
// blocks uniform in [0, 16 B] on a node of 32 at P = 256: 36 bytes, test_model;
// 53 while the hash and the two checksums travelled apart).
constexpr std::size_t kPackedRecordMaxBytes = (kRecordFields + 1) / 2 + kRecordBytes;
constexpr double kPackedRecordBytes = 36;
// Writes `record` to `out` (room for kPackedRecordMaxBytes); returns its bytes.
std::size_t pack_record(const long long* record, char* out);
// Reads a packed record from the `length` bytes at `in`; returns the bytes it
// took, or 0 where they do not hold one.
std::size_t unpack_record(const char* in, std::size_t length, long long* record);
// The sums of an alltoall whose every block has facts->max_block bytes (total,
// non-empty and intra-node bytes): what one rank's facts say about all of them.
class Locality;
void set_alltoall_sums(const Locality& locality, ExchangeFacts* facts);

// This rank's part of the facts of `exchange` on a communicator with `locality`
// and `regions` (whose layout every rank knows: not agreed).
struct Exchange;
class Regions;
ExchangeFacts local_facts(const Exchange& exchange, const Locality& locality, const Regions& regions);

// Counts that disagree between two ranks (rank i sends rank j other than the bytes
// j expects from i: erroneous in MPI, which checks nothing) without another
// message: every rank adds b(i, j) w(i, j) over the blocks it sends and over the
// blocks it expects, with the same odd pseudo-random weight w(i, j) on both sides
// of a pair, and the agreement sums both over the ranks. They differ if any pair
// disagrees (always for one pair: d w is not 0 modulo 2^64 for odd w and
// 0 < |d| < 2^61; for several pairs, unless their weighted differences cancel,
// chance about 2^-64). Sets mine's checksums; O(P), like local_facts.
void count_checksums(const Exchange& exchange, Agreement* mine);

// w(from, to): the odd pseudo-random weight of a pair (splitmix64 of the pair).
unsigned long long pair_weight(int from, int to);

// Collective on comm->lib_comm. `all` receives: failed if any rank failed,
// algorithm and hints_hash set to -2 if the ranks differ, and the agreed facts.
int agree(MPIX_Comm_s* comm, const Agreement& mine, Agreement* all);

// Seconds of the agreement on `facts`' layout: the same for every algorithm, so not
// part of the choice, but of the time a blocking call takes. `record_bytes`: a
// record's bytes on the wire (packed in the carried agreement's rounds).
double agreement_seconds(const ExchangeFacts& facts, const MachineProfile& profile,
                         double record_bytes = (double)kRecordBytes);

// Frees what agree() created for `comm` (MPIX_Comm_free).
void free_agreement(MPIX_Comm_s* comm);

}  // namespace mpix
