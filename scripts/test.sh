#!/usr/bin/env bash
# The whole test suite, as CI runs it (docs/testing.md):
#   mpich     every test program under MPICH at 1 to 32 ranks (build/)
#   random    the randomized differential test under MPICH (suite 'random')
#   ompi      the same suite, random included, against Open MPI (build-ompi/)
#   sanitize  AddressSanitizer + UBSan build (build-sanitize/), every test program
#   fuzz      the libFuzzer targets for FUZZ_SECONDS each (default 30; scripts/fuzz.sh)
# Each part prints its time; the end is one combined summary in Meson's format
# (Ok: N ... Fail: M) and a line "N passed, M failed". Exits non-zero if any part
# failed. MPIX_TEST_PARTS=mpich,ompi (say) runs only those parts.
#
# With arguments, or with MPIX_MPI or MPIX_SANITIZE set, it is Meson's test runner
# on that one build (every suite unless arguments say otherwise), as before:
#   ./scripts/test.sh --suite alltoall           (MPICH, build/)
#   MPIX_MPI=ompi ./scripts/test.sh              (Open MPI, build-ompi/)
#   MPIX_MPI=ompi ./scripts/test.sh --suite random
#   MPIX_SANITIZE=1 ./scripts/test.sh core-np4   (build-sanitize/)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if (($# > 0)) || [ -n "${MPIX_MPI:-}" ] || [ "${MPIX_SANITIZE:-0}" = 1 ]; then
  set -e
  source "$ROOT/scripts/setup.sh"
  exec meson test -C "$BUILD_DIR" --print-errorlogs "$@"
fi

PARTS="${MPIX_TEST_PARTS:-mpich,random,ompi,sanitize,fuzz}"
# Under the sanitizers every test program runs (several times slower); not the
# simulated build, the bench scripts and the packaging checks, which build their
# own and do not depend on the library's memory safety.
SANITIZE_SKIP=(--no-suite smpi --no-suite bench --no-suite packaging)

declare -A ok fail skip timeout seconds status
order=()
LOG_DIR="$ROOT/build-logs"
mkdir -p "$LOG_DIR"

# Runs one part: its output is shown and kept in build-logs/<part>.log; the counts
# come from Meson's summary (or, for fuzz, one test per target).
run_part() {  # name command...
  local name="$1"
  shift
  order+=("$name")
  echo
  echo "======== $name: $*"
  local start=$SECONDS
  "$@" 2>&1 | tee "$LOG_DIR/$name.log"
  status[$name]=${PIPESTATUS[0]}
  seconds[$name]=$((SECONDS - start))
  local log="$LOG_DIR/$name.log"
  count() { grep -E "^$1:" "$log" | tail -1 | awk '{print $NF}'; }
  if [ "$name" = fuzz ]; then
    ok[$name]=$(grep -c '^== fuzz_' "$log")
    fail[$name]=$(grep -c '^FAILED: fuzz_' "$log")
    ok[$name]=$((ok[$name] - fail[$name]))
    skip[$name]=0
    timeout[$name]=0
  else
    ok[$name]=$(count Ok)
    fail[$name]=$(count Fail)
    skip[$name]=$(count Skipped)
    timeout[$name]=$(count Timeout)
  fi
  # A part that failed before Meson's summary (a build error) counts as one failure.
  if [ -z "${ok[$name]}" ]; then
    ok[$name]=0 fail[$name]=1 skip[$name]=0 timeout[$name]=0
  fi
  if [ "${status[$name]}" != 0 ] && [ "$((fail[$name] + timeout[$name]))" = 0 ]; then fail[$name]=1; fi
  echo "======== $name: ${seconds[$name]} s, exit ${status[$name]}"
}

build_and_test() {  # part-name env... -- meson-test-args...
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  env "${env[@]}" bash -c 'set -e; source "$0/scripts/setup.sh"; exec nice meson test -C "$BUILD_DIR" --print-errorlogs "$@"' "$ROOT" "$@"
}

has() { [[ ",$PARTS," == *",$1,"* ]]; }
has mpich && run_part mpich build_and_test MPIX_MPI=mpich -- --no-suite random
has random && run_part random build_and_test MPIX_MPI=mpich -- --suite random
# The simulated build, the bench scripts and the 2 GiB exchange do not depend on
# the MPI: they run once, in the MPICH part.
has ompi && run_part ompi build_and_test MPIX_MPI=ompi -- --no-suite smpi --no-suite bench --no-suite largecount
has sanitize && run_part sanitize build_and_test MPIX_MPI=mpich MPIX_SANITIZE=1 -- "${SANITIZE_SKIP[@]}"
has fuzz && run_part fuzz nice "$ROOT/scripts/fuzz.sh" "${FUZZ_SECONDS:-30}"

echo
echo "======== summary"
total_ok=0 total_fail=0 total_skip=0 total_timeout=0 any=0
for name in "${order[@]}"; do
  printf '%-9s %5d s  Ok: %-4d Fail: %-3d Timeout: %-3d Skipped: %-3d exit %s\n' "$name" "${seconds[$name]}" \
    "${ok[$name]}" "${fail[$name]}" "${timeout[$name]}" "${skip[$name]}" "${status[$name]}"
  total_ok=$((total_ok + ok[$name]))
  total_fail=$((total_fail + fail[$name]))
  total_skip=$((total_skip + skip[$name]))
  total_timeout=$((total_timeout + timeout[$name]))
  [ "${status[$name]}" = 0 ] || any=1
done
echo "total     $SECONDS s"
echo
# Meson's summary format, over all parts.
printf 'Ok:                 %d\nExpected Fail:      0\nFail:               %d\nUnexpected Pass:    0\nSkipped:            %d\nTimeout:            %d\n' \
  "$total_ok" "$total_fail" "$total_skip" "$total_timeout"
echo
echo "Ok: $total_ok Fail: $((total_fail + total_timeout))"
echo "$total_ok passed, $((total_fail + total_timeout)) failed"
[ $any = 0 ] && [ $((total_fail + total_timeout)) = 0 ]
