// The two discovery protocols of the SDDE algorithms (see sdde.hpp).
#include <vector>

#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/progress.hpp"
#include "sdde.hpp"

namespace mpix {

int probe_message(int tag, MPI_Comm comm, ProbedMessage* message, MPI_Status* status) {
  message->comm = comm;
  message->tag = tag;
#ifdef MPIX_SIMULATED
  MPIX_CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, tag, comm, status));
#else
  MPIX_CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, tag, comm, &message->message, status));
#endif
  message->source = status->MPI_SOURCE;
  return MPIX_SUCCESS;
}

int iprobe_message(int tag, MPI_Comm comm, int* found, ProbedMessage* message, MPI_Status* status) {
  message->comm = comm;
  message->tag = tag;
#ifdef MPIX_SIMULATED
  MPIX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, found, status));
#else
  MPIX_CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, tag, comm, found, &message->message, status));
#endif
  if (*found) message->source = status->MPI_SOURCE;
  return MPIX_SUCCESS;
}

int receive_probed(void* buf, int count, MPI_Datatype type, ProbedMessage* message, MPI_Status* status) {
  CompletionErrorsReturn errors_return;  // MPICH raises MPI_Mrecv's errors on MPI_COMM_WORLD
#ifdef MPIX_SIMULATED
  return MPI_Recv(buf, count, type, message->source, message->tag, message->comm, status);
#else
  return MPI_Mrecv(buf, count, type, &message->message, status);
#endif
}

void count_sends(const SddeContext& context, const std::vector<Outgoing>& out, SddeStats* stats) {
  const Locality& loc = context.comm->locality;
  const int me = context.call->rank;
  for (const Outgoing& o : out) {
    if (o.dest == me) continue;
    ++stats->messages;
    stats->bytes += o.bytes;
    if (loc.node_of(o.dest) != loc.node_of(me)) {
      ++stats->inter_node_messages;
      stats->inter_node_bytes += o.bytes;
    }
  }
}

namespace {

int post_sends(MPI_Comm comm, int tag, const std::vector<Outgoing>& out, bool synchronous,
               std::vector<MPI_Request>* requests) {
  requests->assign(out.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Outgoing& o = out[i];
    if (synchronous)
      MPIX_CHECK_MPI(MPI_Issend(o.buf, o.count, o.type, o.dest, tag, comm, &(*requests)[i]));
    else
      MPIX_CHECK_MPI(MPI_Isend(o.buf, o.count, o.type, o.dest, tag, comm, &(*requests)[i]));
  }
  return MPIX_SUCCESS;
}

// Receives `count` messages with matched blocking probes; where some request is
// started, with polling probes that move it on between them (progress.hpp).
int receive_counted(MPI_Comm comm, int tag, long long count, Receiver& receiver) {
  for (long long i = 0; i < count; ++i) {
    ProbedMessage message;
    MPI_Status status;
    if (any_started()) {
      for (int found = 0; !found;) {
        MPIX_TRY(iprobe_message(tag, comm, &found, &message, &status));
        if (!found) progress_all_started();
      }
    } else {
      MPIX_TRY(probe_message(tag, comm, &message, &status));
    }
    MPIX_TRY(receiver.receive(&message, status));
  }
  return MPIX_SUCCESS;
}

// The non-blocking barrier that ends NBX.
#ifdef MPIX_SIMULATED
// SimGrid's SMPI 3.32 MPI_Ibarrier is not a barrier: rank 0 posts its release
// messages as soon as it enters, so every other rank completes it once rank 0 has
// entered, whether or not the rest have (seen: NBX at 8 ranks lost a message and
// hung). The simulated build uses a dissemination barrier instead: ceil(log2 P)
// rounds of zero-byte messages, round k to rank + 2^k and from rank - 2^k (distinct
// sources, so one tag serves every round), each round posted once the previous one
// completed, advanced by test().
class Ibarrier {
 public:
  int start(MPI_Comm comm, int tag) {
    comm_ = comm;
    tag_ = tag;
    MPIX_CHECK_MPI(MPI_Comm_size(comm, &size_));
    MPIX_CHECK_MPI(MPI_Comm_rank(comm, &rank_));
    distance_ = 1;
    return post();
  }
  int test(int* done) {
    for (;;) {
      if (distance_ >= size_) {
        *done = 1;
        return MPIX_SUCCESS;
      }
      MPIX_CHECK_MPI(MPI_Testall(2, requests_, done, MPI_STATUSES_IGNORE));
      if (!*done) return MPIX_SUCCESS;
      distance_ *= 2;
      MPIX_TRY(post());
    }
  }

 private:
  int post() {
    if (distance_ >= size_) return MPIX_SUCCESS;
    MPIX_CHECK_MPI(MPI_Irecv(nullptr, 0, MPI_BYTE, (rank_ - distance_ % size_ + size_) % size_, tag_, comm_,
                             &requests_[0]));
    MPIX_CHECK_MPI(MPI_Isend(nullptr, 0, MPI_BYTE, (rank_ + distance_) % size_, tag_, comm_, &requests_[1]));
    return MPIX_SUCCESS;
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
  int tag_ = 0, size_ = 1, rank_ = 0, distance_ = 1;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};
#else
class Ibarrier {
 public:
  int start(MPI_Comm comm, int) {
    MPIX_CHECK_MPI(MPI_Ibarrier(comm, &request_));
    return MPIX_SUCCESS;
  }
  int test(int* done) {
    MPIX_TRY(test_one(&request_, done, MPI_COMM_NULL));
    return MPIX_SUCCESS;
  }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};
#endif

}  // namespace

// Why MPI_Reduce_scatter_block and not the paper's MPI_Allreduce of a P-vector:
// each rank needs only its own entry. An allreduce hands all P entries to every
// rank; for long vectors MPI implements it as a reduce-scatter followed by an
// allgather (Rabenseifner), so the reduce-scatter alone moves half the data
// ((P-1)/P of the vector per rank instead of twice that) in as many latency steps
// (log2 P with recursive halving), and leaves every rank one entry instead of P.
int personalized_exchange(MPI_Comm comm, int tag, const std::vector<Outgoing>& out,
                          MPI_Comm reduce_comm, long long known, bool reduce_bytes,
                          Receiver& receiver, SddeStats* stats) {
  std::vector<MPI_Request> requests;
  MPIX_TRY(post_sends(comm, tag, out, false, &requests));
  long long expected = known;
  if (known < 0) {
    int slots = 0;
    MPIX_CHECK_MPI(MPI_Comm_size(reduce_comm, &slots));
    const int width = reduce_bytes ? 2 : 1;
    std::vector<long long> contributions((std::size_t)slots * width, 0);
    for (const Outgoing& o : out) {
      contributions[(std::size_t)o.slot * width] += 1;
      if (reduce_bytes) contributions[(std::size_t)o.slot * width + 1] += o.bytes;
    }
    long long mine[2] = {0, -1};
    MPIX_TRY(collective_progressing(
        reduce_comm, "MPI_Reduce_scatter_block",
        [&] {
          return MPI_Reduce_scatter_block(contributions.data(), mine, width, MPI_LONG_LONG, MPI_SUM, reduce_comm);
        },
        [&](MPI_Request* request) {
          return MPI_Ireduce_scatter_block(contributions.data(), mine, width, MPI_LONG_LONG, MPI_SUM, reduce_comm,
                                           request);
        }));
    ++stats->collectives;
    expected = mine[0];
    MPIX_TRY(receiver.expect(mine[0], reduce_bytes ? mine[1] : -1));
  }
  MPIX_TRY(receive_counted(comm, tag, expected, receiver));
  MPIX_TRY(wait_all_progressing((int)requests.size(), requests.data(), comm));
  return MPIX_SUCCESS;
}

int nbx_exchange(MPI_Comm comm, int tag, const std::vector<Outgoing>& out, long long known,
                 Receiver& receiver, SddeStats* stats) {
  std::vector<MPI_Request> requests;
  if (known >= 0) {
    // Every rank knows what it receives: no termination to detect.
    MPIX_TRY(post_sends(comm, tag, out, false, &requests));
    MPIX_TRY(receive_counted(comm, tag, known, receiver));
    MPIX_TRY(wait_all_progressing((int)requests.size(), requests.data(), comm));
    return MPIX_SUCCESS;
  }
  // A synchronous send completes only once its receive matched, so "all my sends
  // completed" means "all my messages were received"; the barrier then completes
  // once that holds on every rank, and nothing of this call can still be in flight.
  MPIX_TRY(post_sends(comm, tag, out, true, &requests));
  Ibarrier barrier;
  bool in_barrier = false;
  for (;;) {
    int found = 0;
    ProbedMessage message;
    MPI_Status status;
    MPIX_TRY(iprobe_message(tag, comm, &found, &message, &status));
    if (found) {
      MPIX_TRY(receiver.receive(&message, status));
      continue;
    }
    int done = 0;
    if (!in_barrier) {
      MPIX_TRY(test_all((int)requests.size(), requests.data(), &done, comm));
      if (done) {
        MPIX_TRY(barrier.start(comm, tag + kTagBarrier));
        ++stats->collectives;
        in_barrier = true;
      }
    } else {
      MPIX_TRY(barrier.test(&done));
      if (done) return MPIX_SUCCESS;
    }
    if (!done) progress_all_started();
  }
}

}  // namespace mpix
