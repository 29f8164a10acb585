#!/usr/bin/env bash
# Fuzzing with clang's libFuzzer (docs/testing.md). Builds the targets fuzz/fuzz_*.cpp
# and the library with clang++ -fsanitize=fuzzer,address,undefined into build-fuzz/
# (apart from the Meson gcc build; only what changed is recompiled), then runs each
# target for SECONDS (default 60) from the committed seed corpus fuzz/corpus/<target>/.
# New interesting inputs go to build-fuzz/corpus/<target>/ (not committed); a
# failing input is saved as build-fuzz/artifacts/<target>-crash-* and fails the run.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]    e.g. scripts/fuzz.sh 600 fuzz_schedule
#   build-fuzz/fuzz_tuning FILE             replays one input
#
# The library is linked against MPI (MPIX_MPI=ompi: Open MPI; default MPICH), but
# the targets call only functions that need no MPI (no MPI_Init).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_EACH="${1:-60}"
[ $# -gt 0 ] && shift
CXX="${FUZZ_CXX:-clang++-14}"
MPI="${MPIX_MPI:-mpich}"
OUT="${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"

if ! command -v "$CXX" >/dev/null || ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "installing: clang-14 libclang-rt-14-dev"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null
fi

targets=("$@")
if ((${#targets[@]} == 0)); then
  for file in "$ROOT"/fuzz/fuzz_*.cpp; do targets+=("$(basename "$file" .cpp)"); done
fi

FLAGS=(-std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -I"$ROOT/include" -I"$ROOT/src" -I"$ROOT/tools")
read -r -a MPI_CFLAGS <<<"$(pkg-config --cflags "$MPI")"
read -r -a MPI_LIBS <<<"$(pkg-config --libs "$MPI")"
mkdir -p "$OUT/obj" "$OUT/artifacts"

# Recompiles a source when it, or any header of the project, is newer than its object.
newest_header="$(find "$ROOT/src" "$ROOT/include" "$ROOT/tools" "$ROOT/fuzz" -name '*.h*' -printf '%T@\n' | sort -n | tail -1)"
compile() {  # source object extra-flags...
  local source="$1" object="$2"
  shift 2
  if [ -f "$object" ] && [ "$object" -nt "$source" ] &&
     [ "$(stat -c %Y "$object")" -ge "${newest_header%.*}" ]; then
    return 0
  fi
  "$CXX" "${FLAGS[@]}" "${MPI_CFLAGS[@]}" "$@" -c "$source" -o "$object"
}

objects=()
for source in "$ROOT"/src/*/*.cpp "$ROOT/tools/workload.cpp"; do
  name="$(basename "$(dirname "$source")")_$(basename "$source" .cpp).o"
  compile "$source" "$OUT/obj/$name" -fsanitize=fuzzer-no-link
  objects+=("$OUT/obj/$name")
done
for target in "${targets[@]}"; do
  compile "$ROOT/fuzz/$target.cpp" "$OUT/obj/$target.o" -fsanitize=fuzzer-no-link
  "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$OUT/obj/$target.o" "${objects[@]}" "${MPI_LIBS[@]}" -o "$OUT/$target"
done

status=0
for target in "${targets[@]}"; do
  mkdir -p "$OUT/corpus/$target"
  echo "== $target: ${SECONDS_EACH}s"
  log="$OUT/$target.log"
  # -fork would use both cores; one process leaves the machine to the rest of CI.
  if "$OUT/$target" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$OUT/artifacts/$target-" "$OUT/corpus/$target" "$ROOT/fuzz/corpus/$target" >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^Done" "$log" | sed 's/^/   /' || true
  else
    status=1
    echo "FAILED: $target (log $log); the input is in $OUT/artifacts/:"
    ls "$OUT/artifacts/" | grep "^$target-" | sed 's/^/   /' || true
    tail -40 "$log"
  fi
done
exit $status
