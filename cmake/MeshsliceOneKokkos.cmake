# One Kokkos per process. Teuchos and KokkosKernels may be linked against a Kokkos library of
# their own: Debian's libtrilinos_teuchoscore needs Debian's Kokkos 3.4. Building meshslice
# against another Kokkos (say 4.6 with -DKokkos_ROOT=...) then loads two Kokkos libraries into
# every process, ~390 symbol names in common, resolved by load order: it can pass the tests and
# still be wrong. This compares the shared Kokkos core library each of them needs (ELF NEEDED)
# with the one meshslice links (its SONAME) and stops the configure when they differ.
# -DMESHSLICE_ALLOW_TWO_KOKKOS=ON turns the error into a warning. The spack environment avoids
# the problem at the root: its Trilinos is built ~kokkos, so Teuchos needs no Kokkos at all.
# Needs readelf (binutils); skipped with a note where there is none or libraries are static.

option(MESHSLICE_ALLOW_TWO_KOKKOS
       "Configure even when Teuchos or KokkosKernels needs another Kokkos library than meshslice" OFF)

# Sets ${out} to the SONAME of the ELF shared library `lib` and ${out_needed} to its NEEDED list.
function(_meshslice_elf_names lib out out_needed)
  execute_process(COMMAND ${CMAKE_READELF} -d ${lib} OUTPUT_VARIABLE dynamic ERROR_QUIET)
  string(REGEX MATCH "\\(SONAME\\)[^[]*\\[([^]]*)\\]" _ "${dynamic}")
  set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  string(REGEX MATCHALL "\\(NEEDED\\)[^[]*\\[[^]]*\\]" entries "${dynamic}")
  set(needed "")
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE ".*\\[(.*)\\]" "\\1" name "${entry}")
    list(APPEND needed ${name})
  endforeach()
  set(${out_needed} "${needed}" PARENT_SCOPE)
endfunction()

# meshslice_check_one_kokkos(KOKKOS_LIBRARY <kokkoscore library meshslice links>
#                            USERS <name>=<library> ...)
# Fails (or warns) when a USERS library needs a Kokkos core library other than KOKKOS_LIBRARY.
# A function of library paths only, so tests/install/ can check it on libraries it makes.
function(meshslice_check_one_kokkos)
  cmake_parse_arguments(arg "" "KOKKOS_LIBRARY" "USERS" ${ARGN})
  if(NOT CMAKE_READELF)
    message(STATUS "meshslice: no readelf; not checked that Teuchos and meshslice share one Kokkos")
    return()
  endif()
  set(ours "a static Kokkos")
  if(arg_KOKKOS_LIBRARY MATCHES "\\.so")
    _meshslice_elf_names(${arg_KOKKOS_LIBRARY} ours _)
  endif()
  foreach(user IN LISTS arg_USERS)
    string(REGEX REPLACE "=.*" "" name "${user}")
    string(REGEX REPLACE "^[^=]*=" "" lib "${user}")
    if(NOT lib MATCHES "\\.so")
      continue()  # a static library carries no NEEDED list
    endif()
    _meshslice_elf_names(${lib} _ needed)
    foreach(dependency IN LISTS needed)
      if(dependency MATCHES "kokkoscore" AND NOT dependency STREQUAL ours)
        set(text "${name} (${lib}) is linked against the Kokkos library ${dependency}, but "
                 "meshslice would use ${ours} (${arg_KOKKOS_LIBRARY}): every process would load "
                 "two Kokkos libraries. Use the ${name} built with meshslice's Kokkos (the spack "
                 "environment in spack.yaml builds Teuchos without Kokkos), or the Kokkos "
                 "${name} was built with (drop -DKokkos_ROOT/-DKokkos_DIR). "
                 "-DMESHSLICE_ALLOW_TWO_KOKKOS=ON configures anyway.")
        string(CONCAT text ${text})
        if(MESHSLICE_ALLOW_TWO_KOKKOS)
          message(WARNING "meshslice: ${text}")
        else()
          message(FATAL_ERROR "meshslice: ${text}")
        endif()
      endif()
    endforeach()
  endforeach()
  message(STATUS "meshslice: one Kokkos (${ours}) for meshslice, Teuchos and KokkosKernels")
endfunction()

# The libraries of the packages found by cmake/MeshsliceDependencies.cmake: found next to each
# package's CMake directory (<prefix>/lib/cmake/<Pkg> -> <prefix>/lib), where Debian and spack
# both put them, or in its <Pkg>_LIBRARY_DIRS.
function(_meshslice_package_library pkg out)
  find_library(found NAMES ${ARGN} NO_CACHE NO_DEFAULT_PATH
               HINTS ${${pkg}_LIBRARY_DIRS} ${${pkg}_DIR}/../.. ${${pkg}_DIR}/../../..)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

function(meshslice_check_found_kokkos)
  _meshslice_package_library(Kokkos kokkos_lib kokkoscore trilinos_kokkoscore)
  _meshslice_package_library(Teuchos teuchos_lib teuchoscore trilinos_teuchoscore)
  _meshslice_package_library(KokkosKernels kernels_lib kokkoskernels trilinos_kokkoskernels)
  if(NOT kokkos_lib)
    message(STATUS "meshslice: Kokkos core library not found next to ${Kokkos_DIR}; "
                   "not checked that Teuchos and meshslice share one Kokkos")
    return()
  endif()
  set(users "")
  if(teuchos_lib)
    list(APPEND users "Teuchos=${teuchos_lib}")
  endif()
  if(kernels_lib)
    list(APPEND users "KokkosKernels=${kernels_lib}")
  endif()
  meshslice_check_one_kokkos(KOKKOS_LIBRARY ${kokkos_lib} USERS ${users})
endfunction()
