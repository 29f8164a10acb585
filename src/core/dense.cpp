// MPIX_Alltoall(v)[_plan]: the one agreement between ranks, algorithm choice, the
// plan and its reuse, a request's start and wait (the C entry points: dense_api.cpp;
// the arguments' checks: dense_args.cpp; the kept plans: plan_reuse.cpp).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>

#include "agreement.hpp"
#include "before_agreement.hpp"
#include "carried_agreement.hpp"
#include "breakdown.hpp"
#include "comm.hpp"
#include "dense.hpp"
#include "error.hpp"
#include "handles.hpp"
#include "info.hpp"
#include "plan_reuse.hpp"
#include "progress.hpp"
#include "registry.hpp"
#include "request.hpp"
#include "select.hpp"
#include "speculation.hpp"

namespace mpix {

namespace {

// MPIX_VERBOSE: a call that ran `kept` again, and how it learnt that it could.
void report_reuse(MPIX_Comm_s* comm, const DenseArgs& a, const ReusablePlan& kept, const char* reason);


void report(MPIX_Comm_s* comm, const char* call, const Algorithm& algorithm, const std::string& params,
            const std::string& reason, const ExchangeFacts& facts, const std::vector<Prediction>& ranked) {
  if (comm->rank != 0 || verbose_level() == 0) return;
  std::string decision = format("[mpix] %s: %s%s%s (%s)", call, algorithm.name, params.empty() ? "" : " ",
                                params.c_str(), reason.c_str());
  if (!reports(comm, decision)) return;
  std::string text = decision + "\n[mpix]   facts: " + facts.describe() + "\n";
  if (!ranked.empty()) {
    text += "[mpix]   predicted:";
    for (std::size_t i = 0; i < ranked.size() && i < 3; ++i)
      text += format("%s %s%s%s %s", i ? ";" : "", ranked[i].algorithm->name,
                     ranked[i].algorithm->params.empty() ? "" : " ",
                     describe_params(ranked[i].algorithm->params, ranked[i].params).c_str(),
                     microseconds(ranked[i].seconds).c_str());
    text += "\n";
  }
  std::fputs(text.c_str(), stderr);
}

void report_reuse(MPIX_Comm_s* comm, const DenseArgs& a, const ReusablePlan& kept, const char* reason) {
  const MPIX_Request_s& request = *kept.request;
  report(comm, a.name, *find_algorithm(request.algorithm, a.op), request.params, reason, request.facts, {});
}

// Whether blocks of a node can be copied directly (ipc_hybrid) is learnt by a
// collective probe, once per communicator (DirectCopy::setup). It runs where the
// choice may use it: an algorithm that needs it was asked for, or `auto` decides
// an exchange with intra-node blocks of ipc_hybrid's threshold; every input of
// that condition is agreed, so all ranks probe together or none does.
int probe_direct_copy(Op op, const Algorithm* asked, const TuningRule* rule, MPIX_Comm_s* comm,
                      PlanContext* context) {
  const Algorithm* direct = nullptr;
  for (const Algorithm& algorithm : algorithms())
    if ((algorithm.ops & op) && (algorithm.needs & kNeedsDirectCopy) && unavailable_reason(algorithm).empty())
      direct = &algorithm;
  const ExchangeFacts& f = context->facts;
  const bool wanted = asked ? (asked->needs & kNeedsDirectCopy) && unavailable_reason(*asked).empty()
                            : direct && !rule && f.max_ppn > 1 && f.intra_node_bytes > 0 &&
                                  f.max_block >= context->params.ipc_threshold;
  if (wanted && !comm->direct_copy.ready()) MPIX_TRY(comm->direct_copy.setup(comm->lib_comm));
  context->facts.direct_copy = comm->direct_copy.ready() && comm->direct_copy.cma();
  return MPIX_SUCCESS;
}

// The bytes of an in-place call's copy of its receive blocks: their byte span.
std::size_t in_place_copy_bytes(const Exchange& ex, MPI_Aint* lo, MPI_Aint* hi) {
  return ex.recv.byte_span(lo, hi) ? (std::size_t)(*hi - *lo) : 0;
}

// The in-place copy's scratch, taken before the agreement (plan_dense), where
// failing to get it fails the call on every rank as a bad argument does.
int reserve_in_place_copy(const DenseArgs& a, const Exchange& ex, MPIX_Comm_s* comm, ScratchBuffer* copy) {
  MPI_Aint lo = 0, hi = 0;
  const std::size_t bytes = in_place_copy_bytes(ex, &lo, &hi);
  try {
    *copy = comm->scratch.acquire(bytes);
  } catch (const std::bad_alloc&) {
    return fail(MPIX_ERR_NO_MEM, format("%s: out of memory for the in-place copy of the receive blocks (%zu bytes "
                                        "from the first to the last)", a.name, bytes));
  }
  return MPIX_SUCCESS;
}

// An in-place call: the byte span of its receive blocks is copied at each start
// into the request's scratch (`reserved`, if of its size), which keeps their
// layout, so the send side is the receive side moved onto the copy.
int copy_in_place(MPIX_Comm_s* comm, Exchange* ex, ScratchBuffer* reserved, MPIX_Request_s* request) {
  MPI_Aint lo = 0, hi = 0;
  const std::size_t bytes = in_place_copy_bytes(*ex, &lo, &hi);
  request->in_place_copy = reserved->size() == bytes ? std::move(*reserved) : comm->scratch.acquire(bytes);
  if (bytes > 0 && !ex->recv.buf) {
    // MPI_BOTTOM: the blocks' addresses are absolute, so a send buffer "the copy
    // minus lo" would wrap around the address space. The send side is MPI_BOTTOM
    // too, its type the receive type moved onto the copy.
    MPI_Aint shift = (MPI_Aint)reinterpret_cast<std::uintptr_t>(request->in_place_copy.data()) - lo;
    int one = 1;
    MPI_Datatype moved = MPI_DATATYPE_NULL;
    MPIX_CHECK_MPI(MPI_Type_create_struct(1, &one, &shift, &ex->recv.layout.type, &moved));
    request->in_place_type.reset(new OwnedTypes);
    request->in_place_type->keep(moved);
    MPIX_CHECK_MPI(MPI_Type_commit(&moved));
    MPIX_TRY(describe_type(moved, "the in-place copy's type", &ex->send.layout));
    request->in_place_source = reinterpret_cast<char*>((std::uintptr_t)lo);
    request->in_place_bytes = hi - lo;
    ex->send.buf = nullptr;
  } else {
    // The copy holds the span [lo, hi) alone, however far into the receive buffer
    // it starts; the send buffer is the copy moved back by lo, computed as an
    // address so that no pointer leaves its allocation.
    request->in_place_source = ex->recv.buf + lo;
    ex->send.buf =
        reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(request->in_place_copy.data()) - (std::uintptr_t)lo);
    request->in_place_bytes = (MPI_Aint)bytes;
  }
  return MPIX_SUCCESS;
}

// Past the agreement every rank builds a plan, and a failure there on one rank
// leaves the others in exchanges it never joins: those of the algorithm's plan
// (TuNA's plan exchanges metadata) or, later, the started exchange. A persistent plan is
// made once, so it agrees on each step's result (its preparations, then the
// algorithm's plan). A blocking call does where the plan may take much memory
// (plan_may_run_out): a rank is more likely to run out there, and an allreduce
// is little beside moving such blocks; below, it would be paid on every call for
// an allocation of a few MiB (the user guide's "What can still hang").
constexpr double kAgreedPlanBytes = 64.0 * (1 << 20);

// Whether, by the agreed facts, some rank's plan may take kAgreedPlanBytes: what
// Bruck's and TuNA's scratch holds (up to P blocks), what staging and node-level
// aggregation hold (a rank's blocks).
bool plan_may_run_out(const ExchangeFacts& facts) {
  return (double)facts.ranks * (double)facts.max_block >= kAgreedPlanBytes ||
         (double)facts.max_rank_send + (double)facts.max_rank_recv >= kAgreedPlanBytes;
}

int agree_on_step(bool agreed, const DenseArgs& a, MPIX_Comm_s* comm, const std::function<int()>& step) {
  int rc;
  try {
    rc = step();
  } catch (const std::bad_alloc&) {
    rc = fail(MPIX_ERR_NO_MEM, format("%s: out of memory", a.name));
  }
  if (!agreed) return rc;
  const std::string local_message = MPIX_Last_error_message();
  int worst = MPIX_SUCCESS;
  MPIX_TRY(allreduce_progressing(&rc, &worst, 1, MPI_INT, MPI_MAX, comm->lib_comm));
  return worst == MPIX_SUCCESS ? MPIX_SUCCESS
                               : fail_agreed(rc, local_message, worst, a.name, "failed while building its plan");
}

// The plan of a call on `comm`, a live handle (its callers check). A persistent
// one (`kept` NULL) comes back in *out. A blocking one (`kept`: the
// communicator's reusable plan of the operation) is *kept, run
// again or replaced by the new plan, or, where it may not be kept, in *out; if its
// agreement delivered the blocks (*delivered), the plan, if any, is for
// the calls that repeat this one, and *out stays empty. `prior_rc`: a failure of the
// caller's own checks (its last error message), agreed with check_local's.
int plan_dense(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm, ReusablePlan** kept,
               std::unique_ptr<MPIX_Request_s>* out, bool* delivered = nullptr, int prior_rc = MPIX_SUCCESS) {
  const bool persistent = !kept;
  TimeScope planning(TimePhase::planning);
  PlanContext context;
  context.comm = comm;
  context.mpi_comm = comm->lib_comm;
  context.info = info;
  Hints hints;
  int local_rc = prior_rc != MPIX_SUCCESS ? prior_rc : check_local(a, info, comm, &context.exchange, &hints);
  std::string local_message = MPIX_Last_error_message();

  // One agreement for the whole call (agreement.hpp): whether any rank failed its
  // checks (so that no rank is left waiting in an exchange the others refused),
  // whether all ranks asked for the same algorithm with the same parameters
  // (schedules derive from them), and the facts selection needs.
  Agreement mine, all;
  mine.failed = local_rc;
  mine.algorithm = asked_index(hints);
  mine.hints_hash = hints_hash(hints);
  if (local_rc == MPIX_SUCCESS) {
    mine.facts = local_facts(context.exchange, comm->locality, comm->regions);
    count_checksums(context.exchange, &mine);
  }
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  mine.facts.in_place = in_place;
  mine.changed = !(kept && *kept && local_rc == MPIX_SUCCESS && same_call(**kept, a.op, context.exchange, hints, in_place));
  mine.keeps = kept && local_rc == MPIX_SUCCESS && hints.plan_reuse && host_buffers(context.exchange);
  // The in-place copy (copy_in_place) is taken before the agreement, so that a rank
  // without the memory fails the call everywhere, as a bad argument does; not where
  // the kept plan of the same call holds one (it is freed before a new plan).
  ScratchBuffer reserved_copy;
  if (local_rc == MPIX_SUCCESS && in_place && mine.changed) {
    local_rc = mine.failed = reserve_in_place_copy(a, context.exchange, comm, &reserved_copy);
    if (local_rc != MPIX_SUCCESS) local_message = MPIX_Last_error_message();
  }
  mine.facts.uniform = a.op == kAlltoall;
  // What a call whose blocks arrived with its agreement keeps: the call, without a
  // plan (see below).
  const bool kept_call_only = kept && *kept && !(*kept)->request;
  // A blocking call agrees in a Bruck exchange's rounds, which may carry its blocks,
  // or while its spread-out exchange, started before, moves them.
  bool blocks_delivered = false, speculated = false;
  PlanStats carried;
  Speculation speculation;
  if (!persistent) {
    const BeforeAgreement before =
        local_rc == MPIX_SUCCESS
            ? choose_before_agreement(a.op, context.exchange, hints, mine, mine.changed || kept_call_only, comm)
            : BeforeAgreement{};
    mine.speculated = before.speculates;
    mine.unready = !mine.speculated && !(local_rc == MPIX_SUCCESS && before.ready);
    CarriedAgreement agreement(comm, mine, before.carries ? &context.exchange : nullptr);
    // Interleaved, the agreement's rounds travel while the exchange is posted.
    const bool interleaved = before.speculates && before.progress_every > 0;
    if (interleaved) {
      MPIX_TRY(agreement.begin());
      ++comm->speculations_interleaved;
    }
    if (before.speculates) {
      local_rc = speculation.start(context.exchange, comm, interleaved ? &agreement : nullptr,
                                   before.progress_every);
      if (local_rc != MPIX_SUCCESS) {
        local_message = MPIX_Last_error_message();
        mine.failed = local_rc;  // in the record, where it has not left yet
      }
    }
    if (!interleaved) MPIX_TRY(agreement.begin());
    MPIX_TRY(agreement.end(&all, &blocks_delivered, &carried));
    // Interleaved, this rank's record left before it posted: a failure of MPI
    // itself there (the arguments were checked) is this rank's alone, as one in
    // any exchange after its agreement.
    if (local_rc != MPIX_SUCCESS && !all.failed) return fail(local_rc, local_message);
    comm->blocking_choices[a.op == kAlltoall ? 0 : 1].carried = carried;
    if (all.speculated > 0) {
      const bool valid = !all.failed && all.algorithm != -2 && all.hints_hash != -2 && !all.counts_disagree &&
                         (a.op != kAlltoall || all.facts.min_block == all.facts.max_block);
      if (valid && all.unready == 0) {
        // A rank that chose otherwise starts now: its peers' messages wait for it,
        // which costs less than receiving them for nothing and exchanging again.
        if (!mine.speculated) {
          MPIX_TRY(speculation.start(context.exchange, comm));
          ++comm->speculations_late;
        }
        MPIX_TRY(speculation.finish(context.exchange, comm));
        blocks_delivered = speculated = true;
        ++comm->speculations_finished;
      } else {
        MPIX_TRY(speculation.abandon(comm));
        ++comm->speculations_abandoned;
      }
    }
  } else {
    MPIX_TRY(agree(comm, mine, &all));
  }
  if (all.failed)
    return fail_agreed(local_rc, local_message, all.failed, a.name,
                       all.failed == MPIX_ERR_NO_MEM ? "failed while building its plan" : "rejected its arguments");
  if (all.algorithm == -2)
    return fail(MPIX_ERR_ARG, format("%s: ranks asked for different algorithms (info or environment differ)", a.name));
  if (all.hints_hash == -2)
    return fail(MPIX_ERR_ARG, format("%s: ranks gave different algorithm parameters, mpix_check_args, tuning or "
                                     "machine files (info or environment differ)", a.name));
  // Alltoall: every block everywhere has one size, so the smallest must be the
  // largest too.
  if (a.op == kAlltoall && all.facts.min_block != all.facts.max_block)
    return fail(MPIX_ERR_ARG, format("%s: ranks give different block sizes (sendcount x size of sendtype, recvcount "
                                     "x size of recvtype): from %lld to %lld bytes", a.name, all.facts.min_block,
                                     all.facts.max_block));
  context.facts = all.facts;
  context.facts.persistent = persistent;
  context.exchange.max_block_bytes = context.facts.max_block;
  context.params = hints.params;
  context.profile = hints.profile;

  // Counts that disagree between ranks show in the agreement's checksums; only then
  // (or with mpix_check_args) are the block sizes exchanged, to name the pair.
  int peer = -1;
  if (all.counts_disagree || hints.check_args)
    MPIX_TRY(check_counts_agree(a, context.exchange, comm->lib_comm, &peer));

  const bool verbose = verbose_level() > 0;
  if (blocks_delivered) {
    *delivered = true;
    // An alltoallv's carried exchange is TuNA's radix-2 schedule with its sizes
    // carried; an alltoall's, with one block size, Bruck's; in lanes, the
    // hierarchical TuNA's, coalesced.
    // With lane groups of several ranks, the lanes are a variant of it that no
    // registered algorithm runs (carried_lanes.cpp): its group size is named.
    const int lane_group = comm->lane_group;
    const char* carrier = speculated       ? "nonblocking"
                          : lane_group > 0 ? "tuna_hier_coalesced"
                          : a.op == kAlltoall ? "bruck"
                                              : "tuna_carried";
    std::string params = speculated ? "" : "radix=2";
    if (lane_group > 0 && !speculated) {
      const int most_lanes = most_lane_messages(context.facts.nodes, context.facts.max_ppn, lane_group);
      params += format(" block_count=%d", std::min(comm->lane_batch, most_lanes));
      if (lane_group > 1) params += format(" lane_group=%d", lane_group);
    }
    DenseChoice& choice = comm->blocking_choices[a.op == kAlltoall ? 0 : 1];
    choice.algorithm = carrier;
    choice.params = params;
    choice.predicted_seconds = carried_seconds(context.facts, *context.profile, lane_group);
    if (speculated) {
      Params none;
      choice.predicted_seconds =
          speculative_seconds(context.facts, *context.profile,
                              predict_best(*find_algorithm(carrier, a.op), context.facts, none, *context.profile).seconds,
                              blocking_agreement_seconds(context.facts, *context.profile, lane_group), lane_group)
              .seconds;
    }
    // The counters of a speculated call are those of nonblocking's plan (mpix-bench).
    choice.carried_blocks = !speculated;
    // A call that repeats a carried one (every rank's the same) would make the plan
    // for the calls after it, unless carrying again is priced lower
    // (price_carrying_again): then the calls carry on, each checked on every rank as
    // a first call is.
    CarryAgain again;
    const bool repeats = !speculated && all.keeps && !all.changed;
    if (repeats && !(hints.tuning && hints.tuning->match(a.op, context.facts)))
      again = price_carrying_again(a.op, context, lane_group);
    const bool carry_again = repeats && (comm->carry_again != 0 ? comm->carry_again > 0 : again.pays);
    if (verbose) {
      std::string why = "auto: the agreement's rounds carried the blocks";
      if (speculated)
        why = hints.asked ? "the exchange started before the agreement, which found the call valid on every rank"
                          : "auto: the exchange started before the agreement, which found the call valid on every rank";
      else if (carry_again && again.plan.algorithm)
        why += format(", as they will for the calls that repeat this one: predicted %s, against %s for a start of "
                      "the plan it would make (%s)",
                      microseconds(again.carried).c_str(), microseconds(again.plan_start).c_str(),
                      again.plan.algorithm->name);
      report(comm, a.name, *find_algorithm(carrier, a.op), params, why, context.facts, {});
    }
    // The call is done. Where every rank keeps plans (agreed: making one may take
    // messages between ranks), a plan is made for the calls that repeat it, but only
    // once one has: a call made once, or exchanges that alternate, would pay the
    // planning (on 8 nodes of 32 at 16 B, a third of the call) for nothing. So the
    // first such call keeps only the call; the next one, if every rank's call is the
    // same again, carries its blocks too and makes the plan.
    if (!all.keeps || carry_again) return MPIX_SUCCESS;  // the kept call stays, without a plan
    if (all.changed) {
      drop(*kept);
      *kept = keep_call(a.op, context.exchange, mine, in_place, info).release();
      return MPIX_SUCCESS;
    }
  }
  if (!persistent) {
    if (!all.changed && !kept_call_only) {
      ++(*kept)->reuses;
      if (verbose) report_reuse(comm, a, **kept, "the previous call's plan");
      return MPIX_SUCCESS;
    }
    drop(*kept);  // before the new plan, which may take its scratch
  }
  std::unique_ptr<ReusablePlan> reusable;
  if (mine.keeps) reusable = keep_call(a.op, context.exchange, mine, in_place, info);

  std::string reason = "asked for";
  const Algorithm* algorithm = hints.asked;
  std::vector<Prediction> ranked;
  // A rule whose parameters do not fit this call's layout (a radix above the ranks
  // per node of a hierarchical TuNA: a file measured on another layout) is passed
  // over, as one that does not match; checked at load against P only.
  int passed_over = 0;
  auto fits = [&](const TuningRule& candidate) {
    if (!candidate.algorithm->cost) return true;
    MPIX_Info_s merged = with_rule_hints(info, candidate);
    Params params;
    const bool fit = resolve_params(&merged, candidate.algorithm->params, comm->size, &params) == MPIX_SUCCESS &&
                     candidate.algorithm->cost(context.facts, params, *context.profile).valid;
    if (!fit && !passed_over) passed_over = candidate.line;
    return fit;
  };
  const TuningRule* rule = hints.tuning ? hints.tuning->match(a.op, context.facts, fits) : nullptr;
  MPIX_TRY(probe_direct_copy(a.op, algorithm, rule, comm, &context));
  if (rule) {
    algorithm = rule->algorithm;
    reason = format("tuning file %s:%d", hints.tuning->path.c_str(), rule->line);
    MPIX_Info_s merged = with_rule_hints(info, *rule);
    MPIX_TRY(resolve_params(&merged, algorithm->params, comm->size, &context.params));
  } else if (!algorithm) {
    Prediction choice = select_dense(a.op, context, verbose ? &ranked : nullptr);
    algorithm = choice.algorithm;
    context.params = choice.params;
    if (verbose)  // the text only MPIX_VERBOSE shows: a blocking call at 2 ranks takes a few us
      reason = format("auto: predicted %s on %s", microseconds(choice.seconds).c_str(), hints.profile->source.c_str());
  }
  if (verbose && passed_over)
    reason += format(" (tuning file %s:%d passed over: its parameters do not fit this node layout)",
                     hints.tuning->path.c_str(), passed_over);
  // A radix left to the library (`auto`, the default) is the model's best for the
  // algorithm; the other parameters of an algorithm asked for by name or by a
  // tuning rule keep their documented defaults.
  if (algorithm->cost && context.params.radix_auto) {
    Params fixed = context.params;
    fixed.given = ~0u;
    Prediction best = predict_best(*algorithm, context.facts, fixed, *context.profile);
    if (best.cost.valid) context.params.radix = best.params.radix;
    context.params.radix_auto = false;
  }
  std::string why = inapplicable_reason(*algorithm, context);
  if (!why.empty())
    return fail(MPIX_ERR_UNSUPPORTED, format("%s: algorithm %s: %s", a.name, algorithm->name, why.c_str()));

  auto request = std::make_unique<MPIX_Request_s>(comm);
  request->algorithm = algorithm->name;
  request->params = describe_params(algorithm->params, context.params);
  request->param_values = context.params;
  request->facts = context.facts;
  if (algorithm->cost)
    request->predicted_seconds =
        predict_seconds(algorithm->cost(context.facts, context.params, *context.profile), *context.profile, false) +
        (persistent ? agreement_seconds(context.facts, *context.profile)
                    : blocking_agreement_seconds(context.facts, *context.profile, comm->lane_group));
  const bool agreed_steps = persistent || plan_may_run_out(context.facts);
  MPIX_TRY(agree_on_step(agreed_steps, a, comm, [&] {
    MPIX_TRY(prepare_device_buffers(info, algorithm->name, a.sendbuf == MPI_IN_PLACE, &context.exchange,
                                    &request->device_staging));
    return in_place ? copy_in_place(comm, &context.exchange, &reserved_copy, request.get()) : MPIX_SUCCESS;
  }));
  context.tag = comm->next_plan_tag(persistent);
  MPIX_TRY(agree_on_step(agreed_steps, a, comm, [&] { return algorithm->create(context, &request->plan); }));
  request->plan->init_stats.scratch_bytes += request->in_place_copy.size();
  if (verbose)
    report(comm, a.name, *algorithm, request->params,
           blocks_delivered ? "planned for the calls that repeat this one; " + reason : reason, context.facts, ranked);
  if (reusable) {
    // mpix_check_args=true asks for the sizes to be compared on every call: after the agreement.
    reusable->carried = all.keeps && !all.facts.in_place && !hints.check_args && request->plan->carries_change();
    // Blocks that arrived here (and a plan made) mean this call's agreement found it
    // the same as the kept call on every rank, as a run after an agreement would: the
    // next call may run the plan without one.
    if (blocks_delivered) reusable->reuses = 1;
    reusable->request = std::move(request);
    *kept = reusable.release();
  } else {
    *out = std::move(request);
  }
  return MPIX_SUCCESS;
}

// A blocking call on a kept plan that carries the change bit (ReusablePlan): true
// when the call is done (*rc its result); false when some rank's call changed, which
// every rank learns from the same exchange, and the call must be made anew.
bool run_without_agreement(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm, ReusablePlan*& kept, int* rc) {
  bool same = false;
  {
    TimeScope planning(TimePhase::planning);
    same = same_raw_call(a, info, comm, *kept);
    if (!same) {
      Exchange ex;
      Hints hints;
      same = check_local(a, info, comm, &ex, &hints) == MPIX_SUCCESS &&
             same_call(*kept, a.op, ex, hints, a.sendbuf == MPI_IN_PLACE);
    }
  }
  Plan& plan = *kept->request->plan;
  *rc = plan.start_carrying(!same);
  // Waited for as a started request, so that the program's started requests move
  // on meanwhile (a peer may be waiting for one of them before making this call).
  if (*rc == MPIX_SUCCESS) {
    progress_started(kept->request.get());
    *rc = progress_wait(kept->request.get());
  }
  const bool changed = *rc == MPIX_SUCCESS && plan.change_seen();
  if (*rc != MPIX_SUCCESS || changed)
    drop(kept);
  else if (verbose_level() > 0)
    report_reuse(comm, a, *kept, "the previous call's plan, unchanged on every rank by its own messages");
  return !changed;
}

}  // namespace

int start_request(MPIX_Request_s* request) {
  if (request->device_staging) MPIX_TRY(request->device_staging->copy_in());
  if (request->in_place_bytes > 0) {
    charge_copy(request->in_place_bytes);
    std::memcpy(request->in_place_copy.data(), request->in_place_source, request->in_place_bytes);
  }
  request->active = true;
  int rc = request->plan->start();
  if (rc != MPIX_SUCCESS) request->active = false;
  if (rc == MPIX_SUCCESS) progress_started(request);
  return rc;
}

int wait_request(MPIX_Request_s* request) {
  request->active = false;
  MPIX_TRY(progress_wait(request));
  return request->device_staging ? request->device_staging->copy_out() : MPIX_SUCCESS;
}

int test_request(MPIX_Request_s* request, bool* done) {
  MPIX_TRY(progress_test(request, done));
  return *done && request->device_staging ? request->device_staging->copy_out() : MPIX_SUCCESS;
}

int dense_blocking(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm) {
  TimeScope call(TimePhase::other);
  MPIX_TRY(check_handle(comm, a.name, "comm"));
  const int slot = a.op == kAlltoall ? 0 : 1;
  ReusablePlan*& kept = comm->reusable_plans[slot];
  int rc = MPIX_SUCCESS;
  DenseChoice& choice = comm->blocking_choices[slot];
  auto runs = [&choice](const MPIX_Request_s& request) {
    choice.algorithm = request.algorithm;
    choice.params = request.params;
    choice.predicted_seconds = request.predicted_seconds;
    choice.carried_blocks = false;
  };
  if (kept && kept->carried && kept->reuses > 0) {
    runs(*kept->request);
    if (run_without_agreement(a, info, comm, kept, &rc)) return rc;
  }
  std::unique_ptr<MPIX_Request_s> unkept;
  bool delivered = false;
  rc = plan_dense(a, info, comm, &kept, &unkept, &delivered);
  // The blocks arrived with the agreement: a plan for the calls that repeat this
  // one that could not be made is no error of this call.
  if (delivered) return MPIX_SUCCESS;
  if (rc != MPIX_SUCCESS) return rc;
  MPIX_Request_s* request = unkept ? unkept.get() : kept->request.get();
  runs(*request);
  rc = start_request(request);
  if (rc == MPIX_SUCCESS) rc = wait_request(request);
  if (rc != MPIX_SUCCESS && !unkept) drop(kept);  // a plan whose exchange failed is not run again
  return rc;
}

int dense_persistent(const DenseArgs& a, MPIX_Info_s* info, MPIX_Comm_s* comm, MPIX_Request_s** out) {
  // These checks fail through plan_dense's agreement, so that no rank waits in it
  // for one that returned.
  int rc = MPIX_SUCCESS;
  if (out) *out = nullptr;
  else rc = fail(MPIX_ERR_ARG, format("%s: request is NULL", a.name));
  // The plan packs with the request's own copies of derived types, which the
  // program may free while the request lives.
  MPIX_TRY(check_handle(comm, a.name, "comm"));
  auto types = std::make_unique<OwnedTypes>();
  DenseArgs owned = a;
  if (rc == MPIX_SUCCESS && a.sendbuf != MPI_IN_PLACE) rc = types->own_copy(&owned.sendtype, comm->lib_comm);
  if (rc == MPIX_SUCCESS) rc = types->own_copy(&owned.recvtype, comm->lib_comm);
  std::unique_ptr<MPIX_Request_s> request;
  MPIX_TRY(plan_dense(owned, info, comm, nullptr, &request, nullptr, rc));
  request->types = std::move(types);
  *out = request.release();
  handle_made(*out);
  return MPIX_SUCCESS;
}

}  // namespace mpix
