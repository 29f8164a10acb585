#!/usr/bin/env bash
# Builds the library and mpix-bench for simulation under SimGrid's SMPI into DIR
# (default: build-smpi), without touching the normal build; installs the Debian
# packages it needs (libsimgrid-dev has smpicc, smpicxx and smpirun) if missing.
# Idempotent and quiet: prints only what fails.
#   scripts/build-smpi.sh [DIR]    ->  DIR/tools/mpix-bench, to run with smpirun
# The same by hand:
#   meson setup build-smpi --native-file bench/smpi.ini -Dmpi=smpi --buildtype=release
#   ninja -C build-smpi
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/build-smpi}"
PACKAGES=(g++ pkg-config meson ninja-build libsimgrid-dev)

source "$ROOT/scripts/packages.sh"
install_missing "${PACKAGES[@]}"

# Runs a command silently; shows its output if it fails.
quiet() {
  local log status=0
  log="$(mktemp)"
  "$@" >"$log" 2>&1 || status=$?
  ((status == 0)) || cat "$log" >&2
  rm -f "$log"
  return "$status"
}

# Release: no debug information, since smpirun copies the program once per
# simulated rank (SMPI's dlopen privatization).
if [ ! -f "$DIR/build.ninja" ]; then
  quiet meson setup "$DIR" "$ROOT" --native-file "$ROOT/bench/smpi.ini" -Dmpi=smpi --buildtype=release
fi
quiet ninja -C "$DIR"
