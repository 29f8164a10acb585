"""bench/report's rows: bench/simulate's CSV read into cells, the peers and their floors
(docs/performance.md, "The peers"), the fastest row of a cell, and the formats of the tables'
numbers. bench/report_figures.py and bench/report_analyses.py build on it."""
import collections
import csv
import functools
import json
import os

import workload  # bench/workload.py
from scriptload import load_script  # bench/scriptload.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PLATFORM_DIR = os.path.join(HERE, "platforms")

KB = 1024
TABLE_SIZES = [16, 256, KB, 4 * KB, 16 * KB]
TABLE_DISTS = ["uniform", "normal", "powerlaw", "fft_n1", "fft_n2"]
LOG_TIME = ("bruck", "tuna", "tuna_carried", "tuna_hier_staggered", "tuna_hier_coalesced")
PLATFORM_ORDER = ("fattree", "torus", "dragonfly")

# The peers of tools/bench/peers.cpp, and how each is timed (docs/performance.md, "The peers").
PEERS = ("peer:scattered32", "peer:linear", "peer:ialltoallv")
FLOOR_FROM_P = 1024  # from here on a peer that did not run is compared through its floor


def size_name(S):
    if S >= KB and S % KB == 0:
        return "%d KiB" % (S // KB)
    return "%d B" % S


def fmt_t(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return "%.1f µs" % (t * 1e6) if t >= 1e-5 else "%.2f µs" % (t * 1e6)
    return "%.2f ms" % (t * 1e3)


def fmt_x(x):
    if x is None:
        return "-"
    return "%.2f" % x if x < 10 else "%.1f" % x if x < 100 else "%.0f" % x


def read_rows(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            r["P"] = int(r["P"])
            r["S"] = int(r["S"])
            r["ppn"] = int(r["ppn"])
            r["overhead_scale"] = float(r["overhead_scale"])
            r["time"] = float(r["time_s"]) if r.get("time_s") else None
            r["bound"] = float(r["bound_s"]) if r.get("bound_s") else None
            r["sim"] = float(r["sim_seconds"]) if r.get("sim_seconds") else 0.0
            r["floor"] = False
            rows.append(r)
    return rows


class Data:
    def __init__(self, path):
        self.path = path
        self.rows = read_rows(path)
        # Rows of the tables: the CSV's, and the floors of peers not simulated (not CSV rows).
        self.floors = peer_floors(self.rows)
        self.base = [r for r in self.rows + self.floors if r["overhead_scale"] == 1.0]
        # `auto`'s rows (bench/simulate --auto, <csv>-auto.csv) are mpix calls of the same
        # cells: they count where the fastest mpix call of a cell is asked for (contests),
        # named by the algorithm auto chose.
        # auto_section lists every row of that CSV, its errors too (auto_all; None: no such file).
        self.auto_path = path[:-4] + "-auto.csv"
        self.auto_all = None
        if os.path.exists(self.auto_path):
            self.auto_all = [r for r in read_rows(self.auto_path) if r["overhead_scale"] == 1.0]
        self.auto_rows = [r for r in self.auto_all or [] if r["time"] is not None and r["chosen"]]

    def platforms(self):
        seen = set(r["platform"] for r in self.base)
        return [p for p in PLATFORM_ORDER if p in seen] + sorted(seen - set(PLATFORM_ORDER))

    def select(self, **kw):
        out = []
        for r in self.base:
            if all(r[k] == v for k, v in kw.items()):
                out.append(r)
        return out


def is_peer(label):
    """SMPI's own implementations (smpi:NAME) and the MPI libraries' defaults run as plain MPI
    calls of mpix-bench (peer:NAME)."""
    return label.startswith("smpi:") or label.startswith("peer:")


def load_platform(name):
    with open(os.path.join(PLATFORM_DIR, name + ".json")) as f:
        return json.load(f)


def peer_floor(plat, P, ppn, dist, S, scale):
    """A direct exchange's floor: the most non-empty messages a rank sends plus receives, times
    the per-message overhead (o_s = o_r on these platforms; the smaller is used)."""
    st = workload.stats(dist, 0 if dist in workload.FIXED else S, P, ppn)
    return st["max_rank_messages"] * min(plat["send_overhead"], plat["recv_overhead"]) * scale


def peer_floors(rows):
    """Rows with a peer's floor (its messages x o) as their time, marked floor: for each peer of PEERS that could not
    be simulated in time in a cell (its CSV row's error says "not simulated"), and for each that is
    missing from a cell with P >= FLOOR_FROM_P where mpix ran ("not run"; below that P a missing
    peer is simply absent, as the simulations there are cheap enough to be run)."""
    floors = []
    cache = {}

    def floor_of(r):
        key = (r["platform"], r["P"], r["ppn"], r["dist"], r["S"], r["overhead_scale"])
        if key not in cache:
            cache[key] = peer_floor(load_platform(r["platform"]), r["P"], r["ppn"], r["dist"], r["S"],
                                    r["overhead_scale"])
        return cache[key]

    cells = collections.defaultdict(list)
    for r in rows:
        cells[(r["platform"], r["P"], r["ppn"], r["op"], r["dist"], r["S"], r["overhead_scale"])].append(r)
    for key, rs in cells.items():
        mpix_ran = any(not is_peer(r["algorithm"]) and r["time"] is not None for r in rs)
        for peer in PEERS:
            mine = [r for r in rs if r["algorithm"] == peer]
            if any(r["time"] is not None for r in mine):
                continue
            if any(r["error"].startswith("not simulated") for r in mine):
                why = "not simulated in time: its floor"
            elif not mine and key[1] >= FLOOR_FROM_P and mpix_ran:
                why = "not run: its floor"
            else:
                continue
            plat, P, ppn, op, dist, S, scale = key
            r = {"platform": plat, "P": P, "ppn": ppn, "op": op, "algorithm": peer, "params": "-", "dist": dist,
                 "S": S, "overhead_scale": scale, "bound": rs[0]["bound"], "sim": 0.0, "floor": True,
                 "error": why, "bound_kind": rs[0].get("bound_kind", ""), "payload_bytes": "", "rounds": "",
                 "messages": "", "scratch_bytes": ""}
            r["time"] = floor_of(r)
            floors.append(r)
    return floors


def best_peer(rows):
    """The fastest simulated peer of `rows`; only if none ran, the lowest floor. A floor (messages x
    o) leaves out latency and bandwidth, so it stands in for a peer only where no peer could be
    simulated (docs/performance.md, "The peers")."""
    peers = [r for r in rows if is_peer(r["algorithm"])]
    return best([r for r in peers if not r.get("floor")]) or best(peers)


def peer_name(r):
    """A peer row's label, with "(floor)" when its time is its floor."""
    return r["algorithm"] + (" (floor)" if r.get("floor") else "")


def best(rows):
    ok = [r for r in rows if r["time"] is not None]
    return min(ok, key=lambda r: r["time"]) if ok else None


def group_best(rows):
    """The fastest variant (parameters) of each algorithm label."""
    by = collections.defaultdict(list)
    for r in rows:
        by[r["algorithm"]].append(r)
    out = {}
    for label, rs in by.items():
        b = best(rs)
        out[label] = b if b else rs[0]  # an error row when no variant ran
    return out


def short(r):
    """The row's algorithm and parameters, abbreviated; an `auto` row names what it chose."""
    p = "(%s)" % r["chosen"] if r.get("chosen") else r["params"]
    p = p.replace("block_count=", "bc=").replace("radix=", "r=").replace("unlimited", "∞")
    return r["algorithm"] + ("" if p == "-" else " " + p)


def contests(data):
    """(cell, best mpix row, best peer row) for every cell (platform, P, op, dist, S) where both ran;
    the mpix rows include `auto`'s of the cell."""
    groups = collections.defaultdict(list)
    for r in data.base:
        groups[(r["platform"], r["P"], r["op"], r["dist"], r["S"])].append(r)
    auto = collections.defaultdict(list)
    for r in data.auto_rows:
        auto[(r["platform"], r["P"], r["op"], r["dist"], r["S"])].append(r)
    for key, rs in sorted(groups.items()):
        m = best([r for r in rs if not is_peer(r["algorithm"])] + auto[key])
        p = best_peer(rs)
        if m and p:
            yield key, m, p


def losses(data):
    """Cells where the best mpix row is slower than the best simulated peer (a floor under mpix's
    time shows nothing: the peer itself may be far slower)."""
    return [(key, m, p) for key, m, p in contests(data) if not p.get("floor") and m["time"] > p["time"]]


def wins(data):
    """Every cell with the speedup of the best mpix row over the best peer."""
    return [(key, m, p, p["time"] / m["time"]) for key, m, p in contests(data)]


@functools.lru_cache(maxsize=None)
def load_simulate():
    """bench/simulate as a module (its plan and cost model), or the reason it could not be loaded; once."""
    try:
        return load_script("simulate"), None
    except Exception as e:  # noqa: BLE001 (the document still comes out)
        return None, str(e)
