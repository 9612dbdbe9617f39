# What `cmake --install` puts where (GNUInstallDirs), and the CMake package
# that lets another project use collbench's libraries:
#   find_package(collbench) + target_link_libraries(app collbench::collbench)
# from an install prefix (CMAKE_PREFIX_PATH) or from this build tree
# (collbench_DIR=<build dir>), as fmt does. Included after every library and
# tool is defined.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(COLLBENCH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/collbench)

# Three export sets, so that a consumer gets only what it asks for: the
# MPI-free layers (collbench::core, transport, collectives, catalog) always;
# the MPI layers and collbench::collbench, which need MPI, unless only other
# components are asked for (COMPONENTS models needs no MPI); the models
# (collbench::models, the only one that needs Eigen) only when asked for.
# Export names are the aliases the tree itself links (collbench::catalog...).
# The libraries' two INTERFACE helpers are exported because the libraries link
# them: collbench_sanitize PUBLIC (empty unless COLLBENCH_SANITIZE=ON, and then
# a consumer of the sanitized static libraries needs its -fsanitize link
# flags), collbench_warnings PRIVATE, which a static library exports as
# $<LINK_ONLY:...>: its compile options never reach a consumer.
set_target_properties(collbench_sanitize PROPERTIES EXPORT_NAME sanitize)
set_target_properties(collbench_warnings PROPERTIES EXPORT_NAME warnings)
set(collbench_base_targets collbench_core collbench_transport collbench_collectives
                           collbench_sanitize collbench_warnings)
if(TARGET collbench_catalog)
  set_target_properties(collbench_catalog PROPERTIES EXPORT_NAME catalog)
  list(APPEND collbench_base_targets collbench_catalog)
endif()
set(collbench_mpi_targets collbench_transport_mpi collbench_transports collbench_collectives_mpi
                          collbench)
if(TARGET collbench_transport_ofi)
  list(APPEND collbench_mpi_targets collbench_transport_ofi)
endif()
install(TARGETS ${collbench_base_targets} EXPORT collbench-targets
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${collbench_mpi_targets} EXPORT collbench-mpi-targets
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(collbench_exports collbench-targets collbench-mpi-targets)
if(TARGET collbench_models)
  set_target_properties(collbench_models PROPERTIES EXPORT_NAME models)
  install(TARGETS collbench_models EXPORT collbench-models-targets
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  list(APPEND collbench_exports collbench-models-targets)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/collbench
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The tools. The models tools run scripts/plot.py from this source tree unless
# --plot-script says otherwise.
# COLLBENCH_INSTALLED_TOOLS: their targets, for the consumer test.
set(COLLBENCH_INSTALLED_TOOLS "")
foreach(tool collbench_exe collbench-catalog collbench-fit collbench-predict collbench-linkmatrix
             collbench-core-latency)
  if(TARGET ${tool})
    install(TARGETS ${tool})
    list(APPEND COLLBENCH_INSTALLED_TOOLS ${tool})
  endif()
endforeach()

# The same targets files, config and version file in the install prefix and
# at the top of the build tree.
foreach(export IN LISTS collbench_exports)
  install(EXPORT ${export} NAMESPACE collbench:: DESTINATION ${COLLBENCH_CMAKE_DIR})
  export(EXPORT ${export} NAMESPACE collbench:: FILE ${PROJECT_BINARY_DIR}/${export}.cmake)
endforeach()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/collbench-config.cmake.in
                              ${PROJECT_BINARY_DIR}/collbench-config.cmake
                              INSTALL_DESTINATION ${COLLBENCH_CMAKE_DIR})
# 0.x: a minor version may break the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/collbench-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/collbench-config.cmake
              ${PROJECT_BINARY_DIR}/collbench-config-version.cmake
        DESTINATION ${COLLBENCH_CMAKE_DIR})
