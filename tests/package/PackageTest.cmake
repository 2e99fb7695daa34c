# The ctest tests package.*: Pliant used by another project (tests/package/consumer).
#   MODE=installed   `cmake --install` this build into WORK/prefix, then configure, build and run the
#                    consumer against it with find_package(pliant CONFIG REQUIRED).
#   MODE=subproject  configure the consumer with add_subdirectory(<repository>): the targets exist,
#                    and no tests, benchmarks or apps come with them (building it would compile the
#                    whole library again, which the installed case already proves links).
# Usage: cmake -DMODE=... -DSOURCE_DIR=<repository> -DBUILD_DIR=<this build> -DWORK=<scratch folder>
#              -DGENERATOR=... -DCXX_COMPILER=... [-DBUILD_TYPE=...] -P PackageTest.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var IN ITEMS MODE SOURCE_DIR BUILD_DIR WORK GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "PackageTest.cmake: pass -D${var}=...")
  endif()
endforeach()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "package test: ${what} failed (${result})")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(consumer ${SOURCE_DIR}/tests/package/consumer)
if(MODE STREQUAL "installed")
  run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix)
  foreach(file IN ITEMS include/pliant/pliant.h bin/pliant)
    if(NOT EXISTS ${WORK}/prefix/${file})
      message(FATAL_ERROR "package test: the install has no ${file}")
    endif()
  endforeach()
  # The consumer sees the installed prefix only, not this build's package registry or sources.
  run("configure the consumer" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK}/build -G ${GENERATOR}
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${WORK}/prefix
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  run("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/build)
  run("run the consumer" ${WORK}/build/rope)
  run("run the installed CLI" ${WORK}/prefix/bin/pliant --version)
elseif(MODE STREQUAL "subproject")
  run("configure the consumer with add_subdirectory" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK}/build -G ${GENERATOR}
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DPLIANT_SOURCE_DIR=${SOURCE_DIR})
else()
  message(FATAL_ERROR "PackageTest.cmake: MODE is installed or subproject, not ${MODE}")
endif()
