# Install and export rules: `cmake --install` puts the libraries, their headers and a relocatable
# CMake package (faultlineConfig.cmake + version file, targets as faultline::<name>) under the
# prefix; the `faultline` executable, its bash completion and man page come along only when faultline
# is the top-level project (a project that add_subdirectory()s or FetchContent()s it installs its
# own things, not ours). Included last from the top-level CMakeLists.txt.
option(FAULTLINE_INSTALL "Generate faultline's install rules (off when it is a subproject)" ${PROJECT_IS_TOP_LEVEL})
if(NOT FAULTLINE_INSTALL)
  return()
endif()
include(CMakePackageConfigHelpers)

set(FAULTLINE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/faultline"
    CACHE STRING "Where faultlineConfig.cmake is installed, relative to the prefix")

# The real targets behind the faultline::<name> aliases; a registering library's whole-archive
# interface target and its _impl archive are both exported, as faultline::<name> and <name>_impl.
set(faultline_exported_targets
  faultline_core faultline_asio faultline_asio_ssl faultline_retry faultline_retry_http faultline_config faultline_tls
  faultline_faults faultline_faults_impl faultline_record faultline_checks faultline_checks_impl
  faultline_server faultline_tcp faultline_tcp_impl faultline_drivers faultline_drivers_impl faultline_runner faultline_reports
  faultline_reports_impl faultline_score
  faultline_warnings)  # linked privately, so named (link-only, no flags) in the static libraries' interfaces
set(FAULTLINE_HAS_TESTING OFF)
if(TARGET faultline_testing)
  list(APPEND faultline_exported_targets faultline_testing)
  set(FAULTLINE_HAS_TESTING ON)
endif()
foreach(target IN LISTS faultline_exported_targets)
  string(REGEX REPLACE "^faultline_" "" export_name "${target}")
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
endforeach()

install(TARGETS ${faultline_exported_targets} EXPORT faultlineTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# A stripped install (`cmake --install --strip`, cpack) drops the static libraries' debug info, as
# Debian's dh_strip does: it is most of their size (47 MB of faultline-dev with it).
install(CODE "
  if(CMAKE_INSTALL_DO_STRIP)
    file(GLOB faultline_archives \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libfaultline_*.a\")
    foreach(archive IN LISTS faultline_archives)
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${archive}\" COMMAND_ERROR_IS_FATAL ANY)
    endforeach()
  endif()" COMPONENT development)

# Each module's public headers (include/faultline/<module>/) merge into one include/faultline/.
foreach(module_dir IN ITEMS core retry faults reports harness/config harness/tls harness/record harness/checks
                            harness/server harness/tcp harness/drivers harness/runner harness/score harness/testing)
  if(module_dir STREQUAL "harness/testing" AND NOT FAULTLINE_HAS_TESTING)
    continue()
  endif()
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${module_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          COMPONENT development)
endforeach()

install(EXPORT faultlineTargets NAMESPACE faultline:: DESTINATION ${FAULTLINE_INSTALL_CMAKEDIR}
        COMPONENT development)

set(FAULTLINE_BOOST_VERSION ${Boost_MAJOR_VERSION}.${Boost_MINOR_VERSION})
set(FAULTLINE_EXECUTABLE_PATH "${CMAKE_INSTALL_BINDIR}/faultline")
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/faultlineConfig.cmake.in
  ${PROJECT_BINARY_DIR}/faultlineConfig.cmake
  INSTALL_DESTINATION ${FAULTLINE_INSTALL_CMAKEDIR}
  PATH_VARS FAULTLINE_EXECUTABLE_PATH)
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/faultlineConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/faultlineConfig.cmake ${PROJECT_BINARY_DIR}/faultlineConfigVersion.cmake
        DESTINATION ${FAULTLINE_INSTALL_CMAKEDIR} COMPONENT development)

if(PROJECT_IS_TOP_LEVEL AND FAULTLINE_BUILD_CLI)
  install(TARGETS faultline RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/faultline.bash RENAME faultline
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/_faultline
          DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT runtime)
  install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/LICENSE
                ${PROJECT_SOURCE_DIR}/packaging/copyright
          DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
  # The help points here (cli/shipped_files.hpp), so an installed faultline's docs are on the machine.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime)
  # Scenarios, and the gRPC service configs they declare beside them.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/suites/ DESTINATION ${CMAKE_INSTALL_DATADIR}/faultline/suites
          COMPONENT runtime FILES_MATCHING PATTERN "*.toml" PATTERN "*.json")
  # score's timing controls for clients on Node.js and Python, run by the client's own interpreter.
  install(FILES ${PROJECT_SOURCE_DIR}/harness/score/controls/control.mjs
                ${PROJECT_SOURCE_DIR}/harness/score/controls/control.py
          DESTINATION ${CMAKE_INSTALL_DATADIR}/faultline/controls COMPONENT runtime)

  # The man page is generated from the built program's help (packaging/faultline-man.sh) and installed
  # gzipped, as Debian policy (§12.1) wants man pages; -n keeps the name and time out, so it is reproducible.
  find_program(FAULTLINE_HELP2MAN help2man)
  find_program(FAULTLINE_GZIP gzip)
  if(FAULTLINE_HELP2MAN AND FAULTLINE_GZIP)
    add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/faultline.1.gz
      COMMAND ${PROJECT_SOURCE_DIR}/packaging/faultline-man.sh $<TARGET_FILE:faultline> ${PROJECT_BINARY_DIR}/faultline.1
      COMMAND ${FAULTLINE_GZIP} -9nf ${PROJECT_BINARY_DIR}/faultline.1
      DEPENDS faultline ${PROJECT_SOURCE_DIR}/packaging/faultline-man.sh
      COMMENT "Generating faultline.1.gz from faultline --help")
    add_custom_target(faultline_man ALL DEPENDS ${PROJECT_BINARY_DIR}/faultline.1.gz)
    install(FILES ${PROJECT_BINARY_DIR}/faultline.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
  else()
    message(STATUS "help2man not found: no man page (scripts/install-deps.sh installs it)")
  endif()

  # faultline-scenario(5), the scenario and rules formats offline: a NAME section (for whatis)
  # and docs/scenarios.md through pandoc (links become plain text; no date: the page is reproducible).
  find_program(FAULTLINE_PANDOC pandoc)
  if(FAULTLINE_PANDOC AND FAULTLINE_GZIP)
    add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/faultline-scenario.5.gz
      COMMAND ${FAULTLINE_PANDOC} ${PROJECT_SOURCE_DIR}/packaging/faultline-scenario-name.md
              ${PROJECT_SOURCE_DIR}/docs/scenarios.md --standalone --to man
              --metadata title=faultline-scenario --metadata section=5
              --metadata "header=faultline scenario files" --metadata "footer=faultline ${PROJECT_VERSION}"
              --output ${PROJECT_BINARY_DIR}/faultline-scenario.5
      COMMAND ${FAULTLINE_GZIP} -9nf ${PROJECT_BINARY_DIR}/faultline-scenario.5
      DEPENDS ${PROJECT_SOURCE_DIR}/docs/scenarios.md ${PROJECT_SOURCE_DIR}/packaging/faultline-scenario-name.md
      COMMENT "Generating faultline-scenario.5.gz from docs/scenarios.md")
    add_custom_target(faultline_scenario_man ALL DEPENDS ${PROJECT_BINARY_DIR}/faultline-scenario.5.gz)
    install(FILES ${PROJECT_BINARY_DIR}/faultline-scenario.5.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man5
            COMPONENT runtime)
  else()
    message(STATUS "pandoc not found: no faultline-scenario(5) (scripts/install-deps.sh installs it)")
  endif()

  if(FAULTLINE_BUILD_TESTS)
    add_test(NAME cli_version COMMAND faultline --version)
    set_tests_properties(cli_version PROPERTIES PASS_REGULAR_EXPRESSION "^faultline ${PROJECT_VERSION}\n$")
    add_test(NAME bash_completion COMMAND ${PROJECT_SOURCE_DIR}/packaging/completion-test.sh $<TARGET_FILE_DIR:faultline>)
    add_test(NAME zsh_completion
             COMMAND ${PROJECT_SOURCE_DIR}/clients/run-or-skip.sh zsh zsh -c true --
                     zsh ${PROJECT_SOURCE_DIR}/packaging/completion-test.zsh $<TARGET_FILE_DIR:faultline>)
    set_tests_properties(zsh_completion PROPERTIES SKIP_RETURN_CODE 77)
  endif()

  # `cpack` (from the build folder) makes two packages. faultline_<version>_<arch>.deb, the runtime
  # component: the program, its completion, man page, docs and suites; its library dependencies come
  # from dpkg-shlibdeps. faultline-dev_<version>_<arch>.deb, the development component: headers,
  # static libraries and the CMake package, so find_package(faultline) works after apt-get install;
  # it depends on the -dev packages its headers and config include. scripts/deb-check.sh unpacks both
  # into a scratch root, runs the program and builds examples/cpp-consumer against the dev package.
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/faultline-dev
          COMPONENT development)
  set(CPACK_PACKAGE_NAME faultline)
  set(CPACK_PACKAGE_VENDOR "faultline")
  set(CPACK_PACKAGE_CONTACT "faultline maintainers <faultline@localhost>")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "chaos / fault-injection harness for HTTP retry behaviour")
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
  set(CPACK_GENERATOR DEB)
  set(CPACK_DEB_COMPONENT_INSTALL ON)
  set(CPACK_COMPONENTS_ALL runtime development)
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME faultline)
  set(CPACK_DEBIAN_RUNTIME_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION devel)
  set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME faultline-dev)
  set(CPACK_DEBIAN_DEVELOPMENT_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
  set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
      "faultline's C++ libraries: headers, static libraries and the CMake package (find_package(faultline))")
  set(faultline_dev_depends "libboost1.81-dev, libboost-json1.81-dev, libtomlplusplus-dev, libssl-dev, libnghttp2-dev, pkg-config")
  if(FAULTLINE_HAS_TESTING)
    string(APPEND faultline_dev_depends ", libgtest-dev, libgmock-dev")
  endif()
  set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "${faultline_dev_depends}")
  set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_RECOMMENDS "faultline (= ${PROJECT_VERSION})")
  set(CPACK_STRIP_FILES ON)  # the debug info stays in the build tree
  set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
  include(CPack)
endif()

# A consumer project (examples/<example>) configured, built and tested by cmake/consumer-test.cmake,
# with the build's compiler and flags; extra -D arguments choose how it finds faultline.
function(faultline_add_consumer_test name example)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DFAULTLINE_BUILD_DIR=${PROJECT_BINARY_DIR} ${ARGN}
            -DCONSUMER_SOURCE_DIR=${PROJECT_SOURCE_DIR}/examples/${example}
            -DWORK_DIR=${PROJECT_BINARY_DIR}/${example}-test
            -DCMAKE_GENERATOR=${CMAKE_GENERATOR} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
            "-DFAULTLINE_CXX_FLAGS=${CMAKE_CXX_FLAGS}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/consumer-test.cmake)
  set_tests_properties(${name} PROPERTIES TIMEOUT 600)
endfunction()

# examples/cpp-consumer built against this build's *installed* package, as a user would.
if(FAULTLINE_BUILD_TESTS AND FAULTLINE_HAS_TESTING)
  faultline_add_consumer_test(cpp_consumer_against_installed_package cpp-consumer)
endif()
# examples/fetchcontent-consumer taking this checkout with FetchContent, as a subproject.
if(FAULTLINE_BUILD_TESTS AND PROJECT_IS_TOP_LEVEL)
  faultline_add_consumer_test(cpp_consumer_with_fetchcontent fetchcontent-consumer
                              -DFAULTLINE_SOURCE_DIR=${PROJECT_SOURCE_DIR})
endif()
