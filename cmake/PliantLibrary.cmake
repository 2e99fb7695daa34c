# pliant_library(TARGET EXPORT_NAME SOURCES...): one layer's library. Its public headers are under
# include/pliant/; it is pliant::EXPORT_NAME in this build (add_subdirectory, FetchContent) and in
# the installed package (find_package(pliant)); warnings as the project's (pliant_warnings).
function(pliant_library target export_name)
  add_library(${target} ${ARGN})
  add_library(pliant::${export_name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:pliant_warnings>)
  set_property(GLOBAL APPEND PROPERTY PLIANT_LIBRARIES ${target})
endfunction()
