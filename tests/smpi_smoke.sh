#!/usr/bin/env bash
# smpi-smoke, a test of the normal build: builds the simulated build (SimGrid SMPI)
# with scripts/build-smpi.sh into DIR, then runs one tiny simulated configuration
# twice: mpix-bench on 8 ranks, 4 hosts of 2 ranks of a small cluster, pmpi, tuna
# and pairwise with --check. Passes if both runs succeed with every result equal to
# MPI's and the two outputs, simulated times included, are identical; and
# bench/allreduce-probe and bench/fused-agreement-probe on 8 ranks of the fat tree
# (each prints its row). Skipped (77)
# when smpicxx is missing (Debian package libsimgrid-dev; scripts/setup.sh installs it).
#   tests/smpi_smoke.sh SOURCE_ROOT DIR
set -euo pipefail

ROOT="$1"
DIR="$2"
if ! command -v smpicxx >/dev/null || ! command -v smpirun >/dev/null; then
  echo "skipped: smpicxx/smpirun not found (Debian package libsimgrid-dev)"
  exit 77
fi
"$ROOT/scripts/build-smpi.sh" "$DIR"

# 4 hosts of 2 cores; a host's two ranks talk over its loopback (faster).
cat >"$DIR/smoke-platform.xml" <<'XML'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="smoke" prefix="node-" suffix="" radical="0-3" core="2" speed="1Gf"
           bw="10GBps" lat="1us" loopback_bw="40GBps" loopback_lat="0.2us"/>
</platform>
XML
printf 'node-0\nnode-0\nnode-1\nnode-1\nnode-2\nnode-2\nnode-3\nnode-3\n' >"$DIR/smoke-hostfile"

run() {
  # SimGrid's log lines go to stderr; only mpix-bench's table is compared.
  if ! smpirun -np 8 -platform "$DIR/smoke-platform.xml" -hostfile "$DIR/smoke-hostfile" \
      --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf \
      "$DIR/tools/mpix-bench" --op alltoallv --algorithms pmpi,tuna,pairwise --sizes 16,1k \
      --dist uniform --iters 3 --warmup 1 --check --format csv >"$1" 2>"$1.log"; then
    cat "$1.log" "$1" >&2
    echo "smpi-smoke: the simulated run failed" >&2
    exit 1
  fi
}
run "$DIR/smoke-1.csv"
run "$DIR/smoke-2.csv"
cat "$DIR/smoke-1.csv"

rows=$(grep -c '^alltoallv,' "$DIR/smoke-1.csv" || true)
if [ "$rows" -ne 6 ] || grep '^alltoallv,' "$DIR/smoke-1.csv" | grep -qv ',\(ref\|ok\),$'; then
  echo "smpi-smoke: expected 6 rows, each checked ref or ok" >&2
  exit 1
fi
if ! cmp -s "$DIR/smoke-1.csv" "$DIR/smoke-2.csv"; then
  diff "$DIR/smoke-1.csv" "$DIR/smoke-2.csv" >&2 || true
  echo "smpi-smoke: two identical simulated runs gave different outputs (not deterministic)" >&2
  exit 1
fi
probe=$("$ROOT/bench/allreduce-probe" --ranks 8 --ppn 2 --platforms fattree --algorithms rdb)
echo "$probe"
if ! echo "$probe" | grep -Eq '^fattree +8 +4 +rdb +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+$'; then
  echo "smpi-smoke: bench/allreduce-probe printed no row for 8 ranks" >&2
  exit 1
fi
fused=$("$ROOT/bench/fused-agreement-probe" --ranks 8 --layouts 2 --platforms fattree)
echo "$fused"
if ! echo "$fused" | grep -Eq '^fattree +8 +4( +[0-9]+\.[0-9]+){7}$'; then
  echo "smpi-smoke: bench/fused-agreement-probe printed no row of 7 times for 8 ranks" >&2
  exit 1
fi
echo "smpi-smoke: 2 identical runs, all checks ok; allreduce-probe and fused-agreement-probe ok"
