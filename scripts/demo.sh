#!/usr/bin/env bash
# The library's main job, twice:
# 1. Real MPI on this machine: one non-uniform exchange (block sizes uniform in
#    [0, S]) run by every algorithm of the registry and by `auto` on 4 ranks as 2
#    emulated nodes, each checked byte for byte against MPI_Alltoallv (pmpi). On a
#    small machine these times measure the scheduler, not the algorithms.
# 2. What the algorithms gain at scale: 256 simulated ranks (SimGrid SMPI, 8 nodes
#    x 32) on a fat tree, a few algorithms and `auto` against SMPI's MPI_Alltoallv with
#    MPICH's selection (bench/demo-simulated; deterministic simulated times).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
echo "== real MPI (MPICH), 4 ranks as 2 emulated nodes: every algorithm, checked against MPI_Alltoallv"
mpiexec.mpich -n 4 "$BUILD_DIR/tools/mpix-bench" --op alltoallv --algorithms all \
  --sizes 16,256,4k --dist uniform --iters 20 --ppn 2 --check "$@"
echo
echo "== simulated (SimGrid SMPI), 256 ranks as 8 nodes x 32 on a fat tree: the gain at scale"
"$ROOT/bench/demo-simulated"
