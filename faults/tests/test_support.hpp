// Helpers shared by the faults tests: rules from TOML text, attempts built by hand.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "faultline/faults/request.hpp"
#include "faultline/faults/rules_toml.hpp"

namespace faultline::faults::testing {

inline rules_result parse(std::string_view toml) { return parse_rules_text(toml, "rules.toml"); }

// All error messages, one per line, for assertion failures that show what went wrong.
inline std::string messages(const rules_result& result) {
    std::string out;
    for (const config_error& e : result.errors) {
        out += e.to_string() + "\n";
    }
    return out;
}

// The single rule of a [[fault]] document that must parse.
inline rule one_rule(std::string_view toml) {
    rules_result result = parse(toml);
    EXPECT_TRUE(result.ok()) << messages(result);
    EXPECT_EQ(result.rules.size(), 1U);
    return result.rules.empty() ? rule{} : result.rules.front();
}

// The single error of a document that must fail, as "file:line:column: message".
inline std::string one_error(std::string_view toml) {
    rules_result result = parse(toml);
    EXPECT_EQ(result.errors.size(), 1U) << messages(result);
    return result.errors.empty() ? std::string{} : result.errors.front().to_string();
}

// An attempt whose request fields live as long as this object.
struct attempt_builder {
    attempt_builder() = default;
    // The header source refers to this object's own list, so copies would dangle.
    attempt_builder(const attempt_builder&) = delete;
    attempt_builder& operator=(const attempt_builder&) = delete;

    std::string method = "POST";
    std::string target = "/payments";
    header_list headers;
    std::string body;
    std::uint64_t operation_hash = 42;
    std::uint32_t attempt = 1;
    std::uint64_t request_seq = 1;
    std::chrono::nanoseconds since_start{0};
    std::chrono::system_clock::time_point wall_now{};

    attempt_context build() const {
        return attempt_context{request_view{method, target, source_, body}, operation_hash, attempt, request_seq,
                               since_start, wall_now};
    }

private:
    header_list_source source_{headers};
};

}  // namespace faultline::faults::testing
