#!/usr/bin/env bash
# -Dmpi=wrappers: MPI taken from the compiler wrappers (CC=mpicc CXX=mpicxx), not
# from pkg-config. Configures and builds the library (no tests; CUDA where nvcc is
# found, which compiles without the wrapper and is told where its mpi.h is) that way,
# checks that its mpix.pc requires no MPI package, and runs the example linked
# against it. Arguments: the source tree.
set -euo pipefail
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
CC=mpicc.mpich CXX=mpicxx.mpich meson setup "$work/build" "$src" -Dmpi=wrappers -Dmpiexec=mpiexec.mpich \
  -Dtests=false > "$work/setup.log" || { cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" > "$work/build.log" || { tail -30 "$work/build.log"; exit 1; }
test -e "$work/build/libmpix.so.0"
! grep -q '^Requires' "$work/build/meson-private/mpix.pc"
mpicc.mpich -I"$src/include" "$src/examples/alltoallv_basic.c" -L"$work/build" -lmpix -o "$work/example"
LD_LIBRARY_PATH="$work/build" mpiexec.mpich -n 2 "$work/example" > "$work/run.log"
# Its CMake package finds the MPI of the wrapper it was built with, also where the
# default mpicc is another MPI's (Open MPI's, once installed on Debian): the
# consumer loaded both MPIs and crashed.
if command -v cmake >/dev/null; then
  meson install -C "$work/build" --destdir "$work/root" > "$work/install.log"
  prefix="$(meson introspect --buildoptions "$work/build" | python3 -c \
    'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')"
  cmake -S "$src/tests/packaging/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/root$prefix" \
    -DMPIX_EXAMPLE="$src/examples/alltoallv_basic.c" > "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
  cmake --build "$work/cmake" >> "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
  if ldd "$work/cmake/consumer" | grep -q 'libmpi\.so\.40'; then
    echo "FAIL: the CMake consumer of a -Dmpi=wrappers (MPICH) build links Open MPI"; ldd "$work/cmake/consumer"; exit 1
  fi
  libdir="$work/root$prefix/$(meson introspect --buildoptions "$work/build" | python3 -c \
    'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))')"
  LD_LIBRARY_PATH="$libdir" mpiexec.mpich -n 2 "$work/cmake/consumer" > "$work/cmake-run.log"
  # A C++-only project: FindMPI's C component needs the C language, so the
  # package asks for the C++ one there.
  cmake -S "$src/tests/packaging/consumer" -B "$work/cmake-cxx" -DCMAKE_PREFIX_PATH="$work/root$prefix" \
    -DMPIX_LANGUAGE=CXX > "$work/cmake-cxx.log" 2>&1 || { cat "$work/cmake-cxx.log"; exit 1; }
  cmake --build "$work/cmake-cxx" >> "$work/cmake-cxx.log" 2>&1 || { cat "$work/cmake-cxx.log"; exit 1; }
  LD_LIBRARY_PATH="$libdir" mpiexec.mpich -n 2 "$work/cmake-cxx/consumer" > "$work/cmake-cxx-run.log"
fi
echo "ok: -Dmpi=wrappers builds libmpix.so.0 with MPI from mpicc/mpicxx; the example runs against it, also through CMake (C and C++-only)"
