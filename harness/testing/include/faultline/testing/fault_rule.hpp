// A [[fault]] rule written in C++ instead of TOML inside a string: the kind's shorthand names what
// fails, then the same keys as a rules file, typed (match, trigger, the kind's parameters). It is
// checked by the rules files' own loader when built, so a misspelt parameter or a value out of
// range is the loader's message, thrown as std::invalid_argument.
//
//   server.add_rule(lose_response("reset").named("lose-first").on("POST", "/payments").attempts({1}));
//   server.add_rule(respond(503).retry_after(std::chrono::seconds{2}).probability(0.5));
#pragma once

#include "faultline/faults/rule.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace faultline::faults {
struct rule_limits;
}

namespace faultline::testing {

class fault_rule {
public:
    // A rule of a registered kind (`faultline list faults`), without parameters yet.
    explicit fault_rule(std::string_view kind);

    fault_rule& named(std::string_view name);  // default: the loader's "<kind>-<n>"
    // [fault.match]: each call adds a method; the path is a glob on the target's path.
    fault_rule& on(std::string_view method, std::string_view path_glob);
    fault_rule& method(std::string_view method);
    fault_rule& path(std::string_view glob);
    fault_rule& header(std::string_view name, std::string_view value);
    fault_rule& header_present(std::string_view name);
    // [fault.when]
    fault_rule& attempts(std::initializer_list<std::uint32_t> numbers);
    fault_rule& probability(double p);
    fault_rule& first(std::uint64_t requests);
    fault_rule& every(std::uint64_t nth);
    fault_rule& from(std::chrono::nanoseconds since_start);
    fault_rule& lasting(std::chrono::nanoseconds window);  // `for`
    fault_rule& barrier(std::uint32_t count, std::chrono::nanoseconds timeout);
    // The kind's parameters (docs/scenarios.md, "Fault kinds"); a duration is written as TOML would.
    fault_rule& with(std::string_view key, boost::json::value value);
    fault_rule& with(std::string_view key, std::chrono::nanoseconds value);
    fault_rule& phase(std::string_view phase) { return with("phase", boost::json::value(phase)); }
    fault_rule& retry_after(std::chrono::seconds wait) { return with("retry_after", std::chrono::nanoseconds{wait}); }
    fault_rule& min_fired(std::uint64_t times) { return with("min_fired", boost::json::value(times)); }

    // The rule as the control API takes it (POST /__faultline/rules), keys as in a [[fault]] table.
    const boost::json::object& json() const { return table_; }
    // Throws std::invalid_argument with the loader's messages when the rule does not load; `limits`:
    // the longest waits a server allows (fault_server passes its own).
    faults::rule build() const;
    faults::rule build(const faults::rule_limits& limits) const;

private:
    boost::json::object& table(std::string_view key);

    boost::json::object table_;
};

// The kinds, by what they do to an attempt.
fault_rule respond(int status);                            // `status`: this status instead of the reply
fault_rule lose_response(std::string_view then = "reset");  // `lost_response`: commit, then reset/close/hang
fault_rule delay(std::chrono::nanoseconds wait);           // `delay`, fixed
fault_rule reset_connection(std::string_view phase = "after_read");  // `reset`
fault_rule close_connection(std::string_view phase = "after_read");  // `close`
fault_rule hang(std::chrono::nanoseconds limit = std::chrono::seconds{30});
fault_rule truncate(std::uint64_t body_bytes = 0);
fault_rule slow_body(std::uint64_t bytes_per_second);
fault_rule malformed();
fault_rule refuse(std::string_view how = "reset_on_accept");

}  // namespace faultline::testing
