// The pieces the log-time and hierarchical exchanges share (bruck.hpp): messages
// made of byte runs, the staging of non-contiguous user blocks, and the plans that
// run as a sequence of stages, with the change bit a repeated blocking call carries.
#include "bruck.hpp"

#include <algorithm>
#include <climits>

#include "../core/algorithms.hpp"
#include "../core/comm.hpp"
#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/large_count.hpp"

namespace mpix {
// ---------------------------------------------------------------- PieceMessage

PieceMessage::~PieceMessage() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (type_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&type_);
}

int PieceMessage::build(const std::vector<Piece>& pieces, int peer) {
  std::vector<char*> starts;
  std::vector<long long> run_bytes;
  bytes_ = 0;
  for (const Piece& piece : pieces) {
    if (piece.bytes <= 0) continue;
    // Runs that follow each other in memory travel as one.
    if (!starts.empty() && starts.back() + run_bytes.back() == piece.addr) {
      run_bytes.back() += piece.bytes;
    } else {
      starts.push_back(piece.addr);
      run_bytes.push_back(piece.bytes);
    }
    bytes_ += piece.bytes;
  }
  message_ = Message{};
  if (starts.empty() || peer < 0) return MPIX_SUCCESS;
  if (starts.size() == 1) {
    message_ = Message{Block{starts[0], run_bytes[0], &byte_layout()}, peer};
    return MPIX_SUCCESS;
  }
  // The hindexed type's lengths are ints: a longer run is several entries.
  std::vector<int> lengths;
  std::vector<MPI_Aint> displs;
  const long long limit = large_count_policy().int_limit;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    for (long long offset = 0; offset < run_bytes[i]; offset += limit) {
      lengths.push_back((int)std::min(limit, run_bytes[i] - offset));
      displs.emplace_back();
      MPIX_CHECK_MPI(MPI_Get_address(starts[i] + offset, &displs.back()));
    }
  }
  MPIX_CHECK_MPI(MPI_Type_create_hindexed((int)lengths.size(), lengths.data(), displs.data(), MPI_BYTE, &type_));
  MPIX_CHECK_MPI(MPI_Type_commit(&type_));
  MPIX_TRY(describe_type(type_, "pieces", &layout_));
  message_ = Message{Block{(char*)MPI_BOTTOM, 1, &layout_}, peer};
  return MPIX_SUCCESS;
}

// ---------------------------------------------------------------- CarriedMessage

int CarriedMessage::build(std::vector<Piece> pieces, int peer) {
  peer_ = peer;
  MPIX_TRY(plain_.build(pieces, peer));
  pieces_ = std::move(pieces);
  flagged_built_ = false;
  return MPIX_SUCCESS;
}

int CarriedMessage::post(bool send, const ChangeBit& bit, Traffic& traffic, int tag_offset, PlanStats& stats,
                         MPI_Request* request, long long discard_at) {
  *request = MPI_REQUEST_NULL;
  if (!bit.carrying) {
    if (plain_.empty()) return MPIX_SUCCESS;
    return send ? traffic.isend(plain_.message(), request, stats, tag_offset)
                : traffic.irecv(plain_.message(), request, tag_offset);
  }
  if (send) {
    word_ = bit.seen;
    if (bit.seen)
      return traffic.isend(Message{Block{(char*)&word_, (MPI_Count)sizeof word_, &byte_layout()}, peer_}, request,
                           stats, tag_offset);
  } else if (bit.mine) {
    word_ = 1;  // seen already: what arrives is not read
    return traffic.irecv(Message{Block{bit.discard + discard_at, carried_bytes(), &byte_layout()}, peer_}, request,
                         tag_offset);
  }
  if (!flagged_built_) {
    std::vector<Piece> flagged{Piece{(char*)&word_, (long long)sizeof word_}};
    flagged.insert(flagged.end(), pieces_.begin(), pieces_.end());
    MPIX_TRY(flagged_.build(flagged, peer_));
    flagged_built_ = true;
    pieces_ = {};
  }
  return send ? traffic.isend(flagged_.message(), request, stats, tag_offset)
              : traffic.irecv(flagged_.message(), request, tag_offset);
}

int post_carried(const std::vector<std::unique_ptr<CarriedMessage>>& recvs,
                 const std::vector<std::unique_ptr<CarriedMessage>>& sends, const ChangeBit& bit, Traffic& traffic,
                 int tag_offset, PlanStats& stats, std::vector<MPI_Request>& requests) {
  long long discard_at = 0;
  for (bool send : {false, true})
    for (const auto& message : send ? sends : recvs) {
      MPI_Request request = MPI_REQUEST_NULL;
      MPIX_TRY(message->post(send, bit, traffic, tag_offset, stats, &request, discard_at));
      if (request != MPI_REQUEST_NULL) requests.push_back(request);
      if (!send) discard_at += message->carried_bytes();
    }
  return MPIX_SUCCESS;
}

// ---------------------------------------------------------------- ByteSide

void ByteSide::init(const BufferSide& side, const std::vector<bool>& used, ScratchPool& pool) {
  side_ = &side;
  const int size = (int)side.counts.size();
  addr_.assign(size, nullptr);
  staged_.clear();
  std::size_t total = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (!used[peer] || side.block_bytes(peer) == 0) continue;
    Block block = side.block(peer);
    if (block.contiguous()) {
      addr_[peer] = block.first_byte();
    } else {
      staged_.push_back(peer);
      total += (std::size_t)block.bytes();
    }
  }
  staging_ = pool.acquire(total);
  std::size_t offset = 0;
  for (int peer : staged_) {
    addr_[peer] = staging_.data() + offset;
    offset += (std::size_t)side.block_bytes(peer);
  }
}

int ByteSide::pack(MPI_Comm comm) const {
  for (int peer : staged_) MPIX_TRY(pack_block(side_->block(peer), addr_[peer], comm));
  return MPIX_SUCCESS;
}

int ByteSide::unpack(MPI_Comm comm) const {
  for (int peer : staged_) MPIX_TRY(unpack_block(addr_[peer], side_->block(peer), comm));
  return MPIX_SUCCESS;
}

// ---------------------------------------------------------------- StagePlan

int StagePlan::start() {
  stats = PlanStats{};
  stats.scratch_bytes = init_stats.scratch_bytes;
  stage_ = 0;
  posted_ = false;
  round_counted_ = false;
  requests_.clear();
  if (before_start_) MPIX_TRY(before_start_());
  return advance(false);
}

int StagePlan::advance(bool may_block) {
  while (stage_ < stages_.size()) {
    Stage& stage = stages_[stage_];
    if (!posted_) {
      TimeScope posting(stage.phase);
      requests_.clear();
      MPIX_TRY(stage.post(requests_));
      posted_ = true;
      if (!stage.continues_round) round_counted_ = false;
      if (!requests_.empty()) {
        if (!round_counted_) ++stats.rounds;
        round_counted_ = true;
        return MPIX_SUCCESS;
      }
    }
    if (!may_block && stage.blocking_done) return MPIX_SUCCESS;
    TimeScope finishing(stage.phase);
    if (stage.done) MPIX_TRY(stage.done());
    ++stage_;
    posted_ = false;
  }
  return MPIX_SUCCESS;
}

int StagePlan::wait() {
  bool done = false;
  return progress(true, &done);
}

int StagePlan::test(bool* done) { return progress(false, done); }

int StagePlan::progress(bool blocking, bool* done) {
  *done = false;
  while (stage_ < stages_.size()) {
    const Stage& stage = stages_[stage_];
    TimeScope waiting(stage.phase);
    if (!requests_.empty()) {
      bool stage_done = false;
      MPIX_TRY(complete_requests(requests_, blocking, &stage_done, stage_comm_));
      if (!stage_done) return MPIX_SUCCESS;
    }
    if (!blocking && stage.poll) {
      bool complete = false;
      MPIX_TRY(stage.poll(&complete));
      if (!complete) return MPIX_SUCCESS;
    }
    if (stage.done) MPIX_TRY(stage.done());
    ++stage_;
    posted_ = false;
    MPIX_TRY(advance(blocking));
  }
  if (after_wait_) MPIX_TRY(after_wait_());
  *done = true;
  return MPIX_SUCCESS;
}

void ByteExchangePlan::init_sides(const PlanContext& context) {
  ex_ = context.exchange;
  comm_ = context.mpi_comm;
  stage_comm_ = comm_;
  std::vector<bool> used(ex_.size, true);
  used[ex_.rank] = false;
  send_.init(ex_.send, used, context.comm->scratch);
  recv_.init(ex_.recv, used, context.comm->scratch);
  before_start_ = [this] {
    MPIX_TRY(send_.pack(comm_));
    if (ex_.send.block_bytes(ex_.rank) == 0) return MPIX_SUCCESS;
    return copy_block(ex_.send.block(ex_.rank), ex_.recv.block(ex_.rank), own_staging_, comm_);
  };
  after_wait_ = [this] { return recv_.unpack(comm_); };
}

void ByteExchangePlan::carry_change() {
  carries_ = true;
  const std::function<int()> prepare = before_start_, finish = after_wait_;
  before_start_ = [this, prepare] { return bit_.seen ? MPIX_SUCCESS : prepare(); };
  after_wait_ = [this, finish] { return bit_.seen ? MPIX_SUCCESS : finish(); };
}

int CarryingStagePlan::start() {
  bit_ = ChangeBit{};
  return StagePlan::start();
}

int CarryingStagePlan::start_carrying(bool changed) {
  if (!carries_) return MPIX_ERR_UNSUPPORTED;
  bit_ = ChangeBit{true, changed, changed, nullptr};
  if (changed) {
    discard_.resize((std::size_t)discard_bytes_);
    bit_.discard = discard_.data();
  }
  return StagePlan::start();
}

// ---------------------------------------------------------------- SizeMismatch

int report_size_mismatch(const SizeMismatch& mismatch, const char* algorithm, MPI_Comm comm) {
  if (mismatch.source < 0) return MPIX_SUCCESS;
  int rank = 0;
  MPIX_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  return fail(MPIX_ERR_ARG, format("%s: rank %d is sent %lld bytes by rank %d where recvcounts says %lld bytes "
                                   "(send and receive counts disagree)", algorithm, rank, mismatch.announced,
                                   mismatch.source, mismatch.expected));
}

}  // namespace mpix
