# Script (cmake -P) behind the consumer tests. cpp_consumer_against_installed_package: installs the
# build into a fresh prefix inside the build tree, then configures, builds and tests
# examples/cpp-consumer with find_package(faultline) pointed at that prefix only. With
# -DFAULTLINE_SOURCE_DIR (cpp_consumer_with_fetchcontent) nothing is installed: the consumer fetches
# that checkout with FetchContent. Any step failing fails the test with its output.
foreach(var FAULTLINE_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CMAKE_GENERATOR CMAKE_CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer-test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${name}: ok")
endfunction()

if(DEFINED FAULTLINE_SOURCE_DIR)
  set(where -DFAULTLINE_SOURCE_DIR=${FAULTLINE_SOURCE_DIR})
  # Only the consumer's own program: faultline's other targets are in the build but not its business.
  set(build_targets --target backoff_schedule)
else()
  step("install into ${prefix}" ${CMAKE_COMMAND} --install ${FAULTLINE_BUILD_DIR} --prefix ${prefix})
  set(where -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  set(build_targets)
endif()
# The consumer compiles and links with the build's own flags: the libraries of a sanitizer build need
# the sanitizer runtimes in the program that links them.
step("configure the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build
     -G ${CMAKE_GENERATOR} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DCMAKE_BUILD_TYPE=RelWithDebInfo
     "-DCMAKE_CXX_FLAGS=${FAULTLINE_CXX_FLAGS}" ${where})
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2 ${build_targets})
step("test the consumer" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure)
