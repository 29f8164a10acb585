// Node-aware exchange: aggregate per destination node, then redistribute inside
// the node.
//
// Phase 1 (inter-node, one round): each rank sends, in one message, everything it
// has for the ranks of node m to the rank of node m with its own local rank (the
// rank of its group communicator on node m; with unequal nodes, local rank mod the
// size of node m). Messages travel on the library's communicator, addressed by the
// group peer's rank, so that unequal nodes need no second path. The message is
// received, without copying, into A: the send buffer of phase 2, laid out by local
// destination, then by source.
//
// Phase 2 (intra-node): an alltoallv among the node's ranks on the node
// communicator, where the block for local rank j is everything this rank gathered
// for j. Its algorithm is chosen through the registry (the built-in selection, on
// the node's size and sizes), excluding the locality-aware ones; its blocks land in
// Z and are unpacked into the receive buffer.
//
// Sizes: for alltoall every block has the agreed size; for alltoallv the sizes of
// the aggregated blocks travel once, at init, along the phase 1 routes.
//
// mpix_locality=region: the same algorithm with the regions of all nodes in place
// of the nodes (locality_level(), the Params::locality parameter): one message per
// destination region, then an alltoallv inside the region (paper 001: "region,
// such as a socket or a node"). Regions never cross nodes, so phase 2 stays inside
// a node; phase 1 reaches the other regions of this rank's node inside it.
#include <algorithm>
#include <climits>
#include <cstring>

#include "../core/algorithms.hpp"
#include "../core/comm.hpp"
#include "../core/completion.hpp"
#include "../core/error.hpp"
#include "../core/progress.hpp"
#include "../core/select.hpp"
#include "bruck.hpp"
#include "hierarchical.hpp"

namespace mpix {
namespace {

// Algorithms that route by node themselves: not for the node-local phase.
bool uses_locality(const std::string& name) {
  return name.rfind("tuna_hier", 0) == 0 || name == "node_aware" || name.rfind("ipc", 0) == 0;
}

// The units the plan aggregates per, as the model sees them: the nodes, or the
// regions (when asked for and the communicator has a region level).
struct Units {
  int count, size;  // how many, ranks of the largest
  double near;      // of the others, those inside this rank's node (on average)
};

Units aggregation_units(const ExchangeFacts& facts, const Params& params) {
  if (params.locality == Level::region && facts.regions > 0)
    return Units{facts.regions, facts.max_region_size, (double)facts.regions / facts.nodes - 1};
  return Units{facts.nodes, facts.max_ppn, 0};
}

ExchangeFacts node_phase_facts(const ExchangeFacts& facts, const Params& params) {
  // Local rank j of a node (or region) holds, for each local destination, one block
  // from each of the N units (N sources), and exchanges those aggregates with its
  // Q - 1 peers in the unit.
  const double block = facts.uniform ? (double)facts.max_block : facts.mean_block();
  const Units units = aggregation_units(facts, params);
  const int q = units.size;
  ExchangeFacts node;
  node.ranks = q;
  node.nodes = 1;
  node.max_ppn = node.min_ppn = q;
  node.max_block = facts.max_block * units.count;
  node.min_block = facts.min_block * units.count;
  node.total_bytes = (long long)(block * units.count) * q * (q - 1);
  node.max_rank_send = node.max_rank_recv = (long long)(block * units.count) * (q - 1);
  node.nonempty_blocks = node.total_bytes > 0 ? (long long)q * (q - 1) : 0;
  node.max_rank_messages = node.total_bytes > 0 ? q - 1 : 0;
  node.intra_node_bytes = node.total_bytes;
  node.contiguous = true;  // bytes in A and Z
  node.persistent = facts.persistent;
  return node;
}


}  // namespace

AggregationRoute aggregation_route(const NodeLayout& layout, int me) {
  const int nodes = (int)layout.size();
  int node = 0, local = 0;
  for (int m = 0; m < nodes; ++m)
    for (int l = 0; l < (int)layout[m].size(); ++l)
      if (layout[m][l] == me) node = m, local = l;
  const int q = (int)layout[node].size();
  AggregationRoute route;
  route.aggregator.assign(nodes, -1);
  route.holders.assign(q, {});
  for (int m = 0; m < nodes; ++m) {
    if (m != node) route.aggregator[m] = layout[m][serving_local_rank(local, (int)layout[m].size())];
    for (int l = 0; l < (int)layout[m].size(); ++l)
      route.holders[m == node ? l : serving_local_rank(l, q)].push_back(layout[m][l]);
  }
  for (std::vector<int>& sources : route.holders) std::sort(sources.begin(), sources.end());
  return route;
}

namespace {

// A repeated blocking call runs without the agreement where the node phase's plan
// carries the change (plan.hpp, start_carrying): phase 1 brings every rank's bit to
// one rank of each other node (CarriedMessage: the word in front of the blocks, sent
// even where there are none), phase 2 from there, OR-ed with that rank's own, to
// every rank of the node; the rank's own node learns it in phase 2 alone.
class NodeAware : public CarryingStagePlan {
 public:
  int init(const PlanContext& context) {
    ex_ = context.exchange;
    comm_ = context.mpi_comm;
    stage_comm_ = comm_;
    ScratchPool& pool = context.comm->scratch;
    // The nodes, or the regions of all nodes (mpix_locality): "node" below is a unit.
    Locality& loc = locality_level(context.comm, context.params.locality);
    const int size = ex_.size, me = ex_.rank;
    const int nodes = loc.num_nodes(), node = loc.node_of(me), local = loc.local_rank_of(me);
    const std::vector<int>& members = loc.node_ranks(node);
    const int q = (int)members.size();

    NodeLayout layout(nodes);
    for (int m = 0; m < nodes; ++m) layout[m] = loc.node_ranks(m);
    const AggregationRoute route = aggregation_route(layout, me);
    const std::vector<std::vector<int>>& holders = route.holders;
    const std::vector<int>& gathered = holders[local];
    const int count = (int)gathered.size();

    // Sizes of the gathered blocks: [source index][local destination].
    std::vector<std::vector<long long>> sizes(count, std::vector<long long>(q, ex_.max_block_bytes));
    std::vector<MPI_Request> requests;
    std::vector<std::vector<long long>> mine(nodes);
    for (int m = 0; m < nodes; ++m)
      for (int d : loc.node_ranks(m)) mine[m].push_back(ex_.send.block_bytes(d));
    own_index_ = (int)(std::find(gathered.begin(), gathered.end(), me) - gathered.begin());
    sizes[own_index_] = mine[node];
    // The own block is copied straight from the send buffer to the receive buffer,
    // not through A and Z: they would hold it twice, scratch in proportion to a
    // block that is never sent (a rank that keeps most of its data).
    sizes[own_index_][local] = 0;
    if (!ex_.uniform) {
      TimeScope sizes_round(TimePhase::metadata);
      const int tag = context.tag + kTagAggregateMeta;
      for (int si = 0; si < count; ++si) {
        if (gathered[si] == me) continue;
        requests.emplace_back();
        MPIX_CHECK_MPI(MPI_Irecv(sizes[si].data(), q, MPI_LONG_LONG, gathered[si], tag, comm_, &requests.back()));
      }
      for (int m = 0; m < nodes; ++m) {
        if (m == node) continue;
        requests.emplace_back();
        MPIX_CHECK_MPI(MPI_Isend(mine[m].data(), (int)mine[m].size(), MPI_LONG_LONG, route.aggregator[m], tag, comm_,
                                 &requests.back()));
        init_stats.metadata_messages += 1;
        init_stats.metadata_bytes += (long long)(mine[m].size() * sizeof(long long));
      }
      MPIX_TRY(wait_all_progressing((int)requests.size(), requests.data(), comm_));
    }

    // A: for each local destination j, the gathered blocks for it, by source.
    std::vector<std::vector<long long>> a_offset(count, std::vector<long long>(q, 0));
    std::vector<long long> a_count(q, 0), a_displ(q, 0);
    long long a_bytes = 0;
    for (int j = 0; j < q; ++j) {
      a_displ[j] = a_bytes;
      for (int si = 0; si < count; ++si) {
        a_offset[si][j] = a_bytes;
        a_bytes += sizes[si][j];
      }
      a_count[j] = a_bytes - a_displ[j];
    }
    // Z: for each local source j, the blocks it gathered for this rank, by source.
    z_offset_.assign(size, 0);
    std::vector<long long> z_count(q, 0), z_displ(q, 0);
    long long z_bytes = 0;
    for (int j = 0; j < q; ++j) {
      z_displ[j] = z_bytes;
      for (int s : holders[j]) {
        if (s == me) continue;
        z_offset_[s] = z_bytes;
        z_bytes += ex_.recv.block_bytes(s);
      }
      z_count[j] = z_bytes - z_displ[j];
    }
    a_ = pool.acquire((std::size_t)a_bytes);
    z_ = pool.acquire((std::size_t)z_bytes);

    // Phase 1 messages.
    std::vector<bool> used(size, false);
    for (int d = 0; d < size; ++d) used[d] = loc.node_of(d) != node;
    send_.init(ex_.send, used, pool);
    for (int m = 0; m < nodes; ++m) {
      if (m == node) continue;
      const std::vector<int>& ranks = loc.node_ranks(m);
      std::vector<Piece> pieces;
      for (int d : ranks) pieces.push_back(send_.piece(d));
      sends_.push_back(std::make_unique<CarriedMessage>());
      MPIX_TRY(sends_.back()->build(pieces, route.aggregator[m]));
    }
    for (int si = 0; si < count; ++si) {
      if (gathered[si] == me) continue;
      std::vector<Piece> pieces;
      for (int j = 0; j < q; ++j) pieces.push_back(Piece{a_.data() + a_offset[si][j], sizes[si][j]});
      recvs_.push_back(std::make_unique<CarriedMessage>());
      MPIX_TRY(recvs_.back()->build(pieces, gathered[si]));
      discard_bytes_ += recvs_.back()->carried_bytes();
    }
    own_offset_.resize(q);
    for (int j = 0; j < q; ++j) own_offset_[j] = a_offset[own_index_][j];

    // Phase 2: an alltoallv of bytes on the node communicator.
    MPI_Comm node_comm = MPI_COMM_NULL;
    MPIX_TRY(loc.node_comm(&node_comm));
    // No check that A's sizes match the destinations' receive counts (it was an
    // alltoallv of Q - 1 messages per rank, 16 us of a 36 us blocking call at 2 x 32
    // ranks): the call's agreement compared every pair's counts by checksums before
    // any plan was made (dense.cpp).
    PlanContext sub;
    sub.comm = context.comm;
    sub.mpi_comm = node_comm;
    sub.tag = context.tag;  // this plan's tags, on the node communicator
    sub.exchange.size = q;
    sub.exchange.rank = local;
    sub.exchange.uniform = false;
    for (BufferSide* side : {&sub.exchange.send, &sub.exchange.recv}) {
      side->layout = byte_layout();
      side->counts.resize(q);
      side->displs.resize(q);
    }
    sub.exchange.send.buf = a_.data();
    sub.exchange.recv.buf = z_.data();
    for (int j = 0; j < q; ++j) {
      sub.exchange.send.counts[j] = a_count[j];
      sub.exchange.send.displs[j] = a_displ[j];
      sub.exchange.recv.counts[j] = z_count[j];
      sub.exchange.recv.displs[j] = z_displ[j];
    }
    // The largest aggregate, bounded by the agreed largest block times the most
    // sources one local rank gathers (the route is the same on every rank of the
    // node), rather than agreed by an allreduce on the node (log2 Q rounds, 3.3 us of
    // a blocking call at Q = 32).
    std::size_t most_sources = 0;
    for (const std::vector<int>& sources : holders) most_sources = std::max(most_sources, sources.size());
    sub.exchange.max_block_bytes = ex_.max_block_bytes * (long long)most_sources;
    sub.facts = node_phase_facts(context.facts, context.params);
    // Chosen by the model from facts every rank derives from the agreed ones (so the
    // ranks of a node agree), with defaults, not the environment: MPIX_RADIX and
    // friends are meant for the whole communicator, not for this node-sized exchange.
    sub.profile = context.profile;
    const std::vector<Prediction> node_phase =
        rank_algorithms(kAlltoallv, sub.facts, Params{}, *context.profile,
                        [&sub](const Algorithm& a) { return !uses_locality(a.name) && inapplicable_reason(a, sub).empty(); });
    const Algorithm* algorithm = node_phase.empty() ? find_algorithm("nonblocking", kAlltoallv) : node_phase.front().algorithm;
    sub.params = node_phase.empty() ? Params{} : node_phase.front().params;
    sub.params.seed = (unsigned long long)q;
    intra_name_ = algorithm->name;
    MPIX_TRY(algorithm->create(sub, &intra_));
    init_stats.metadata_messages += intra_->init_stats.metadata_messages;
    init_stats.metadata_bytes += intra_->init_stats.metadata_bytes;

    own_staging_ = own_copy_staging(context);
    const int tag = context.tag + kTagAggregate;
    // The own block is copied while the inter-node messages are on their way.
    stages_.push_back(Stage{[this, tag](std::vector<MPI_Request>& out) {
                              Traffic traffic(comm_, tag);
                              MPIX_TRY(post_carried(recvs_, sends_, bit_, traffic, 0, stats, out));
                              if (bit_.seen) return MPIX_SUCCESS;
                              return copy_block(ex_.send.block(ex_.rank), ex_.recv.block(ex_.rank),
                                                own_staging_.data(), comm_);
                            },
                            [this] {
                              if (bit_.carrying)
                                for (const auto& m : recvs_) m->received(&bit_);
                              return MPIX_SUCCESS;
                            },
                            false, false, TimePhase::inter_node});
    // MPIX_Test advances the node phase's plan with its test(); once that found it
    // complete, done() does not wait for it again.
    stages_.push_back(Stage{[this](std::vector<MPI_Request>&) {
                              intra_complete_ = false;
                              return bit_.carrying ? intra_->start_carrying(bit_.seen) : intra_->start();
                            },
                            [this] {
                              if (!intra_complete_) MPIX_TRY(intra_->wait());
                              if (bit_.carrying) bit_.seen = bit_.seen || intra_->change_seen();
                              stats.rounds += intra_->stats.rounds;
                              stats.messages += intra_->stats.messages;
                              stats.payload_bytes += intra_->stats.payload_bytes;
                              stats.metadata_messages += intra_->stats.metadata_messages;
                              stats.metadata_bytes += intra_->stats.metadata_bytes;
                              return MPIX_SUCCESS;
                            },
                            true, false, TimePhase::intra_node,
                            [this](bool* complete) {
                              MPIX_TRY(intra_->test(&intra_complete_));
                              *complete = intra_complete_;
                              return MPIX_SUCCESS;
                            }});
    // Once a change is seen (a changed rank's own, at start), the user's buffers are
    // left alone: they may be another call's.
    before_start_ = [this] {
      if (bit_.seen) return MPIX_SUCCESS;
      MPIX_TRY(send_.pack(comm_));
      // This rank's blocks for its own node go straight into A.
      const std::vector<int>& ranks = members_;
      for (int j = 0; j < (int)ranks.size(); ++j) {
        if (ranks[j] == ex_.rank || ex_.send.block_bytes(ranks[j]) == 0) continue;
        MPIX_TRY(pack_block(ex_.send.block(ranks[j]), a_.data() + own_offset_[j], comm_));
      }
      return MPIX_SUCCESS;
    };
    after_wait_ = [this] {
      if (bit_.seen) return MPIX_SUCCESS;
      for (int s = 0; s < ex_.size; ++s) {
        if (s == ex_.rank || ex_.recv.block_bytes(s) == 0) continue;
        MPIX_TRY(unpack_block(z_.data() + z_offset_[s], ex_.recv.block(s), comm_));
      }
      return MPIX_SUCCESS;
    };
    members_ = members;
    carries_ = intra_->carries_change();
    init_stats.scratch_bytes =
        a_.size() + z_.size() + send_.staging_bytes() + own_staging_.size() + intra_->init_stats.scratch_bytes;
    return MPIX_SUCCESS;
  }

 private:
  Exchange ex_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  ByteSide send_;
  ScratchBuffer a_, z_, own_staging_;
  std::vector<long long> z_offset_, own_offset_;
  std::vector<int> members_;
  int own_index_ = 0;
  std::vector<std::unique_ptr<CarriedMessage>> sends_, recvs_;
  std::unique_ptr<Plan> intra_;
  bool intra_complete_ = false;  // its test() found the running start complete
  std::string intra_name_;
};

}  // namespace

int create_node_aware(const PlanContext& context, std::unique_ptr<Plan>* plan) {
  auto made = std::make_unique<NodeAware>();
  MPIX_TRY(made->init(context));
  *plan = std::move(made);
  return MPIX_SUCCESS;
}

// Phase 1: one message per other node (or region) with the Q blocks for its ranks
// (sizes once, at init, for alltoallv), those to the other regions of this rank's
// node inside the node; phase 2: the node-local exchange that selection picks for
// node_phase_facts(); copies into A and out of Z.
Cost cost_node_aware(const ExchangeFacts& facts, const Params& params, const MachineProfile& profile) {
  Cost cost;
  const double block = facts.uniform ? (double)facts.max_block : facts.mean_block();
  const Units units = aggregation_units(facts, params);
  const int q = units.size;
  const double far = units.count - 1 - units.near;
  if (units.count > 1 && block > 0) {
    RoundCost round;
    round.inter = LevelCounts{far, far * q * block};
    round.intra = LevelCounts{units.near, units.near * q * block};
    round.nic_sharers = facts.max_ppn;
    round.ranks = facts.ranks;
    round.nodes = facts.nodes;
    round.busiest_bytes = busiest_bytes_factor(facts, q);
    cost.rounds.push_back(round);
  }
  if (units.count > 1 && !facts.uniform) {
    RoundCost sizes;
    sizes.inter = LevelCounts{far, far * q * sizeof(long long)};
    sizes.intra = LevelCounts{units.near, units.near * q * sizeof(long long)};
    sizes.nic_sharers = facts.max_ppn;
    sizes.ranks = facts.ranks;
    sizes.nodes = facts.nodes;
    cost.init_rounds.push_back(sizes);
  }
  const std::vector<Prediction> node_phase =
      rank_algorithms(kAlltoallv, node_phase_facts(facts, params), Params{}, profile,
                      [](const Algorithm& a) { return !uses_locality(a.name); });
  if (!node_phase.empty()) {
    const Cost& inner = node_phase.front().cost;
    cost.rounds.insert(cost.rounds.end(), inner.rounds.begin(), inner.rounds.end());
    cost.init_rounds.insert(cost.init_rounds.end(), inner.init_rounds.begin(), inner.init_rounds.end());
    cost.copy_bytes += inner.copy_bytes;
    cost.init_copy_bytes += inner.init_copy_bytes;
  }
  cost.copy_bytes += (double)(facts.ranks + q) * block;
  return cost;
}

}  // namespace mpix
