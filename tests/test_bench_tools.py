#!/usr/bin/python3
"""bench-tools: the simulation scripts stay right without running a simulation.

    tests/test_bench_tools.py SOURCE_ROOT MPIX_BENCH MPIEXEC [MPIEXEC_ARGS...]

- bench/simulate's lower bound (docs/performance.md, "The lower bound") against values
  worked out by hand for constant blocks on the fat tree;
- bench/workload.py (the Python copy of tools/workload.cpp) against the real
  mpix-bench: for every distribution the most bytes a rank sends to others must be
  mpix-bench's payload_bytes of pmpi, at 5 ranks;
- the resume keys: a CSV row written for a configuration makes it done;
- the plans (--quick and full) are well formed and every algorithm named exists;
- bench/report turns the committed quick CSV into a complete document;
- the peers (peer:NAME, plain MPI in mpix-bench) give MPI's result, and a peer's floor is
  its messages x o; SMPI's own (smpi:NAME) are run as plain calls too;
- MPIX_BREAKDOWN=1 adds the time per phase, which adds up to no more than the call's time;
- auto's row is named after its blocking call's choice, which its persistent column runs too;
- the machine file bench/simulate writes loads, with what SMPI does not charge at 0.
Standard library only; prints "N passed, N failed".
"""
import csv
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT, MPIX_BENCH, MPIEXEC = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, os.path.join(ROOT, "bench"))


from scriptload import load_script as load  # noqa: E402 (bench/ is on the path only now)
import workload  # noqa: E402
import report_analyses  # noqa: E402 (bench/report's sections)
import report_rows  # noqa: E402 (bench/report's rows, peers and floors)

simulate = load("simulate")

results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print("%s: %s%s" % ("ok" if condition else "FAILED", name, "" if condition else " (%s)" % (detail,)))


def close(a, b):
    return abs(a - b) <= 1e-12 + 1e-9 * abs(b)


def test_lower_bound():
    plat = simulate.load_platform("fattree")
    o_s, o_r, intra, inter = (plat["send_overhead"], plat["recv_overhead"], plat["intra_node_latency"],
                              plat["inter_node_latency_min"])
    # The broadcast by hand, 4 ranks: rank 0 sends at 0, o_s, 2 o_s; rank 1, informed
    # at o_s + l + o_r, sends then. Informed: 0, A = o_s + l + o_r, o_s + A, and the
    # earlier of 2 o_s + A (rank 0 again) and 2 A (rank 1).
    l = 0.15e-6
    A = 0.25e-6 + l + 0.25e-6
    check("LogP broadcast of 4 ranks", close(simulate.broadcast_time(4, l, 0.25e-6, 0.25e-6),
                                             min(2 * 0.25e-6 + A, 2 * A)), simulate.broadcast_time(4, l, 0.25e-6, 0.25e-6))
    check("LogP broadcast of 256 ranks: below 8 one-port rounds",
          simulate.broadcast_time(256, l, 0.25e-6, 0.25e-6) < 8 * A, simulate.broadcast_time(256, l, 0.25e-6, 0.25e-6))
    check("LogP broadcast without overheads: one hop", close(simulate.broadcast_time(1024, l, 0.0, 0.0), l))
    # 64 ranks, 32 per node: 2 nodes; every block 1000 bytes.
    bound, kind, t_lat, t_node, t_bis, st = simulate.lower_bound(plat, 64, 32, "constant", 1000, 1.0)
    expect = max(simulate.broadcast_time(64, min(intra, inter), o_s, o_r), inter + o_s + o_r)
    check("latency term = max(broadcast at the smaller latency, one inter-node message)", close(t_lat, expect), t_lat)
    crossing = 32 * 32 * 1000  # each of a node's 32 ranks sends 1000 B to each of the other node's 32
    check("node bytes out and in", st["node_out_max"] == crossing and st["node_in_max"] == crossing, st)
    check("injection term", close(t_node, crossing / plat["injection_bandwidth"]), t_node)
    ab, ba = plat["bisection"]["2"]
    check("bisection term", close(t_bis, crossing / min(ab, ba)), t_bis)
    check("bound is the largest term", close(bound, max(t_lat, t_node, t_bis)) and
          {"latency": t_lat, "injection": t_node, "bisection": t_bis}[kind] == bound, (bound, kind))
    # One node: no network term; the broadcast at the intra-node latency.
    bound, kind, t_lat, t_node, t_bis, _ = simulate.lower_bound(plat, 4, 32, "constant", 1000, 1.0)
    check("one node: latency only", kind == "latency" and t_node == 0 and t_bis == 0 and
          close(bound, simulate.broadcast_time(4, intra, o_s, o_r)), (bound, kind))
    # Slow links: one inter-node message outweighs the broadcast.
    slow = dict(plat, inter_node_latency_min=20e-6)
    t_lat = simulate.lower_bound(slow, 64, 8, "constant", 16, 1.0)[2]
    check("slow links: one inter-node message", close(t_lat, 20e-6 + o_s + o_r), t_lat)
    # The overhead scale scales the overheads only.
    half = simulate.lower_bound(plat, 64, 32, "constant", 16, 0.5)[2]
    expect = max(simulate.broadcast_time(64, min(intra, inter), 0.5 * o_s, 0.5 * o_r), inter + 0.5 * (o_s + o_r))
    check("overhead scale", close(half, expect), half)


def test_workload_against_mpix_bench():
    P = 5
    for dist, S in (("uniform", 1000), ("normal", 1000), ("powerlaw", 100000), ("fft_n1", 0), ("fft_n2", 0)):
        cmd = MPIEXEC + ["-n", str(P), MPIX_BENCH, "--op", "alltoallv", "--algorithms", "pmpi", "--sizes",
                         str(S if S else 1), "--dist", dist, "--iters", "1", "--warmup", "0", "--format", "csv"]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        if out.returncode != 0 or len(rows) != 1:
            check("mpix-bench runs (%s)" % dist, False, out.stderr[-500:] or out.stdout[-500:])
            continue
        st = workload.stats(dist, S, P, P)
        check("payload bytes of %s match bench/workload.py" % dist,
              int(rows[0]["payload_bytes"]) == st["max_rank_send"], (rows[0]["payload_bytes"], st["max_rank_send"]))


def run_bench(args, env=None):
    cmd = MPIEXEC + ["-n", "5", MPIX_BENCH] + args + ["--iters", "1", "--warmup", "0", "--format", "csv"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                         env=dict(os.environ, **(env or {})))
    return out, list(csv.DictReader(io.StringIO(out.stdout)))


def test_peers():
    peers = ",".join(simulate.PEERS)
    for op, dist in (("alltoallv", "uniform"), ("alltoallv", "fft_n1"), ("alltoall", "constant")):
        out, rows = run_bench(["--op", op, "--algorithms", peers, "--sizes", "100", "--dist", dist, "--check"])
        got = {r["algorithm"]: r for r in rows}
        check("peers run (%s %s)" % (op, dist), out.returncode == 0 and set(got) == {"pmpi"} | set(simulate.PEERS),
              out.stderr[-500:] or sorted(got))
        check("peers give MPI's result (%s %s)" % (op, dist),
              all(got[p]["check"] == "ok" for p in simulate.PEERS if p in got), [r.get("check") for r in rows])
        check("peers count what pmpi sends (%s %s)" % (op, dist),
              all(got[p]["payload_bytes"] == got["pmpi"]["payload_bytes"] for p in simulate.PEERS if p in got))
    out, rows = run_bench(["--algorithms", "peer:nonsense"])
    check("an unknown peer is refused", out.returncode != 0 and "peer:scattered32" in out.stderr, out.stderr[-300:])
    for repeated in (["--sizes", "16", "--sizes", "32"], ["--op", "alltoall", "--op=alltoallv"]):
        out, rows = run_bench(repeated)
        check("a repeated %s is refused" % repeated[0],
              out.returncode != 0 and ("%s given twice" % repeated[0]) in out.stderr and not rows, out.stderr[-300:])
    out, rows = run_bench(["--algorithms", "multipair", "--sizes", "16,16,16"])
    check("a size given twice runs once", out.returncode == 0 and [r["algorithm"] for r in rows] == ["pmpi", "multipair"],
          out.stderr[-300:] or [(r["algorithm"], r["max_block_bytes"]) for r in rows])
    out, rows = run_bench(["--op", "alltoallv_crs", "--matrix", "no-such-file.mtx"])
    check("a missing --matrix file is named as one", out.returncode == 2 and "cannot open it" in out.stderr,
          out.stderr[-300:])
    out, rows = run_bench(["--iters", "99999999999"])
    check("a too large --iters names its range", out.returncode == 2 and "1..2147483647" in out.stderr, out.stderr[-300:])
    # SDDE: --pattern all, and rows run before `personalized` still get its speedup.
    out, rows = run_bench(["--op", "alltoall_crs", "--pattern", "all", "--algorithms", "nonblocking,personalized"])
    check("--pattern all runs every pattern", out.returncode == 0 and len({r["pattern"] for r in rows}) == 6,
          out.stderr[-300:] or sorted({r["pattern"] for r in rows}))
    check("every SDDE row has a speedup", rows and all(r["speedup"] not in ("", "-") for r in rows),
          [(r["algorithm"], r["speedup"]) for r in rows])
    # Ranks given other options would wait for each other for ever: refused on all.
    cmd = MPIEXEC + ["-n", "2", MPIX_BENCH, "--iters", "1", ":", "-n", "2", MPIX_BENCH, "--iters", "2"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    check("options that differ between ranks are refused",
          out.returncode == 2 and "the ranks were given different options" in out.stderr, out.stderr[-300:])
    # Constant blocks: every rank sends and receives P - 1 messages.
    st = workload.stats("constant", 16, 8, 4)
    check("a direct exchange's messages per rank", st["max_rank_messages"] == 2 * 7, st)


def test_platform_checks():
    """A sidecar that does not describe its XML is refused by name before anything runs."""
    import json
    source = os.path.join(ROOT, "bench", "platforms")
    good = json.load(open(os.path.join(source, "fatnode.json")))
    xml = open(os.path.join(source, good["xml"])).read()
    machines = sys.modules[simulate.load_platform.__module__]  # bench/simulate_machine.py
    saved = machines.PLATFORM_DIR
    with tempfile.TemporaryDirectory() as tmp:
        machines.PLATFORM_DIR = tmp
        try:
            def verdict(plat, text=xml):
                with open(os.path.join(tmp, good["xml"]), "w") as f:
                    f.write(text)
                with open(os.path.join(tmp, "fatnode.json"), "w") as f:
                    json.dump(plat, f)
                try:
                    simulate.load_platform("fatnode")
                    return ""
                except simulate.PlatformError as e:
                    return str(e)
            check("a generated sidecar passes", verdict(good) == "", verdict(good))
            cases = (("hosts", 0, "'hosts' missing"), ("hosts", 128, "'hosts' is 128 but"),
                     ("injection_bandwidth", "12GBps", "'injection_bandwidth' missing or not a number"),
                     ("send_overhead", -1, "'send_overhead' missing or not a number"),
                     ("bisection", {"2": [1, 1]}, 'bisection["3"]'), ("xml", "none.xml", "none.xml not found"),
                     ("name", "fattree", "'name' is 'fattree' but the file is fatnode.json"))
            for key, value, expected in cases:
                got = verdict(dict(good, **{key: value}))
                check("sidecar %s = %r is refused" % (key, value), expected in got and "fatnode.json" in got, got)
            got = verdict(good, xml.replace('prefix="node-"', 'prefix="host-"'))
            check("hosts the hostfile cannot name are refused", "no node-0" in got, got)
            got = verdict(good, xml.replace('radical="0-255"', 'radical="0-x"'))
            check("a malformed radical is refused", "radical '0-x'" in got, got)
            got = verdict(good, xml.replace("</platform>", ""))
            check("an XML that does not parse is refused", "xml: fatnode.xml:" in got, got)
            got = simulate.failure_reason("x\n[0.000000] [xbt_exception/CRITICAL] Uncaught exception: Host not found\n")
            check("a failed simulation's reason comes without SimGrid's prefixes", got == "Uncaught exception: Host not found", got)
        finally:
            machines.PLATFORM_DIR = saved


def test_breakdown():
    out, rows = run_bench(["--algorithms", "tuna,tuna_hier_coalesced,node_aware", "--sizes", "16,1k", "--ppn", "2"],
                          {"MPIX_BREAKDOWN": "1"})
    phases = ["t_%s_us" % p for p in simulate.PHASES]
    check("MPIX_BREAKDOWN=1: a column per phase", out.returncode == 0 and rows and all(p in rows[0] for p in phases),
          out.stderr[-500:] or (rows[0].keys() if rows else ""))
    for r in rows:
        if r["algorithm"] == "pmpi" or not all(p in r for p in phases):
            continue
        spent = [float(r[p]) for p in phases]
        # Each column is rounded to 0.01 us.
        check("breakdown of %s S=%s: phases >= 0, summing to at most the time" % (r["algorithm"], r["max_block_bytes"]),
              min(spent) >= 0 and sum(spent) <= float(r["median_us"]) + 0.01 * len(phases), (spent, r["median_us"]))
    out, rows = run_bench(["--algorithms", "tuna", "--sizes", "16"])
    check("without MPIX_BREAKDOWN: no phase columns", out.returncode == 0 and rows and "t_agreement_us" not in rows[0],
          out.stderr[-300:])


def test_auto_row():
    """auto's row names what its blocking call chose, and its persistent column runs that algorithm."""
    # At 32k on 5 ranks of one machine with CMA a persistent plan left to itself takes
    # ipc_hybrid where the blocking call takes nonblocking (its plan costs per call).
    for S in ("16", "32k", "256k"):
        out, rows = run_bench(["--algorithms", "auto", "--sizes", S], {"MPIX_VERBOSE": "1"})
        # MPIX_VERBOSE=1 prints each decision: pmpi's (the baseline row, asked for), auto's
        # blocking one, and the plans of the persistent columns.
        blocking = set(re.findall(r"\[mpix\] MPIX_Alltoallv: (\w+)[^\n]*\(auto:", out.stderr))
        persistent = set(re.findall(r"\[mpix\] MPIX_Alltoallv_plan: (\w+)", out.stderr)) - ({"pmpi"} - blocking)
        auto = [r["algorithm"] for r in rows if r["algorithm"].startswith("auto:")]
        check("auto's row at S=%s is named after the blocking call's choice" % S,
              out.returncode == 0 and len(blocking) == 1 and auto == ["auto:" + b for b in blocking],
              (out.stderr[-500:], auto))
        check("auto's persistent column at S=%s runs the blocking call's choice" % S, persistent == blocking,
              (blocking, persistent))


def test_resume_keys():
    job = simulate.Job("torus", 64, 32, "alltoallv", ["uniform", "fft_n2"], [16, 1024], ["tuna"], {"radix": ["2", "4"]})
    keys = job.keys()
    check("a job's configurations", len(keys) == 3 * 2, keys)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "part.csv")
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=simulate.COLUMNS)
            writer.writeheader()
            for (plat, P, ppn, op, label, params, dist, S, scale) in keys[:4]:
                writer.writerow({"platform": plat, "P": P, "ppn": ppn, "op": op, "algorithm": label,
                                 "params": params, "dist": dist, "S": S, "overhead_scale": scale})
        done = simulate.read_done(path)
        check("rows written are done, the others are not",
              all(k in done for k in keys[:4]) and not any(k in done for k in keys[4:]), done)


def test_plans():
    known = set(simulate.PARAMS)
    for quick in (True, False):
        jobs = simulate.default_plan(quick)
        keys = [k for j in jobs for k in j.keys()]
        check("plan %s: no configuration twice" % ("--quick" if quick else "full"), len(keys) == len(set(keys)),
              len(keys) - len(set(keys)))
        unknown = {a for j in jobs for a in j.algorithms} - known
        check("plan %s: every algorithm is known" % ("--quick" if quick else "full"), not unknown, unknown)
        hosts = min(simulate.load_platform(p)["hosts"] for p in simulate.PLATFORMS)
        check("plan %s: every job fits the platforms" % ("--quick" if quick else "full"),
              all(j.P <= hosts * j.ppn for j in jobs))


def test_report():
    csv_path = os.path.join(ROOT, "bench", "results", "quick.csv")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "performance.md")
        run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "report"), "--csv", csv_path, "--out", out,
                              "--img-dir", os.path.join(tmp, "img")], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=300)
        check("bench/report runs", run.returncode == 0, run.stdout[-1000:])
        if run.returncode != 0:
            return
        text = open(out).read()
        check("every placeholder filled", "{{" not in text)
        for section in ("## The lower bound", "## Paper 000 Fig. 7", "## Speedup heatmaps", "## Tables at P = 256",
                        "## Where mpix loses", "## Why the plan is what it is", "## The peers and how each was timed",
                        "## Where the time goes"):
            check("report has " + section, section in text)


def test_floors():
    rows = []
    for label, time, error in (("tuna", "1e-5", ""), ("peer:linear", "", "not simulated: the run exceeded the 600 s limit"),
                               ("peer:scattered32", "2e-5", "")):
        rows.append({"platform": "fattree", "P": 1024, "ppn": 32, "op": "alltoallv", "algorithm": label, "params": "-",
                     "dist": "constant", "S": 16, "overhead_scale": 1.0, "time": float(time) if time else None,
                     "bound": 1e-6, "error": error})
    floors = {r["algorithm"]: r for r in report_rows.peer_floors(rows)}
    plat = simulate.load_platform("fattree")
    expect = 2 * 1023 * plat["send_overhead"]
    check("floor of a peer not simulated in time", "peer:linear" in floors and close(floors["peer:linear"]["time"], expect),
          floors)
    check("floor of a peer not run at P = 1024", "peer:ialltoallv" in floors and floors["peer:ialltoallv"]["error"].startswith("not run"),
          floors)
    check("no floor for a peer that ran", "peer:scattered32" not in floors, floors)


def test_only_sizes():
    """--sizes narrows each job to those S, leaves out the fixed-size distributions and drops a
    job left with nothing."""
    jobs = [simulate.Job("torus", 256, 32, "alltoallv", ["uniform", "fft_n1"], [16, 256, 1024], ["tuna"]),
            simulate.Job("torus", 256, 32, "alltoall", [], [16, 4096], ["bruck"]),
            simulate.Job("torus", 256, 32, "alltoallv", ["uniform"], [16384], ["tuna"])]
    out = simulate.only_sizes(jobs, "16,1024", None)
    check("--sizes keeps the given S of each job", [j.sizes for j in out] == [[16, 1024], [16]],
          [j.sizes for j in out])
    check("--sizes leaves out fft_n1 and fft_n2", out[0].dists == ["uniform"] and
          [k[6] for k in out[0].keys()] == ["uniform", "uniform"], out[0].keys())


def test_only_algorithms():
    """--algorithms narrows each job to those algorithms, keeps a selector's job only when its
    smpi:NAME is asked for, and drops a job left with nothing."""
    jobs = [simulate.Job("torus", 256, 32, "alltoallv", ["uniform"], [16], ["node_aware", "pairwise", "multipair"]),
            simulate.Job("torus", 256, 32, "alltoallv", ["uniform"], [16], ["tuna"], {"radix": ["2"]}),
            simulate.Job("torus", 256, 32, "alltoallv", ["uniform"], [16], selector="pair"),
            simulate.Job("torus", 256, 32, "alltoallv", ["uniform"], [16], selector="mpich")]
    out = simulate.only_algorithms(jobs, "pairwise,smpi:pair", None)
    check("--algorithms keeps the given algorithms of each job",
          [j.variants() for j in out] == [[("pairwise", "-")], [("smpi:pair", "-")]], [j.variants() for j in out])


# bench/simulate's main with the build skipped and each job waiting to be stopped (no simulation).
STOPPED_RUN = """
import os, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "bench"))
from scriptload import load_script
simulate = load_script("simulate")
simulate.build = lambda args: None
def run_job(self, job):
    while not self.stopping:
        time.sleep(0.05)
    time.sleep(1)  # the second signal arrives while the threads are joined
simulate.Runner.run_job = run_job
sys.argv = ["simulate"] + sys.argv[2:]
sys.exit(simulate.main())
"""


def test_signalled_twice():
    """GNU timeout signals bench/simulate and then its process group: the second signal, during
    the shutdown, must not cost the log line, the workdir or the exit status 130."""
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "x.csv")
        proc = subprocess.Popen([sys.executable, "-c", STOPPED_RUN, ROOT, "--quick", "--only", "P=64", "--only",
                                 "fattree", "--platforms", "fattree", "--csv", csv_path],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, TMPDIR=tmp), start_new_session=True)
        out = proc.stdout.readline()  # the plan: the runner starts next
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGTERM)
        out += proc.communicate(timeout=60)[0]
        log = open(csv_path + ".log").read() if os.path.exists(csv_path + ".log") else ""
        check("signalled twice: exit 130 without a traceback", proc.returncode == 130 and "Traceback" not in out,
              (proc.returncode, out[-500:]))
        check("signalled twice: the log line is written", log.endswith(", interrupted\n"), log)
        check("signalled twice: the workdir is removed",
              not [d for d in os.listdir(tmp) if d.startswith("mpix-simulate-")], os.listdir(tmp))


def test_unseen_platform_names():
    """Every platform file name bench/simulate takes (bench/platforms/NAME.json) gets its section of
    the unseen platforms, and the -auto and -breakdown companions do not."""
    results_dir = os.path.join(ROOT, "bench", "results")
    with tempfile.TemporaryDirectory() as tmp:
        companions = {"": "unseen-ethernet-ppn8.csv", "-auto": "unseen-ethernet-ppn8-auto.csv",
                      "-breakdown-alltoall-1k": "unseen-ethernet-ppn32-breakdown-alltoall-1k.csv"}
        for name in ("slow10g", "my_cluster", "two-words"):
            for suffix, source in companions.items():
                shutil.copy(os.path.join(results_dir, source), os.path.join(tmp, "unseen-%s-ppn8%s.csv" % (name, suffix)))
        sections = [line for line in report_analyses.unseen_section(tmp) if line.startswith("#### ")]
    check("a section per unseen platform, whatever its name", len(sections) == 3, sections)


def test_timeout_wins():
    """A --timeout on the command line replaces the plan's own per-job limit (900 s a row for
    the P = 1024 log-time jobs), in the run and in the estimates --dry-run prints."""
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "simulate"), "--dry-run", "--only", "P=1024",
                              "--only", "fattree", "--only", "tuna_carried", "--timeout", "7",
                              "--csv", os.path.join(tmp, "x.csv")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    lines = [line for line in run.stdout.splitlines() if "P=1024" in line]
    check("--dry-run lists the job", run.returncode == 0 and len(lines) == 1, run.stdout[-500:])
    check("its estimate is capped at the --timeout given", lines and lines[0].split()[:2] == ["7", "s"], lines)


def test_headroom():
    """The speedup goals against the lower bound: a goal above (strictest peer) / bound is out of
    reach; the strictest peer is a floor raised to the bound where the floor is below it."""
    data = report_rows.Data.__new__(report_rows.Data)
    rows = []
    for label, time, error in (("tuna", 3e-4, ""), ("smpi:mpich", 3.6e-4, ""),
                               ("peer:linear", None, "not simulated: the run exceeded the 900 s limit")):
        rows.append({"platform": "fattree", "P": 256, "ppn": 32, "op": "alltoallv", "algorithm": label,
                     "params": "-", "dist": "uniform", "S": 1024, "overhead_scale": 1.0, "time": time,
                     "bound": 2.4e-4, "error": error, "floor": False})
    data.rows = rows
    data.floors = report_rows.peer_floors(rows)
    data.base = rows + data.floors
    data.auto_rows = []
    lines = report_analyses.headroom_section(data)
    check("one row per cell with a goal", len(lines) == 3, lines)
    cells = lines[-1].split(" | ")
    check("the strictest peer: peer:linear's floor raised to the bound",
          "raised to the bound" in cells[5] and cells[11].startswith("0.80"), cells)
    check("at most (strictest / bound) 1.00: 2x out of reach, below the bound",
          cells[6] == "1.00" and cells[7] == "2x (out of reach)" and cells[8] == "below the bound", cells)
    for row in rows:  # without the peer that did not run, smpi:mpich (1.5x the bound) is the strictest
        if row["algorithm"] == "peer:linear":
            row["algorithm"] = "pmpi"
    data.floors = report_rows.peer_floors(rows)
    data.base = rows + data.floors
    cells = report_analyses.headroom_section(data)[-1].split(" | ")
    check("at most 1.5x where the strictest peer is 1.5x the bound; 2x needs 180 us, 0.75x the bound",
          cells[6] == "1.50" and cells[7] == "2x (out of reach)" and cells[8] == "below the bound", cells)
    for row in rows:  # a slower MPI: 2.5x the bound leaves room for 2x, at 1.25x the bound
        if row["algorithm"] == "smpi:mpich":
            row["time"] = 6e-4
    cells = report_analyses.headroom_section(data)[-1].split(" | ")
    check("at most 2.5x: 2x within reach, needing 300 us, 1.25x the bound",
          cells[6] == "2.50" and cells[7] == "2x" and cells[8].endswith("(1.25x the bound)"), cells)


def test_losses_count_auto():
    """A cell is lost only if the peer beats every mpix row of it, `auto`'s included."""
    data = report_rows.Data.__new__(report_rows.Data)
    cell = {"platform": "dragonfly", "P": 128, "ppn": 32, "op": "alltoallv", "dist": "uniform", "S": 16384,
            "overhead_scale": 1.0, "bound": 1e-3, "error": "", "floor": False, "params": "-"}
    data.rows = [dict(cell, algorithm="multipair", time=1.16e-3), dict(cell, algorithm="peer:scattered32", time=1.09e-3)]
    data.floors = []
    data.base = data.rows
    data.auto_rows = []
    check("without auto's row the cell is lost", len(report_rows.losses(data)) == 1)
    data.auto_rows = [dict(cell, algorithm="auto", chosen="nonblocking", time=1.08e-3)]
    check("auto's faster row wins it", report_rows.losses(data) == [])
    data.auto_rows[0]["time"] = 1.10e-3
    ls = report_rows.losses(data)
    check("a lost cell names auto's row where it is mpix's fastest",
          len(ls) == 1 and report_rows.short(ls[0][1]) == "auto (nonblocking)", ls)


def test_selector_rows_are_plain_calls():
    """An smpi:NAME row is MPI_Alltoall(v) called by the benchmark (peer:alltoallv), never
    mpix's pmpi: no agreement, no plan (docs/performance.md, "The peers")."""
    plat = simulate.load_platform("fattree")
    job = simulate.Job("fattree", 64, 32, "alltoallv", ["uniform"], [16], selector="mpich")
    with tempfile.TemporaryDirectory() as workdir:
        cmd = simulate.command(job, plat, os.path.join(workdir, "hosts"))
        env = simulate.environment(job, plat, workdir)
    algorithms = cmd[cmd.index("--algorithms") + 1]
    check("a selector's job runs peer:alltoallv alone", algorithms == "peer:alltoallv", algorithms)
    check("under that selector", "--cfg=smpi/alltoallv:mpich" in cmd, cmd)
    check("without mpix-bench's pmpi baseline", env.get("MPIX_BENCH_PMPI") == "skip", env.get("MPIX_BENCH_PMPI"))
    check("reported as smpi:mpich", job.variants() == [("smpi:mpich", "-")], job.variants())


def test_machine_file():
    """The machine file bench/simulate passes to auto loads in mpix and leaves at 0 what
    SMPI does not charge (docs/tuning.md): loopback copies, collective overheads, matching."""
    plat = simulate.load_platform("fattree")
    machines = sys.modules[simulate.load_platform.__module__]  # bench/simulate_machine.py
    with tempfile.TemporaryDirectory() as workdir:
        path = machines.machine_file(plat, 64, 32, 1.0, workdir)
        values = dict(line.split(" = ") for line in open(path).read().splitlines() if " = " in line)
        for key in ("intra_copies", "collective_overhead", "match_cost"):
            check("the machine file sets %s = 0" % key, values.get(key) == "0", values.get(key))
        out, rows = run_bench(["--algorithms", "auto", "--sizes", "16", "--check"], env={"MPIX_MACHINE_FILE": path})
        auto = [r for r in rows if r["algorithm"].startswith("auto")]
        check("auto runs under the machine file", out.returncode == 0 and [r["check"] for r in auto] == ["ok"],
              out.stderr[-500:] or rows)
        with open(path, "a") as f:
            f.write("match_costs = 0\n")
        out, rows = run_bench(["--algorithms", "auto", "--sizes", "16"], env={"MPIX_MACHINE_FILE": path})
        errors = [r["error"] for r in rows]
        check("a key mpix does not read fails every call, naming the file and the line",
              len(errors) == 2 and all("machine file %s:%d: unknown key 'match_costs'" % (path, len(values) + 2) in e
                                       for e in errors), errors or out.stderr[-500:])


for test in (test_selector_rows_are_plain_calls, test_lower_bound, test_workload_against_mpix_bench, test_resume_keys, test_plans, test_report, test_peers,
             test_breakdown, test_floors, test_auto_row, test_only_sizes, test_only_algorithms, test_timeout_wins,
             test_headroom, test_losses_count_auto, test_platform_checks, test_signalled_twice,
             test_unseen_platform_names, test_machine_file):
    try:
        test()
    except Exception as e:  # a crash of one test is its failure, the others still run
        check(test.__name__, False, "%s: %s" % (type(e).__name__, e))
failed = results.count(False)
print("%d passed, %d failed" % (len(results) - failed, failed))
sys.exit(1 if failed else 0)
