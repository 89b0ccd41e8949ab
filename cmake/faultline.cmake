# Project-wide helpers: the private warnings target and one-line test registration.

include(GNUInstallDirs)  # CMAKE_INSTALL_INCLUDEDIR in the targets' install interfaces (faultline-install.cmake)

add_library(faultline_warnings INTERFACE)
target_compile_options(faultline_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual
  $<$<BOOL:${FAULTLINE_WERROR}>:-Werror>)
# GCC 12 at -O3 inlines std::string's operator+ and aggregate copies into false -Wrestrict and
# -Wmaybe-uninitialized reports (GCC bug 105329 and kin). Off in Release only: the default preset
# (-O2, -Werror, run by CI) still reports both.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(faultline_warnings INTERFACE
    $<$<CONFIG:Release>:-Wno-restrict -Wno-maybe-uninitialized>)
endif()

# faultline_add_test(<name> SOURCES <files...> LIBS <targets...>)
# One GoogleTest executable per module; every TEST becomes its own ctest entry.
function(faultline_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main faultline_warnings)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 120)
endfunction()

# faultline_add_bench(<name> SOURCES <files...> LIBS <targets...>)
function(faultline_add_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark faultline_warnings)
endfunction()

# faultline_add_registering_library(<name> ALIAS <alias> SOURCES <files...>)
# A library whose files register themselves with core::registry (core/registry.hpp) through static
# objects nothing references. The sources go into <name>_impl; <name> is an interface target that
# links it with the WHOLE_ARCHIVE feature, so every executable using <alias> keeps those objects.
# Set include directories and links on <name>_impl.
function(faultline_add_registering_library name)
  cmake_parse_arguments(ARG "" "ALIAS" "SOURCES" ${ARGN})
  add_library(${name}_impl STATIC ${ARG_SOURCES})
  target_compile_features(${name}_impl PUBLIC cxx_std_20)
  add_library(${name} INTERFACE)
  add_library(${ARG_ALIAS} ALIAS ${name})
  # Installed, the archive is the exported faultline::<short>_impl (faultline-install.cmake names it).
  string(REGEX REPLACE "^faultline_" "" short_name "${name}")
  target_link_libraries(${name} INTERFACE
    "$<BUILD_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,${name}_impl>>"
    "$<INSTALL_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,faultline::${short_name}_impl>>")
endfunction()
