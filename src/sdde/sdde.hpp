// Sparse dynamic data exchange (MPIX_Alltoall_crs, MPIX_Alltoallv_crs): what the
// algorithms share.
//
// An SDDE call is one-shot (the API has no persistent form), so an algorithm is a
// function, registered in src/core/registry.cpp with its `sdde` member set:
//
//   sdde.cpp        entry points: argument checks, the one agreement between ranks,
//                   the choice of algorithm, the outputs
//   inbox.cpp       Inbox: receives the messages of a call into memory sized from
//                   what actually arrives, checks them, builds the outputs
//   protocol.cpp    the two discovery protocols (personalized: a reduction of
//                   counts, then probes; NBX: synchronous sends, probes, Ibarrier)
//   direct.cpp      personalized, nonblocking (paper 001 algorithms 1, 2)
//   rma.cpp         rma (algorithm 3, alltoall_crs only)
//   locality.cpp    personalized_loc, nonblocking_loc (algorithms 4, 5)
//
// Isolation: every message travels on the library's duplicate communicator
// (comm->lib_comm) with the call's own tags (8 from comm->next_plan_tag(false), handed
// out after the agreement, so identical on every rank); every probe names one of
// those tags, never MPI_ANY_TAG. A user's message, even with MPI_ANY_SOURCE and the
// same tag on the user's communicator, can therefore never be matched, nor can the
// message of another SDDE call or of a dense plan.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "../core/comm.hpp"
#include "../core/datatype.hpp"
#include "../core/plan.hpp"
#include "../core/registry.hpp"

namespace mpix {

// Tags of one call, relative to the call's first tag.
enum SddeTag : int {
  kTagDirect = 0,     // personalized, nonblocking: the messages themselves
  kTagInterNode = 1,  // *_loc phase 1: one aggregate per destination node
  kTagIntraNode = 2,  // *_loc phase 2: redistribution inside the node
  // Added to an NBX exchange's tag: the messages of its barrier in the simulated
  // build (protocol.cpp), so 4..6; never probed for.
  kTagBarrier = 4,
};

// One message this rank sends: `count` elements of the send type at `buf`.
struct SddeMessage {
  int dest = 0;
  int count = 0;
  const char* buf = nullptr;
};

// A validated SDDE call, as the algorithms see it.
struct SddeCall {
  const char* name = "";  // of the API function, for messages
  Op op = kAlltoallCrs;
  int size = 0, rank = 0;
  std::vector<SddeMessage> sends;
  TypeLayout send_layout, recv_layout;
  int recvcount = -1;         // alltoall_crs: elements of every message; -1 for alltoallv_crs
  long long known_nnz = -1;   // recv_nnz passed in by this rank (-1: unknown)
  long long known_size = -1;  // recv_size passed in by this rank (alltoallv_crs; -1: unknown)
  // Agreed between ranks:
  bool all_know_nnz = false;     // every rank passed recv_nnz >= 0: discovery may be skipped
  long long message_bytes = -1;  // alltoall_crs: bytes of every message, if all ranks agree

  long long send_bytes(const SddeMessage& m) const { return (long long)m.count * send_layout.size; }
};

// The outputs of a call, allocated with malloc (the user frees them with
// MPIX_Free) and owned here until released to the user.
struct SddeResult {
  int nnz = 0;
  long long size = 0;  // elements of the receive type
  int* src = nullptr;
  int* counts = nullptr;
  int* displs = nullptr;
  char* vals = nullptr;

  SddeResult() = default;
  SddeResult(const SddeResult&) = delete;
  SddeResult& operator=(const SddeResult&) = delete;
  ~SddeResult();
};

// A message found by a matched probe, to be received with receive_probed()
// (protocol.cpp). Where MPI has matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv),
// it is MPI's MPI_Message. SimGrid's SMPI 3.32 has none of them (they abort with
// "Not yet implemented"): the simulated build probes with MPI_Probe / MPI_Iprobe
// and receives with MPI_Recv from the probed source with the probed tag, which
// receives the probed message (MPI 4.0, section 3.8.1) because nothing else
// receives on that communicator with that tag in between: every call has tags of
// its own, and one call runs in one thread.
struct ProbedMessage {
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
};
// Blocking and non-blocking matched probes for a message of any source with `tag`.
int probe_message(int tag, MPI_Comm comm, ProbedMessage* message, MPI_Status* status);
int iprobe_message(int tag, MPI_Comm comm, int* found, ProbedMessage* message, MPI_Status* status);
// Receives a probed message (as MPI_Mrecv); returns MPI's code, so that a caller
// may tell MPI_ERR_TRUNCATE from other failures.
int receive_probed(void* buf, int count, MPI_Datatype type, ProbedMessage* message, MPI_Status* status);

// What a discovery protocol does with each message it matched.
class Receiver {
 public:
  virtual ~Receiver() = default;
  // Totals this rank will receive, when the protocol learned them before the first
  // receive (the personalized reduction); `bytes` is -1 if it was not reduced.
  virtual int expect(long long messages, long long bytes) {
    (void)messages;
    (void)bytes;
    return MPIX_SUCCESS;
  }
  // Receives the matched message (receive_probed). Returns an error only when MPI fails;
  // a message that is wrong for the call is received, dropped and noted, so that
  // the protocol completes on every rank.
  virtual int receive(ProbedMessage* message, const MPI_Status& status) = 0;
};

// Collects the messages of a call and builds the outputs.
//
// Memory: received data is allocated from what arrives, never from an upper bound
// or a count the caller claims. Either the personalized reduction has told this rank
// exactly how much its senders send (expect(): one buffer of that size, messages are
// received straight into it, anything beyond it is an error), or every message is
// received, packed, into a buffer of exactly its probed size and copied into an
// output allocated once at the end (peak twice the data, final exactly the data).
class Inbox : public Receiver {
 public:
  Inbox(const SddeCall& call, MPI_Comm comm) : call_(call), comm_(comm) {}
  ~Inbox() override;
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  int expect(long long messages, long long bytes) override;
  int receive(ProbedMessage* message, const MPI_Status& status) override;
  // A message that reached this rank inside an aggregate (the *_loc algorithms) or
  // a window slot (rma): `nbytes` packed bytes from `source`. They must stay valid
  // until finish() (see keep()), unless expect() was called (then they are copied
  // at once).
  int add_packed(int source, const char* bytes, long long nbytes);
  // Keeps a receive buffer whose bytes were passed to add_packed alive until finish().
  void keep(std::vector<char>&& buffer) { kept_.push_back(std::move(buffer)); }
  // Notes an error found by an algorithm; the first one noted is returned by finish().
  void note(int code, const std::string& message);
  // Returns the first error noted, or fills `result`.
  int finish(SddeResult* result);

  long long messages() const { return (long long)entries_.size(); }

 private:
  struct Entry {
    int source;
    int count;
    long long offset;             // in elements of the receive type
    char* owned = nullptr;        // packed bytes received for this message (malloc)
    const char* packed = nullptr; // packed bytes elsewhere (add_packed)
  };
  // Checks a message of `nbytes` bytes from `source`; its element count, or -1
  // (noted) if it is wrong for the call.
  long long admit(int source, long long nbytes);
  int drain(ProbedMessage* message, long long nbytes);
  MPI_Aint span(long long elements) const;

  const SddeCall& call_;
  MPI_Comm comm_;
  std::vector<Entry> entries_;
  std::vector<std::vector<char>> kept_;
  char* buffer_ = nullptr;     // expect(): the output, allocated up front
  long long capacity_ = -1;    // its elements; -1: no buffer (sized at finish)
  long long used_ = 0;         // elements admitted so far
  int error_ = MPIX_SUCCESS;
  std::string message_;
};

// Everything an algorithm needs for one call.
struct SddeContext {
  MPIX_Comm_s* comm = nullptr;
  MPI_Comm mpi_comm = MPI_COMM_NULL;  // the library's duplicate
  int tag = 0;                        // first of the call's 8 tags
  const SddeCall* call = nullptr;
  Inbox* inbox = nullptr;
  SddeStats* stats = nullptr;         // reset before the run
  Level locality = Level::node;       // *_loc: the units they aggregate per (mpix_locality)
};

// --- discovery protocols (protocol.cpp) -----------------------------------------

// One message of a protocol: `count` elements of `type` at `buf` to `dest` (a rank of
// the protocol's communicator), counted in the reduction at `slot` (the destination's
// rank in the reduction communicator), carrying `bytes` bytes.
struct Outgoing {
  int dest = 0;
  int slot = 0;
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  long long bytes = 0;
};

// Personalized (paper 001 algorithm 1): non-blocking sends, then one
// MPI_Reduce_scatter_block over `reduce_comm` tells every rank how many messages
// (and, with `reduce_bytes`, how many bytes) it receives, then that many matched
// probes (MPI_Mprobe, MPI_ANY_SOURCE, `tag`) on `comm`. `known` >= 0 (the same
// decision on every rank of `reduce_comm`) skips the reduction: receive that many.
int personalized_exchange(MPI_Comm comm, int tag, const std::vector<Outgoing>& out,
                          MPI_Comm reduce_comm, long long known, bool reduce_bytes,
                          Receiver& receiver, SddeStats* stats);

// NBX (paper 001 algorithm 2, Hoefler et al.): synchronous non-blocking sends;
// matched non-blocking probes receive what arrives while the sends are tested; once
// this rank's sends completed (all were matched), MPI_Ibarrier; probing goes on until
// the barrier completes, which means every rank's sends were matched. `known` >= 0
// (the same decision on every rank) needs no barrier: standard sends, `known`
// matched probes.
int nbx_exchange(MPI_Comm comm, int tag, const std::vector<Outgoing>& out, long long known,
                 Receiver& receiver, SddeStats* stats);

// Counts `out` into `stats` (messages to other ranks, and to other nodes).
void count_sends(const SddeContext& context, const std::vector<Outgoing>& out, SddeStats* stats);

}  // namespace mpix
