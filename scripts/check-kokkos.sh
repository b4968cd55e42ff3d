#!/usr/bin/env bash
# Builds meshslice against a Kokkos install of your choice and runs its suite where it can.
#
#   scripts/check-kokkos.sh KOKKOS_PREFIX [openmp|serial|cuda|hip] [PREFIX...]
#
# KOKKOS_PREFIX is an installed Kokkos (its lib/cmake/Kokkos); KokkosKernels and Teuchos are
# looked for there and in the extra PREFIXes (and CMAKE_PREFIX_PATH). This script never builds
# Kokkos: it checks meshslice against one you have (spack's, a module's, your own). The backend
# defaults to the install's device backend (CUDA, HIP) or else OpenMP, else Serial; naming one the
# install lacks is an error. CUDA/HIP builds compile with the install's nvcc_wrapper / hipcc and
# run the suite only where a GPU answers (nvidia-smi / rocm-smi); elsewhere they stop after the
# build and say so. CPU backends run the whole suite with one OpenMP thread per MPI rank, then the
# MPI tests again with every collective staged through host mirrors (comm.stage_through_host, the
# code path of a GPU without GPU-aware MPI).
#
# Environment: BUILD_DIR (default build-kokkos-<backend>), JOBS (default nproc),
# CMAKE_ARGS (extra configure arguments, e.g. -DCMAKE_BUILD_TYPE=Debug).
set -euo pipefail

usage() { echo "usage: $0 KOKKOS_PREFIX [openmp|serial|cuda|hip] [PREFIX...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
kokkos=$(cd "$1" 2>/dev/null && pwd) || { echo "check-kokkos: no directory '$1'" >&2; exit 2; }
shift
config=$kokkos/include/KokkosCore_config.h
if [ ! -f "$config" ]; then
  echo "check-kokkos: $kokkos is not a Kokkos install (no include/KokkosCore_config.h)" >&2
  exit 2
fi
has() { grep -q "^#define KOKKOS_ENABLE_$1\b" "$config"; }

backend=""
case "${1:-}" in
  openmp | serial | cuda | hip) backend=$1; shift ;;
  "") ;;
  -*) usage ;;
esac
if [ -z "$backend" ]; then
  if has CUDA; then backend=cuda
  elif has HIP; then backend=hip
  elif has OPENMP; then backend=openmp
  else backend=serial; fi
fi
upper=$(echo "$backend" | tr a-z A-Z)
has "$upper" || { echo "check-kokkos: the Kokkos in $kokkos has no $upper backend" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build-kokkos-$backend}
jobs=${JOBS:-$(nproc)}
prefixes="$kokkos"
for p in "$@"; do prefixes="$prefixes;$(cd "$p" && pwd)"; done
[ -z "${CMAKE_PREFIX_PATH:-}" ] || prefixes="$prefixes;$CMAKE_PREFIX_PATH"

compiler=()
case "$backend" in
  cuda)
    if [ ! -x "$kokkos/bin/nvcc_wrapper" ]; then
      echo "check-kokkos: no $kokkos/bin/nvcc_wrapper (a CUDA Kokkos installs it)" >&2
      exit 2
    fi
    compiler=(-DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper")
    # nvcc_wrapper compiles for sm_70 unless given an -arch, and CUDA 13 refuses sm_70 before
    # Kokkos' own -arch flag is ever added (CMake's first compiler check): give the install's.
    gpus='VOLTA\|TURING\|AMPERE\|ADA\|HOPPER\|BLACKWELL'
    arch=$(sed -n "s/^#define KOKKOS_ARCH_\\($gpus\\)\\([0-9]*\\)\$/\\2/p" "$config" | tail -1)
    [ -z "$arch" ] || compiler+=(-DCMAKE_CXX_FLAGS="-arch=sm_$arch") ;;
  hip)
    compiler=(-DCMAKE_CXX_COMPILER="$(command -v hipcc || echo hipcc)") ;;
esac
number=$(sed -n 's/^#define KOKKOS_VERSION \([0-9]*\).*/\1/p' "$config")
version=${number:+$((number / 10000)).$((number / 100 % 100)).$((number % 100))}
# The new View came with the 4.7 development line (4.6.99); before it there was only the legacy one.
view="new (mdspan) View"
if has IMPL_VIEW_LEGACY || [ "${number:-0}" -lt 40699 ]; then view="legacy View"; fi
echo "check-kokkos: Kokkos ${version:-?} in $kokkos, backend $backend, $view; build in $build"

# shellcheck disable=SC2086
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefixes" \
  "${compiler[@]}" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"

ran=()
skipped=()
gpu_present() {
  case "$backend" in
    cuda) command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU ;;
    hip) command -v rocm-smi >/dev/null && rocm-smi --showid 2>/dev/null | grep -q GPU ;;
    *) return 0 ;;
  esac
}
status=0
# shellcheck source=scripts/mpi-env.sh
source "$repo/scripts/mpi-env.sh"
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false  # one thread per rank: ranks fill the cores
if gpu_present; then
  (cd "$build" && ctest --output-on-failure -j "$jobs") || status=1
  ran+=("the whole suite")
  if [ "$backend" = openmp ] || [ "$backend" = serial ]; then
    (cd "$build" && MESHSLICE_STAGE_THROUGH_HOST=1 ctest --output-on-failure -j "$jobs" -L mpi) ||
      status=1
    ran+=("the MPI tests again with every collective staged through host mirrors")
  fi
else
  skipped+=("the suite: no $upper device answers here (built and linked only)")
fi

echo
echo "check-kokkos: built against Kokkos ${version:-?} in $kokkos ($backend, $view)"
for r in "${ran[@]+"${ran[@]}"}"; do echo "  ran: $r"; done
for s in "${skipped[@]+"${skipped[@]}"}"; do echo "  skipped: $s"; done
[ "$status" -eq 0 ] && echo "check-kokkos: passed" || echo "check-kokkos: FAILED"
exit "$status"
