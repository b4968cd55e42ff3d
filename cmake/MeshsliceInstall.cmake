# `cmake --install build --prefix P` (or spack install) lays meshslice out as
#   P/bin/meshslice-{train,bench,sim,tune,data}
#   P/lib/libmeshslice.a, libmeshslice_hardware.a
#   P/include/meshslice/{core,mesh,comm,exec,gemm,sim,pipeline,tune,model,checkpoint,...}/*.hpp
#   P/lib/cmake/meshslice/meshsliceConfig.cmake (+ targets, version)
#   P/share/meshslice/inputs/ (decks, Slurm scripts), P/share/meshslice/machines/ (machines)
# Headers go under include/meshslice/ because they are included as "core/app.hpp" & co.:
# generic folder names must not land in a shared prefix's include/.
# A downstream project:  find_package(meshslice REQUIRED)
#                        target_link_libraries(app PRIVATE meshslice::meshslice)
include(CMakePackageConfigHelpers)

set(MESHSLICE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/meshslice)

# hardware/CMakeLists.txt gives its include directory as a source-tree path, which cannot be
# exported; the installed copy lives with the other headers.
set_target_properties(meshslice_hardware PROPERTIES
  EXPORT_NAME hardware
  INTERFACE_INCLUDE_DIRECTORIES
    "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/hardware/include>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/meshslice>")
set_target_properties(meshslice_warnings PROPERTIES EXPORT_NAME warnings)

install(TARGETS meshslice-train meshslice-bench meshslice-sim meshslice-tune meshslice-data
                meshslice-export
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/apps/flight_report/meshslice-flight-report
        DESTINATION ${CMAKE_INSTALL_BINDIR})
# meshslice_warnings and the meshslice_dep_* wrappers travel with the library: the static
# library's link interface names them.
install(TARGETS meshslice meshslice_hardware meshslice_warnings
                meshslice_dep_kokkos meshslice_dep_kokkoskernels meshslice_dep_teuchos
        EXPORT meshsliceTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/ ${PROJECT_SOURCE_DIR}/hardware/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/meshslice
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs ${PROJECT_SOURCE_DIR}/hardware/machines
        DESTINATION ${MESHSLICE_INSTALL_DATADIR})

install(EXPORT meshsliceTargets NAMESPACE meshslice:: DESTINATION ${MESHSLICE_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/meshsliceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/meshsliceConfig.cmake INSTALL_DESTINATION ${MESHSLICE_INSTALL_CMAKEDIR})
# 0.x: a minor release may break the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/meshsliceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/meshsliceConfig.cmake
              ${PROJECT_BINARY_DIR}/meshsliceConfigVersion.cmake
        DESTINATION ${MESHSLICE_INSTALL_CMAKEDIR})
