// Hierarchical TuNA (paper 000, section IV): staggered (Algorithm 2) and coalesced
// (Algorithm 3).
//
// Intra-node phase: the N concurrent Q x Q exchanges of the "implicit" strategy
// (Fig. 4b) are one TuNA over the node's ranks, addressed directly by their ranks
// in the library's communicator (no communicator split): the block a rank sends to
// its node peer with local rank t is made of one piece per destination routed
// through t, i.e. every rank whose local rank is t (mod Q); one message per round
// carries all groups. Pieces for the own node land in the receive buffer; pieces
// for other nodes land in X, laid out at init by destination and then by origin
// from the sizes the metadata gave, so it holds no empty segments (the
// "rearrangement" of Algorithm 3 line 19 is done once on offsets, not on data).
//
// Inter-node phase: scattered in batches of mpix_block_count rounds. Local rank t of
// node n sends to each destination d on another node (with local rank = t mod Q)
// what node n has for d: coalesced, one message of Q pieces per destination, N-1
// rounds; staggered, one message per piece, Q (N-1) rounds. Rounds are numbered the
// same on both sides of every message, so batches line up without deadlock: the
// node distance, shifted by the receiver's local rank (round_of, below).
//
// Unequal nodes (the last node smaller, or any sizes) work: a destination whose
// local rank does not exist on the sending node is served by local rank
// (its local rank mod Q), and receives from that rank.
#include <algorithm>
#include <climits>
#include <cmath>

#include "../core/algorithms.hpp"
#include "../core/comm.hpp"
#include "../core/error.hpp"
#include "bruck.hpp"
#include "hierarchical.hpp"

namespace mpix {

// ---------------------------------------------------------------- the route

HierRoute hier_route(const NodeLayout& layout, int me, bool coalesced) {
  const int nodes = (int)layout.size();
  std::vector<int> node_of, local_of;
  for (int n = 0; n < nodes; ++n)
    for (int l = 0; l < (int)layout[n].size(); ++l) {
      const int rank = layout[n][l];
      if (rank >= (int)node_of.size()) {
        node_of.resize(rank + 1, -1);
        local_of.resize(rank + 1, -1);
      }
      node_of[rank] = n;
      local_of[rank] = l;
    }
  const int size = (int)node_of.size();
  HierRoute route;
  route.me = me;
  route.node = node_of[me];
  route.local = local_of[me];
  const std::vector<int>& members = layout[route.node];
  const int q = route.q = (int)members.size(), node = route.node, local = route.local;
  for (const std::vector<int>& ranks : layout) route.q_max = std::max(route.q_max, (int)ranks.size());
  const int q_max = route.q_max;

  // Every destination's pieces go through the local rank that serves its local rank.
  route.routed.assign(q, {});
  for (int d = 0; d < size; ++d) route.routed[serving_local_rank(local_of[d], q)].push_back(d);

  // Inter-node positions: coalesced, round_of(offset, t) for the node at `offset`
  // from this one and a receiver of local rank t; staggered, that times Q_max plus
  // the origin's local rank.
  route.positions = coalesced ? (long long)(nodes - 1) : (long long)(nodes - 1) * q_max;
  auto offset_of = [nodes](int from, int to) { return ((to - from) % nodes + nodes) % nodes; };
  // The round of the message between two nodes `offset` apart whose receiver has local
  // rank t. Shifted by t, so that in any round the Q ranks of a node send to up to Q
  // different nodes: unshifted, a batch of block_count rounds sends all of a node's
  // bytes to the next block_count nodes, over the few links that lead there (on a
  // torus, one direction of one dimension), and the batch waits for them.
  auto round_of = [nodes](int offset, int t) { return (long long)((offset - 1 + t) % (nodes - 1)); };
  auto add = [&](bool send, long long position, std::vector<HierBlock> blocks, int peer) {
    route.inter.push_back(HierMessage{send, position, peer, std::move(blocks)});
  };
  const std::vector<int>& mine = route.routed[local];
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const int d = mine[k];
    if (node_of[d] == node) continue;
    const int offset = offset_of(node, node_of[d]);
    std::vector<HierBlock> blocks;
    for (int o = 0; o < q; ++o) {
      const HierBlock block{members[o], o, d, (int)k};
      if (coalesced)
        blocks.push_back(block);
      else
        add(true, round_of(offset, local_of[d]) * q_max + o, {block}, d);
    }
    if (coalesced) add(true, round_of(offset, local_of[d]), std::move(blocks), d);
  }
  for (int m = 0; m < nodes; ++m) {
    if (m == node) continue;
    const std::vector<int>& sources = layout[m];
    const int offset = offset_of(m, node);
    const int proxy = sources[serving_local_rank(local, (int)sources.size())];
    std::vector<HierBlock> blocks;
    for (int s = 0; s < (int)sources.size(); ++s) {
      const HierBlock block{sources[s], s, me, -1};
      if (coalesced)
        blocks.push_back(block);
      else
        add(false, round_of(offset, local) * q_max + s, {block}, proxy);
    }
    if (coalesced) add(false, round_of(offset, local), std::move(blocks), proxy);
  }
  return route;
}

void HierRoute::layout_x(const std::function<long long(int, int)>& arriving) {
  const std::vector<int>& mine = routed[local];
  x_offset.assign(q, std::vector<long long>(mine.size(), 0));
  x_bytes = 0;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    if (mine[k] == me) continue;
    for (int o = 0; o < q; ++o) {
      if (o == local) continue;
      x_offset[o][k] = x_bytes;
      x_bytes += arriving(o, (int)k);
    }
  }
}

namespace {

class HierarchicalTuna : public ByteExchangePlan {
 public:
  int init(const PlanContext& context, bool coalesced, const char* name) {
    init_sides(context);
    tag_ = context.tag;
    ScratchPool& pool = context.comm->scratch;
    const Locality& loc = context.comm->locality;
    const int me = ex_.rank;
    NodeLayout layout(loc.num_nodes());
    for (int n = 0; n < loc.num_nodes(); ++n) layout[n] = loc.node_ranks(n);
    HierRoute route = hier_route(layout, me, coalesced);
    const std::vector<std::vector<int>>& routed = route.routed;
    const std::vector<int>& members = layout[route.node];
    const int q = route.q, local = route.local;

    // The radix is the intra-node radix, 2..Q (Q: ranks of the largest node).
    const int max_radix = std::max(2, route.q_max);
    if (!context.params.radix_auto && context.params.radix > max_radix)
      return fail(MPIX_ERR_INFO_VALUE,
                  format("mpix_radix=%d: must be 2..Q for %s, the intra-node radix (Q=%d ranks per node)",
                         context.params.radix, name, route.q_max));
    const int radix = context.params.radix_auto ? default_radix(q, ex_.max_block_bytes) : context.params.radix;

    BruckSetup setup;
    setup.comm = comm_;
    setup.tag = context.tag;
    setup.members = members;
    setup.me = local;
    setup.radix = radix;
    setup.uniform_bytes = -1;  // TuNA: the sizes travel (at init)
    setup.max_piece = ex_.max_block_bytes;  // M, agreed at init in dense.cpp
    setup.one_part_room = tuna_one_part_room(context.comm);
    // No eager limit (a decision): these rounds stay inside a node, whose shared
    // memory switches protocol at its own size (16 KiB in MPICH here, where the
    // profile's limit is measured between nodes) and whose partners keep step
    // (no network between them): in simulation the rounds in parts past the limit
    // took -2.0 to +1.9 % (median +0.3 %) of one message each in the 54 rows they
    // changed (bench/results/eager-hierarchical-2026-12-03.csv).
    setup.pieces.resize(q);
    setup.out.assign(q, {});
    for (int t = 0; t < q; ++t) {
      setup.pieces[t] = (int)routed[t].size();
      if (t == local) continue;
      for (int d : routed[t]) setup.out[t].push_back(send_.piece(d));
    }
    MPIX_TRY(core_.plan(std::move(setup), &init_stats));
    // The metadata gives the sizes of the blocks from this node's ranks; blocks from
    // other nodes are sized by recvcounts alone (a larger one is a truncation).
    const std::vector<int>& mine = routed[local];
    SizeMismatch mismatch;
    for (std::size_t k = 0; k < mine.size(); ++k)
      for (int o = 0; o < q; ++o)
        if (mine[k] == me && o != local)
          mismatch.check(members[o], core_.arriving_bytes(o, (int)k), recv_.piece(members[o]).bytes);
    MPIX_TRY(report_size_mismatch(mismatch, name, comm_));

    route.layout_x([this](int o, int k) { return core_.arriving_bytes(o, k); });
    x_ = pool.acquire((std::size_t)route.x_bytes);
    auto x_piece = [&](int o, int k) { return Piece{x_.data() + route.x_offset[o][k], core_.arriving_bytes(o, k)}; };
    std::vector<std::vector<Piece>> in(q);
    for (int o = 0; o < q; ++o) {
      if (o == local) continue;
      for (std::size_t k = 0; k < mine.size(); ++k)
        in[o].push_back(mine[k] == me ? recv_.piece(members[o]) : x_piece(o, (int)k));
    }
    MPIX_TRY(core_.bind(in, pool));
    core_.add_stages(&stages_, &stats, &bit_, TimePhase::intra_node);

    const long long batch = std::max(1, context.params.block_count);
    batches_.resize((std::size_t)((route.positions + batch - 1) / batch));
    for (const HierMessage& m : route.inter) {
      std::vector<Piece> pieces;
      for (const HierBlock& b : m.blocks)
        pieces.push_back(!m.send ? recv_.piece(b.origin)
                                 : b.origin == me ? send_.piece(b.dest) : x_piece(b.origin_local, b.k));
      auto message = std::make_unique<CarriedMessage>();
      MPIX_TRY(message->build(std::move(pieces), m.peer));
      Batch& into = batches_[(std::size_t)(m.position / batch)];
      (m.send ? into.sends : into.recvs).push_back(std::move(message));
    }
    for (std::size_t b = 0; b < batches_.size(); ++b)
      stages_.push_back(Stage{[this, b](std::vector<MPI_Request>& requests) { return post_batch(b, requests); },
                              [this, b] {
                                if (bit_.carrying)
                                  for (const auto& message : batches_[b].recvs) message->received(&bit_);
                                return MPIX_SUCCESS;
                              },
                              false, false, TimePhase::inter_node});
    // The change bit: after the intra-node TuNA every rank has its node's OR, and
    // every rank receives a message from every other node (from the rank that
    // serves its local rank there), so the inter-node phase brings every node's.
    carry_change();
    discard_bytes_ = core_.max_carried_receive();
    for (const Batch& b : batches_) {
      long long batch_bytes = 0;
      for (const auto& message : b.recvs) batch_bytes += message->carried_bytes();
      discard_bytes_ = std::max(discard_bytes_, batch_bytes);
    }

    init_stats.scratch_bytes = core_.scratch_bytes() + x_.size() + side_staging_bytes();
    return MPIX_SUCCESS;
  }

 private:
  struct Batch {
    std::vector<std::unique_ptr<CarriedMessage>> recvs, sends;
  };

  // Scattered: the batch's receives, then its sends.
  int post_batch(std::size_t index, std::vector<MPI_Request>& requests) {
    Traffic traffic(comm_, tag_);
    return post_carried(batches_[index].recvs, batches_[index].sends, bit_, traffic, kTagInter, stats, requests);
  }

  int tag_ = 0;
  TunaCore core_;
  ScratchBuffer x_;
  std::vector<Batch> batches_;
};

int create(const PlanContext& context, bool coalesced, const char* name, std::unique_ptr<Plan>* plan) {
  auto made = std::make_unique<HierarchicalTuna>();
  MPIX_TRY(made->init(context, coalesced, name));
  *plan = std::move(made);
  return MPIX_SUCCESS;
}

}  // namespace

int create_tuna_hier_staggered(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  return create(context, false, "tuna_hier_staggered", plan);
}

int create_tuna_hier_coalesced(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  return create(context, true, "tuna_hier_coalesced", plan);
}

// The intra-node TuNA carries, per block, one piece per node; then each rank
// sends, for each other node, Q pieces in one message (coalesced) or one message
// per piece (staggered), in batches of block_count positions.
Cost hierarchical_cost(const ExchangeFacts& facts, const Params& params, bool coalesced) {
  Cost cost;
  const int q = facts.max_ppn, nodes = facts.nodes;
  if (params.radix > std::max(2, q)) {
    cost.valid = false;
    return cost;
  }
  const double block = facts.uniform ? (double)facts.max_block : facts.mean_block();
  // Inside a node the rounds stay one message past the eager limit (BruckSetup's
  // default, as the plans).
  add_tuna_rounds(&cost, facts, q, params.radix, block * nodes, nodes, true, true, kTunaOnePartRoom, kNoLimit);
  if (nodes > 1 && block > 0) {
    const double positions = coalesced ? nodes - 1 : (double)(nodes - 1) * q;
    const double batches = std::ceil(positions / std::max(1, params.block_count));
    RoundCost round;
    round.rounds = batches;
    round.inter.messages = positions / batches;
    round.inter.bytes = (double)(nodes - 1) * q * block / batches;
    round.nic_sharers = q;
    round.ranks = facts.ranks;
    round.nodes = facts.nodes;
    round.busiest_bytes = busiest_bytes_factor(facts, coalesced ? q : 1);
    cost.rounds.push_back(round);
  }
  return cost;
}

Cost cost_tuna_hier_staggered(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  return hierarchical_cost(facts, params, false);
}

Cost cost_tuna_hier_coalesced(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  return hierarchical_cost(facts, params, true);
}

}  // namespace mpix
