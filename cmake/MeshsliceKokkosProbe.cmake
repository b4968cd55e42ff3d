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

# Sets OUT_DEFINITIONS to the compile definitions meshslice and its users must be built with so
# that a CUDA kernel receives a Kokkos View as the host laid it out (empty when none are needed).
# nvcc 12.9 and later drop the [[no_unique_address]] members of Kokkos' new View (its mdspan
# accessors) from a kernel's parameter buffer although the host object keeps their bytes: every
# kernel given a rank-1 View reads its pointer and extent from the wrong bytes, writes zeros or
# far outside its allocation, and nothing reports it (cmake/probes/view_kernel_argument.cpp; seen
# with the Kokkos of June 2025 and CUDA 13.0 on an H200; fixed in kokkos/mdspan#435, November
# 2025). mdspan's own switch turns the attribute off: the host's bytes do not change (a View's
# bytes were compared with and without it), so the Kokkos and KokkosKernels libraries already
# built stay compatible. The probe compiles and reads PTX only: no GPU is needed.
function(meshslice_probe_view_kernel_arguments out_definitions)
  set(${out_definitions} "" PARENT_SCOPE)
  _meshslice_target_usable(Kokkos::kokkos usable)
  if(NOT Kokkos_ENABLE_CUDA OR NOT usable)
    return()
  endif()
  set(workaround MDSPAN_IMPL_USE_ATTRIBUTE_NO_UNIQUE_ADDRESS=1 MDSPAN_IMPL_NO_UNIQUE_ADDRESS=)
  _meshslice_view_argument_bytes(plain device host)
  if(NOT device OR NOT host)
    message(STATUS "meshslice: the View kernel-argument probe gave no PTX; not probed")
    return()
  endif()
  if(device EQUAL host)
    message(STATUS "meshslice: CUDA kernels receive Views as the host lays them out "
                   "(${host} bytes)")
    return()
  endif()
  _meshslice_view_argument_bytes(workaround fixed_device fixed_host ${workaround})
  if(NOT fixed_device EQUAL fixed_host)
    message(FATAL_ERROR
      "meshslice: nvcc passes a ${host}-byte Kokkos View to a kernel as ${device} bytes, also "
      "with [[no_unique_address]] turned off (${fixed_device} of ${fixed_host}): kernels would "
      "read wrong pointers. Use a Kokkos with kokkos/mdspan#435 (November 2025) or a CUDA "
      "before 12.9.")
  endif()
  list(JOIN workaround " " shown)
  message(STATUS "meshslice: nvcc passes a ${host}-byte Kokkos View to a kernel as ${device} "
                 "bytes (kokkos/mdspan#435); building with ${shown}, which fixes it")
  set(${out_definitions} ${workaround} PARENT_SCOPE)
endfunction()

# The probe kernel's parameter size (DEVICE_VAR) and the sizeof it stores (HOST_VAR), read from
# the PTX that nvcc keeps; both empty if the probe did not compile. ARGN: compile definitions.
function(_meshslice_view_argument_bytes name device_var host_var)
  set(dir ${CMAKE_BINARY_DIR}/probes/view_kernel_argument_${name})
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir}/keep)
  set(flags --keep --keep-dir=${dir}/keep)
  foreach(definition IN LISTS ARGN)
    list(APPEND flags -D${definition})
  endforeach()
  try_compile(compiled ${dir}/build SOURCES ${CMAKE_CURRENT_LIST_DIR}/probes/view_kernel_argument.cpp
              LINK_LIBRARIES Kokkos::kokkos COMPILE_DEFINITIONS ${flags})
  set(device "")
  set(host "")
  file(GLOB ptx_files ${dir}/keep/*.ptx)
  foreach(ptx IN LISTS ptx_files)
    file(STRINGS ${ptx} lines REGEX "meshslice_probe_view_argument.*_param_0\\[|mov\\.u64")
    foreach(line IN LISTS lines)
      if(line MATCHES "meshslice_probe_view_argument.*_param_0\\[([0-9]+)\\]")
        set(device ${CMAKE_MATCH_1})
      elseif(line MATCHES "mov\\.u64[ \t]+%rd[0-9]+, (15925[0-9][0-9][0-9][0-9][0-9]);")
        math(EXPR bytes "${CMAKE_MATCH_1} - 1592590336")  # 0x5eed0000 marks the constant
        if(bytes GREATER 0 AND bytes LESS 4096)
          set(host ${bytes})
        endif()
      endif()
    endforeach()
  endforeach()
  set(${device_var} ${device} PARENT_SCOPE)
  set(${host_var} ${host} PARENT_SCOPE)
endfunction()
