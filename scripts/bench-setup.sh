# Sourced by the scripts/bench-*.sh with the apps they run: sets `repo` (the source tree) and
# `build` (BUILD_DIR, default build), stops when one of the apps is not built there, and sets up
# the MPI environment (scripts/mpi-env.sh).
#   source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-train
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
for app in "$@"; do
  [ -x "$build/bin/$app" ] || {
    echo "no $build/bin/$app: build first (cmake -S . -B build && cmake --build build)" >&2
    exit 1
  }
done
# shellcheck source=scripts/mpi-env.sh
source "$repo/scripts/mpi-env.sh"
