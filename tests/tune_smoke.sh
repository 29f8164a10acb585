#!/usr/bin/env bash
# mpix-tune end to end on 2 ranks (2 emulated nodes): the machine file it measures
# and the tuning file it writes both load, and a call then follows the tuning file
# (MPIX_VERBOSE names the rule). Arguments: the build's tools directory, then the
# MPI launcher and its arguments.
set -euo pipefail
tools="$1"
shift
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$@" -n 2 "$tools/mpix-tune" --profile --ppn 1 --out "$work/machine.txt" > "$work/profile.out"
grep -q "^inter_latency *= " "$work/machine.txt"
grep -q "^copy_bandwidth *= " "$work/machine.txt"
grep -q "^inter_message_bytes *= " "$work/machine.txt"
grep -Eq "^eager_bytes *= [1-9]" "$work/machine.txt"
# Two emulated nodes: the exchange between them is measured, not left at 0.
grep -Eq "^alltoall_bandwidth *= [1-9]" "$work/machine.txt"

# --margin -100: a rule in every cell, however auto did.
"$@" -n 2 "$tools/mpix-tune" --sizes 16,2k --iters 1 --ppn 1 --margin -100 --out "$work/tuning.txt" > "$work/tune.out"
test "$(grep -c '^alltoallv 2 2 ' "$work/tuning.txt")" = 2
# Each rule for the measured layout, its bytes up to the cell's size.
grep -q '^alltoallv 2 2 0 16 .* nodes=2\.\.2 ppn=1\.\.1 ' "$work/tuning.txt"
grep -q '^alltoallv 2 2 17 \* .* nodes=2\.\.2 ppn=1\.\.1 ' "$work/tuning.txt"
grep -q "measured best" "$work/tune.out"
test "$(grep -c ' best$' "$work/tune.out")" = 2
# Where auto was not beaten by the margin (no best can beat it by 100000%), no rule
# is written and the table says so.
"$@" -n 2 "$tools/mpix-tune" --sizes 16,2k --iters 1 --ppn 1 --margin 100000 --out "$work/auto.txt" \
  > "$work/auto.out" 2> "$work/auto.err"
test "$(grep -c ' none (auto)$' "$work/auto.out")" = 2
! grep -q '^alltoallv' "$work/auto.txt"
grep -q "2 left to auto" "$work/auto.txt"
grep -q "no rule: auto was within --margin" "$work/auto.err"
# A tuning file in the environment is not what auto is measured with: the column is
# the model's (a missing file there failed auto in every cell).
MPIX_TUNING_FILE="$work/none.txt" "$@" -n 2 "$tools/mpix-tune" --sizes 16,2k --iters 1 --ppn 1 --margin 100000 \
  --out "$work/inherited.txt" > "$work/inherited.out" 2> "$work/inherited.err"
test "$(grep -c ' none (auto)$' "$work/inherited.out")" = 2
grep -q "MPIX_TUNING_FILE=$work/none.txt is ignored" "$work/inherited.err"

# A fixed distribution is one cell whatever --sizes says.
"$@" -n 2 "$tools/mpix-tune" --sizes 16,2k --dist fft_n2 --iters 1 --ppn 1 --margin -100 --out "$work/fixed.txt" > /dev/null
test "$(grep -c '^alltoallv' "$work/fixed.txt")" = 1
# Where no candidate runs, the cell is named with the reason, nothing is written
# and the exit status is 1 (it said "wrote" and exited 0).
if MPIX_MACHINE_FILE="$work/none.txt" "$@" -n 2 "$tools/mpix-tune" --sizes 16 --iters 1 --out "$work/failed.txt" \
  > /dev/null 2> "$work/failed.err"; then
  echo "mpix-tune exited 0 where every candidate failed"; exit 1
fi
grep -q "no candidate ran (.*machine file $work/none.txt: cannot be opened" "$work/failed.err"
grep -q "failed.txt not written" "$work/failed.err"
test ! -e "$work/failed.txt"
# Options: a flag with a value, an option twice, profile with tuning options.
for bad in "--profile=no" "--sizes 16 --sizes 32" "--profile --sizes 16" "--iters 100001" "--margin -101"; do
  if "$@" -n 1 "$tools/mpix-tune" $bad --out "$work/opt.txt" > /dev/null 2> "$work/opt.err"; then
    echo "mpix-tune $bad exited 0"; exit 1
  fi
  grep -Eq "takes no value|given twice|not to --profile|from 1 to 100000|from -100 to 100000" "$work/opt.err"
done

MPIX_MACHINE_FILE="$work/machine.txt" MPIX_TUNING_FILE="$work/tuning.txt" MPIX_VERBOSE=1 \
  "$@" -n 2 "$tools/mpix-bench" --algorithms auto --sizes 16,2k --iters 1 --warmup 0 --ppn 1 --check \
  > "$work/bench.out" 2> "$work/bench.err"
grep -q "(tuning file $work/tuning.txt:2)" "$work/bench.err"
grep -q "(tuning file $work/tuning.txt:3)" "$work/bench.err"
! grep -q MISMATCH "$work/bench.out"

# A malformed machine file is an error of the call (mpix-bench prints it in the
# row), with the file and the line.
printf 'inter_latency = soon\n' > "$work/bad.txt"
MPIX_MACHINE_FILE="$work/bad.txt" "$@" -n 2 "$tools/mpix-bench" --algorithms auto --sizes 16 --iters 1 \
  > "$work/bad.out" 2>&1 || true
grep -q "machine file $work/bad.txt:1: inter_latency=soon: not a number" "$work/bad.out"
# ... which fails pmpi too, the baseline: nothing measured is valid, and the exit
# status is 1 (it was 0 with every row an error), with --check too.
if MPIX_MACHINE_FILE="$work/bad.txt" "$@" -n 2 "$tools/mpix-bench" --algorithms pairwise --sizes 16 --iters 1 \
  --check > "$work/bad.out" 2>&1; then
  echo "mpix-bench exited 0 where its baseline pmpi failed"; exit 1
fi
grep -q "the baseline pmpi failed (.*machine file $work/bad.txt:1" "$work/bad.out"
# Blocks whose buffers int displacements cannot address are refused before
# anything is allocated, by mpix-tune as by mpix-bench (it took them, and ran).
if "$@" -n 2 "$tools/mpix-tune" --sizes 1200m --iters 1 --out "$work/huge.txt" > "$work/huge.out" 2>&1; then
  echo "mpix-tune took blocks of 1200m at 2 ranks"; exit 1
fi
grep -q "exceeds 2^31-1 bytes per buffer" "$work/huge.out"
# A tuning file that cannot be written stops mpix-tune before it measures, with an
# error and a non-zero exit.
if "$@" -n 2 "$tools/mpix-tune" --sizes 16 --iters 1 --ppn 1 --out "$work/no/such/dir/t.txt" \
  > "$work/unwritable.out" 2>&1; then
  echo "mpix-tune exited 0 with an unwritable --out"; exit 1
fi
grep -q "cannot write $work/no/such/dir/t.txt" "$work/unwritable.out"
# The same for a profile, and for an --out that is a directory.
for mode in --profile "--sizes 16 --iters 1"; do
  if "$@" -n 2 "$tools/mpix-tune" $mode --ppn 1 --out "$work" > "$work/dir.out" 2>&1; then
    echo "mpix-tune $mode exited 0 with a directory as --out"; exit 1
  fi
  grep -q "out $work: is a directory" "$work/dir.out"
done
if "$@" -n 2 "$tools/mpix-tune" --profile --out "$work/no/such/dir/m.txt" > "$work/unwritable.out" 2>&1; then
  echo "mpix-tune --profile exited 0 with an unwritable --out"; exit 1
fi
grep -q "cannot write $work/no/such/dir/m.txt" "$work/unwritable.out"
echo "mpix-tune: machine and tuning files written, loaded and followed"
