// faultline::testing — using faultline from a C++ GoogleTest suite. `fault_server` is the fault
// server of `faultline serve` run in-process on 127.0.0.1 (an ephemeral port): point the client under
// test at url(), add or remove fault rules (typed, fault_rule.hpp; TOML text, as in a rules file; or
// built `faults::rule`s),
// then read what the server saw — the journal (one record per attempt), the ledger (committed
// effects) — or take the whole `run_record` and hold it to faultline's checks with the matchers of
// matchers.hpp. `fault_server_test` is a fixture giving each test a fresh server.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "faultline/faults/rule.hpp"
#include "faultline/record/journal_record.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/server/ledger.hpp"
#include "faultline/server/model_config.hpp"
#include "faultline/server/server_context.hpp"
#include "faultline/testing/fault_rule.hpp"

namespace faultline::server {
class server;
}

namespace faultline::testing {

struct fault_server_options {
    server::model_config model;  // the service it plays, identity, limits: a `[server]` table's model keys
    std::uint64_t seed = 1;       // fault decisions' seed: the same seed, the same faults
    std::size_t threads = 1;      // worker threads
    std::string name = "fault_server";  // the run record's scenario name, shown in matcher failures
};

// Not thread-safe itself (one test drives it); the server it runs serves any number of clients.
class fault_server {
public:
    // Starts serving. Throws std::runtime_error when the server cannot start.
    explicit fault_server(fault_server_options options = {});
    // Starts with a rules file's contents (`faultline serve --rules`): [[fault]] tables and an
    // optional [server] table. Throws std::invalid_argument listing every problem (file:line:column).
    explicit fault_server(std::string_view rules_toml, std::uint64_t seed = 1);
    ~fault_server();

    fault_server(const fault_server&) = delete;
    fault_server& operator=(const fault_server&) = delete;

    std::string url() const;  // "http://127.0.0.1:PORT"; a new port after reset()
    std::uint16_t port() const;
    static constexpr std::string_view host = "127.0.0.1";

    // [[fault]] tables, as in a rules file. All or nothing: throws std::invalid_argument listing every
    // problem, or naming a rule that is already installed, and adds none.
    void add_rules(std::string_view fault_tables_toml);
    // One rule built in C++ (or taken from a parsed scenario). Throws std::invalid_argument when the
    // engine refuses it (a duplicate name).
    void add_rule(faults::rule rule);
    // One rule written with the builder (fault_rule.hpp), checked against this server's limits.
    // Throws std::invalid_argument with the loader's messages, or when the engine refuses it.
    void add_rule(const fault_rule& rule);
    bool remove_rule(std::string_view name);  // false when no rule has that name
    void clear_rules();
    std::vector<faults::rule> rules() const;

    // What the server has journaled so far. An attempt whose reply is still being written is
    // journaled when the write ends; call stop() (or record()) first to be sure every attempt is in.
    std::vector<record::journal_record> journal() const;
    std::vector<server::ledger_entry> ledger() const;
    std::vector<server::double_effect> double_effects() const;

    // Ends the round: stops the server (attempts in progress finish and are journaled), then returns
    // the run record the checks judge — the journal, server events and how often each rule fired,
    // no verdicts. Serving resumes with reset().
    record::run_record record();

    // Stops serving (idempotent): in-progress attempts finish, open connections close.
    void stop();
    bool running() const;

    // A fresh round: stops, forgets the journal, ledger, attempt counts and the service's state,
    // and serves again on a new ephemeral port. Rules stay (clear_rules() drops them).
    void reset();

    // The server's parts (engine, service, ledger, journal) for what the methods above do not cover.
    server::server_context& context() { return *context_; }

private:
    void start();

    fault_server_options options_;
    std::unique_ptr<server::server_context> context_;
    std::unique_ptr<server::server> server_;
    std::chrono::steady_clock::time_point round_started_;
    std::chrono::system_clock::time_point round_started_wall_;
};

// A fixture giving each test its own running `server` (so no test sees another's journal). A derived
// fixture may pass a rules file's text ([server] table, [[fault]] rules) to start it with.
//
//   struct PaymentsTest : faultline::testing::fault_server_test {
//       PaymentsTest() : fault_server_test("[server]\nidempotency = \"keys\"") {}
//   };
//   TEST_F(PaymentsTest, SurvivesLostResponses) {
//       server.add_rules("[[fault]]\nkind = \"lost_response\"\n[fault.when]\nattempts = [1]");
//       my_client(server.url()).charge(100);
//       EXPECT_THAT(server.record(), faultline::testing::NoDoubleEffects());
//   }
class fault_server_test : public ::testing::Test {
protected:
    explicit fault_server_test(std::string_view rules_toml = {}) : server(rules_toml) {}

    fault_server server;
};

}  // namespace faultline::testing
