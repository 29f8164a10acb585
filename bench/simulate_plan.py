"""bench/simulate's plan: the jobs (smpirun runs of mpix-bench) of the full sweep, of --quick,
--auto and --breakdown, and what each is estimated to cost (docs/performance.md, "Why the plan
is what it is")."""
import argparse
import collections
import math

import workload  # bench/workload.py
from simulate_machine import PLATFORMS

SELECTORS = ("ompi", "mpich", "mvapich2", "impi", "bruck", "pair", "ring")

KB = 1024

# The registry's parameters of each algorithm, in the order mpix-bench prints them,
# and their defaults (src/core/registry.{hpp,cpp}); seed defaults to P.
PARAMS = {
    "pmpi": [], "pairwise": [], "nonblocking": [], "scattered": ["block_count"],
    "multipair": ["stride"], "multipair_waitany": ["stride"], "multipair_testany": ["stride"],
    "random_scatter": ["seed"], "random_sendrecv": ["seed", "max_queue"],
    "random_segmented": ["seed", "max_queue", "segment_bytes"], "bruck": ["radix"], "tuna": ["radix"], "tuna_carried": ["radix"],
    "tuna_hier_staggered": ["radix", "block_count"], "tuna_hier_coalesced": ["radix", "block_count"],
    "node_aware": ["locality"], "auto": [],
    # The peers: MPI libraries' defaults as plain MPI calls of mpix-bench (tools/bench/peers.cpp).
    "peer:ialltoallv": [], "peer:scattered32": [], "peer:linear": [],
}

PEERS = ("peer:scattered32", "peer:linear", "peer:ialltoallv")

# Peers that post every message at once: P^2 flows in one contention system.
ALL_AT_ONCE = ("nonblocking", "random_scatter", "random_segmented", "peer:linear", "peer:ialltoallv")

# A peer job at P >= 512 gets this many seconds before its rows are written as not
# simulated (bench/report then compares with the peer's floor).
PEER_TIMEOUT_LARGE_P = 600

DEFAULTS = {"radix": "auto", "block_count": "32", "stride": "8", "max_queue": "64", "segment_bytes": "8192",
            "locality": "node"}

# The log-time algorithms at P = 1024, each with the parameters of its best rows at 256 and 512
# (bruck is alltoall's: uniform blocks only), and the seconds each of their rows may take there:
# SMPI's start-up, then 1.7 to 10 minutes per row on this machine with two simulations at once
# (docs/performance.md, "Why the plan is what it is").
LOG_TIME_1024 = (("tuna", {"radix": ["2"]}), ("tuna_carried", {"radix": ["2"]}),
                 ("tuna_hier_coalesced", {"radix": ["2"], "block_count": ["4"]}),
                 ("tuna_hier_staggered", {"radix": ["2"], "block_count": ["4"]}),
                 ("bruck", {"radix": ["2"]}))

LOG_TIME_TIMEOUT_1024 = 900



class Job:
    """One smpirun of mpix-bench: its rows share platform, P, op, distributions, sizes."""

    def __init__(self, platform, P, ppn, op, dists, sizes, algorithms=(), sets=None, selector=None, tag=""):
        self.platform, self.P, self.ppn, self.op = platform, P, ppn, op
        self.dists, self.sizes = list(dists), list(sizes)
        self.algorithms = list(algorithms)  # mpix algorithms (pmpi is then skipped)
        self.sets = dict(sets or {})  # key -> [values]
        self.selector = selector  # SMPI selector: the job times MPI_Alltoall(v) (peer:alltoallv) = smpi:NAME only
        self.tag = tag
        self.overhead_scale = 1.0
        self.breakdown = False  # MPIX_BREAKDOWN=1: the time per phase of every row
        self.timeout = None  # seconds: the plan's limit for this job, unless --timeout is given
        # Untimed calls before the timed one. 0: the timed blocking call is the first of
        # its arguments, so it plans (a repeated call runs the kept plan again:
        # docs/user-guide.md, "Plan reuse by blocking calls").
        self.warmup = 0

    def workloads(self):
        """(dist, S as passed, S as reported) of the job."""
        out = []
        dists = ["constant"] if self.op == "alltoall" else self.dists
        for d in dists:
            if d in workload.FIXED:  # mpix-bench reports their largest block as S
                out.append((d, 0, 64 if d == "fft_n1" else 512))
            else:
                out.extend((d, S, S) for S in self.sizes)
        return out

    def variants(self):
        """(label, params) of the rows the job produces per workload."""
        if self.selector:
            return [("smpi:" + self.selector, "-")]
        rows = []
        for algorithm in self.algorithms:
            keys = PARAMS[algorithm]
            combos = [{}]
            for key in keys:
                if key in self.sets:
                    combos = [dict(c, **{key: v}) for c in combos for v in self.sets[key]]
            for combo in combos:
                parts = []
                for key in keys:
                    value = combo.get(key, str(self.P) if key == "seed" else DEFAULTS.get(key))
                    parts.append("%s=%s" % (key, value))
                rows.append((algorithm, " ".join(parts) if parts else "-"))
        return rows

    def keys(self):
        return [(self.platform, self.P, self.ppn, self.op, label, params, d, S, self.overhead_scale)
                for (d, _, S) in self.workloads() for (label, params) in self.variants()]

    def describe(self):
        what = "smpi:" + self.selector if self.selector else ",".join(self.algorithms)
        sets = " ".join("%s=%s" % (k, ",".join(v)) for k, v in self.sets.items())
        sizes = " S=" + ",".join(str(S) for S in self.sizes) if self.sizes else ""
        return "%s P=%d %s %s %s%s%s" % (self.platform, self.P, self.op, what, ",".join(self.dists) if
                                          self.op == "alltoallv" else "constant", sizes, (" " + sets) if sets else "")

    def estimate(self):
        """Simulation cost in CPU seconds, from measurements on this machine (ppn 32): a
        start-up per smpirun, then per row (two calls: the timed one and mpix-bench's
        counters run) the cost of TuNA radix 2 at that P and S = 16 B, times a factor per
        algorithm and one for the block size."""
        P = self.P
        total = interpolate(STARTUP, P)
        base = interpolate(ROW_BASE, P)
        for label, params in self.variants():
            p = dict(x.split("=") for x in params.split()) if params != "-" else {}
            if label.startswith("smpi:"):
                f = {"mpich": 7.0, "bruck": 7.0 if self.op == "alltoallv" else 1.0,
                     "impi": 10.0 * (P / 64.0) ** 3}.get(label[5:], 1.2 if P < 1024 else 1.7)
                f *= 1.0 + (P / 512.0 if label[5:] in ("mpich", "bruck") else 0.0)
            elif label in ("tuna", "tuna_carried", "bruck", "tuna_hier_coalesced", "tuna_hier_staggered"):
                r = int(p["radix"]) if p.get("radix", "auto").isdigit() else 2
                f = 1.0 + 6.0 * r / P
                if label == "tuna_hier_staggered":
                    f *= 7.0
                if label.startswith("tuna_hier") and P >= 1024:  # 4 messages per rank in flight, 32 nodes
                    f *= 2.2
            elif label in ("node_aware",):  # its node-local phase is SMPI's all-at-once MPI_Ialltoallv
                f = 2.5 * max(1.0, (P / 256.0) ** 3.5)
            elif label in ("pairwise",):
                f = 2.5
            elif label in ALL_AT_ONCE:
                f = 10.0 * (P / 64.0) ** 3
            elif label == "multipair_waitany":  # an MPI_Waitany per completion, each linear in the requests
                f = 18.0 * max(1.0, (P / 64.0) ** 1.5)
            else:  # scattered, multipair*, random_sendrecv: batches of requests
                f = 18.0
            if self.op == "alltoall":
                f *= 0.5
            if label.startswith("peer:"):  # one call per row: no counters run
                f *= 0.5
            total += base * f * sum(size_factor(P, S) for (_, _, S) in self.workloads())
        return min(total, self.timeout) if self.timeout else total



STARTUP = {64: 0.3, 128: 0.5, 256: 1.3, 512: 9.0, 1024: 50.0}

ROW_BASE = {64: 0.08, 128: 0.3, 256: 2.5, 512: 10.0, 1024: 45.0}

SIZE_GROWTH = {64: 0.1, 128: 0.15, 256: 0.25, 512: 0.6, 1024: 1.5}



def size_factor(P, S):
    """How much longer a row with blocks up to S bytes takes to simulate than one with 16 B
    (longer transfers overlap more, so SimGrid's contention systems are larger); fitted to the
    sim_seconds of bench/results/*.csv: 1 / 2 / 5 at P = 256 and 1 / 4 / 8 to 25 at 512 for
    S = 16 B / 1 KiB / 16 KiB for TuNA, less for most other algorithms."""
    return 1.0 + interpolate(SIZE_GROWTH, P) * math.sqrt(max(S - 16, 0) / 1024.0)



def interpolate(table, P):
    if P in table:
        return table[P]
    keys = sorted(table)
    lo = max([k for k in keys if k <= P] or [keys[0]])
    return table[lo] * (P / float(lo)) ** 2.6



def rounds(P, r):
    """Rounds of the radix-r TuNA core among P ranks (docs/algorithms-logtime.md)."""
    if P < 2:
        return 0
    r = max(2, min(r, P))
    k, pw = 0, 1
    while pw < P:
        k += sum(1 for z in range(1, r) if z * pw < P)
        pw *= r
    return k



def pow2_upto(lo, hi):
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out



def default_plan(quick):
    """The plan as `bench/simulate [--quick]` runs it with its default options."""
    return plan(argparse.Namespace(quick=quick, ppn=32, platforms=list(PLATFORMS), overhead_scale=1.0, auto=False))



def plan(args):
    """The jobs of --quick or of the full set (docs/performance.md explains the choice)."""
    jobs = []
    ppn = args.ppn
    dists_all = ["uniform", "normal", "powerlaw", "fft_n1", "fft_n2"]
    S_table = [16, 256, KB, 4 * KB, 16 * KB]
    for plat in args.platforms:
        def add(*a, **k):
            jobs.append(Job(plat, *a, **k))
            return jobs[-1]

        if args.quick:
            # Fig. 7 at P = 256 (small, medium, large S), heatmap P = 64, 256 x S = 16, 1K, 16K,
            # P = 256 table cells for uniform and fft_n2, peers pair and mpich; alltoall with
            # bruck; the overheads halved and doubled at P = 64.
            for P in (64, 256):
                radices = ["2", "4", "16", str(P)] if P == 256 else ["2", "4", "8", "16"]
                add(P, ppn, "alltoallv", ["uniform"], [16, KB, 16 * KB], ["tuna"], {"radix": radices}, tag="fig7")
                add(P, ppn, "alltoallv", ["uniform", "fft_n2"], [16, KB, 16 * KB], ["tuna_hier_coalesced"],
                    {"radix": ["2"], "block_count": ["4"]})
                if P == 64:  # the sensitivity runs' configurations at the platforms' own overheads
                    add(P, ppn, "alltoallv", ["uniform"], [16, KB], ["tuna_hier_coalesced"],
                        {"radix": ["2"], "block_count": ["8"]})
                    add(P, ppn, "alltoallv", ["uniform", "fft_n2"], [16, KB, 16 * KB],
                        ["tuna_hier_staggered", "node_aware", "pairwise"], {"radix": ["2"], "block_count": ["4"]})
                else:
                    add(P, ppn, "alltoallv", ["fft_n2"], [], ["tuna"], {"radix": ["2", "16"]})
                for sel in ("pair", "mpich"):
                    add(P, ppn, "alltoallv", ["uniform", "fft_n2"], [16, KB, 16 * KB], selector=sel)
                add(P, ppn, "alltoall", [], [16, KB], ["bruck"], {"radix": ["2", "4"]})
                add(P, ppn, "alltoall", [], [16, KB], selector="pair")
                peers(add, P, ppn, "alltoallv", ["uniform"], [16, KB])
            sensitivity(add, 64, ppn, [16, KB])
            continue

        # --- the full set (docs/performance.md, "Why the plan is what it is") ---
        U, S3 = ["uniform"], [16, KB, 16 * KB]
        # P = 64 (2 nodes): every algorithm and peer, uniform blocks.
        P = 64
        add(P, ppn, "alltoallv", U, S_table, ["tuna"], {"radix": ["2", "4", "8", "16", "64"]})
        # The intra-node radix runs 2..Q: the smallest and the largest (one round), Q = ppn.
        add(P, ppn, "alltoallv", U, S_table, ["tuna_hier_coalesced", "tuna_hier_staggered"],
            {"radix": sorted({"2", str(max(2, ppn))}, key=int), "block_count": ["4", "unlimited"]})
        add(P, ppn, "alltoallv", U, S_table, ["node_aware", "pairwise", "scattered", "multipair", "multipair_waitany",
                                             "multipair_testany", "random_sendrecv"])
        add(P, ppn, "alltoallv", U, [16, 16 * KB], ["nonblocking", "random_scatter", "random_segmented"])
        for sel in SELECTORS:
            add(P, ppn, "alltoallv", U, S_table, selector=sel)
        add(P, ppn, "alltoallv", U, S_table, ["tuna_carried"], {"radix": ["2", "4", "16"]})
        add(P, ppn, "alltoall", [], S_table, ["bruck", "tuna"], {"radix": ["2", "4", "64"]})
        add(P, ppn, "alltoall", [], S_table, ["tuna_carried"], {"radix": ["2", "4", "64"]})
        # The direct exchanges for uniform blocks too: what the peers run from 256 B.
        add(P, ppn, "alltoall", [], S_table, ["node_aware", "pairwise", "scattered", "nonblocking"])
        for sel in SELECTORS:
            add(P, ppn, "alltoall", [], S_table, selector=sel)
        peers(add, P, ppn, "alltoallv", U, S_table)
        peers(add, P, ppn, "alltoall", [], S_table)

        # P = 128 (4 nodes): the heatmap column.
        P = 128
        add(P, ppn, "alltoallv", U, S_table, ["tuna"], {"radix": ["2", "4", "16", "128"]})
        add(P, ppn, "alltoallv", U, S_table, ["tuna_hier_coalesced"], {"radix": ["2", "32"], "block_count": ["4"]})
        add(P, ppn, "alltoallv", U, S_table, ["tuna_hier_staggered"], {"radix": ["2"], "block_count": ["4"]})
        add(P, ppn, "alltoallv", U, S_table, ["node_aware", "pairwise", "multipair"])
        for sel in ("pair", "mpich"):
            add(P, ppn, "alltoallv", U, S_table, selector=sel)
        peers(add, P, ppn, "alltoallv", U, S_table)

        # P = 256 (8 nodes): Fig. 7 and the tables.
        P = 256
        add(P, ppn, "alltoallv", U, S3, ["tuna"], {"radix": ["2", "3", "4", "8", "16", "32", "64", "128", "256"]},
            tag="fig7")
        add(P, ppn, "alltoallv", U, [256, 4 * KB], ["tuna"], {"radix": ["2", "4", "16", "32"]})
        add(P, ppn, "alltoallv", ["normal", "powerlaw", "fft_n1", "fft_n2"], S_table, ["tuna"], {"radix": ["2", "16"]})
        add(P, ppn, "alltoallv", dists_all, S_table, ["tuna_hier_coalesced"], {"radix": ["2"], "block_count": ["4"]})
        # The sensitivity runs' hierarchical configuration at the platforms' own overheads.
        add(P, ppn, "alltoallv", U, S3, ["tuna_hier_coalesced"], {"radix": ["2"], "block_count": ["8"]})
        add(P, ppn, "alltoallv", ["uniform", "fft_n1", "fft_n2"], S_table, ["tuna_hier_coalesced"],
            {"radix": ["32"], "block_count": ["unlimited"]})
        add(P, ppn, "alltoallv", ["uniform", "fft_n1", "fft_n2"], S_table, ["tuna_hier_staggered"],
            {"radix": ["2"], "block_count": ["4"]})
        add(P, ppn, "alltoallv", dists_all, S_table, ["node_aware"])
        add(P, ppn, "alltoallv", ["uniform", "fft_n1", "fft_n2"], S_table, ["pairwise"])
        add(P, ppn, "alltoallv", U, S3, ["multipair"])
        # Where a direct exchange decides (the peers', from 4 KiB), for the other
        # distributions too: what beat smpi:pair for uniform blocks.
        add(P, ppn, "alltoallv", ["normal", "powerlaw"], [4 * KB, 16 * KB], ["multipair"])
        # The other batched exchanges at S = 16 B only: at 1 KiB one row took 8 to over 20
        # minutes of simulation (SimGrid's waitany is linear in the requests it is given).
        for algorithm in ("scattered", "multipair_waitany", "multipair_testany", "random_sendrecv"):
            add(P, ppn, "alltoallv", U, [16], [algorithm])
        add(P, ppn, "alltoallv", dists_all, S_table, selector="pair")
        add(P, ppn, "alltoallv", ["uniform", "fft_n1", "fft_n2"], S_table, selector="mpich")
        for sel in ("ring", "ompi", "mvapich2"):  # the ring exchange (ompi and mvapich2 select it)
            add(P, ppn, "alltoallv", U, S_table, selector=sel)
        add(P, ppn, "alltoall", [], S_table, ["bruck"], {"radix": ["2", "4", "16"]})
        # TuNA with the sizes in its messages: what auto chose at P = 64 for the smallest blocks.
        add(P, ppn, "alltoallv", U, [16, KB], ["tuna_carried"], {"radix": ["2", "16"]})
        add(P, ppn, "alltoall", [], [16, KB], ["tuna_carried"], {"radix": ["2", "16"]})
        add(P, ppn, "alltoallv", ["normal", "powerlaw", "fft_n1"], [16], ["tuna_carried"], {"radix": ["2"]})
        # Where Bruck forwards too much (from 1 KiB): one message per node pair, and the
        # direct exchange SMPI's pair selector runs too.
        add(P, ppn, "alltoall", [], S_table, ["node_aware", "pairwise"])
        for sel in ("pair", "bruck"):
            add(P, ppn, "alltoall", [], S_table, selector=sel)
        peers(add, P, ppn, "alltoallv", U, S3)
        peers(add, P, ppn, "alltoall", [], [16, KB])

        # P = 512 (16 nodes): Fig. 7 on the paper's two machines, the heatmap column.
        P = 512
        if plat in ("torus", "dragonfly"):
            add(P, ppn, "alltoallv", U, S3, ["tuna"], {"radix": ["2", "4", "8", "16", "32", "64", "128"]}, tag="fig7")
            add(P, ppn, "alltoallv", U, [KB, 16 * KB], ["tuna"], {"radix": ["256"]}, tag="fig7")
            add(P, ppn, "alltoallv", U, [16 * KB], ["tuna"], {"radix": ["512"]}, tag="fig7")
        else:
            add(P, ppn, "alltoallv", U, S3, ["tuna"], {"radix": ["2", "32"]})
        add(P, ppn, "alltoallv", U, [256, 4 * KB], ["tuna"], {"radix": ["2", "32"]})
        add(P, ppn, "alltoallv", U, S_table, ["tuna_hier_coalesced"], {"radix": ["2"], "block_count": ["4"]})
        add(P, ppn, "alltoallv", U, S_table, selector="pair")
        # mpix's own pairwise beside SMPI's, so that the cells from 4 KiB on compare a
        # direct exchange of each (the others with P - 1 messages in flight do not finish).
        add(P, ppn, "alltoallv", U, S_table, ["pairwise"])
        peers(add, P, ppn, "alltoallv", U, [16, KB])

        # P = 1024 (32 nodes): every log-time algorithm, uniform, small and medium S (large S
        # at 512 already costs a minute or more of simulation per row); peer pair. One job
        # per algorithm, so that one that runs out of time does not take the others along.
        P = 1024
        for algorithm, sets in LOG_TIME_1024:
            op, dists = ("alltoall", []) if algorithm == "bruck" else ("alltoallv", U)
            job = add(P, ppn, op, dists, [16, KB], [algorithm], sets)
            job.timeout = LOG_TIME_TIMEOUT_1024 * len(job.keys())
        add(P, ppn, "alltoallv", U, [16, KB], selector="pair")
        peers(add, P, ppn, "alltoallv", U, [16, KB])
        sensitivity(add, 256, ppn, S3)
    for j in jobs:
        j.overhead_scale *= args.overhead_scale
    return jobs



def auto_plan(args):
    """--auto: one `auto` row per cell (platform, P, op, distribution, S) of the plan
    (the quick or the full one) at the platforms' own overheads."""
    cells = collections.OrderedDict()
    for j in plan(args):
        if j.overhead_scale != args.overhead_scale:
            continue
        for d, S_arg, _ in j.workloads():
            cells.setdefault((j.platform, j.P, j.ppn, j.op), collections.OrderedDict())[(d, S_arg)] = True
    jobs = []
    for (plat, P, ppn, op), workloads in cells.items():
        by_dist = collections.OrderedDict()
        for d, S in workloads:
            by_dist.setdefault(d, []).append(S)
        for d, sizes in by_dist.items():
            job = Job(plat, P, ppn, op, [d], [S for S in sizes if S] or [], ["auto"], tag="auto")
            job.overhead_scale = args.overhead_scale
            jobs.append(job)
    return jobs



# --breakdown: the algorithms docs/performance.md's "Where the time goes" breaks down.
BREAKDOWN_ALGORITHMS = (("tuna", {"radix": ["2", "16"]}), ("tuna_carried", {"radix": ["2", "16"]}),
                        ("tuna_hier_coalesced", {"radix": ["2"], "block_count": ["4"]}),
                        ("node_aware", {}), ("auto", {}))



def breakdown_plan(args):
    """--breakdown: the time per phase (MPIX_BREAKDOWN=1) of the best algorithms for uniform
    blocks of 16 B and 1 KiB at P = 256 and, without --quick, 1024, where each job holds one
    algorithm and one S and gets LOG_TIME_TIMEOUT_1024 seconds."""
    jobs = []
    for plat in args.platforms:
        for P in ((256,) if args.quick else (256, 1024)):
            for algorithm, sets in BREAKDOWN_ALGORITHMS:
                for sizes in ([[16, KB]] if P < 1024 else [[16], [KB]]):
                    job = Job(plat, P, args.ppn, "alltoallv", ["uniform"], sizes, [algorithm], sets, tag="breakdown")
                    job.breakdown = True
                    job.overhead_scale = args.overhead_scale
                    if P >= 1024:
                        job.timeout = LOG_TIME_TIMEOUT_1024 * len(job.keys())
                    jobs.append(job)
    return jobs



def peers(add, P, ppn, op, dists, sizes):
    """The MPI libraries' defaults (PEERS), one job each, so that one that cannot be simulated in
    time does not take the others with it; from P = 512 on a job gets PEER_TIMEOUT_LARGE_P seconds,
    after which bench/report compares with the peer's floor instead."""
    for peer in PEERS:
        job = add(P, ppn, op, dists, sizes, [peer])
        if P >= 512:
            job.timeout = PEER_TIMEOUT_LARGE_P



def sensitivity(add, P, ppn, sizes):
    """The per-message overheads o halved and doubled, for a few algorithms (uniform)."""
    for scale in (0.5, 2.0):
        jobs = [
            add(P, ppn, "alltoallv", ["uniform"], sizes, ["tuna"], {"radix": ["2", "16"]}),
            add(P, ppn, "alltoallv", ["uniform"], sizes, ["tuna_hier_coalesced"], {"radix": ["2"], "block_count": ["8"]}),
            add(P, ppn, "alltoallv", ["uniform"], sizes, ["node_aware"]),
            add(P, ppn, "alltoallv", ["uniform"], sizes, selector="pair"),
        ]
        for j in jobs:
            j.overhead_scale = scale
