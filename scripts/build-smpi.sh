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

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

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
