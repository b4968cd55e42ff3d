#!/bin/bash
# ctest install_and_find_package: installs the build into a fresh prefix and uses it the way a
# user of the install does (cmake/MeshsliceInstall.cmake):
#  1. every installed app answers --version with meshslice, Kokkos, KokkosKernels, Teuchos, MPI;
#  2. an installed app started in a folder without inputs/ finds its default deck under
#     <prefix>/share/meshslice/inputs, and still does after the prefix is moved;
#  3. a separate project configures against the moved prefix with find_package(meshslice),
#     builds, and its program (meshslice's app runner, a deck, a GEMM through meshslice's
#     KokkosBlas wrapper checked against loops) runs on one MPI rank and passes.
# usage: check_install.sh BUILD_DIR WORK_DIR CMAKE CXX_COMPILER MPI_LAUNCHER...
set -euo pipefail
build=$1 work=$2 cmake=$3 cxx=$4
shift 4
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }

rm -rf "$work"
mkdir -p "$work/empty"
"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log"

for app in meshslice-train meshslice-bench meshslice-sim meshslice-tune meshslice-data meshslice-export; do
  text=$("$work/prefix/bin/$app" --version)
  for key in meshslice git_revision kokkos kokkos_backends kokkoskernels teuchos mpi mpi_library; do
    grep -q "^$key: ." <<<"$text" || fail "$app --version has no '$key:' line:"$'\n'"$text"
  done
done
echo "--version of the installed apps:"
"$work/prefix/bin/meshslice-sim" --version

# A small sweep of the default deck (inputs/sim/paper.yaml), from a folder without inputs/.
small=(--set models=gpt3 --set scalings=weak --set chips=16 --set studies.shapes_chips=0
       --set studies.slices_rows=0 --set studies.slices_cols=0 --set plots=false)
run_default_deck() {  # PREFIX: runs PREFIX/bin/meshslice-sim, checks where its deck came from
  local prefix=$1 log="$work/sim-$(basename "$1").log"
  (cd "$work/empty" && "$prefix/bin/meshslice-sim" "${small[@]}" --out "$work/sim-out") >"$log" 2>&1 ||
    { cat "$log"; fail "installed meshslice-sim failed"; }
  grep -q "deck $prefix/share/meshslice/inputs/sim/paper.yaml" "$log" ||
    { cat "$log"; fail "meshslice-sim in $prefix did not take its deck from the install prefix"; }
  grep -q '"kokkos": "' "$work/sim-out/version.json" || fail "no version.json beside the results"
  grep -q "emulating TPUv4-sim ($prefix/share/meshslice/machines/tpuv4-sim.yaml)" "$log" ||
    { cat "$log"; fail "meshslice-sim in $prefix did not take its machine file from the prefix"; }
}
run_default_deck "$work/prefix"
mv "$work/prefix" "$work/moved"
run_default_deck "$work/moved"
echo "installed apps find their default deck under the prefix, also after moving it"

"$cmake" -S "$source_dir/tests/install/downstream" -B "$work/downstream" \
  -DCMAKE_PREFIX_PATH="$work/moved" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  >"$work/downstream-configure.log" 2>&1 || { cat "$work/downstream-configure.log"; fail "configure"; }
grep "downstream: meshslice" "$work/downstream-configure.log"
"$cmake" --build "$work/downstream" >"$work/downstream-build.log" 2>&1 ||
  { cat "$work/downstream-build.log"; fail "downstream build"; }
"$@" "$work/downstream/downstream" "$source_dir/tests/install/downstream/deck.yaml" \
  --out "$work/downstream-out" | tee "$work/downstream-run.log"
grep -q "48x48 GEMM max error 0" "$work/downstream-run.log" || fail "downstream GEMM result"
echo "PASS: install, find_package(meshslice), downstream build and run"
