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
#include "../core/progress.hpp"
#include "../topology/lane_groups.hpp"
#include "bruck.hpp"
#include "hierarchical.hpp"

namespace mpix {

// ---------------------------------------------------------------- the route

namespace {

// The coalesced route in lane groups (equal nodes of Q ranks): routed[t] is t's
// own-node destination, then, row by row, the ranks of t's group on the node t's
// row serves; each row is one message of the node's blocks for that group, to and
// from the rank of the same local rank, in the position the row has after a shift
// by the group's index (as round_of below shifts by the local rank).
void route_in_lane_groups(const NodeLayout& layout, const LaneGroups& groups, HierRoute* route) {
  const int nodes = groups.nodes, q = groups.ppn, node = route->node, local = route->local;
  auto rank_at = [&](int offset, int t) { return layout[(node + offset) % nodes][t]; };
  route->routed.assign(q, {});
  for (int t = 0; t < q; ++t) {
    const int first = groups.first(t), size = groups.size(t), member = t - first;
    route->routed[t].push_back(rank_at(0, t));
    for (int row = 0; row < groups.rows(member, size); ++row)
      for (int c = 0; c < size; ++c) route->routed[t].push_back(rank_at(groups.offset(member, size, row), first + c));
  }
  const int first = groups.first(local), size = groups.size(local), member = local - first;
  const int rows = groups.rows(member, size);
  route->positions = groups.most_rows();
  const std::vector<int>& mine = route->routed[local];
  std::vector<HierMessage> receives;
  for (int row = 0; row < rows; ++row) {
    const int offset = groups.offset(member, size, row);
    const long long position = (row + first / groups.group) % rows;
    std::vector<HierBlock> out, in;
    for (int c = 0; c < size; ++c)
      for (int o = 0; o < q; ++o) {
        const int k = 1 + row * size + c;
        out.push_back(HierBlock{layout[node][o], o, mine[k], k});
        in.push_back(HierBlock{rank_at(nodes - offset, o), o, layout[node][first + c], c == member ? -1 : row * q + o});
      }
    route->inter.push_back(HierMessage{true, position, rank_at(offset, local), std::move(out)});
    receives.push_back(HierMessage{false, position, rank_at(nodes - offset, local), std::move(in)});
  }
  for (HierMessage& m : receives) route->inter.push_back(std::move(m));
  route->group.assign(layout[node].begin() + first, layout[node].begin() + first + size);
  route->member = member;
  const int padded = groups.rows(0, size) * q;
  route->group_sources.assign(size, std::vector<int>(padded, -1));
  for (int m = 0; m < size; ++m)
    for (int row = 0; row < groups.rows(m, size); ++row)
      for (int o = 0; o < q; ++o)
        route->group_sources[m][row * q + o] = rank_at(nodes - groups.offset(m, size, row), o);
}

}  // namespace

HierRoute hier_route(const NodeLayout& layout, int me, bool coalesced, int lane_group) {
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
  route.group = {me};
  const LaneGroups groups(nodes, q, lane_group);
  if (coalesced && groups.group > 1) {
    route_in_lane_groups(layout, groups, &route);
    return route;
  }

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
    // Checked from the whole layout, so that every rank decides alike.
    const int lane_group = coalesced ? context.params.lane_group : 1;
    int smallest = INT_MAX, largest = 0;
    for (const std::vector<int>& ranks : layout) {
      smallest = std::min(smallest, (int)ranks.size());
      largest = std::max(largest, (int)ranks.size());
    }
    if (LaneGroups(loc.num_nodes(), largest, lane_group).group > 1 && smallest != largest)
      return fail(MPIX_ERR_INFO_VALUE,
                  format("mpix_lane_group=%d: lane groups need nodes of one size, and these nodes have %d to %d "
                         "ranks (mpix_lane_group=1 runs on any nodes)",
                         lane_group, smallest, largest));
    HierRoute route = hier_route(layout, me, coalesced, lane_group);
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

    // Lane groups: what a lane brings for the group's other members waits in Y,
    // by member and then by its place in the group's TuNA, until that TuNA
    // forwards it. Its sizes are those members' receive counts (group_sizes).
    const int group_size = (int)route.group.size();
    std::vector<std::vector<long long>> y_bytes(group_size), y_offset(group_size);
    if (group_size > 1) {
      MPIX_TRY(group_sizes(route, &y_bytes));
      long long y_total = 0;
      for (int c = 0; c < group_size; ++c)
        for (long long bytes : y_bytes[c]) {
          y_offset[c].push_back(y_total);
          y_total += bytes;
        }
      y_ = pool.acquire((std::size_t)y_total);
    }
    auto y_piece = [&](int c, int j) { return Piece{y_.data() + y_offset[c][j], y_bytes[c][j]}; };
    auto member_of = [&](int rank) {
      return (int)(std::find(route.group.begin(), route.group.end(), rank) - route.group.begin());
    };

    const long long batch = std::max(1, context.params.block_count);
    batches_.resize((std::size_t)((route.positions + batch - 1) / batch));
    for (const HierMessage& m : route.inter) {
      std::vector<Piece> pieces;
      for (const HierBlock& b : m.blocks)
        pieces.push_back(!m.send      ? b.dest == me ? recv_.piece(b.origin) : y_piece(member_of(b.dest), b.k)
                         : b.origin == me ? send_.piece(b.dest)
                                          : x_piece(b.origin_local, b.k));
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
    if (group_size > 1) MPIX_TRY(plan_group(context, route, radix, y_piece, name));
    // The change bit: after the intra-node TuNA every rank has its node's OR, and
    // every rank receives a message from every other node (from the rank that
    // serves its local rank there), so the inter-node phase brings every node's;
    // in lane groups a group's lanes bring every node's, and the group's TuNA
    // gives every member the OR of its members'.
    carry_change();
    discard_bytes_ = std::max(core_.max_carried_receive(), group_core_.max_carried_receive());
    for (const Batch& b : batches_) {
      long long batch_bytes = 0;
      for (const auto& message : b.recvs) batch_bytes += message->carried_bytes();
      discard_bytes_ = std::max(discard_bytes_, batch_bytes);
    }

    init_stats.scratch_bytes =
        core_.scratch_bytes() + x_.size() + y_.size() + group_core_.scratch_bytes() + side_staging_bytes();
    return MPIX_SUCCESS;
  }

 private:
  // Lane groups: each member sends every other member c the sizes of the pieces c
  // will forward to it (its receive counts from the sources of c's rows), one
  // member after another, and receives those it will forward into *y_bytes.
  int group_sizes(const HierRoute& route, std::vector<std::vector<long long>>* y_bytes) {
    TimeScope sizes_phase(TimePhase::metadata);
    const int size = (int)route.group.size(), member = route.member;
    const std::size_t padded = route.group_sources[0].size();
    std::vector<long long> mine(padded);
    const int tag = tag_ + kTagGroupSizes;
    for (int distance = 1; distance < size; ++distance) {
      const int to = (member + distance) % size, from = (member - distance + size) % size;
      for (std::size_t j = 0; j < padded; ++j) {
        const int source = route.group_sources[to][j];
        mine[j] = source < 0 ? 0 : recv_.piece(source).bytes;
      }
      std::vector<long long>& theirs = (*y_bytes)[from];
      theirs.assign(padded, 0);
      MPIX_TRY(sendrecv_progressing(mine.data(), (int)padded, route.group[to], theirs.data(), (int)padded,
                                    route.group[from], tag, comm_));
      init_stats.metadata_messages += 1;
      init_stats.metadata_bytes += (long long)(padded * sizeof(long long));
    }
    return MPIX_SUCCESS;
  }

  // Lane groups: the TuNA over the group's members after the lanes, radix at most
  // the group's size (one round per other member at most): member c's block is
  // what this rank's lanes brought for it, padded to the first member's rows so
  // that every member sends every other the same number of pieces.
  template <class YPiece>
  int plan_group(const PlanContext& context, const HierRoute& route, int radix, const YPiece& y_piece,
                 const char* name) {
    const int size = (int)route.group.size(), member = route.member;
    const int padded = (int)route.group_sources[0].size();
    BruckSetup setup;
    setup.comm = comm_;
    setup.tag = tag_ + kTagGroupCore;
    setup.members = route.group;
    setup.me = member;
    setup.radix = std::max(2, std::min(radix, size));
    setup.uniform_bytes = -1;
    setup.max_piece = ex_.max_block_bytes;
    setup.one_part_room = tuna_one_part_room(context.comm);
    setup.pieces.assign(size, padded);
    setup.out.assign(size, {});
    for (int c = 0; c < size; ++c)
      if (c != member)
        for (int j = 0; j < padded; ++j) setup.out[c].push_back(y_piece(c, j));
    MPIX_TRY(group_core_.plan(std::move(setup), &init_stats));
    SizeMismatch mismatch;
    std::vector<std::vector<Piece>> in(size);
    for (int o = 0; o < size; ++o) {
      if (o == member) continue;
      for (int j = 0; j < padded; ++j) {
        const int source = route.group_sources[o][j];
        const Piece piece = source < 0 ? Piece{} : recv_.piece(source);
        mismatch.check(source < 0 ? route.group[o] : source, group_core_.arriving_bytes(o, j), piece.bytes);
        in[o].push_back(piece);
      }
    }
    MPIX_TRY(report_size_mismatch(mismatch, name, comm_));
    MPIX_TRY(group_core_.bind(in, context.comm->scratch));
    group_core_.add_stages(&stages_, &stats, &bit_, TimePhase::intra_node);
    return MPIX_SUCCESS;
  }

  struct Batch {
    std::vector<std::unique_ptr<CarriedMessage>> recvs, sends;
  };

  // Scattered: the batch's receives, then its sends.
  int post_batch(std::size_t index, std::vector<MPI_Request>& requests) {
    Traffic traffic(comm_, tag_);
    return post_carried(batches_[index].recvs, batches_[index].sends, bit_, traffic, kTagInter, stats, requests);
  }

  int tag_ = 0;
  TunaCore core_, group_core_;
  ScratchBuffer x_, y_;
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

// The lane groups' part of the cost: the sizes each member sends the others at
// init, and the TuNA inside each group (plan_group), a rank's average over the
// groups of a node (the last one may be smaller), round by round.
void add_group_rounds(Cost* cost, const ExchangeFacts& facts, const LaneGroups& groups, int radix, double block) {
  const int q = groups.ppn;
  std::vector<std::pair<int, int>> sizes;  // (group size, its ranks on a node)
  sizes.push_back({groups.group, q / groups.group * groups.group});
  if (q % groups.group > 0) sizes.push_back({q % groups.group, q % groups.group});
  const std::size_t first_round = cost->rounds.size(), first_init = cost->init_rounds.size();
  for (const auto& [size, ranks] : sizes) {
    if (size < 2) continue;
    const double share = (double)ranks / q;
    const int padded = groups.rows(0, size) * q;
    double rows = 0;  // a member's mean rows
    for (int member = 0; member < size; ++member) rows += (double)groups.rows(member, size) / size;
    Cost group;
    RoundCost sizes_round;
    sizes_round.intra = LevelCounts{(double)size - 1, (size - 1.0) * padded * sizeof(long long)};
    sizes_round.ranks = facts.ranks;
    sizes_round.nodes = facts.nodes;
    group.init_rounds.push_back(sizes_round);
    add_tuna_rounds(&group, facts, size, std::min(radix, size), rows * q * block, padded, true, true,
                    kTunaOnePartRoom, kNoLimit);
    // A smaller group's rounds run beside the full groups' first ones.
    auto merge = [share](std::vector<RoundCost>* into, std::size_t from, const std::vector<RoundCost>& rounds) {
      for (std::size_t r = 0; r < rounds.size(); ++r) {
        RoundCost round = rounds[r];
        round.intra.messages *= share;
        round.intra.bytes *= share;
        if (from + r < into->size()) {
          (*into)[from + r].intra.messages += round.intra.messages;
          (*into)[from + r].intra.bytes += round.intra.bytes;
        } else {
          into->push_back(round);
        }
      }
    };
    merge(&cost->rounds, first_round, group.rounds);
    merge(&cost->init_rounds, first_init, group.init_rounds);
    cost->copy_bytes += share * group.copy_bytes;
  }
}

// The intra-node TuNA carries, per block, one piece per node; then each rank
// sends, for each other node, Q pieces in one message (coalesced) or one message
// per piece (staggered), in batches of block_count positions.
Cost hierarchical_cost(const ExchangeFacts& facts, const Params& params, bool coalesced) {
  Cost cost;
  const int q = facts.max_ppn, nodes = facts.nodes;
  const LaneGroups groups(nodes, q, coalesced ? params.lane_group : 1);
  if (params.radix > std::max(2, q) || (groups.group > 1 && !facts.equal_nodes())) {
    cost.valid = false;
    return cost;
  }
  const double block = facts.uniform ? (double)facts.max_block : facts.mean_block();
  // Inside a node the rounds stay one message past the eager limit (BruckSetup's
  // default, as the plans). In lane groups an owner gathers a piece for its own
  // node and its group's ranks on each node of its rows: N on average, as without.
  add_tuna_rounds(&cost, facts, q, params.radix, block * nodes, nodes, true, true, kTunaOnePartRoom, kNoLimit);
  if (nodes > 1 && block > 0) {
    // Lanes per rank: one per node offset per group; the busiest is a first member.
    const double group_count = std::ceil((double)q / groups.group);
    const double positions = coalesced ? groups.most_rows() : (double)(nodes - 1) * q;
    const double mean_positions = coalesced ? (nodes - 1) * group_count / q : positions;
    const double batches = std::ceil(positions / std::max(1, params.block_count));
    RoundCost round;
    round.rounds = batches;
    round.inter.messages = mean_positions / batches;
    round.inter.bytes = (double)(nodes - 1) * q * block / batches;
    round.busiest_messages = positions / mean_positions;
    round.nic_sharers = q;
    round.ranks = facts.ranks;
    round.nodes = facts.nodes;
    round.busiest_bytes = std::max(round.busiest_messages,
                                   busiest_bytes_factor(facts, coalesced ? (double)q * groups.group : 1.0));
    cost.rounds.push_back(round);
  }
  if (groups.group > 1) add_group_rounds(&cost, facts, groups, params.radix, block);
  return cost;
}

Cost cost_tuna_hier_staggered(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  return hierarchical_cost(facts, params, false);
}

Cost cost_tuna_hier_coalesced(const ExchangeFacts& facts, const Params& params, const MachineProfile&) {
  return hierarchical_cost(facts, params, true);
}

}  // namespace mpix
