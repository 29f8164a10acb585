#!/usr/bin/env bash
# The whole test suite: every test program under mpiexec at 1 to 16 ranks.
# Meson prints its summary (Ok: N  Fail: M) at the end.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
meson test -C "$BUILD_DIR" --print-errorlogs "$@"
