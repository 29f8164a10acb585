// personalized and nonblocking (paper 001 algorithms 1 and 2): every message goes
// straight from its source to its destination; they differ in how a rank learns
// how many messages to wait for.
#include "../core/algorithms.hpp"
#include "../core/error.hpp"
#include "sdde.hpp"

namespace mpix {
namespace {

// The call's messages, sent from the user's buffer with the user's send type.
std::vector<Outgoing> direct_messages(const SddeContext& context) {
  const SddeCall& call = *context.call;
  std::vector<Outgoing> out;
  out.reserve(call.sends.size());
  for (const SddeMessage& m : call.sends) {
    out.push_back(Outgoing{m.dest, m.dest, m.buf, m.count, call.send_layout.type, call.send_bytes(m)});
    // MPI packs a non-contiguous send type when the send is posted, right after.
    if (m.dest != call.rank) charge_mpi_pack(Block{const_cast<char*>(m.buf), m.count, &call.send_layout});
  }
  return out;
}

// recv_nnz known on every rank (agreed): the number of messages to wait for is
// known, and discovery (reduction or barrier) is skipped.
long long known_messages(const SddeContext& context) {
  return context.call->all_know_nnz ? context.call->known_nnz : -1;
}

}  // namespace

// A reduction of P counts (for alltoallv_crs, counts and bytes, so that the output
// is allocated once, exactly, and received into directly), then matched probes.
int run_sdde_personalized(SddeContext& context) {
  std::vector<Outgoing> out = direct_messages(context);
  count_sends(context, out, context.stats);
  return personalized_exchange(context.mpi_comm, context.tag + kTagDirect, out, context.mpi_comm,
                               known_messages(context), context.call->op == kAlltoallvCrs,
                               *context.inbox, context.stats);
}

// NBX: no reduction; synchronous sends and a non-blocking barrier detect the end.
int run_sdde_nonblocking(SddeContext& context) {
  std::vector<Outgoing> out = direct_messages(context);
  count_sends(context, out, context.stats);
  return nbx_exchange(context.mpi_comm, context.tag + kTagDirect, out, known_messages(context),
                      *context.inbox, context.stats);
}

}  // namespace mpix
