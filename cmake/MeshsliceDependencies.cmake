# Finds Kokkos, KokkosKernels, Teuchos and MPI and exposes them as three stable targets:
#   meshslice::kokkos  meshslice::kokkoskernels  meshslice::teuchos
# Two very different installs must work:
#   * Kokkos 4.x / Trilinos from spack: proper imported targets (Kokkos::kokkos, ...).
#   * Debian 12's Trilinos 13.2 packages (Kokkos 3.4): Kokkos::kokkos points its include path at
#     <prefix>/include (the headers live in <prefix>/include/trilinos) and there is no
#     Kokkos::kokkoskernels target, but the <Pkg>_INCLUDE_DIRS / <Pkg>_LIBRARIES variables are right.
# The quirk is handled here once; targets elsewhere only link the meshslice:: names.

find_package(MPI REQUIRED COMPONENTS CXX)
find_package(Kokkos REQUIRED)
find_package(KokkosKernels REQUIRED)
find_package(Teuchos REQUIRED)

# True when TARGET exists and every include directory it advertises exists on disk.
function(_meshslice_target_usable target out)
  set(usable FALSE)
  if(TARGET ${target})
    set(usable TRUE)
    get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(dirs)
      foreach(dir IN LISTS dirs)
        if(NOT dir MATCHES "^\\$<" AND NOT EXISTS "${dir}")
          set(usable FALSE)
        endif()
      endforeach()
    endif()
  endif()
  set(${out} ${usable} PARENT_SCOPE)
endfunction()

# Creates meshslice::<name> from the first usable candidate target, else from the variables
# <pkg>_INCLUDE_DIRS, <pkg>_LIBRARY_DIRS, <pkg>_LIBRARIES and <pkg>_TPL_LIBRARIES.
function(_meshslice_import name pkg)
  add_library(meshslice_dep_${name} INTERFACE)
  add_library(meshslice::${name} ALIAS meshslice_dep_${name})
  foreach(candidate IN LISTS ARGN)
    _meshslice_target_usable(${candidate} usable)
    if(usable)
      target_link_libraries(meshslice_dep_${name} INTERFACE ${candidate})
      message(STATUS "meshslice: ${name} from target ${candidate}")
      return()
    endif()
  endforeach()
  target_include_directories(meshslice_dep_${name} SYSTEM INTERFACE ${${pkg}_INCLUDE_DIRS} ${${pkg}_TPL_INCLUDE_DIRS})
  set(libs "")
  foreach(lib IN LISTS ${pkg}_LIBRARIES)
    if(TARGET ${lib} OR IS_ABSOLUTE "${lib}")
      list(APPEND libs ${lib})
    else()
      find_library(_lib_${lib} NAMES ${lib} HINTS ${${pkg}_LIBRARY_DIRS} ${${pkg}_INSTALL_DIR}/lib
                   PATH_SUFFIXES ${CMAKE_LIBRARY_ARCHITECTURE} NO_CACHE)
      if(NOT _lib_${lib})
        message(FATAL_ERROR "meshslice: library ${lib} of ${pkg} not found (looked in ${${pkg}_LIBRARY_DIRS})")
      endif()
      list(APPEND libs ${_lib_${lib}})
    endif()
  endforeach()
  # Shared-library TPLs only: Debian lists a static libdl.a that must not be linked into shared code.
  foreach(tpl IN LISTS ${pkg}_TPL_LIBRARIES)
    if(NOT tpl MATCHES "\\.a$")
      list(APPEND libs ${tpl})
    endif()
  endforeach()
  target_link_libraries(meshslice_dep_${name} INTERFACE ${libs} ${CMAKE_DL_LIBS})
  message(STATUS "meshslice: ${name} from variables ${pkg}_INCLUDE_DIRS/${pkg}_LIBRARIES")
endfunction()

_meshslice_import(kokkos Kokkos Kokkos::kokkos)
_meshslice_import(kokkoskernels KokkosKernels Kokkos::kokkoskernels KokkosKernels::kokkoskernels)
_meshslice_import(teuchos Teuchos Teuchos::all_libs)
target_link_libraries(meshslice_dep_kokkoskernels INTERFACE meshslice::kokkos)
target_link_libraries(meshslice_dep_teuchos INTERFACE MPI::MPI_CXX)

message(STATUS "meshslice: Kokkos ${Kokkos_VERSION}, KokkosKernels ${KokkosKernels_VERSION}, Teuchos ${Teuchos_VERSION}")

# Exported with the library (cmake/MeshsliceInstall.cmake) as meshslice::kokkos & co., so that
# a project using find_package(meshslice) links exactly what meshslice was built with.
set_target_properties(meshslice_dep_kokkos PROPERTIES EXPORT_NAME kokkos)
set_target_properties(meshslice_dep_kokkoskernels PROPERTIES EXPORT_NAME kokkoskernels)
set_target_properties(meshslice_dep_teuchos PROPERTIES EXPORT_NAME teuchos)

include(MeshsliceOneKokkos)
meshslice_check_found_kokkos()
include(MeshsliceKokkosProbe)
meshslice_probe_default_views()
# Exported with meshslice::kokkos: a user's kernels receive Views as meshslice's do.
meshslice_probe_view_kernel_arguments(view_argument_definitions)
if(view_argument_definitions)
  target_compile_definitions(meshslice_dep_kokkos INTERFACE ${view_argument_definitions})
endif()
