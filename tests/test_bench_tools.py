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
- bench/report turns the committed quick CSV into a complete document.
Standard library only; prints "N passed, N failed".
"""
import csv
import importlib.machinery
import importlib.util
import io
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
ROOT, MPIX_BENCH, MPIEXEC = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, os.path.join(ROOT, "bench"))


def load(name):
    path = os.path.join(ROOT, "bench", name)
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


simulate = load("simulate")
import workload  # noqa: E402 (bench/ is on the path only now)

results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print("%s: %s%s" % ("ok" if condition else "FAILED", name, "" if condition else " (%s)" % (detail,)))


def close(a, b):
    return abs(a - b) <= 1e-12 + 1e-9 * abs(b)


def test_lower_bound():
    plat = simulate.load_platform("fattree")
    # 64 ranks, 32 per node: 2 nodes; every block 1000 bytes.
    bound, kind, t_lat, t_node, t_bis, st = simulate.lower_bound(plat, 64, 32, "constant", 1000, 1.0)
    hop = plat["inter_node_latency_min"] + plat["send_overhead"] + plat["recv_overhead"]
    check("latency term = ceil(log2 64) (L + o_s + o_r)", close(t_lat, 6 * hop), t_lat)
    crossing = 32 * 32 * 1000  # each of a node's 32 ranks sends 1000 B to each of the other node's 32
    check("node bytes out and in", st["node_out_max"] == crossing and st["node_in_max"] == crossing, st)
    check("injection term", close(t_node, crossing / plat["injection_bandwidth"]), t_node)
    ab, ba = plat["bisection"]["2"]
    check("bisection term", close(t_bis, crossing / min(ab, ba)), t_bis)
    check("bound is the largest term", close(bound, max(t_lat, t_node, t_bis)) and
          {"latency": t_lat, "injection": t_node, "bisection": t_bis}[kind] == bound, (bound, kind))
    # One node: no network term; the latency is the intra-node one.
    bound, kind, t_lat, t_node, t_bis, _ = simulate.lower_bound(plat, 8, 32, "constant", 1000, 1.0)
    hop = plat["intra_node_latency"] + plat["send_overhead"] + plat["recv_overhead"]
    check("one node: latency only", kind == "latency" and t_node == 0 and t_bis == 0 and close(bound, 3 * hop),
          (bound, kind))
    # Halving the overheads halves only their part of the latency term.
    half = simulate.lower_bound(plat, 64, 32, "constant", 16, 0.5)[2]
    expect = 6 * (plat["inter_node_latency_min"] + 0.5 * (plat["send_overhead"] + plat["recv_overhead"]))
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
                        "## Where mpix loses", "## Why the plan is what it is"):
            check("report has " + section, section in text)


for test in (test_lower_bound, test_workload_against_mpix_bench, test_resume_keys, test_plans, test_report):
    try:
        test()
    except Exception as e:  # a crash of one test is its failure, the others still run
        check(test.__name__, False, "%s: %s" % (type(e).__name__, e))
failed = results.count(False)
print("%d passed, %d failed" % (len(results) - failed, failed))
sys.exit(1 if failed else 0)
