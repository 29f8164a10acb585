#!/usr/bin/env bash
# -Dmpi=wrappers: MPI taken from the compiler wrappers (CC=mpicc CXX=mpicxx), not
# from pkg-config. Configures and builds the library (no tests, no CUDA) that way,
# checks that its mpix.pc requires no MPI package, and runs the example linked
# against it. Arguments: the source tree.
set -euo pipefail
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
CC=mpicc.mpich CXX=mpicxx.mpich meson setup "$work/build" "$src" -Dmpi=wrappers -Dmpiexec=mpiexec.mpich \
  -Dtests=false -Dcuda=disabled > "$work/setup.log" || { cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" > "$work/build.log" || { tail -30 "$work/build.log"; exit 1; }
test -e "$work/build/libmpix.so.0"
! grep -q '^Requires' "$work/build/meson-private/mpix.pc"
mpicc.mpich -I"$src/include" "$src/examples/alltoallv_basic.c" -L"$work/build" -lmpix -o "$work/example"
LD_LIBRARY_PATH="$work/build" mpiexec.mpich -n 2 "$work/example" > "$work/run.log"
echo "ok: -Dmpi=wrappers builds libmpix.so.0 with MPI from mpicc/mpicxx; the example runs against it"
