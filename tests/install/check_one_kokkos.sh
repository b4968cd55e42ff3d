#!/bin/bash
# ctest one_kokkos_check: cmake/MeshsliceOneKokkos.cmake on shared libraries made here, named
# like Debian's and spack's, so that the check is seen to pass and to fail:
#   Teuchos needs libtrilinos_kokkoscore.so.13.2 (Debian); meshslice links
#   - that same library                      -> configure goes on;
#   - libkokkoscore.so.4.6 (a newer Kokkos)   -> FATAL_ERROR naming both;
#   - the same with MESHSLICE_ALLOW_TWO_KOKKOS -> a warning only;
#   - a static libkokkoscore.a                -> FATAL_ERROR (two copies of Kokkos' state).
# usage: check_one_kokkos.sh WORK_DIR CMAKE CXX_COMPILER READELF
set -euo pipefail
work=$1 cmake=$2 cxx=$3 readelf=$4
module=$(cd "$(dirname "$0")/../.." && pwd)/cmake/MeshsliceOneKokkos.cmake
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"

echo 'int kokkos_core() { return 1; }' >kokkos.cpp
echo 'int kokkos_core(); int teuchos_core() { return kokkos_core(); }' >teuchos.cpp
"$cxx" -shared -fPIC -Wl,-soname,libtrilinos_kokkoscore.so.13.2 kokkos.cpp -o libtrilinos_kokkoscore.so.13.2
"$cxx" -shared -fPIC -Wl,-soname,libkokkoscore.so.4.6 kokkos.cpp -o libkokkoscore.so.4.6
"$cxx" -c kokkos.cpp -o kokkos.o && ar rcs libkokkoscore.a kokkos.o
"$cxx" -shared -fPIC teuchos.cpp ./libtrilinos_kokkoscore.so.13.2 -o libtrilinos_teuchoscore.so

cat >check.cmake <<'CMAKE'
include(${MODULE})
meshslice_check_one_kokkos(KOKKOS_LIBRARY ${KOKKOS} USERS Teuchos=${TEUCHOS})
CMAKE
check() {  # KOKKOS_LIBRARY [extra -D]: runs the check, output in check.log
  "$cmake" -DCMAKE_READELF="$readelf" -DMODULE="$module" -DKOKKOS="$work/$1" \
    -DTEUCHOS="$work/libtrilinos_teuchoscore.so" "${@:2}" -P check.cmake >check.log 2>&1
}

check libtrilinos_kokkoscore.so.13.2 || { cat check.log; fail "same Kokkos refused"; }
grep -q "one Kokkos (libtrilinos_kokkoscore.so.13.2)" check.log || { cat check.log; fail "no note"; }

! check libkokkoscore.so.4.6 || { cat check.log; fail "a second Kokkos was accepted"; }
grep -q "two Kokkos libraries" check.log && grep -q "libtrilinos_kokkoscore.so.13.2" check.log &&
  grep -q "libkokkoscore.so.4.6" check.log || { cat check.log; fail "error does not name both"; }

check libkokkoscore.so.4.6 -DMESHSLICE_ALLOW_TWO_KOKKOS=ON || { cat check.log; fail "override"; }
grep -q "CMake Warning" check.log || { cat check.log; fail "override gave no warning"; }

! check libkokkoscore.a || { cat check.log; fail "a static Kokkos beside Teuchos' was accepted"; }
echo "PASS: one Kokkos check accepts the same library and refuses a second one"
