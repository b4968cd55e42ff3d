# ScaLAPACK, for the PxGEMM baseline of meshslice-bench (src/gemm/scalapack_gemm.*).
# Included from src/CMakeLists.txt after the meshslice target exists. Optional: when the option
# is off or no library is found, meshslice builds without it and scalapack_gemm() throws a
# UserError that says how to get it.
#
# Debian ships one ScaLAPACK per MPI (libscalapack-openmpi.so, libscalapack-mpich.so), each with
# BLACS inside and linked to its MPI, LAPACK and BLAS; spack's netlib-scalapack is a plain
# libscalapack.so. The one matching the MPI we build with is searched first, because mixing
# OpenMPI and MPICH in one process fails at run time, not at link time. A static archive does not
# carry its dependencies, so LAPACK/BLAS and the Fortran runtime are added for it.
# To use another build (MKL, Cray LibSci), set MESHSLICE_SCALAPACK_LIBRARY to the library.

option(MESHSLICE_SCALAPACK "Build the ScaLAPACK PxGEMM baseline (needs ScaLAPACK)" ON)

if(NOT MESHSLICE_SCALAPACK)
  message(STATUS "meshslice: ScaLAPACK baseline disabled (MESHSLICE_SCALAPACK=OFF)")
  return()
endif()

if("${MPI_CXX_LIBRARIES};${MPI_CXX_INCLUDE_DIRS}" MATCHES "mpich")
  set(_meshslice_scalapack_names scalapack-mpich scalapack scalapack-openmpi)
else()
  set(_meshslice_scalapack_names scalapack-openmpi scalapack scalapack-mpich)
endif()
find_library(MESHSLICE_SCALAPACK_LIBRARY NAMES ${_meshslice_scalapack_names}
             PATH_SUFFIXES ${CMAKE_LIBRARY_ARCHITECTURE}
             DOC "ScaLAPACK library (with BLACS) for the PxGEMM baseline")

if(NOT MESHSLICE_SCALAPACK_LIBRARY)
  message(STATUS "meshslice: ScaLAPACK not found; building without the PxGEMM baseline "
                 "(Debian: apt install libscalapack-openmpi-dev, then reconfigure)")
  return()
endif()

set(_meshslice_scalapack_libs ${MESHSLICE_SCALAPACK_LIBRARY})
if(MESHSLICE_SCALAPACK_LIBRARY MATCHES "\\.a$")
  find_package(LAPACK REQUIRED)
  list(APPEND _meshslice_scalapack_libs LAPACK::LAPACK gfortran)
endif()

target_link_libraries(meshslice PRIVATE ${_meshslice_scalapack_libs})
target_compile_definitions(meshslice PUBLIC MESHSLICE_HAVE_SCALAPACK=1)
message(STATUS "meshslice: ScaLAPACK baseline with ${MESHSLICE_SCALAPACK_LIBRARY}")
