# Stops the configure when the compiler miscompiles the found Kokkos' default Views (the probe's
# comment, cmake/probes/default_views.cpp, says how): g++ 12.2-12.5 with Kokkos' new View without
# the workarounds of kokkos#8223 (July 2025, g++ 12.2-12.4) and #9262 (June 2026, g++ 12.5).
# Building would succeed and every GEMM would crash at its first run with a segmentation fault inside SharedAllocationRecord::decrement, so
# the user is told here, with the ways out. Skipped (with a note) when cross-compiling, when there
# is no usable Kokkos::kokkos target (Debian's Kokkos 3.4 has only the legacy View), and when the
# probe does not compile or cannot start. The probe calls no Kokkos function that needs a device,
# so for CUDA/HIP it runs wherever the GPU driver's library is installed.
function(meshslice_probe_default_views)
  if(CMAKE_CROSSCOMPILING)
    message(STATUS "meshslice: cross-compiling; default Views not probed")
    return()
  endif()
  _meshslice_target_usable(Kokkos::kokkos usable)
  if(NOT usable)
    message(STATUS "meshslice: no usable Kokkos::kokkos target; default Views not probed")
    return()
  endif()
  try_run(run_result compiled ${CMAKE_BINARY_DIR}/probes/default_views
          ${CMAKE_CURRENT_LIST_DIR}/probes/default_views.cpp
          LINK_LIBRARIES Kokkos::kokkos
          COMPILE_OUTPUT_VARIABLE compile_output RUN_OUTPUT_VARIABLE run_output)
  if(NOT compiled)
    message(STATUS "meshslice: the default-View probe did not compile; not probed")
    return()
  endif()
  # A CUDA/HIP Kokkos needs the GPU driver's library to start at all (exit 127 from the loader on
  # a build machine without one): that says nothing about the compiler.
  if(run_result EQUAL 127 OR run_output MATCHES "error while loading shared libraries")
    message(STATUS "meshslice: the default-View probe cannot start here (no GPU driver?); "
                   "not probed")
    return()
  endif()
  if(NOT run_result EQUAL 0)
    message(FATAL_ERROR
      "meshslice: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} miscompiles Kokkos "
      "${Kokkos_VERSION}'s View: a default-constructed View in an array is left with a zeroed "
      "reference-count tracker (the probe cmake/probes/default_views.cpp ended with "
      "'${run_result}'), so meshslice would crash in SharedAllocationRecord::decrement at its "
      "first GEMM. This is a g++ 12.2-12.5 bug with Kokkos' new (mdspan) View, worked around in "
      "Kokkos by kokkos#8223 (July 2025, g++ 12.2-12.4) and kokkos#9262 (June 2026, g++ 12.5). "
      "Use a Kokkos with the workaround, another compiler (g++ >= 13 or clang), or for Kokkos "
      "4.x the legacy View (Kokkos_ENABLE_IMPL_VIEW_LEGACY=ON).")
  endif()
  message(STATUS "meshslice: default Views are built correctly (${CMAKE_CXX_COMPILER_ID} "
                 "${CMAKE_CXX_COMPILER_VERSION}, Kokkos ${Kokkos_VERSION})")
endfunction()
