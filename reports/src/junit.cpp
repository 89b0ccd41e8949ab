#include "faultline/reports/junit.hpp"
#include "faultline/reports/writer.hpp"

#include <chrono>

#include "faultline/reports/console.hpp"
#include "text.hpp"

namespace faultline::reports {

namespace {

using detail::xml_escape;

std::string attr(std::string_view name, std::string_view value) {
    return " " + std::string(name) + "=\"" + xml_escape(value, true) + "\"";
}

}  // namespace

std::string junit_report(std::span<const record::run_record> runs) {
    std::size_t tests = 0;
    std::size_t failures = 0;
    std::size_t errors = 0;
    std::size_t skipped = 0;
    std::chrono::nanoseconds total{0};
    std::string suites;
    for (const record::run_record& run : runs) {
        const detail::run_counts counts = detail::count(run);
        // A harness error and an interruption are each one erroneous test case "run" / "interrupted".
        const std::size_t run_errors = (run.harness_error.empty() ? 0U : 1U) + (run.interrupted ? 1U : 0U);
        const std::size_t run_tests = counts.checks + run_errors;
        tests += run_tests;
        failures += counts.checks_failed;
        errors += run_errors;
        skipped += counts.checks_insufficient;
        total += run.duration;
        const std::string classname = "faultline." + run.scenario;

        suites += "  <testsuite" + attr("name", run.scenario) + attr("tests", std::to_string(run_tests)) +
                  attr("failures", std::to_string(counts.checks_failed)) + attr("errors", std::to_string(run_errors)) +
                  attr("skipped", std::to_string(counts.checks_insufficient)) + attr("time", detail::seconds(run.duration)) +
                  // A journal read back (`faultline check`) has no wall-clock start: the optional
                  // attribute is left out rather than say 1970.
                  (run.started_at == std::chrono::system_clock::time_point{}
                       ? std::string{}
                       : attr("timestamp", detail::iso8601(run.started_at, false))) +
                  ">\n";
        suites += "    <properties>\n";
        suites += "      <property" + attr("name", "seed") + attr("value", std::to_string(run.seed)) + "/>\n";
        if (!run.scenario_file.empty()) {
            suites += "      <property" + attr("name", "file") + attr("value", run.scenario_file) + "/>\n";
        }
        suites += "      <property" + attr("name", "replay") + attr("value", replay_command(run)) + "/>\n";
        suites += "      <property" + attr("name", "operations") + attr("value", std::to_string(counts.operations)) + "/>\n";
        suites += "      <property" + attr("name", "attempts") + attr("value", std::to_string(counts.attempts)) + "/>\n";
        suites += "      <property" + attr("name", "effects") + attr("value", std::to_string(counts.effects)) + "/>\n";
        for (const record::rule_firing& f : run.rule_firings) {
            suites += "      <property" + attr("name", "fired:" + f.rule) + attr("value", std::to_string(f.fired)) +
                      "/>\n";
        }
        for (const record::rule_firing* f : record::never_fired(run)) {
            suites += "      <property" + attr("name", "warning") +
                      attr("value", detail::never_fired_text(*f, run.strict)) + "/>\n";
        }
        if (const std::string events = detail::server_event_counts(run); !events.empty()) {
            suites += "      <property" + attr("name", "server_events") + attr("value", events) + "/>\n";
        }
        if (run.interrupted) {
            suites += "      <property" + attr("name", "interrupted") +
                      attr("value", record::signal_name(run.interrupted->signal)) + "/>\n";
        }
        suites += "    </properties>\n";
        if (run.interrupted) {
            suites += "    <testcase" + attr("name", "interrupted") + attr("classname", classname) + attr("time", "0") +
                      ">\n";
            suites += "      <error" + attr("message", detail::interruption_text(run)) + attr("type", "interrupted") +
                      "/>\n";
            suites += "    </testcase>\n";
        }
        if (!run.harness_error.empty()) {
            suites += "    <testcase" + attr("name", "run") + attr("classname", classname) + attr("time", "0") + ">\n";
            suites += "      <error" + attr("message", run.harness_error) + attr("type", "harness_error") + "/>\n";
            suites += "    </testcase>\n";
        }
        for (const record::verdict& v : run.verdicts) {
            suites += "    <testcase" + attr("name", v.check) + attr("classname", classname) + attr("time", "0") + ">\n";
            if (v.passed) {
                suites += "      <system-out>" + xml_escape(v.summary, false) + "</system-out>\n";
            } else if (v.insufficient_evidence) {
                // Not judged, so neither a pass nor a failure: JUnit's "skipped", with the reason.
                suites += "      <skipped" + attr("message", "insufficient evidence: " + v.summary) + "/>\n";
            } else {
                suites += "      <failure" + attr("message", v.summary) + attr("type", "check_failed") + ">" +
                          xml_escape(detail::evidence_text(v, ""), false) + "</failure>\n";
            }
            suites += "    </testcase>\n";
        }
        if (run.command) {
            const record::command_result& c = *run.command;
            suites += "    <system-out>" +
                      xml_escape(detail::command_status_text(c, "at the time limit") + "\n" + c.stdout_text, false) +
                      "</system-out>\n";
            suites += "    <system-err>" + xml_escape(c.stderr_text, false) + "</system-err>\n";
        }
        suites += "  </testsuite>\n";
    }
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + attr("name", "faultline") +
           attr("tests", std::to_string(tests)) + attr("failures", std::to_string(failures)) +
           attr("errors", std::to_string(errors)) + attr("skipped", std::to_string(skipped)) +
           attr("time", detail::seconds(total)) + ">\n" + suites +
           "</testsuites>\n";
}

namespace {

const report_registration registered{"junit", "JUnit XML for CI: a test suite per scenario, a test case per check",
                                     &junit_report, "junit.xml"};

}  // namespace

}  // namespace faultline::reports
