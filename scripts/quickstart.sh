#!/usr/bin/env bash
# Set up, build and run meshslice on Debian 12 from a fresh shell.
#
#   scripts/quickstart.sh run    install what is missing, build, run the main job on its default deck
#   scripts/quickstart.sh test   install what is missing, build, run the whole test suite (CI)
#
# Environment: BUILD_DIR (default build), JOBS (default nproc), RANKS (main job, default 2).
set -euo pipefail

mode=${1:-}
case "$mode" in
  run | test) ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
jobs=${JOBS:-$(nproc)}
ranks=${RANKS:-2}

"$repo/scripts/install-debian-deps.sh"

cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"

# shellcheck source=scripts/mpi-env.sh
source "$repo/scripts/mpi-env.sh"
if [ "$mode" = run ]; then
  # The main job: a byte-level language model learning English from the licence texts every
  # Debian machine has (inputs/train/laptop-lm.yaml: 2D tensor parallelism on a 1x2 mesh,
  # MeshSlice GEMMs), its dataset made first by meshslice-data unless it is there already.
  data="$repo/out/data/licenses"
  [ -f "$data.idx" ] || "$build/bin/meshslice-data" /usr/share/common-licenses --out "$data"
  mpiexec -np "$ranks" $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" \
    "$repo/inputs/train/laptop-lm.yaml" --set data.prefix="$data" --out "$repo/out"
else
  cd "$build"
  ctest --output-on-failure -j "$jobs"
  # The MPI tests again with every collective staged through host mirrors (the test aid
  # comm.stage_through_host): the code path of a GPU without GPU-aware MPI, run on this CPU.
  MESHSLICE_STAGE_THROUGH_HOST=1 ctest --output-on-failure -j "$jobs" -L mpi
fi
