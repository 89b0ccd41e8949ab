#include "faultline/testing/fault_rule.hpp"

#include "errors.hpp"

#include "faultline/config/duration.hpp"
#include "faultline/faults/rules_toml.hpp"

#include <boost/json/array.hpp>

namespace faultline::testing {

namespace {

boost::json::value duration_value(std::chrono::nanoseconds d) { return boost::json::value(config::format_duration(d)); }

}  // namespace

fault_rule::fault_rule(std::string_view kind) { table_["kind"] = kind; }

boost::json::object& fault_rule::table(std::string_view key) {
    boost::json::value& v = table_[key];
    if (!v.is_object()) v = boost::json::object{};
    return v.as_object();
}

fault_rule& fault_rule::named(std::string_view name) {
    table_["name"] = name;
    return *this;
}

fault_rule& fault_rule::on(std::string_view method_name, std::string_view path_glob) {
    return method(method_name).path(path_glob);
}

fault_rule& fault_rule::method(std::string_view method_name) {
    boost::json::value& methods = table("match")["method"];
    if (!methods.is_array()) methods = boost::json::array{};
    methods.as_array().emplace_back(method_name);
    return *this;
}

fault_rule& fault_rule::path(std::string_view glob) {
    table("match")["path"] = glob;
    return *this;
}

fault_rule& fault_rule::header(std::string_view name, std::string_view value) {
    boost::json::value& headers = table("match")["headers"];
    if (!headers.is_object()) headers = boost::json::object{};
    headers.as_object()[name] = value;
    return *this;
}

fault_rule& fault_rule::header_present(std::string_view name) {
    boost::json::value& present = table("match")["header_present"];
    if (!present.is_array()) present = boost::json::array{};
    present.as_array().emplace_back(name);
    return *this;
}

fault_rule& fault_rule::attempts(std::initializer_list<std::uint32_t> numbers) {
    boost::json::array list;
    for (const std::uint32_t n : numbers) list.emplace_back(n);
    table("when")["attempts"] = std::move(list);
    return *this;
}

fault_rule& fault_rule::probability(double p) {
    table("when")["probability"] = p;
    return *this;
}

fault_rule& fault_rule::first(std::uint64_t requests) {
    table("when")["first"] = requests;
    return *this;
}

fault_rule& fault_rule::every(std::uint64_t nth) {
    table("when")["every"] = nth;
    return *this;
}

fault_rule& fault_rule::from(std::chrono::nanoseconds since_start) {
    table("when")["from"] = duration_value(since_start);
    return *this;
}

fault_rule& fault_rule::lasting(std::chrono::nanoseconds window) {
    table("when")["for"] = duration_value(window);
    return *this;
}

fault_rule& fault_rule::barrier(std::uint32_t count, std::chrono::nanoseconds timeout) {
    boost::json::object& when = table("when");
    when["barrier"] = count;
    when["barrier_timeout"] = duration_value(timeout);
    return *this;
}

fault_rule& fault_rule::with(std::string_view key, boost::json::value value) {
    table_[key] = std::move(value);
    return *this;
}

fault_rule& fault_rule::with(std::string_view key, std::chrono::nanoseconds value) {
    return with(key, duration_value(value));
}

faults::rule fault_rule::build() const { return build(faults::rule_limits{}); }

faults::rule fault_rule::build(const faults::rule_limits& limits) const {
    faults::rules_result parsed = faults::parse_rule_json(table_, 1, limits);
    if (!parsed.ok()) detail::throw_config_errors("fault_rule: the rule does not load:", parsed.errors);
    return std::move(parsed.rules.front());
}

fault_rule respond(int status) { return fault_rule{"status"}.with("status", boost::json::value(status)); }
fault_rule lose_response(std::string_view then) { return fault_rule{"lost_response"}.with("then", boost::json::value(then)); }
fault_rule delay(std::chrono::nanoseconds wait) { return fault_rule{"delay"}.with("wait", wait); }
fault_rule reset_connection(std::string_view phase) { return fault_rule{"reset"}.phase(phase); }
fault_rule close_connection(std::string_view phase) { return fault_rule{"close"}.phase(phase); }
fault_rule hang(std::chrono::nanoseconds limit) { return fault_rule{"hang"}.with("limit", limit); }
fault_rule truncate(std::uint64_t body_bytes) {
    return fault_rule{"truncate"}.with("body_bytes", boost::json::value(body_bytes));
}
fault_rule slow_body(std::uint64_t bytes_per_second) {
    return fault_rule{"slow_body"}.with("bytes_per_second", boost::json::value(bytes_per_second));
}
fault_rule malformed() { return fault_rule{"malformed"}; }
fault_rule refuse(std::string_view how) { return fault_rule{"refuse"}.with("how", boost::json::value(how)); }

}  // namespace faultline::testing
