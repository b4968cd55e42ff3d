# oneDNN, for the bf16 local GEMM's onednn route (src/gemm/local_gemm_bf16.*): on a CPU with AMX
# or AVX512-BF16 its bf16 matmul runs 3x OpenBLAS's float GEMM. Optional: without it the route is
# not built and the float_panels route (bf16 widened to float for the BLAS) serves every build.
# Debian: apt install libdnnl-dev. A GPU build leaves it out (its operands live on the device).
option(MESHSLICE_ONEDNN "Build the oneDNN bf16 GEMM route when oneDNN is found" ON)

if(NOT MESHSLICE_ONEDNN)
  message(STATUS "meshslice: oneDNN route disabled (MESHSLICE_ONEDNN=OFF)")
  return()
endif()
if(Kokkos_ENABLE_CUDA OR Kokkos_ENABLE_HIP)
  message(STATUS "meshslice: no oneDNN route in a GPU build")
  return()
endif()

find_path(MESHSLICE_ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.hpp DOC "oneDNN's headers")
find_library(MESHSLICE_ONEDNN_LIBRARY NAMES dnnl PATH_SUFFIXES ${CMAKE_LIBRARY_ARCHITECTURE}
             DOC "oneDNN's library")
if(NOT MESHSLICE_ONEDNN_INCLUDE_DIR OR NOT MESHSLICE_ONEDNN_LIBRARY)
  message(STATUS "meshslice: oneDNN not found; the bf16 GEMM runs through float panels only "
                 "(Debian: apt install libdnnl-dev, then reconfigure)")
  return()
endif()

target_include_directories(meshslice SYSTEM PRIVATE ${MESHSLICE_ONEDNN_INCLUDE_DIR})
target_link_libraries(meshslice PRIVATE ${MESHSLICE_ONEDNN_LIBRARY})
target_compile_definitions(meshslice PUBLIC MESHSLICE_HAVE_ONEDNN=1)
message(STATUS "meshslice: oneDNN bf16 GEMM route with ${MESHSLICE_ONEDNN_LIBRARY}")
