# docs/guides/: each walk-through is also a test that runs the guide's real client against a real
# `faultline serve` and asserts the verdicts of `faultline check` (docs/guides/examples/run-guide.sh):
# the good client passes, the bad one fails the retry_after check. A test whose client tool
# (python3 with requests, node) is missing is skipped (exit 77), saying what to install.
set(guide_dir ${PROJECT_SOURCE_DIR}/docs/guides/examples)

# faultline_add_guide_test(<name> <expected exit> <failing check or -> <client command...>)
function(faultline_add_guide_test name expected_exit failing_check)
  add_test(NAME guide_${name}
    COMMAND ${guide_dir}/run-guide.sh $<TARGET_FILE:faultline> ${PROJECT_BINARY_DIR}/guides/${name}
            ${expected_exit} ${failing_check} -- ${ARGN})
  set_tests_properties(guide_${name} PROPERTIES
    TIMEOUT 60 SKIP_RETURN_CODE 77
    ENVIRONMENT "PYTHONPATH=${PROJECT_SOURCE_DIR}/clients/python;PYTHONDONTWRITEBYTECODE=1;FAULTLINE_CONTROL_JS=${PROJECT_SOURCE_DIR}/clients/node/control.js")
endfunction()

faultline_add_guide_test(shell_curl_retry 0 - ${guide_dir}/curl-client.sh)
faultline_add_guide_test(shell_naive_loop 1 retry_after ${guide_dir}/curl-client.sh --naive)
faultline_add_guide_test(python_requests_retry 0 - python3 ${guide_dir}/python_client.py)
faultline_add_guide_test(python_ignores_retry_after 1 retry_after python3 ${guide_dir}/python_client.py --ignore-retry-after)
faultline_add_guide_test(node_fetch_retry 0 - node ${guide_dir}/node_client.mjs)
faultline_add_guide_test(node_ignores_retry_after 1 retry_after node ${guide_dir}/node_client.mjs --ignore-retry-after)

# Every shell example printed in README.md and docs/guides/ runs as printed (scripts/doc-examples.py),
# or is marked with where it is checked instead. Skipped when a tool the examples use is missing. Alone,
# as the herd suites are: the README replays the unjittered herd, which another test's load would spread.
add_test(NAME docs_examples
  COMMAND ${PROJECT_SOURCE_DIR}/clients/run-or-skip.sh "curl nodejs python3-requests"
          sh -c "command -v curl && command -v node && python3 -c 'import requests'" --
          python3 ${PROJECT_SOURCE_DIR}/scripts/doc-examples.py $<TARGET_FILE_DIR:faultline> ${PROJECT_SOURCE_DIR})
set_tests_properties(docs_examples PROPERTIES LABELS docs TIMEOUT 180 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
