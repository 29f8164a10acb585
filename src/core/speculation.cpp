#include "speculation.hpp"

#include <vector>

#include "breakdown.hpp"
#include "carried_agreement.hpp"
#include "completion.hpp"
#include "error.hpp"
#include "large_count.hpp"
#include "progress.hpp"

namespace mpix {

namespace {

// The tag of a block of `bytes` (comm.hpp): a message matches only a receive of
// its own length.
int speculation_tag(const MPIX_Comm_s* comm, long long bytes) { return (int)(comm->speculation_tag_base + bytes); }

}  // namespace

bool may_speculate(const MPIX_Comm_s* comm, long long block_bytes) {
  return comm->speculation >= -1 && comm->speculation_tag_base >= 0 && block_bytes > 0 && block_bytes < kSpeculationTags;
}

int Speculation::start(const Exchange& ex, MPIX_Comm_s* comm, CarriedAgreement* agreement, int every) {
  TimeScope exchanging(TimePhase::exchange);
  posted_.reserve(2 * (std::size_t)ex.size);
  requests_.reserve(2 * (std::size_t)ex.size);
  for (int send = 0; send < 2; ++send)
    for (int i = 1; i < ex.size; ++i) {
      const int peer = send ? (ex.rank + i) % ex.size : (ex.rank - i + ex.size) % ex.size;
      const Block block = send ? ex.send.block(peer) : ex.recv.block(peer);
      if (block.bytes() == 0) continue;
      charge_mpi_pack(block);
      MPI_Request request = MPI_REQUEST_NULL;
      const int tag = speculation_tag(comm, block.bytes());
      MPIX_TRY(send ? isend_block(block, peer, tag, comm->lib_comm, &request)
                    : irecv_block(block, peer, tag, comm->lib_comm, &request));
      posted_.push_back(Posted{peer, send != 0, block.bytes()});
      requests_.push_back(request);
      if (agreement && every > 0 && posted_.size() % (std::size_t)every == 0) MPIX_TRY(agreement->progress());
    }
  return MPIX_SUCCESS;
}

int Speculation::finish(const Exchange& ex, MPIX_Comm_s* comm) {
  TimeScope exchanging(TimePhase::exchange);
  MPIX_TRY(wait_all_progressing((int)requests_.size(), requests_.data(), comm->lib_comm));
  std::vector<char> staging;
  return copy_block(ex.send.block(ex.rank), ex.recv.block(ex.rank), staging, comm->lib_comm);
}

int Speculation::abandon(MPIX_Comm_s* comm) {
  const int size = comm->size;
  std::vector<long long> sent(size, 0), arriving(size, 0);
  for (const Posted& p : posted_)
    if (p.send) sent[p.peer] = p.bytes;
  const MPI_Comm lib_comm = comm->lib_comm;
  MPIX_TRY(alltoall_progressing(sent.data(), arriving.data(), lib_comm));
  // Receives first, so that no rank waits for its sends while its peers wait
  // for theirs: each send is matched by a receive already posted, or by one its
  // receiver posts below without waiting for anything of its own.
  std::vector<long long> receiving(size, 0);
  std::vector<MPI_Request> receives, sends;
  for (std::size_t k = 0; k < posted_.size(); ++k) {
    if (posted_[k].send) {
      sends.push_back(requests_[k]);
      continue;
    }
    const int peer = posted_[k].peer;
    // No message will match it where its sender started nothing for it, or a
    // block of another length, under another tag.
    if (arriving[peer] == posted_[k].bytes) receiving[peer] = posted_[k].bytes;
    else MPIX_CHECK_MPI(MPI_Cancel(&requests_[k]));
    receives.push_back(requests_[k]);
  }
  MPIX_TRY(wait_all_progressing((int)receives.size(), receives.data(), lib_comm));
  // The messages no receive matched, one at a time into scratch of their length.
  std::vector<char> dropped;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == comm->rank || arriving[peer] == 0 || receiving[peer] == arriving[peer]) continue;
    dropped.resize((std::size_t)arriving[peer]);
    MPI_Request request = MPI_REQUEST_NULL;
    MPIX_CHECK_MPI(MPI_Irecv(dropped.data(), (int)arriving[peer], MPI_BYTE, peer,
                             speculation_tag(comm, arriving[peer]), lib_comm, &request));
    MPIX_TRY(wait_all_progressing(1, &request, lib_comm));
  }
  MPIX_TRY(wait_all_progressing((int)sends.size(), sends.data(), lib_comm));
  // No rank leaves before every rank has cancelled its receives that nothing of
  // this call matches: a peer that left could start its next call, whose message
  // of that length would match such a receive, not the next call's.
  MPIX_TRY(barrier_progressing(lib_comm));
  posted_.clear();
  requests_.clear();
  return MPIX_SUCCESS;
}

}  // namespace mpix
