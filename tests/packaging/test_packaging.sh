#!/usr/bin/env bash
# What a user of an installed mpix relies on, checked on a `meson install
# --destdir` of this build (tests/packaging/meson.build):
#   - libmpix.so.0 is the SONAME, and the library exports the MPIX_ functions only;
#   - libmpix_interpose.so exports only MPI entry points and imports no MPI_
#     function (its own traffic goes through PMPI_);
#   - in a CUDA build, libmpix.so.0 and the interposer find the CUDA runtime
#     through their run path, without the loader's cache (the toolkit installed
#     but not on the loader's path);
#   - mpix.pc, found where it was installed (here under DESTDIR, so it must be
#     relocatable): a C program builds and runs with `pkg-config --cflags --libs
#     mpix` (shared) and, with no libmpix.so installed, with `pkg-config --static`
#     alone;
#   - find_package(mpix) in a CMake project gives mpix::mpix (Debian's cmake), in
#     a C and in a C++-only project; find_package(mpix QUIET) where the MPI's .pc
#     is not found leaves mpix_FOUND false without stopping the configure;
#   - the documentation and the examples are installed under share/doc/mpix.
#   test_packaging.sh BUILD_DIR SOURCE_DIR CC LAUNCHER [ARGS...]
set -euo pipefail
build=$1 source=$2 cc=$3
shift 3
launcher=("$@")
fail() { echo "FAIL: $*" >&2; exit 1; }
# meson test points LD_LIBRARY_PATH at the build tree; programs here must find the
# installed library through their own run paths.
unset LD_LIBRARY_PATH

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DESTDIR="$tmp/dest" meson install -C "$build" --no-rebuild --quiet >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; o={x["name"]:x["value"] for x in json.load(sys.stdin)}; print(o["prefix"]); print(o["libdir"])')
libdir_rel=$(sed -n 2p <<<"$prefix")
prefix=$(sed -n 1p <<<"$prefix")
root="$tmp/dest$prefix"
libdir="$root/$libdir_rel"

# The shared library: its SONAME and its exports.
soname=$(readelf -d "$libdir/libmpix.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libmpix.so.0" ] || fail "SONAME is '$soname', not libmpix.so.0"
[ -L "$libdir/libmpix.so.0" ] || fail "libmpix.so.0 is not installed"
exports=$(nm -D --defined-only "$libdir/libmpix.so.0" | awk '{print $3}')
others=$(grep -v '^MPIX_' <<<"$exports" || true)
[ -z "$others" ] || fail "libmpix.so.0 exports more than MPIX_ functions: $(head -5 <<<"$others")"
echo "ok: SONAME libmpix.so.0; $(wc -l <<<"$exports") exported symbols, all MPIX_"
loader=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -1 || true)
if [ -n "$loader" ]; then
  for lib in "$libdir/libmpix.so.0" "$libdir/libmpix_interpose.so"; do
    missing=$("$loader" --inhibit-cache --list "$lib" 2>&1 | grep -i 'cuda.*not found' || true)
    [ -z "$missing" ] || fail "$(basename "$lib") does not find its CUDA runtime without the loader's cache: $missing"
  done
  echo "ok: a CUDA runtime the libraries need is found through their run path"
fi

# The interposer: MPI entry points out, no MPI_ function in.
interposer="$libdir/libmpix_interpose.so"
[ -f "$interposer" ] || fail "libmpix_interpose.so is not installed"
bad=$(nm -D --defined-only "$interposer" | awk '{print $3}' | grep -Ev '^(MPI_|mpi_|ompi_)' || true)
[ -z "$bad" ] || fail "libmpix_interpose.so exports $(head -5 <<<"$bad")"
imported=$(nm -D --undefined-only "$interposer" | awk '{print $2}' | grep -E '^MPI_' || true)
[ -z "$imported" ] || fail "libmpix_interpose.so calls $imported: add it to src/interpose/pmpi_names.h"
echo "ok: libmpix_interpose.so exports MPI entry points only and calls PMPI_ only"

# Documentation and examples.
for f in share/doc/mpix/README.md share/doc/mpix/docs/user-guide.md share/doc/mpix/examples/alltoallv_basic.c \
  share/doc/mpix/examples/spmv_pattern.c share/doc/mpix/examples/west0132.mtx; do
  [ -f "$root/$f" ] || fail "$f is not installed"
done
echo "ok: documentation and examples under share/doc/mpix"

example="$source/examples/alltoallv_basic.c"
run_example() {  # the example at 3 ranks; it prints its own check
  out=$("${launcher[@]}" -n 3 "$1" 2>&1) || fail "$1 failed: $out"
  [[ "$out" == *wrong* || "$out" == *rror* ]] && fail "$1: $out"
  return 0
}

# CMake: find_package(mpix) and mpix::mpix.
if command -v cmake >/dev/null; then
  cmake -S "$source/tests/packaging/consumer" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$root" \
    -DCMAKE_C_COMPILER="$cc" -DMPIX_EXAMPLE="$example" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake configure"; }
  cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake build"; }
  run_example "$tmp/cmake/consumer"
  [[ "$(ldd "$tmp/cmake/consumer")" == *"$libdir/libmpix.so.0"* ]] || fail "the CMake consumer does not use the installed libmpix.so.0"
  cxx_compiler=$(command -v "${CXX:-c++}" || true)
  if [ -n "$cxx_compiler" ]; then
    cmake -S "$source/tests/packaging/consumer" -B "$tmp/cmake-cxx" -DCMAKE_PREFIX_PATH="$root" -DMPIX_LANGUAGE=CXX \
      -DCMAKE_CXX_COMPILER="$cxx_compiler" >"$tmp/cmake-cxx.log" 2>&1 || { cat "$tmp/cmake-cxx.log"; fail "cmake configure (C++)"; }
    cmake --build "$tmp/cmake-cxx" >>"$tmp/cmake-cxx.log" 2>&1 || { cat "$tmp/cmake-cxx.log"; fail "cmake build (C++)"; }
    run_example "$tmp/cmake-cxx/consumer"
  fi
  mkdir -p "$tmp/no-pc"
  PKG_CONFIG_LIBDIR="$tmp/no-pc" PKG_CONFIG_PATH="" cmake -S "$source/tests/packaging/consumer" -B "$tmp/cmake-optional" \
    -DCMAKE_PREFIX_PATH="$root" -DCMAKE_C_COMPILER="$cc" -DMPIX_OPTIONAL=ON >"$tmp/cmake-optional.log" 2>&1 ||
    { cat "$tmp/cmake-optional.log"; fail "find_package(mpix QUIET) without the MPI's .pc stopped the configure"; }
  grep -q "mpix found: \(0\|FALSE\)" "$tmp/cmake-optional.log" ||
    { cat "$tmp/cmake-optional.log"; fail "find_package(mpix QUIET) without the MPI's .pc did not leave mpix_FOUND false"; }
  echo "ok: CMake find_package(mpix) with mpix::mpix builds and runs (C, C++-only); QUIET without MPI's .pc goes on"
else
  echo "skip: cmake not found"
fi

# pkg-config, shared then static, from where mpix.pc was installed: relocatable,
# it finds the staged install from its own place.
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
[[ "$(pkg-config --variable=libdir mpix)" -ef "$libdir" ]] ||
  fail "mpix.pc under DESTDIR names libdir $(pkg-config --variable=libdir mpix), not $libdir: not relocatable"
# shellcheck disable=SC2046
"$cc" "$example" -o "$tmp/shared" $(pkg-config --cflags --libs mpix) -Wl,-rpath,"$libdir"
run_example "$tmp/shared"
echo "ok: pkg-config --cflags --libs mpix (shared)"
# A C++ program that includes only <mpix/mpix.h>: Open MPI 4's <mpi.h> would
# declare its C++ bindings there, which need -lmpi_cxx (found by an outside tester).
cxx="${CXX:-c++}"
if command -v "$cxx" >/dev/null; then
  printf '#include <mpix/mpix.h>\nint main(int argc, char** argv) {\n  MPI_Init(&argc, &argv);\n  MPIX_Comm* comm = nullptr;\n  int rc = MPIX_Comm_init(&comm, MPI_COMM_WORLD);\n  if (rc == MPIX_SUCCESS) rc = MPIX_Comm_free(&comm);\n  MPI_Finalize();\n  return rc;\n}\n' >"$tmp/app.cpp"
  # shellcheck disable=SC2046
  "$cxx" -std=c++11 "$tmp/app.cpp" -o "$tmp/cxx" $(pkg-config --cflags --libs mpix) -Wl,-rpath,"$libdir" ||
    fail "a C++ program with pkg-config --cflags --libs mpix does not build"
  "${launcher[@]}" -n 2 "$tmp/cxx" || fail "the C++ program failed"
  echo "ok: a C++ program with pkg-config --cflags --libs mpix"
else
  echo "skip: no C++ compiler ($cxx)"
fi
# The archive named beside the shared library (docs/user-guide.md), then alone.
# shellcheck disable=SC2046
"$cc" "$example" -o "$tmp/static" $(pkg-config --static --cflags --libs mpix | sed 's/-lmpix\b/-l:libmpix.a/')
[[ "$(ldd "$tmp/static")" == *libmpix* ]] && fail "the program linked with -l:libmpix.a still loads libmpix"
run_example "$tmp/static"
rm -f "$tmp/static" "$libdir"/libmpix.so*
# shellcheck disable=SC2046
"$cc" "$example" -o "$tmp/static" $(pkg-config --static --cflags --libs mpix) 2>"$tmp/static.log" ||
  { cat "$tmp/static.log"; fail "static link with only pkg-config --static mpix"; }
[[ "$(ldd "$tmp/static")" == *libmpix* ]] && fail "the static program still loads libmpix"
run_example "$tmp/static"
echo "ok: pkg-config --static --cflags --libs mpix (static libmpix.a)"
