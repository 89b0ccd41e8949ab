// Formatting shared by the report writers (internal to reports/src): evidence as indented text,
// UTF-8 repair, XML escaping, timestamps and counts.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "faultline/record/run_record.hpp"

namespace faultline::reports::detail {

// Replaces invalid UTF-8 sequences with U+FFFD so every writer emits valid text.
std::string valid_utf8(std::string_view text);
// For a terminal: valid UTF-8 with control characters other than newline and tab (an ANSI escape
// from a client's output, a bell) replaced with U+FFFD.
std::string printable(std::string_view text);
// XML character data / attribute value: escapes markup, replaces characters XML 1.0 cannot carry
// (and invalid UTF-8) with U+FFFD; in attributes newlines and tabs become character references.
std::string xml_escape(std::string_view text, bool attribute);

// "2023-11-14T22:13:20Z" (or without the "Z" for JUnit's timestamp attribute).
std::string iso8601(std::chrono::system_clock::time_point t, bool zone_suffix);
// Seconds with millisecond precision: "1.234".
std::string seconds(std::chrono::nanoseconds d);

// The evidence of a verdict, one item per paragraph, each line prefixed with `indent`, ending with
// "… and N more" when the evidence was capped. Empty when there is none.
std::string evidence_text(const record::verdict& v, std::string_view indent);

// "rule `lose-response` (lost_response) fired 12 times" (", min_fired 3" when it has one).
std::string firing_text(const record::rule_firing& f);
// The warning for a rule that never fired (record::never_fired), saying whether it fails the run.
std::string never_fired_text(const record::rule_firing& f, bool strict);
// "1 reset, 2 idle_timeout": the run's server events counted per kind, in the kinds' order; "" when none.
std::string server_event_counts(const record::run_record& run);
// "interrupted by SIGINT after 3.2 s: stopped 2 client processes"; "" when the run was not interrupted.
std::string interruption_text(const record::run_record& run);
// How the client command ended: "exit status 1 (killed at the time limit)", or, when a process
// could not be started, "not started: cannot start …" (none ran) or "exit status 0; then not
// started: …" (some ran). `killed_when`: "at the time limit", "on SIGINT".
std::string command_status_text(const record::command_result& c, std::string_view killed_when);

struct run_counts {
    std::size_t operations = 0;
    std::size_t attempts = 0;
    std::size_t effects = 0;
    std::size_t checks = 0;
    std::size_t checks_failed = 0;
    std::size_t checks_insufficient = 0;  // could not judge (verdict_outcome::insufficient_evidence)
};
run_counts count(const record::run_record& run);

}  // namespace faultline::reports::detail
