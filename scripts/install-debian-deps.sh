#!/usr/bin/env bash
# Installs the Debian 12 packages meshslice builds and runs with, skipping those already there;
# packages given as arguments are installed with them (scripts/fuzz.sh adds clang). Runs
# apt-get as root, or through sudo otherwise. See shared DESIGN notes for why each is needed.
set -euo pipefail

packages=(
  cmake g++ make
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libtrilinos-teuchos-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev        # the BLAS behind KokkosKernels (~20x the reference BLAS)
  libgtest-dev
  libscalapack-openmpi-dev   # ScaLAPACK PxGEMM baseline of meshslice-bench
  libdnnl-dev                # oneDNN: the bf16 local GEMM's fast CPU route (AMX, AVX512-BF16)
  python3                    # the test scripts check that the Chrome traces are valid JSON
  python3-numpy              # a test reads a checkpoint as a Python user would (json + numpy)
  gnuplot-nox                # PNG plots of meshslice-sim (without it the .gp scripts and data are still written)
  "$@"
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-debian-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-debian-deps: run as root or install sudo" >&2; exit 1; }
  sudo=sudo
fi
echo "install-debian-deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
