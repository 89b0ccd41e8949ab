// `faultline check` on a journal with rounds, as the Python guide's pytest recipe leaves one: a reset
// before each test case, the same request in each. Each round is judged on its own (an operation
// never spans two), `--round N` judges one, a round without attempts is bad input naming those with
// some, and the seed printed is the one the journal was written with.
#include "child_process.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace faultline::cli::testing {
namespace {

// One attempt of PUT /kv/a (identity: the request's hash, the same in every round), as serve writes
// it in round `round`.
std::string put_line(int seq, int attempt, int round) {
    return R"({"seq":)" + std::to_string(seq) + (round > 1 ? R"(,"round":)" + std::to_string(round) : "") +
           R"(,"conn":)" + std::to_string(seq) + R"(,"t_request":)" + std::to_string(seq * 1'000'000) +
           R"(,"t_end":)" + std::to_string(seq * 1'000'000 + 1000) +
           R"(,"method":"PUT","target":"/kv/a","op":"9f2c","op_source":"request_hash","attempt":)" +
           std::to_string(attempt) +
           R"(,"idempotency_key":"","rule":"busy","fault":"status","effect":"none","outcome":"responded","status":)" +
           (attempt == 1 ? "503" : "200") + "}\n";
}

// The anchor with seed 7, a rule, then two test cases, each reset before it: round 1 holds no
// attempts, rounds 2 and 3 two each. `round_fields`: as serve writes today; without, as before rounds.
std::string pytest_journal(bool round_fields) {
    const auto round = [&](int r) { return round_fields ? r : 1; };
    const std::string reset = R"({"event":"reset","seq":)";
    return std::string{R"({"event":"started","seq":1,"t":0,"rule":"","detail":"1764942000000000000","peer":"","seed":7})"} +
           "\n" + R"({"event":"rule_added","seq":2,"t":10,"rule":"busy","detail":"{}","peer":"127.0.0.1:1"})" + "\n" +
           reset + "3" + (round_fields ? R"(,"round":2)" : "") + R"(,"t":20,"rule":"","detail":"","peer":"127.0.0.1:1"})" +
           "\n" + put_line(4, 1, round(2)) + put_line(5, 2, round(2)) + reset + "6" +
           (round_fields ? R"(,"round":3)" : "") + R"(,"t":30,"rule":"","detail":"","peer":"127.0.0.1:1"})" + "\n" +
           put_line(7, 1, round(3)) + put_line(8, 2, round(3));
}

struct files {
    fs::path dir = temp_file("check-rounds");
    fs::path journal = dir / "journal.jsonl";
    fs::path expect = dir / "expect.toml";

    explicit files(const std::string& text) {
        fs::remove_all(dir);
        fs::create_directories(dir);
        std::ofstream{journal, std::ios::binary} << text;
        std::ofstream{expect} << "[[expect]]\ncheck = \"max_attempts\"\nmax = 3\n";
    }
    ~files() { fs::remove_all(dir); }

    child::result check(std::vector<std::string> more = {}) const {
        std::vector<std::string> argv{FAULTLINE_BINARY, "check", journal.string(), "--expect", expect.string()};
        argv.insert(argv.end(), more.begin(), more.end());
        child proc{argv};
        return proc.finish();
    }
};

TEST(check_rounds, the_same_request_in_two_rounds_is_two_operations_each_within_max_attempts) {
    for (const bool round_fields : {true, false}) {
        const files f{pytest_journal(round_fields)};
        const auto r = f.check({"--report", "junit:" + (f.dir / "junit.xml").string()});
        EXPECT_EQ(r.code, 0) << round_fields << '\n' << r.out << r.err;
        EXPECT_NE(r.out.find(f.journal.string() + " round 2"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(f.journal.string() + " round 3"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find(" round 1"), std::string::npos) << r.out;  // the anchor's round: nothing to judge
        EXPECT_NE(r.out.find("seed 7"), std::string::npos) << r.out;
        // One test suite a round, which CI tools list by name.
        const std::string junit = read_file(f.dir / "junit.xml");
        EXPECT_NE(junit.find(R"(<testsuite name=")" + f.journal.string() + " round 2\""), std::string::npos) << junit;
        EXPECT_NE(junit.find(R"(<testsuite name=")" + f.journal.string() + " round 3\""), std::string::npos) << junit;
    }
}

// Without the resets the four attempts are one operation: over max = 3, as the rounds were judged
// before they were told apart.
TEST(check_rounds, judged_as_one_round_the_same_attempts_fail_max_attempts) {
    std::string text = pytest_journal(false);
    for (const std::string reset : {R"({"event":"reset","seq":3,)", R"({"event":"reset","seq":6,)"}) {
        const auto at = text.find(reset);
        text.erase(at, text.find('\n', at) + 1 - at);
    }
    const files f{text};
    const auto r = f.check();
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_EQ(r.out.find(" round "), std::string::npos) << r.out;
}

TEST(check_rounds, round_n_judges_that_round_only) {
    const files f{pytest_journal(true)};
    const auto r = f.check({"--round", "3"});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(f.journal.string() + " round 3"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(" round 2"), std::string::npos) << r.out;
}

TEST(check_rounds, a_round_without_attempts_is_bad_input_naming_the_rounds_with_some) {
    const files f{pytest_journal(true)};
    for (const char* absent : {"1", "4"}) {
        const auto r = f.check({"--round", absent});
        EXPECT_EQ(r.code, 2) << r.out;
        EXPECT_NE(r.err.find("--round " + std::string{absent} +
                             ": the journal has no attempts in that round; rounds with attempts: 2 and 3"),
                  std::string::npos)
            << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

// `--report journal:…` writes a file a round: each holds that round's attempts and its reset, and
// reads back (checked again) as that round.
TEST(check_rounds, each_rounds_journal_report_reads_back_as_that_round) {
    const files f{pytest_journal(true)};
    const auto r = f.check({"--report", "journal:" + (f.dir / "{scenario}.jsonl").string()});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    for (const std::string round : {"2", "3"}) {
        // Named after the run, "<journal path> round N", made file-safe.
        fs::path written;
        for (const auto& entry : fs::directory_iterator{f.dir}) {
            if (entry.path().filename().string().ends_with("_round_" + round + ".jsonl")) written = entry.path();
        }
        ASSERT_FALSE(written.empty()) << "no journal report for round " << round;
        const std::string text = read_file(written);
        ASSERT_NE(text.find(R"({"event":"reset")"), std::string::npos) << written << '\n' << text;
        child again{{FAULTLINE_BINARY, "check", written.string(), "--expect", f.expect.string(), "--round", round}};
        const auto back = again.finish();
        EXPECT_EQ(back.code, 0) << written << '\n' << back.out << back.err;
    }
}

TEST(check_rounds, a_round_field_the_resets_contradict_is_bad_input) {
    std::string text = pytest_journal(true);
    text.replace(text.find(R"({"seq":8,"round":3,)"), 19, R"({"seq":8,"round":4,)");
    const files f{text};
    const auto r = f.check();
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find("bad journal: seq 8 says round 4, but the reset events before it put it in round 3"),
              std::string::npos)
        << r.err;
}

}  // namespace
}  // namespace faultline::cli::testing
