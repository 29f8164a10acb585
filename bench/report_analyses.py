"""bench/report's analyses for issues #10 and #12: `auto` against the fastest algorithm and the
model against the simulation (on the sweep's platforms and the unseen ones), which peer won each
cell and how close the floors are, where a call's time goes (the breakdown), what the lower bound
leaves for the speedup goals, and the cells where mpix loses."""
import argparse
import collections
import csv
import glob
import os
import re

from report_rows import (FLOOR_FROM_P, KB, PEERS, ROOT, Data, best, contests, fmt_t, fmt_x, is_peer,
                         load_platform, load_simulate, losses, peer_floor, peer_name, short, size_name)


def auto_section(data, totals=None):
    """`auto` (bench/simulate --auto) against the fastest mpix algorithm of each cell, and
    the model's prediction against the simulated time; the ratios are added to `totals` too."""
    auto_path = data.auto_path
    if data.auto_all is None:
        return ("No `auto` rows: run `bench/simulate --auto%s` (writes %s)." %
                (" --quick" if "quick" in os.path.basename(auto_path) else "", os.path.relpath(auto_path, ROOT)))
    lines = ["From `%s` (one `auto` row per cell, with the platform as its machine file) and the "
             "algorithms' rows of the same cells (`%s`). *best mpix* is the fastest mpix algorithm (any "
             "parameters) that ran in the cell, `pmpi` excluded; *MPI's own* is `smpi:mpich`, SMPI's "
             "MPI_Alltoall(v) under its MPICH selector called directly by the benchmark (or `pmpi`, the same "
             "call through mpix, where only that ran); *best peer* the fastest `smpi:*` or `peer:*` row of the "
             "cell (plain MPI calls: no agreement). *predicted* is the model's time for one blocking call of "
             "what auto chose." %
             (os.path.relpath(auto_path, ROOT), os.path.relpath(data.path, ROOT)), "",
             "| platform | P | op | dist | S | auto chose | auto | best mpix | its time | auto / best | MPI's own | "
             "best peer | auto / peer | predicted | predicted / simulated |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios, model, pmpi_ratios, peer_ratios = [], [], [], []
    for r in data.auto_all:
        if r["time"] is None:
            lines.append("| %s | %s | %s | %s | %s | error: %s | | | | | | | | | |" % (
                r["platform"], r["P"], r["op"], r["dist"], size_name(r["S"]), r["error"][:60]))
            continue
        t = r["time"]
        everything = data.select(platform=r["platform"], P=r["P"], op=r["op"], dist=r["dist"], S=r["S"])
        cell = [x for x in everything if not is_peer(x["algorithm"])]
        mpix = best([x for x in cell if x["algorithm"] != "pmpi"])
        pm = best([x for x in everything if x["algorithm"] == "smpi:mpich" and not x.get("floor")]) or \
            best([x for x in cell if x["algorithm"] == "pmpi"])
        ratio = t / mpix["time"] if mpix else None
        if ratio:
            ratios.append(ratio)
        if pm:
            pmpi_ratios.append(t / pm["time"])
        peer = best([x for x in everything if is_peer(x["algorithm"]) and not x.get("floor")])
        if peer:
            peer_ratios.append(t / peer["time"])
        pred = float(r["predicted_s"]) if r.get("predicted_s") else None
        if pred:
            model.append(pred / t)
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["platform"], r["P"], r["op"], r["dist"], size_name(r["S"]), r["chosen"], fmt_t(t),
            ("%s %s" % (mpix["algorithm"], mpix["params"] if mpix["params"] != "-" else "")).strip() if mpix else "-",
            fmt_t(mpix["time"]) if mpix else "-", fmt_x(ratio), fmt_t(pm["time"]) if pm else "-",
            "%s %s" % (peer["algorithm"], fmt_t(peer["time"])) if peer else "-",
            fmt_x(t / peer["time"]) if peer else "-", fmt_t(pred) if pred else "-", fmt_x(pred / t) if pred else "-"))
    if totals is not None:
        for key, values in (("best", ratios), ("own", pmpi_ratios), ("peer", peer_ratios), ("model", model)):
            totals.setdefault(key, []).extend(values)
    return "\n".join(auto_summary(ratios, pmpi_ratios, peer_ratios, model) + [""] + lines)


def auto_summary(ratios, pmpi_ratios, peer_ratios, model):
    """`auto` / the best mpix row, / MPI's own, / the best peer, and predicted / simulated, summed up."""
    summary = []
    if ratios:
        within = sum(1 for x in ratios if x <= 1.25)
        summary.append("`auto` is within 1.25x of the best mpix algorithm in %d of %d cells (%.0f%%); its worst "
                       "ratio is %.2f; %d cells are over 2x." % (within, len(ratios), 100.0 * within / len(ratios),
                                                                max(ratios), sum(1 for x in ratios if x > 2)))
    if pmpi_ratios:
        summary.append("Against MPI's own where it ran (%d cells): worst auto / MPI's own %.2f (%d cells more "
                       "than 5%% slower)." % (len(pmpi_ratios), max(pmpi_ratios),
                                              sum(1 for x in pmpi_ratios if x > 1.05)))
    if peer_ratios:
        summary.append("Against the best peer where one ran (%d cells): worst auto / peer %.2f (%d cells more than "
                       "5%% slower)." % (len(peer_ratios), max(peer_ratios), sum(1 for x in peer_ratios if x > 1.05)))
    if model:
        ms = sorted(model)
        summary.append("Model against simulation (predicted / simulated, %d cells): median %.2f, range %.2f to "
                       "%.2f." % (len(ms), ms[len(ms) // 2], ms[0], ms[-1]))
    return summary


def unseen_section(results_dir):
    """`auto` on the platforms kept out of the sweep (bench/results/unseen-*.csv, each with its -auto
    CSV): one table per platform and ranks per node."""
    lines, totals = [], {}
    for path in sorted(glob.glob(os.path.join(results_dir, "unseen-*.csv"))):
        # Any name of a platform file (bench/simulate takes whatever bench/platforms/NAME.json
        # exists); the -auto and -breakdown companions end otherwise.
        if not re.fullmatch(r"unseen-.+-ppn[0-9]+\.csv", os.path.basename(path)):
            continue
        data = Data(path)
        first = data.rows[0]
        lines += ["#### %s, P = %d as %d nodes of %d" % (first["platform"], first["P"], int(first["nodes"]),
                                                         first["ppn"]), "", auto_section(data, totals), ""]
    if not lines:
        return ["No rows: bench/results/unseen-*.csv (docs/performance.md says how they were made)."]
    return ["Over all of them:", ""] + auto_summary(*(totals.get(key, []) for key in ("best", "own", "peer", "model"))) + \
        [""] + lines


def peers_section(data):
    """Which peer was the fastest of each cell, and every peer's time at P = 256 (uniform)."""
    lines = []
    winners = collections.Counter()
    for key, m, p in contests(data):
        winners[peer_name(p)] += 1
    if winners:
        lines += ["Fastest peer, over the %d cells (platform, P, operation, distribution, S) where an mpix algorithm "
                  "and a peer ran, or only a peer's floor stands in (\"(floor)\"): %s." % (sum(winners.values()), ", ".join(
                      "%s in %d" % (name, n) for name, n in winners.most_common())), ""]
    ran = [r for r in data.base if r["algorithm"] in PEERS and not r["floor"] and r["time"] is not None and
           r["P"] >= FLOOR_FROM_P]
    if ran:
        lines += ["How close the floor is, where a `peer:*` row ran at P >= %d (time / floor): %s." % (
            FLOOR_FROM_P, "; ".join("%s on %s, P = %d, %s %s: %s / %s = %.3f" % (
                r["algorithm"], r["platform"], r["P"], r["dist"], size_name(r["S"]), fmt_t(r["time"]),
                fmt_t(f), r["time"] / f) for r, f in ((r, peer_floor(load_platform(r["platform"]), r["P"], r["ppn"],
                                                                      r["dist"], r["S"], r["overhead_scale"]))
                                                      for r in sorted(ran, key=lambda r: (r["P"], r["S"], r["algorithm"],
                                                                                         r["platform"]))))), ""]
    lines += floors_table(data)
    rows = [r for r in data.base if r["P"] == 256 and r["op"] == "alltoallv" and r["dist"] == "uniform"]
    labels = sorted(set(r["algorithm"] for r in rows if is_peer(r["algorithm"])))
    sizes = sorted(set(r["S"] for r in rows if is_peer(r["algorithm"])))
    if not labels:
        return lines + ["No peer ran at P = 256 (uniform) in this CSV.", ""]
    lines += ["Every peer at P = 256, uniform blocks (time; bold: the fastest peer of its column; "
              "\"not run\": not in the plan for that size):", "",
              "| peer | " + " | ".join("%s %s" % (plat, size_name(S)) for plat in data.platforms() for S in sizes) + " |",
              "|---" * (1 + len(sizes) * len(data.platforms())) + "|"]
    fastest = {}
    for plat in data.platforms():
        for S in sizes:
            fastest[(plat, S)] = best([r for r in rows if r["platform"] == plat and r["S"] == S and
                                       is_peer(r["algorithm"])])
    for label in labels:
        cells = []
        for plat in data.platforms():
            for S in sizes:
                mine = best([r for r in rows if r["platform"] == plat and r["S"] == S and r["algorithm"] == label])
                if mine is None:
                    err = [r for r in rows if r["platform"] == plat and r["S"] == S and r["algorithm"] == label]
                    cells.append("no result: " + err[0]["error"][:50] if err else "not run")
                    continue
                txt = ("floor " if mine.get("floor") else "") + fmt_t(mine["time"])
                cells.append("**%s**" % txt if mine is fastest[(plat, S)] else txt)
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    return lines + [""]


def floors_table(data):
    """The best mpix algorithm against each peer's floor, in every cell that has floors."""
    cells = collections.defaultdict(list)
    for r in data.base:
        cells[(r["platform"], r["P"], r["op"], r["dist"], r["S"])].append(r)
    out = []
    for key in sorted(cells):
        rs = cells[key]
        floors = sorted((r for r in rs if r.get("floor")), key=lambda r: r["algorithm"])
        m = best([r for r in rs if not is_peer(r["algorithm"])])
        if not floors or not m:
            continue
        sim = best([r for r in rs if is_peer(r["algorithm"]) and not r.get("floor")])
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            key[0], key[1], key[3], size_name(key[4]), short(m), fmt_t(m["time"]),
            "; ".join("%s %s (%s: %s)" % (r["algorithm"], fmt_t(r["time"]), r["error"].split(":")[0],
                                           fmt_x(r["time"] / m["time"])) for r in floors),
            "%s %s (%s)" % (sim["algorithm"], fmt_t(sim["time"]), fmt_x(sim["time"] / m["time"])) if sim else "none"))
    if not out:
        return []
    return ["The best mpix algorithm against the floors of the peers that were not simulated (in brackets: why, "
            "and floor / mpix time: above 1, mpix is faster than that peer can be), and against the best simulated "
            "peer:", "", "| platform | P | dist | S | best mpix | its time | floors | best simulated peer (its time / "
            "mpix's) |", "|---|---|---|---|---|---|---|---|"] + out + [""]


def headroom_section(data):
    """#12's goals (x times faster than the best peer) against what the lower bound leaves: no
    exchange beats the bound, so no algorithm can be more than (strictest peer) / bound faster
    than that peer. The strictest peer is the fastest that ran or, where lower, the floor of one
    that did not, never below the bound (a floor counts messages only). *Goal needs*: the time
    the goal asks for, and how close to the bound that is."""
    goals = {16: {256: 5, 1024: 10}, KB: {256: 2, 1024: 2}}
    lines = ["| platform | P | S | lower bound | fastest peer that ran | strictest peer | "
             "at most (strictest / bound) | goal | goal needs | best mpix | its time | speedup |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (plat, P, op, dist, S), m, p in contests(data):
        goal = goals.get(S, {}).get(P)
        if not goal or op != "alltoallv" or dist != "uniform" or not m.get("bound"):
            continue
        bound = m["bound"]
        ran = None if p["floor"] else p  # best_peer: a floor only where no peer ran
        floor = best([r for r in data.select(platform=plat, P=P, op=op, dist=dist, S=S) if r["floor"]])
        candidates = ([ran["time"]] if ran else []) + ([max(floor["time"], bound)] if floor else [])
        strict = min(candidates)
        strict_name = peer_name(ran) if ran and ran["time"] == strict else "%s floor%s" % (
            floor["algorithm"], " (raised to the bound)" if floor["time"] < bound else "")
        room = strict / bound
        needed = strict / goal
        needs = "%s (%.2fx the bound)" % (fmt_t(needed), needed / bound) if needed >= bound else "below the bound"
        lines.append("| %s | %d | %s | %s | %s | %s %s | %.2f | %dx%s | %s | %s | %s | %.2f |" % (
            plat, P, size_name(S), fmt_t(bound), "%s %s" % (peer_name(ran), fmt_t(ran["time"])) if ran else "-",
            strict_name, fmt_t(strict), room, goal, " (out of reach)" if room < goal else "", needs, short(m),
            fmt_t(m["time"]), strict / m["time"]))
    return lines


def breakdown_section(data, path):
    """The time per phase of bench/simulate --breakdown's rows, beside the lower bound's terms."""
    if not os.path.exists(path):
        return ["No breakdown rows: run `bench/simulate --breakdown` (writes %s)." % os.path.relpath(path, ROOT), ""]
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if float(r["overhead_scale"]) == 1.0:
                rows.append(r)
    phases = [("agreement", "agreement"), ("planning", "planning"), ("metadata", "metadata rounds"),
              ("intra_node", "intra-node"), ("inter_node", "inter-node"), ("exchange", "flat rounds"),
              ("local_copy", "local copies"), ("other", "other")]
    lines = ["From `%s` (`bench/simulate --breakdown`: MPIX_BREAKDOWN=1, `--cfg=smpi/wtime:0`). Each row is one "
             "blocking call; the phases are those of the rank whose call took longest, so they add up to the "
             "time. Then the lower bound's terms for the cell: the latency term (a LogP broadcast, \"The lower "
             "bound\"), the injection and bisection terms (bytes / bandwidth), and the algorithm's own payload "
             "messages (most over ranks) x (o_s + o_r)." %
             os.path.relpath(path, ROOT), "",
             "| platform | P | S | algorithm | time | " + " | ".join(name for _, name in phases) +
             " | latency term | injection | bisection | its messages × o |",
             "|---" * (5 + len(phases) + 4) + "|"]
    sums = collections.defaultdict(float)
    shares = collections.defaultdict(list)  # (S, group) -> shares of the time, over rows
    against_latency = collections.defaultdict(list)  # (P, S) -> agreement / latency term
    for r in rows:
        label = r["algorithm"] + (" " + r["params"] if r["params"] not in ("-", "") else "")
        if r["algorithm"] == "auto" and r.get("chosen"):
            label = "auto (chose %s)" % r["chosen"]
        label = label.replace("block_count=", "bc=").replace("radix=", "r=")
        if not r.get("time_s"):
            lines.append("| %s | %s | %s | %s | %s |%s" % (r["platform"], r["P"], size_name(int(r["S"])), label,
                                                           "no result: " + r["error"][:80], " |" * (len(phases) + 4)))
            continue
        t = float(r["time_s"])
        plat = load_platform(r["platform"])
        o = (plat["send_overhead"] + plat["recv_overhead"]) * float(r["overhead_scale"])
        P = int(r["P"])
        cells = []
        for key, _ in phases:
            v = float(r["t_%s_s" % key]) if r.get("t_%s_s" % key) else 0.0
            sums[key] += v
            cells.append("%s (%.0f%%)" % (fmt_t(v), 100.0 * v / t) if v >= 0.005 * t else fmt_t(v) if v > 0 else "0")
        spent = {key: float(r["t_%s_s" % key]) if r.get("t_%s_s" % key) else 0.0 for key, _ in phases}
        S = int(r["S"])
        shares[(S, "the agreement")].append(spent["agreement"] / t)
        shares[(S, "metadata rounds and planning")].append((spent["metadata"] + spent["planning"]) / t)
        shares[(S, "the data phases (intra-node, inter-node, flat rounds)")].append(
            (spent["intra_node"] + spent["inter_node"] + spent["exchange"]) / t)
        shares[(S, "local copies")].append(spent["local_copy"] / t)
        against_latency[(P, S)].append(spent["agreement"] / float(r["latency_bound_s"]))
        own = int(r["messages"]) * o if r.get("messages") else None
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["platform"], P, size_name(int(r["S"])), label, fmt_t(t), " | ".join(cells),
            fmt_t(float(r["latency_bound_s"])), fmt_t(float(r["node_bound_s"])),
            fmt_t(float(r["bisection_bound_s"])), fmt_t(own) if own is not None else "-"))
    for S in sorted(set(k[0] for k in shares)):
        parts = ["%s %.0f-%.0f%%" % (what, 100 * min(v), 100 * max(v)) for (s, what), v in shares.items() if s == S]
        lines += ["", "At S = %s, share of the time over the rows: %s." % (size_name(S), "; ".join(parts))]
    for (P, S), v in sorted(against_latency.items()):
        lines += ["", "At P = %d, S = %s, the agreement alone takes %.1f to %.1f times the whole latency term of the "
                  "lower bound." % (P, size_name(S), min(v), max(v))]
    sim, _ = load_simulate()
    if sim:
        held = set((r["platform"], int(r["P"]), r["algorithm"], r["params"], int(r["S"])) for r in rows
                   if r.get("time_s"))
        plan = sim.breakdown_plan(argparse.Namespace(quick=False, platforms=list(sim.PLATFORMS), ppn=32,
                                                     overhead_scale=1.0))
        absent = sorted(set("%s P=%d %s S=%s" % (k[0], k[1], k[4] if k[5] == "-" else k[4] + " " + k[5], size_name(k[7]))
                            for j in plan for k in j.keys() if (k[0], k[1], k[4], k[5], k[7]) not in held))
        if absent:
            lines += ["", "Not in the breakdown CSV (%d of the %d configurations of `bench/simulate --breakdown`): "
                      "not run, or not finished within its job's limit (%d s per row at P = 1024, the "
                      "plan's, unless --timeout gave more) on this shared machine: %s." %
                      (len(absent), sum(len(j.keys()) for j in plan), sim.LOG_TIME_TIMEOUT_1024, ", ".join(absent))]
    total = sum(sums.values())
    if total > 0:
        lines += ["", "Over all rows above, the share of each phase in the summed time: " + ", ".join(
            "%s %.0f%%" % (name, 100.0 * sums[key] / total) for key, name in phases if sums[key] > 0) + "."]
    return lines + [""]


def losses_section(data):
    ls = losses(data)
    if not ls:
        return ["In this CSV the fastest mpix algorithm beats the fastest peer in every cell where both ran.", ""]
    lines = ["The fastest peer beats every mpix algorithm, and `auto`'s own row where the cell has one "
             "(`auto (CHOSEN)`, from the `-auto` CSV), in these %d cells (all of them, none left out). "
             "\"What differs\" gives the mpix row's counters (per rank, the most over ranks: bytes sent, rounds, "
             "messages) next to those of a direct exchange (mpix-bench counts a peer's call as one: it cannot see "
             "inside SMPI's algorithm, which may forward data too, as `smpi:bruck` does for alltoall, and whose local "
             "copies the simulation does not charge); the lower bound's dominant term says what the machine "
             "limits." % len(ls),
             "", "| platform | P | op | dist | S | best mpix | its time | best peer | its time | peer faster by | "
             "what differs |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (plat, P, op, dist, S), m, p in ls:
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s× | %s |" % (
            plat, P, op, dist, size_name(S), short(m), fmt_t(m["time"]), peer_name(p), fmt_t(p["time"]),
            fmt_x(m["time"] / p["time"]), why_slower(m, p)))
    lines.append("")
    lines += loss_summary(ls)
    return lines + [""]


def why_slower(m, p):
    """Facts from the counters of the best mpix row m and the peer row p."""
    parts = []
    try:
        mb, pb = int(m["payload_bytes"]), int(p["payload_bytes"])
        if pb > 0 and mb > 1.05 * pb:
            parts.append("sends %.2f× the bytes of a direct exchange" % (mb / pb))
        elif pb > 0:
            parts.append("sends the bytes of a direct exchange")
        parts.append("%s rounds, %s messages (a direct exchange: %s)" % (m["rounds"], m["messages"], p["messages"]))
        if int(m.get("scratch_bytes") or 0):
            parts.append("%s B scratch copied through" % m["scratch_bytes"])
    except (KeyError, ValueError):
        pass
    parts.append("bound: %s" % m["bound_kind"])
    return "; ".join(parts)


def loss_summary(ls):
    """One line per kind of loss, so that the reasons can be read at a glance."""
    by = collections.defaultdict(list)
    for (plat, P, op, dist, S), m, p in ls:
        by[(m["bound_kind"], "more bytes" if int(m["payload_bytes"] or 0) > 1.05 * int(p["payload_bytes"] or 1)
            else "same bytes")].append((plat, P, dist, S))
    out = ["Summary of the losses:", ""]
    for (kind, bytes_), cells in sorted(by.items(), key=lambda x: -len(x[1])):
        sizes = sorted(set(c[3] for c in cells))
        out.append("- %d cells where the bound is %s-dominated and the best mpix algorithm sends %s than a direct exchange "
                   "(S = %s; platforms %s)." % (len(cells), kind, "more bytes" if bytes_ == "more bytes" else
                                                "no more bytes", ", ".join(size_name(s) for s in sizes),
                                                ", ".join(sorted(set(c[0] for c in cells)))))
    if any(k[1] == "more bytes" for k in by):
        out.append("")
        out.append("More bytes is the price of the log-time and two-phase schedules: TuNA forwards a block once per "
                   "non-zero digit of its index (about (r-1)/r log_r P times at radix r), and the hierarchical "
                   "algorithms move inter-node data twice (inside the node, then between nodes), each time also "
                   "through the library's copies, charged at the copy bandwidth. When the bandwidth terms dominate, "
                   "a linear exchange that sends every byte once, directly, wins.")
    if any(k[1] == "same bytes" for k in by):
        out.append("")
        out.append("Where the bytes are the same, the difference is in the schedule: how many messages are in flight "
                   "at once, in which order ranks meet (contention on shared links), and mpix's per-call set-up "
                   "(the plan, and TuNA's metadata rounds at init), which a blocking call pays every time.")
    return out
