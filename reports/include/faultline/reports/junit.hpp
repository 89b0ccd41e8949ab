// The JUnit XML report, for CI systems: one <testsuite> per scenario, one <testcase> per check, a
// <failure message="summary"> holding the evidence for a failed check, an <error> test case when the
// harness itself failed, the seed and the replay command as properties, and the client command's
// output as <system-out>/<system-err>. All runs go into one <testsuites> document. Every text is
// XML-escaped, and bytes XML cannot carry (control characters, invalid UTF-8) are replaced with
// U+FFFD. A pure function of the run records.
#pragma once

#include <span>
#include <string>

#include "faultline/record/run_record.hpp"

namespace faultline::reports {

std::string junit_report(std::span<const record::run_record> runs);

}  // namespace faultline::reports
