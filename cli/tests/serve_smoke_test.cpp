// `faultline serve` as a real process: it prints its URL and its control API's (another port, behind
// a random token by default), serves, stops on SIGTERM with exit 0 and leaves the journal file
// behind; a kill -9 leaves every answered attempt in the file as whole lines; a bad rules file exits 2
// with positions.
#include "child_process.hpp"
#include "journal_wire.hpp"
#include "test_client.hpp"

#include "faultline/record/journal_json.hpp"
#include "faultline/record/journal_merge.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <signal.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace faultline::cli::testing {
namespace {

// The two lines serve prints at start.
struct serve_banner {
    std::uint16_t port = 0;
    std::uint16_t control_port = 0;
    std::string token;  // "" when it printed "(no token)"
    std::string control_line;
};

serve_banner read_banner(child& proc) {
    serve_banner out;
    const std::string line = proc.read_line(std::chrono::seconds{10});
    const std::string prefix = "faultline serving on http://127.0.0.1:";
    EXPECT_EQ(line.rfind(prefix, 0), 0U) << line;
    if (line.rfind(prefix, 0) != 0) return out;
    out.port = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
    out.control_line = proc.read_line(std::chrono::seconds{10});
    const std::string control_prefix = "control API: http://127.0.0.1:";
    EXPECT_EQ(out.control_line.rfind(control_prefix, 0), 0U) << out.control_line;
    if (out.control_line.rfind(control_prefix, 0) != 0) return out;
    out.control_port = static_cast<std::uint16_t>(std::stoi(out.control_line.substr(control_prefix.size())));
    const std::string bearer = "(Authorization: Bearer ";
    if (const auto at = out.control_line.find(bearer); at != std::string::npos) {
        out.token = out.control_line.substr(at + bearer.size(), 32);
    }
    return out;
}

int control_status(std::uint16_t port, std::string_view path, const std::string& token) {
    server::testing::header_pairs headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    const auto reply = server::testing::exchange(port, server::testing::make_request("GET", "/__faultline/" + std::string{path}, {}, headers));
    const auto res = reply.parsed();
    return res ? static_cast<int>(res->result_int()) : 0;
}

TEST(serve_command, serves_until_sigterm_and_writes_the_journal) {
    const fs::path rules = temp_file("rules.toml");
    const fs::path journal = temp_file("journal.jsonl");
    std::ofstream{rules} << "[server]\nthreads = 2\n\n[[fault]]\nname = \"teapot\"\nkind = \"status\"\nstatus = 418\n"
                            "[fault.match]\npath = \"/tea\"\n";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--seed", "99", "--journal", journal.string()}};
    ASSERT_TRUE(proc.started());

    const serve_banner banner = read_banner(proc);
    ASSERT_NE(banner.control_port, 0);
    EXPECT_NE(banner.control_port, banner.port);
    EXPECT_NE(banner.control_line.find("/__faultline/"), std::string::npos);
    ASSERT_EQ(banner.token.size(), 32U) << banner.control_line;
    const auto port = banner.port;

    EXPECT_EQ(control_status(banner.control_port, "health", banner.token), 200);
    EXPECT_EQ(control_status(banner.control_port, "health", ""), 401);
    const auto tea = server::testing::exchange(port, server::testing::make_request("GET", "/tea"));
    ASSERT_TRUE(tea.parsed());
    EXPECT_EQ(tea.parsed()->result_int(), 418);

    proc.signal(SIGTERM);
    EXPECT_EQ(proc.wait(), 0) << proc.drain_stderr();

    const auto records = record::read_jsonl(journal.string());
    ASSERT_TRUE(records.ok());
    ASSERT_EQ(records.records.size(), 1U);  // control requests are not journaled
    EXPECT_EQ(records.records[0].status, 418);
    EXPECT_EQ(records.records[0].rule, "teapot");
    fs::remove(rules);
    fs::remove(journal);
}

// Each serve journal opens with its wall-clock anchor, so two instances started one after the other
// merge in the order their attempts really happened, without the "no anchor" warning.
TEST(serve_command, the_journal_opens_with_a_wall_clock_anchor_that_orders_instances) {
    const fs::path rules = temp_file("anchor-rules.toml");
    const fs::path journal_a = temp_file("anchor-a.jsonl");
    const fs::path journal_b = temp_file("anchor-b.jsonl");
    const fs::path expect = temp_file("anchor-expect.toml");
    std::ofstream{rules} << "";
    std::ofstream{expect} << "[[expect]]\ncheck = \"max_attempts\"\nmax = 1\n";
    const auto wall_ns = [] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    };
    const std::int64_t before_a = wall_ns();
    child a{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--journal", journal_a.string()}};
    ASSERT_TRUE(a.started());
    const serve_banner banner_a = read_banner(a);
    ASSERT_NE(banner_a.port, 0);
    ASSERT_TRUE(server::testing::exchange(banner_a.port, server::testing::make_request("GET", "/kv/first")).parsed());
    // B starts only after A's attempt was answered: in the merged history B's attempt comes second,
    // although each journal counts its times from its own start.
    child b{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--journal", journal_b.string()}};
    ASSERT_TRUE(b.started());
    const serve_banner banner_b = read_banner(b);
    ASSERT_NE(banner_b.port, 0);
    ASSERT_TRUE(server::testing::exchange(banner_b.port, server::testing::make_request("GET", "/kv/second")).parsed());
    a.signal(SIGTERM);
    b.signal(SIGTERM);
    EXPECT_EQ(a.wait(), 0);
    EXPECT_EQ(b.wait(), 0);
    const std::int64_t after_b = wall_ns();

    {
        std::ifstream in{journal_a};
        std::string first_line;
        std::getline(in, first_line);
        EXPECT_EQ(first_line.rfind("{\"event\":\"started\"", 0), 0U) << first_line;
    }
    auto read_a = record::read_jsonl(journal_a.string());
    auto read_b = record::read_jsonl(journal_b.string());
    ASSERT_TRUE(read_a.ok());
    ASSERT_TRUE(read_b.ok());
    ASSERT_EQ(read_a.records.size(), 1U);
    ASSERT_EQ(read_b.records.size(), 1U);
    const auto anchor_a = record::wall_anchor_ns(read_a.server_events);
    const auto anchor_b = record::wall_anchor_ns(read_b.server_events);
    ASSERT_TRUE(anchor_a && anchor_b);
    EXPECT_GE(*anchor_a, before_a);
    EXPECT_LE(*anchor_b, after_b);
    // A's reply was on its way before B's process was even started. (Its t_response is stamped before
    // the bytes go out; its t_end only after the write completes, which under load can come after
    // the test has read the reply and started B, so t_end proves nothing here.)
    ASSERT_GE(read_a.records[0].response_ns, 0);
    EXPECT_GT(*anchor_b, *anchor_a + read_a.records[0].response_ns);
    const auto wire_a = testing::wire_details_of(journal_a.string());
    ASSERT_EQ(wire_a.size(), 1U);

    const record::merged_journal merged = record::merge_journals({{journal_a.string(), read_a.records, read_a.server_events, wire_a},
                                                  {journal_b.string(), read_b.records, read_b.server_events, {}}});
    EXPECT_TRUE(merged.warnings.empty());
    ASSERT_EQ(merged.records.size(), 2U);
    EXPECT_EQ(merged.records[0].target, "/kv/first");
    EXPECT_EQ(merged.records[1].target, "/kv/second");
    ASSERT_EQ(merged.wire.size(), 1U);
    EXPECT_EQ(merged.wire[0].seq, merged.records[0].seq);
    EXPECT_GT(merged.records[1].request_ns, merged.records[0].response_ns);

    child check{{FAULTLINE_BINARY, "check", journal_a.string(), journal_b.string(), "--expect", expect.string()}};
    const auto judged = check.finish();
    EXPECT_EQ(judged.code, 0) << judged.out << judged.err;
    EXPECT_EQ(judged.err.find("no wall-clock anchor"), std::string::npos) << judged.err;
    for (const auto& p : {rules, journal_a, journal_b, expect}) fs::remove(p);
}

TEST(serve_command, control_token_is_set_or_dropped_on_request) {
    const fs::path rules = temp_file("token-rules.toml");
    std::ofstream{rules} << "";
    {
        child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--control-token", "let-me-in"}};
        ASSERT_TRUE(proc.started());
        const serve_banner banner = read_banner(proc);
        EXPECT_NE(banner.control_line.find("Bearer let-me-in"), std::string::npos) << banner.control_line;
        EXPECT_EQ(control_status(banner.control_port, "health", ""), 401);
        server::testing::header_pairs auth{{"Authorization", "Bearer let-me-in"}};
        const auto ok = server::testing::exchange(banner.control_port, server::testing::make_request("GET", "/__faultline/health", {}, auth));
        ASSERT_TRUE(ok.parsed());
        EXPECT_EQ(ok.parsed()->result_int(), 200);
        proc.signal(SIGTERM);
        EXPECT_EQ(proc.wait(), 0);
    }
    {
        child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--no-control-token"}};
        ASSERT_TRUE(proc.started());
        const serve_banner banner = read_banner(proc);
        EXPECT_NE(banner.control_line.find("(no token)"), std::string::npos) << banner.control_line;
        EXPECT_EQ(control_status(banner.control_port, "health", ""), 200);
        proc.signal(SIGTERM);
        EXPECT_EQ(proc.wait(), 0);
    }
    fs::remove(rules);
}

// Issue 27, item 8: an empty token would switch authentication off without saying so; it is refused.
TEST(serve_command, an_empty_control_token_is_refused) {
    const fs::path rules = temp_file("empty-token-rules.toml");
    std::ofstream{rules} << "";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--control-token", ""}};
    ASSERT_TRUE(proc.started());
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--control-token"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
    fs::remove(rules);
}

// Issue 27, item 8: a token on the command line is in every user's `ps`; from a file or the
// environment it is not. Neither is printed back.
TEST(serve_command, the_control_token_comes_from_a_file_or_the_environment) {
    const fs::path rules = temp_file("token-file-rules.toml");
    const fs::path token_file = temp_file("control-token");
    std::ofstream{rules} << "";
    std::ofstream{token_file} << "from-a-file\n";
    {
        child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--control-token-file", token_file.string()}};
        ASSERT_TRUE(proc.started());
        const serve_banner banner = read_banner(proc);
        EXPECT_EQ(banner.control_line.find("from-a-file"), std::string::npos) << banner.control_line;
        EXPECT_EQ(control_status(banner.control_port, "health", ""), 401);
        EXPECT_EQ(control_status(banner.control_port, "health", "from-a-file"), 200);
        proc.signal(SIGTERM);
        EXPECT_EQ(proc.wait(), 0);
    }
    {
        ::setenv("FAULTLINE_CONTROL_TOKEN", "from-the-environment", 1);
        child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string()}};
        ::unsetenv("FAULTLINE_CONTROL_TOKEN");
        ASSERT_TRUE(proc.started());
        const serve_banner banner = read_banner(proc);
        EXPECT_EQ(banner.control_line.find("from-the-environment"), std::string::npos) << banner.control_line;
        EXPECT_EQ(control_status(banner.control_port, "health", "from-the-environment"), 200);
        proc.signal(SIGTERM);
        EXPECT_EQ(proc.wait(), 0);
    }
    {
        std::ofstream{token_file, std::ios::trunc} << "\n";
        child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--control-token-file", token_file.string()}};
        ASSERT_TRUE(proc.started());
        const auto r = proc.finish();
        EXPECT_EQ(r.code, 2) << r.out << r.err;
        EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
    }
    fs::remove(rules);
    fs::remove(token_file);
}

// The durability promise (docs/control-api.md): an answered attempt reaches the file within the
// writer's flush interval, so a kill -9 leaves it there, on whole lines.
TEST(serve_command, kill_9_leaves_every_answered_attempt_in_the_journal_file) {
    const fs::path rules = temp_file("durable-rules.toml");
    const fs::path journal = temp_file("durable.jsonl");
    std::ofstream{rules} << "";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--journal", journal.string()}};
    ASSERT_TRUE(proc.started());
    const serve_banner banner = read_banner(proc);
    ASSERT_NE(banner.port, 0);
    constexpr std::size_t answered = 300;
    server::testing::connection c{banner.port};
    ASSERT_TRUE(c.connected());
    for (std::size_t i = 0; i < answered; ++i) {
        const auto reply = c.round_trip(server::testing::make_request("GET", "/kv/k" + std::to_string(i), {}, {}, true));
        ASSERT_TRUE(reply.parsed()) << i;
    }
    // Bounded wait for the writer (it flushes every 2 ms): the lines appear without a stop. Each look
    // at the file follows a write to it (inotify), or at most 100 ms; 200 looks bound the wait.
    const int watch = ::inotify_init1(IN_NONBLOCK);
    ASSERT_GE(watch, 0);
    ASSERT_GE(::inotify_add_watch(watch, journal.c_str(), IN_MODIFY), 0);
    const auto count_lines = [&journal] {
        std::ifstream in{journal};
        std::size_t n = 0;
        for (std::string l; std::getline(in, l);) n += l.empty() || l.find("\"event\":\"server_late\"") != std::string::npos ? 0U : 1U;
        return n;
    };
    // The anchor line, then one line per attempt; a `server_late` spell (a loaded machine) is not
    // counted, or it would stand in for an attempt not yet written.
    const std::size_t expected_lines = answered + 1;
    std::size_t lines = count_lines();
    for (int round = 0; round < 200 && lines < expected_lines; ++round) {
        pollfd p{watch, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            std::array<char, 4096> drained{};
            while (::read(watch, drained.data(), drained.size()) > 0) {
            }
        }
        lines = count_lines();
    }
    ::close(watch);
    EXPECT_EQ(lines, expected_lines);
    proc.signal(SIGKILL);
    proc.wait();
    const auto read = record::read_jsonl(journal.string());
    EXPECT_TRUE(read.ok()) << (read.errors.empty() ? "" : read.errors.front().to_string());
    EXPECT_EQ(read.records.size(), answered);
    fs::remove(rules);
    fs::remove(journal);
}

TEST(serve_command, bad_rules_file_exits_2_with_every_error_positioned) {
    const fs::path rules = temp_file("bad.toml");
    std::ofstream{rules} << "[[fault]]\nkind = \"status\"\nstatus = 99\n\n[[fault]]\nkind = \"warp\"\n";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string()}};
    ASSERT_TRUE(proc.started());
    EXPECT_EQ(proc.wait(), 2);
    const std::string err = proc.drain_stderr();
    EXPECT_NE(err.find(rules.string() + ":3:"), std::string::npos) << err;
    EXPECT_NE(err.find(rules.string() + ":6:"), std::string::npos) << err;
    fs::remove(rules);
}

// Without --rules it serves the service with no faults, as the help's `serve --no-control-token`
// example does; rules come later through the control API.
TEST(serve_command, serves_without_a_rules_file) {
    child proc{{FAULTLINE_BINARY, "serve", "--no-control-token"}};
    ASSERT_TRUE(proc.started());
    const serve_banner banner = read_banner(proc);
    ASSERT_NE(banner.port, 0);
    EXPECT_EQ(control_status(banner.control_port, "rules", ""), 200);
    proc.signal(SIGTERM);
    EXPECT_EQ(proc.wait(), 0);
}

// A busy control port is named as the control API's, not as the service port.
TEST(serve_command, a_busy_control_port_is_named_as_the_control_apis) {
    child first{{FAULTLINE_BINARY, "serve", "--no-control-token"}};
    ASSERT_TRUE(first.started());
    const serve_banner taken = read_banner(first);
    ASSERT_NE(taken.control_port, 0);
    child second{{FAULTLINE_BINARY, "serve", "--control-port", std::to_string(taken.control_port)}};
    ASSERT_TRUE(second.started());
    const auto r = second.finish();
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("cannot open the control API 127.0.0.1:" + std::to_string(taken.control_port) + ": "),
              std::string::npos)
        << r.err;
    first.signal(SIGTERM);
    EXPECT_EQ(first.wait(), 0);
}

}  // namespace
}  // namespace faultline::cli::testing
