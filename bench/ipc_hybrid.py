#!/usr/bin/env python3
"""ipc_hybrid (CMA) against pmpi and pairwise on real MPI, 2 ranks of one machine.

Runs mpix-bench (MPI_Alltoall with MPI_BYTE blocks of 64 KiB to 16 MiB) --runs times
for each configuration: ipc_hybrid with CMA writing into the peer's receive buffer
(MPIX_CMA=write, the default), with CMA reading out of the peer's send buffer
(MPIX_CMA=read), and with CMA off (MPIX_CMA=off: every block a message), then pmpi
and pairwise. Each run gives mpix-bench's median over --iters timed iterations; the
table takes the median of those run medians, and the ratio pmpi / configuration
(> 1: faster than MPICH's own alltoall); and, since a shared machine preempts
busy-polling ranks for whole scheduler quanta, also the median over runs of the
fastest iteration (min_us) and its ratio. Both ranks are on one node (no MPIX_PPN),
so every block but the own one is intra-node.

  bench/ipc_hybrid.py --bench build/tools/mpix-bench --out bench/results/ipc_hybrid_mpich_np2.csv
"""
import argparse, csv, io, os, statistics, subprocess, sys

SIZES = "64k,256k,1m,4m,16m"
CONFIGS = [  # (label, algorithm, MPIX_CMA)
    ("pmpi", "pmpi", None),
    ("pairwise", "pairwise", None),
    ("ipc_hybrid(write)", "ipc_hybrid", "write"),
    ("ipc_hybrid(read)", "ipc_hybrid", "read"),
    ("ipc_hybrid(off)", "ipc_hybrid", "off"),
]


def run(args, algorithm, cma):
    env = dict(os.environ)
    env.pop("MPIX_PPN", None)
    if cma: env["MPIX_CMA"] = cma
    else: env.pop("MPIX_CMA", None)
    command = [args.mpiexec, "-n", "2", args.bench, "--op", "alltoall", "--algorithms", algorithm,
               "--sizes", SIZES, "--iters", str(args.iters), "--warmup", "2", "--format", "csv"]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return {int(row["max_block_bytes"]): (float(row["median_us"]), float(row["min_us"]))
            for row in csv.DictReader(io.StringIO(out))}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", default="build/tools/mpix-bench")
    parser.add_argument("--mpiexec", default="mpiexec.mpich")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--out", default="bench/results/ipc_hybrid_mpich_np2.csv")
    args = parser.parse_args()
    medians = {label: {} for label, _, _ in CONFIGS}
    minimums = {label: {} for label, _, _ in CONFIGS}
    for r in range(args.runs):  # interleaved, so that a noisy moment hits every configuration
        for label, algorithm, cma in CONFIGS:
            for size, (median_us, min_us) in run(args, algorithm, cma).items():
                medians[label].setdefault(size, []).append(median_us)
                minimums[label].setdefault(size, []).append(min_us)
        print(f"run {r + 1}/{args.runs} done", file=sys.stderr)
    rows = []
    for label, _, _ in CONFIGS:
        for size in sorted(medians[label]):
            us = statistics.median(medians[label][size])
            base = statistics.median(medians["pmpi"][size])
            fastest = statistics.median(minimums[label][size])
            fastest_base = statistics.median(minimums["pmpi"][size])
            rows.append({"config": label, "block_bytes": size, "median_us": f"{us:.1f}",
                         "min_run_median_us": f"{min(medians[label][size]):.1f}",
                         "max_run_median_us": f"{max(medians[label][size]):.1f}",
                         "runs": len(medians[label][size]), "iters": args.iters,
                         "pmpi_over_this": f"{base / us:.2f}",
                         "median_of_min_us": f"{fastest:.1f}",
                         "pmpi_over_this_min": f"{fastest_base / fastest:.2f}"})
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
