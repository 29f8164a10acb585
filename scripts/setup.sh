#!/usr/bin/env bash
# Installs what the build needs (Debian packages) if it is missing, then configures
# and builds into $BUILD_DIR (default: build). Sourced by demo.sh and test.sh.
#   MPIX_SANITIZE=1  builds with -Db_sanitize=address,undefined into build-sanitize
#   MPIX_MPI=ompi    builds against Open MPI into build-ompi (default: mpich)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MPI="${MPIX_MPI:-mpich}"
# libsimgrid-dev: SimGrid's SMPI (smpicxx, smpirun), for the simulated build that the
# smpi-smoke test builds and runs (scripts/build-smpi.sh).
# gfortran, valgrind, cmake: the interpose tests (Fortran programs, leaks after
# MPI_Finalize) and the packaging test (a CMake consumer project).
# openmpi-bin, libopenmpi-dev: the Open MPI build (MPIX_MPI=ompi), which
# scripts/test.sh runs too; clang-14, libclang-rt-14-dev: libFuzzer (scripts/fuzz.sh).
# libhwloc-dev: region detection where the MPI has no hardware-guided split (optional
# in meson.build).
PACKAGES=(g++ pkg-config meson ninja-build mpich libmpich-dev catch2 libsimgrid-dev gfortran valgrind cmake
          openmpi-bin libopenmpi-dev clang-14 libclang-rt-14-dev libhwloc-dev)

source "$ROOT/scripts/packages.sh"
install_missing "${PACKAGES[@]}"

if [ "${MPIX_SANITIZE:-0}" = "1" ]; then
  BUILD_DIR="${BUILD_DIR:-$ROOT/build-sanitize}"
  SETUP_ARGS=(-Db_sanitize=address,undefined -Db_lundef=false)
  # MPICH keeps memory until exit on purpose; leak reports would be about it.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
elif [ "$MPI" = "ompi" ]; then
  BUILD_DIR="${BUILD_DIR:-$ROOT/build-ompi}"
  SETUP_ARGS=()
else
  BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
  SETUP_ARGS=()
fi

# The CUDA toolkit's usual place: with nvcc found, the CUDA sources are built
# (meson option cuda=auto; a machine without a GPU still builds and runs them).
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" "$ROOT" -Dmpi="$MPI" "${SETUP_ARGS[@]}" >/dev/null
fi
ninja -C "$BUILD_DIR" >/dev/null
