# ScaLAPACK PxGEMM baseline against a serial GEMM, on every test mesh. Only built when the
# library was found (cmake/MeshsliceScalapack.cmake defines MESHSLICE_HAVE_SCALAPACK then).
get_target_property(_meshslice_definitions meshslice INTERFACE_COMPILE_DEFINITIONS)
if(NOT "${_meshslice_definitions}" MATCHES "MESHSLICE_HAVE_SCALAPACK")
  return()
endif()

add_executable(meshslice-test-scalapack test_scalapack.cpp)
target_link_libraries(meshslice-test-scalapack PRIVATE meshslice_mpi_test_main meshslice_warnings)

# "ranks dp,pp,rows,cols"; 2,1,2,2 runs two independent grids side by side (one per dp group).
set(MESHSLICE_SCALAPACK_MESHES "1 1,1,1,1" "4 1,1,1,4" "4 1,1,4,1" "4 1,1,2,2" "6 1,1,2,3"
    "6 1,1,3,2" "8 1,1,2,4" "8 2,1,2,2")
meshslice_mpi_test_on_meshes(scalapack meshslice-test-scalapack ${MESHSLICE_SCALAPACK_MESHES})
