#!/usr/bin/env bash
# The library's main job on a few ranks: one non-uniform exchange (block sizes
# uniform in [0, S]) run by every algorithm of the registry on 4 ranks as 2
# emulated nodes, compared with MPI_Alltoallv (pmpi) and checked against it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
mpiexec.mpich -n 4 "$BUILD_DIR/tools/mpix-bench" --op alltoallv --algorithms all \
  --sizes 16,256,4k --dist uniform --iters 20 --ppn 2 --check "$@"
