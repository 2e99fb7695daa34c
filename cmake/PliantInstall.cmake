# `cmake --install`: the layer libraries, the public headers and the CMake package (pliantConfig.cmake,
# its version file and the exported targets pliant::*), so another project can
# find_package(pliant CONFIG REQUIRED) and link pliant::pliant. The CLI installs itself (apps/).
include(CMakePackageConfigHelpers)

get_property(libraries GLOBAL PROPERTY PLIANT_LIBRARIES)
install(TARGETS ${libraries} EXPORT pliantTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pliant DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/pliant)
install(EXPORT pliantTargets NAMESPACE pliant:: DESTINATION ${config_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pliantConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pliantConfig.cmake INSTALL_DESTINATION ${config_dir})
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pliantConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pliantConfig.cmake ${PROJECT_BINARY_DIR}/pliantConfigVersion.cmake
        DESTINATION ${config_dir})
