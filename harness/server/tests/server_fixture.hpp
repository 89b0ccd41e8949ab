// A fault-injecting server for one test: rules and [server] keys from a TOML string (the format of
// `faultline serve --rules`), bound to 127.0.0.1:0 and started at construction, with a control
// listener on another ephemeral port that needs no token unless `options` ask for one.
// `finish()` stops it (draining, flushing the journal), after which the journal and ledger are
// complete and stable.
#pragma once

#include "faultline/server/serve_config.hpp"
#include "faultline/server/server.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::server::testing {

class test_server {
public:
    explicit test_server(std::string_view rules_toml, std::uint64_t seed = 7, server_options options = {},
                         journal_options journal = {})
        : test_server(parsed(rules_toml), seed, std::move(options), std::move(journal)) {}

    // From a parsed configuration, for what a rules file cannot hold (a body past its size bound).
    explicit test_server(serve_config config, std::uint64_t seed = 7, server_options options = {},
                         journal_options journal = {}) {
        faults::engine_limits limits;
        config.settings.apply(options, limits);
        if (!options.control_port) options.control_port = 0;
        if (!options.control_token) options.control_token = std::string{};
        context_ = std::make_unique<server_context>(config.model, std::move(config.rules), seed,
                                                    std::move(journal), limits);
        server_ = std::make_unique<server>(*context_, options);
        const auto ec = server_->start();
        if (ec) throw std::runtime_error{"server did not start: " + ec.message()};
    }

    static serve_config parsed(std::string_view rules_toml) {
        auto result = parse_serve_config(rules_toml, "test.toml");
        if (!result.ok()) {
            std::string all;
            for (const auto& e : result.errors) all += e.to_string() + "\n";
            throw std::invalid_argument{"bad test rules:\n" + all};
        }
        return std::move(*result.config);
    }

    std::uint16_t port() const { return server_->port(); }
    std::uint16_t control_port() const { return *server_->control_port(); }
    server& engine() { return *server_; }
    server_context& context() { return *context_; }

    // Stops the server; afterwards every attempt is in the journal.
    void finish() { server_->stop(); }

    std::vector<record::journal_record> journal() {
        finish();
        return context_->records.snapshot();
    }
    // The journal's wire details, in the same order.
    std::vector<record::wire_detail> wire() {
        finish();
        return context_->records.wire_snapshot();
    }

private:
    std::unique_ptr<server_context> context_;
    std::unique_ptr<server> server_;
};

}  // namespace faultline::server::testing
