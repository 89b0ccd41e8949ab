// Reading fault rules from TOML. The format (documented in docs/scenarios.md, "Fault rules"):
//
//   [[fault]]
//   name = "lose-payments"        # optional; default "<kind>-<n>" (n = 1-based index in the file)
//   kind = "lost_response"        # a registered kind; the kind's own keys follow at this level
//   then = "reset"
//   [fault.match]                 # optional: method, path, headers, header_present
//   method = "POST"               # or ["PUT", "DELETE"]
//   path = "/payments*"
//   [fault.when]                  # optional: probability, attempts, first, every, from, for
//   attempts = [1]
//
// Every problem is reported (not just the first) as a config_error with the file:line:column of the
// offending value, naming the key and listing the allowed keys or kinds.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>
#include <toml++/toml.h>

#include "faultline/core/config_error.hpp"
#include "faultline/faults/rule.hpp"

namespace faultline::faults {

// What a rule may ask of the server, from its [server] table (server_limits): a wait beyond
// `max_fault_wait` is an error at the key that sets it.
struct rule_limits {
    std::chrono::nanoseconds max_fault_wait = std::chrono::hours{1};
};

// A rule name is a path segment of DELETE /__faultline/rules/{name} and a part of every decision key
// (a proxy's name, of /__faultline/proxies/{name}): 1..128 characters from A-Z a-z 0-9 . _ : -.
// Returns why not, or "" when it is valid.
std::string rule_name_problem(std::string_view name);

struct rules_result {
    std::vector<rule> rules;
    config_errors errors;  // when non-empty, `rules` holds only the rules that parsed cleanly

    bool ok() const { return errors.empty(); }
};

// One [[fault]] table. `index` (1-based) makes the default name.
rules_result parse_rule(const toml::table& table, const std::string& file, std::size_t index = 1,
                        const rule_limits& limits = {});
// The value of a document's `fault` key: an array of tables. Also checks that names are unique.
rules_result parse_rules(const toml::node& fault_array, const std::string& file, const rule_limits& limits = {});
// A whole rules file (`faultline serve --rules`): only [[fault]] tables at the top level. Reading the
// file is config::load_document's job.
rules_result parse_rules_text(std::string_view toml_text, const std::string& file, const rule_limits& limits = {});
// A JSON object as a TOML table, so what is posted as JSON goes through the same validation as a
// file's table (a null, or an integer beyond int64, is an error naming its key path).
std::optional<toml::table> json_as_toml(const boost::json::object& object, config_errors& errors);
// A rule posted to the control API as JSON, with the same keys as a [[fault]] table.
rules_result parse_rule_json(const boost::json::value& json, std::size_t index = 1, const rule_limits& limits = {});
// A built rule's waits against `limits` (for rules built by hand or loaded before the limits were
// known): one message per wait too long, naming the rule, its key and where it was defined.
std::vector<std::string> wait_problems(const rule& r, const rule_limits& limits);

}  // namespace faultline::faults
