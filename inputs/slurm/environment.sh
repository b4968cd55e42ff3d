# Sourced by the Slurm scripts beside this file, which are submitted from the repository root:
# the environment a batch job needs to find meshslice-train, -bench, -sim and their libraries.
# Keep ONE of (a), (b), (c) and comment out the others.

# (a) The spack environment of this repository (spack.yaml): `spack install` in it put the apps
#     on the environment's view. Batch shells do not read spack's shell support by themselves.
. "${SPACK_ROOT:-$HOME/spack}/share/spack/setup-env.sh"
spack env activate -d "${SLURM_SUBMIT_DIR:-$PWD}"

# (b) Modules: made from that environment (spack module tcl refresh) or provided by the site.
# module load openmpi meshslice

# (c) A CMake build tree of this repository (build/bin), built against the site's modules.
# module load openmpi kokkos kokkos-kernels trilinos
# export PATH="${SLURM_SUBMIT_DIR:-$PWD}/build/bin:$PATH"

# OpenMPI built by spack starts under srun through PMIx; where `srun --mpi=list` shows that
# pmix is not the default:
# export SLURM_MPI_TYPE=pmix

# One BLAS thread per rank (the ranks already fill the cores); Kokkos' OpenMP backend gets the
# cores of --cpus-per-task, pinned.
export OPENBLAS_NUM_THREADS=1
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=spread OMP_PLACES=threads

command -v meshslice-train >/dev/null ||
  { echo "meshslice-train is not on PATH: edit inputs/slurm/environment.sh" >&2; exit 1; }
meshslice-train --version  # the build this job runs, at the top of its log
