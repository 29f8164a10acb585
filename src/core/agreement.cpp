#include "agreement.hpp"

#include <algorithm>
#include <climits>
#include <vector>

#include "breakdown.hpp"
#include "comm.hpp"
#include "error.hpp"
#include "large_count.hpp"
#include "progress.hpp"

namespace mpix {

namespace {

enum Field : int {
  kFailed,
  kAlgorithmMax, kAlgorithmNegMin,
  kHashMax, kHashNegMin,
  kMaxBlock, kNegMinBlock,
  kTotalBytes,       // sum
  kMaxRankSend, kMaxRankRecv,
  kNonemptyBlocks,   // sum
  kMaxRankMessages,
  kIntraNodeBytes,   // sum
  kNonContiguous, kInPlace,
  kSentChecksum, kExpectedChecksum,  // sums modulo 2^64
  kChanged, kCannotKeep,
  kBeyondInt,
  kNotCarrying,  // carried agreement (carried_agreement.hpp): this rank sent no blocks
  kSpeculated,   // sum: 2^32 x the ranks that started their exchange before the agreement
                 // (speculation.hpp) + the ranks that could not (Agreement::unready)
  kFieldCount
};
static_assert(kFieldCount * sizeof(long long) == kRecordBytes, "agreement.hpp's kRecordBytes");

bool is_sum(int field) {
  return field == kTotalBytes || field == kNonemptyBlocks || field == kIntraNodeBytes || field == kSpeculated;
}
bool is_checksum(int field) { return field == kSentChecksum || field == kExpectedChecksum; }

long long add_modulo(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }

void reduce_records(void* in, void* inout, int* len, MPI_Datatype*) {
  const long long* a = (const long long*)in;
  long long* b = (long long*)inout;
  for (int r = 0; r < *len; ++r, a += kFieldCount, b += kFieldCount) combine_records(a, b);
}

}  // namespace

ExchangeFacts local_facts(const Exchange& ex, const Locality& locality, const Regions& regions) {
  ExchangeFacts facts;
  facts.ranks = ex.size;
  facts.nodes = locality.num_nodes();
  facts.max_ppn = 0;
  facts.min_ppn = INT_MAX;
  for (int n = 0; n < facts.nodes; ++n) {
    facts.max_ppn = std::max(facts.max_ppn, (int)locality.node_ranks(n).size());
    facts.min_ppn = std::min(facts.min_ppn, (int)locality.node_ranks(n).size());
  }
  if (regions.divides_nodes()) {
    const Locality& level = regions.level();
    facts.regions = level.num_nodes();
    for (int r = 0; r < facts.regions; ++r)
      facts.max_region_size = std::max(facts.max_region_size, (int)level.node_ranks(r).size());
  }
  facts.uniform = ex.uniform;
  facts.max_block = ex.max_block_bytes;
  facts.min_block = LLONG_MAX;
  facts.contiguous = ex.send.layout.contiguous(2) && ex.recv.layout.contiguous(2);
  facts.int_counts = fits_int_calls(ex);
  const int node = locality.node_of(ex.rank);
  for (int peer = 0; peer < ex.size; ++peer) {
    // As max_block (check_local): the own block, never sent, counts only at P = 1.
    if (peer != ex.rank || ex.size == 1)
      facts.min_block = std::min({facts.min_block, ex.send.block_bytes(peer), ex.recv.block_bytes(peer)});
    if (peer == ex.rank) continue;
    const long long sent = ex.send.block_bytes(peer);
    facts.total_bytes += sent;
    facts.max_rank_recv += ex.recv.block_bytes(peer);
    if (sent > 0) ++facts.nonempty_blocks;
    if (locality.node_of(peer) == node) facts.intra_node_bytes += sent;
  }
  if (ex.size < 1) facts.min_block = 0;
  facts.max_rank_send = facts.total_bytes;
  facts.max_rank_messages = facts.nonempty_blocks;
  return facts;
}

unsigned long long pair_weight(int from, int to) {
  unsigned long long x = ((unsigned long long)(unsigned)from << 32 | (unsigned)to) + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (x ^ (x >> 31)) | 1;
}

void count_checksums(const Exchange& ex, Agreement* mine) {
  unsigned long long sent = 0, expected = 0;
  for (int peer = 0; peer < ex.size; ++peer) {
    if (peer == ex.rank) continue;  // the own block is checked locally
    sent += (unsigned long long)ex.send.block_bytes(peer) * pair_weight(ex.rank, peer);
    expected += (unsigned long long)ex.recv.block_bytes(peer) * pair_weight(peer, ex.rank);
  }
  mine->sent_checksum = sent;
  mine->expected_checksum = expected;
}

void encode_record(const Agreement& mine, bool carrying, long long* record) {
  const ExchangeFacts& f = mine.facts;
  std::fill(record, record + kFieldCount, 0);
  record[kFailed] = mine.failed;
  record[kAlgorithmMax] = mine.algorithm;
  record[kAlgorithmNegMin] = -mine.algorithm;
  record[kHashMax] = mine.hints_hash;
  record[kHashNegMin] = -mine.hints_hash;
  record[kMaxBlock] = f.max_block;
  record[kNegMinBlock] = -f.min_block;
  record[kTotalBytes] = f.total_bytes;
  record[kMaxRankSend] = f.max_rank_send;
  record[kMaxRankRecv] = f.max_rank_recv;
  record[kNonemptyBlocks] = f.nonempty_blocks;
  record[kMaxRankMessages] = f.max_rank_messages;
  record[kIntraNodeBytes] = f.intra_node_bytes;
  record[kNonContiguous] = !f.contiguous;
  record[kInPlace] = f.in_place;
  record[kSentChecksum] = (long long)mine.sent_checksum;
  record[kExpectedChecksum] = (long long)mine.expected_checksum;
  record[kChanged] = mine.changed;
  record[kCannotKeep] = !mine.keeps;
  record[kBeyondInt] = !f.int_counts;
  record[kNotCarrying] = !carrying;
  record[kSpeculated] = ((long long)mine.speculated << 32) + mine.unready;
}

void combine_records(const long long* in, long long* inout) {
  for (int f = 0; f < kFieldCount; ++f)
    inout[f] = is_checksum(f) ? add_modulo(in[f], inout[f]) : is_sum(f) ? inout[f] + in[f] : std::max(in[f], inout[f]);
}

void decode_record(const long long* agreed, const Agreement& mine, Agreement* all) {
  *all = mine;
  all->failed = (int)agreed[kFailed];  // the largest code of the failing ranks
  all->algorithm = agreed[kAlgorithmMax] == -agreed[kAlgorithmNegMin] ? agreed[kAlgorithmMax] : -2;
  all->hints_hash = agreed[kHashMax] == -agreed[kHashNegMin] ? agreed[kHashMax] : -2;
  ExchangeFacts& a = all->facts;
  a.max_block = agreed[kMaxBlock];
  a.min_block = -agreed[kNegMinBlock];
  a.total_bytes = agreed[kTotalBytes];
  a.max_rank_send = agreed[kMaxRankSend];
  a.max_rank_recv = agreed[kMaxRankRecv];
  a.nonempty_blocks = agreed[kNonemptyBlocks];
  a.max_rank_messages = agreed[kMaxRankMessages];
  a.intra_node_bytes = agreed[kIntraNodeBytes];
  a.contiguous = agreed[kNonContiguous] == 0;
  a.in_place = agreed[kInPlace] != 0;
  a.int_counts = agreed[kBeyondInt] == 0;
  all->counts_disagree = agreed[kSentChecksum] != agreed[kExpectedChecksum];
  all->changed = agreed[kChanged] != 0;
  all->keeps = agreed[kCannotKeep] == 0;
  all->carried = agreed[kNotCarrying] == 0;
  all->speculated = (int)(agreed[kSpeculated] >> 32);
  all->unready = (int)(agreed[kSpeculated] & 0xffffffffLL);
}

namespace {

// u(r) and v(r) of encode_carried_record: pair weights of pairs no exchange has.
unsigned long long ring_weight(int rank, int which) { return pair_weight(rank, -1 - which); }

unsigned long long ring_term(long long value, int rank, int ranks, int which) {
  return (unsigned long long)value * (ring_weight(rank, which) - ring_weight((rank + 1) % ranks, which));
}

}  // namespace

void encode_carried_record(const Agreement& mine, bool carrying, int rank, int ranks, long long* record) {
  encode_record(mine, carrying, record);
  const unsigned long long sum = mine.sent_checksum - mine.expected_checksum +
                                 ring_term(mine.algorithm, rank, ranks, 0) + ring_term(mine.hints_hash, rank, ranks, 1);
  record[kSentChecksum] = (long long)sum;
  record[kExpectedChecksum] = 0;
  record[kAlgorithmMax] = record[kAlgorithmNegMin] = record[kHashMax] = record[kHashNegMin] = 0;
}

void decode_carried_record(const long long* agreed, const Agreement& mine, Agreement* all) {
  decode_record(agreed, mine, all);
  all->algorithm = mine.algorithm;
  all->hints_hash = mine.hints_hash;
  all->counts_disagree = false;
  all->inconsistent = agreed[kSentChecksum] != 0;
}

bool some_rank_declined(const long long* record) { return record[kNotCarrying] != 0; }

namespace {

// The field whose maximum a minimum's field (a negated value) travels against.
int maximum_of(int field) {
  switch (field) {
    case kAlgorithmNegMin: return kAlgorithmMax;
    case kHashNegMin: return kHashMax;
    case kNegMinBlock: return kMaxBlock;
    default: return -1;
  }
}

// The value of `field` on the wire, and back: max - min for a minimum (its
// maximum comes first), zigzag for the rest, so small values of either sign are
// short.
unsigned long long to_wire(const long long* record, int field) {
  const int maximum = maximum_of(field);
  if (maximum >= 0) return (unsigned long long)record[field] + (unsigned long long)record[maximum];
  const unsigned long long value = (unsigned long long)record[field];
  return (value << 1) ^ (unsigned long long)(record[field] >> 63);
}

long long from_wire(unsigned long long wire, const long long* record, int field) {
  const int maximum = maximum_of(field);
  if (maximum >= 0) return (long long)(wire - (unsigned long long)record[maximum]);
  return (long long)((wire >> 1) ^ (0 - (wire & 1)));
}

constexpr std::size_t kLengthBytes = (kFieldCount + 1) / 2;
static_assert(kLengthBytes + kRecordBytes == kPackedRecordMaxBytes, "agreement.hpp's kPackedRecordMaxBytes");

}  // namespace

std::size_t pack_record(const long long* record, char* out) {
  unsigned char* lengths = (unsigned char*)out;
  std::fill(lengths, lengths + kLengthBytes, 0);
  unsigned char* next = lengths + kLengthBytes;
  for (int f = 0; f < kFieldCount; ++f) {
    unsigned long long wire = to_wire(record, f);
    unsigned length = 0;
    for (; wire != 0; wire >>= 8, ++length) *next++ = (unsigned char)wire;
    lengths[f / 2] |= (unsigned char)(length << (4 * (f % 2)));
  }
  return (std::size_t)((char*)next - out);
}

std::size_t unpack_record(const char* in, std::size_t length, long long* record) {
  if (length < kLengthBytes) return 0;
  const unsigned char* lengths = (const unsigned char*)in;
  const unsigned char* next = lengths + kLengthBytes;
  std::size_t used = kLengthBytes;
  for (int f = 0; f < kFieldCount; ++f) {
    const unsigned bytes = (lengths[f / 2] >> (4 * (f % 2))) & 0xf;
    if (bytes > sizeof(long long) || used + bytes > length) return 0;
    unsigned long long wire = 0;
    for (unsigned b = 0; b < bytes; ++b) wire |= (unsigned long long)next[b] << (8 * b);
    record[f] = from_wire(wire, record, f);
    next += bytes;
    used += bytes;
  }
  // The half-byte after an odd number of fields is not one.
  if (kFieldCount % 2 && lengths[kLengthBytes - 1] >> 4) return 0;
  return used;
}

void set_alltoall_sums(const Locality& locality, ExchangeFacts* facts) {
  const long long block = facts->max_block;
  facts->total_bytes = block * facts->pairs();
  facts->nonempty_blocks = block > 0 ? facts->pairs() : 0;
  facts->intra_node_bytes = 0;
  for (int n = 0; n < locality.num_nodes(); ++n) {
    const long long ppn = (long long)locality.node_ranks(n).size();
    facts->intra_node_bytes += block * ppn * (ppn - 1);
  }
}

int agree(MPIX_Comm_s* comm, const Agreement& mine, Agreement* all) {
  TimeScope agreeing(TimePhase::agreement);
  if (comm->agreement_op == MPI_OP_NULL) {
    MPIX_CHECK_MPI(MPI_Type_contiguous(kFieldCount, MPI_LONG_LONG, &comm->agreement_type));
    MPIX_CHECK_MPI(MPI_Type_commit(&comm->agreement_type));
    MPIX_CHECK_MPI(MPI_Op_create(reduce_records, 1, &comm->agreement_op));
  }
  long long record[kFieldCount], agreed[kFieldCount];
  encode_record(mine, false, record);
  ++comm->agreements;
  MPIX_TRY(allreduce_progressing(record, agreed, 1, comm->agreement_type, comm->agreement_op, comm->lib_comm));
  decode_record(agreed, mine, all);
  return MPIX_SUCCESS;
}

double agreement_seconds(const ExchangeFacts& facts, const MachineProfile& profile, double record_bytes) {
  // MPICH's and SMPI's allreduce of a small record: recursive doubling, as many
  // rounds as the carried agreement's dissemination.
  return rounds_seconds(allreduce_rounds(facts.ranks, facts.nodes > 1 ? facts.max_ppn : facts.ranks, record_bytes),
                        profile) +
         profile.collective_overhead;
}

void free_agreement(MPIX_Comm_s* comm) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (comm->agreement_op != MPI_OP_NULL) MPI_Op_free(&comm->agreement_op);
  if (comm->agreement_type != MPI_DATATYPE_NULL) MPI_Type_free(&comm->agreement_type);
}

}  // namespace mpix
