# Sourced by the scripts that launch MPI jobs on a workstation or in CI.
# OpenMPI refuses to run as root without these two variables, and needs oversubscription to
# start more ranks than cores. One OpenBLAS thread per rank: ranks already fill the cores; and
# for a Kokkos with the OpenMP backend one OpenMP thread, not bound (the launcher places ranks).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
MESHSLICE_MPIEXEC_FLAGS=""
if mpiexec --version 2>/dev/null | grep -qE "Open MPI|OpenRTE"; then
  MESHSLICE_MPIEXEC_FLAGS="--oversubscribe"
fi
export MESHSLICE_MPIEXEC_FLAGS
