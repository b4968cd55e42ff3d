# The facts src/core/version.cpp reports (meshslice --version, OUT/version.json), generated into
# <build>/generated/ for the target given to meshslice_add_version_info():
#   meshslice_build_info.hpp  at configure time: project version, build type, compiler and the
#                             KokkosKernels version CMake found (its header has none before 3.7);
#   meshslice_revision.hpp    at every build: the git revision of the source tree. Rewritten
#                             only when it changes, so a new commit shows without reconfiguring
#                             and an unchanged one recompiles nothing.
# Where the source is not a git checkout (a tarball), -DMESHSLICE_GIT_REVISION=... names it.

set(MESHSLICE_GIT_REVISION "" CACHE STRING
    "Revision to report when the source tree is not a git checkout (default: unknown)")

function(meshslice_add_version_info target)
  set(generated ${PROJECT_BINARY_DIR}/generated)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/meshslice_build_info.hpp.in
                 ${generated}/meshslice_build_info.hpp @ONLY)
  add_custom_target(meshslice_revision
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DOUTPUT=${generated}/meshslice_revision.hpp
            "-DFALLBACK=${MESHSLICE_GIT_REVISION}"
            -P ${PROJECT_SOURCE_DIR}/cmake/MeshsliceRevision.cmake
    BYPRODUCTS ${generated}/meshslice_revision.hpp
    COMMENT "meshslice: git revision"
    VERBATIM)
  add_dependencies(${target} meshslice_revision)
  target_include_directories(${target} PRIVATE ${generated})
endfunction()
