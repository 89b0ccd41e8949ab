// `faultline simulate` as a user types it: a sweep prints its table and writes CSV, JSON and SVG; the
// same seed prints the same numbers; a shipped simulation file prints what the same options print,
// and options override it; every kind of bad input, in the options or in a file, is exit 2 with a
// message, before anything runs (no output file is written).
#include "child_process.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace faultline::cli::testing {
namespace {

// The output without the timing line (its figures differ between runs).
std::string numbers_of(const std::string& out) {
    std::istringstream in{out};
    std::string line;
    std::string kept;
    while (std::getline(in, line))
        if (line.find("events/s") == std::string::npos && line.rfind("wrote ", 0) != 0) kept += line + '\n';
    return kept;
}

TEST(simulate_command, an_occ_sweep_prints_its_table_and_writes_csv_json_svg) {
    const fs::path dir = temp_file("simulate");
    fs::remove_all(dir);
    fs::create_directories(dir);
    child proc{{FAULTLINE_BINARY, "simulate", "--model", "occ", "--clients", "10..30:10", "--strategy", "all",
                "--trials", "5", "--seed", "9", "--csv", (dir / "occ.csv").string(), "--json",
                (dir / "occ.json").string(), "--svg", (dir / "occ.svg").string()}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("decorrelated"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("75 trials"), std::string::npos) << r.out;  // 3 x 5 x 5
    EXPECT_NE(read_file(dir / "occ.csv").find("30,exponential,"), std::string::npos);
    EXPECT_NE(read_file(dir / "occ.json").find("\"seed\":9"), std::string::npos);
    EXPECT_EQ(read_file(dir / "occ.svg").rfind("<svg", 0), 0u);

    child again{{FAULTLINE_BINARY, "simulate", "--clients", "10..30:10", "--trials", "5", "--seed", "9",
                 "--threads", "1"}};
    const auto r2 = again.finish();
    ASSERT_EQ(r2.code, 0) << r2.err;
    EXPECT_EQ(numbers_of(r2.out), numbers_of(r.out));
    fs::remove_all(dir);
}

TEST(simulate_command, a_capacity_scenario_reports_amplification) {
    child proc{{FAULTLINE_BINARY, "simulate", "--model", "capacity", "--scenario", "layers_3x3", "--clients", "100"}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("amplification at the backend 27.000x"), std::string::npos) << r.out;
}

// The shipped simulation files (examples/simulate, beside suites/).
const fs::path examples_dir = fs::path{FAULTLINE_SUITES_DIR} / ".." / "examples" / "simulate";

struct run_output {
    int code;
    std::string out;
    std::string err;
};

run_output simulate(std::vector<std::string> args) {
    args.insert(args.begin(), {FAULTLINE_BINARY, "simulate"});
    child proc{args};
    const auto r = proc.finish();
    return {r.code, r.out, r.err};
}

TEST(simulate_command, a_shipped_file_prints_the_numbers_of_the_same_options) {
    const run_output file = simulate({(examples_dir / "aws-backoff-jitter.toml").string()});
    ASSERT_EQ(file.code, 0) << file.err;
    const run_output options = simulate({"--model", "occ", "--clients", "10..190:10", "--strategy", "all", "--trials",
                                         "100", "--seed", "1"});
    ASSERT_EQ(options.code, 0) << options.err;
    EXPECT_NE(file.out.find("9500 trials"), std::string::npos) << file.out;
    EXPECT_EQ(numbers_of(file.out), numbers_of(options.out));

    const run_output storm = simulate({(examples_dir / "layers-3x3.toml").string()});
    ASSERT_EQ(storm.code, 0) << storm.err;
    const run_output storm_options =
        simulate({"--model", "capacity", "--scenario", "layers_3x3", "--clients", "1000", "--ops", "10", "--seed", "1"});
    ASSERT_EQ(storm_options.code, 0) << storm_options.err;
    EXPECT_NE(storm.out.find("amplification at the backend 27.000x"), std::string::npos) << storm.out;
    EXPECT_EQ(numbers_of(storm.out), numbers_of(storm_options.out));
}

TEST(simulate_command, options_override_the_file) {
    const fs::path dir = temp_file("simulate-override");
    fs::remove_all(dir);
    fs::create_directories(dir);
    const run_output file = simulate({(examples_dir / "jitter-at-100-clients.toml").string(), "--clients", "10,20",
                                      "--strategy", "full", "--trials", "3", "--seed", "5", "--csv",
                                      (dir / "o.csv").string()});
    ASSERT_EQ(file.code, 0) << file.err;
    // The file's hops (20 ms, 5 ms) stay; what the options name is theirs.
    const run_output options = simulate({"--clients", "10,20", "--strategy", "full", "--trials", "3", "--seed", "5",
                                         "--hop-mean", "20ms", "--hop-sd", "5ms"});
    ASSERT_EQ(options.code, 0) << options.err;
    EXPECT_NE(file.out.find("6 trials"), std::string::npos) << file.out;
    EXPECT_EQ(numbers_of(file.out), numbers_of(options.out));
    EXPECT_NE(read_file(dir / "o.csv").find("20,full,"), std::string::npos);
    fs::remove_all(dir);
}

TEST(simulate_command, every_shipped_file_runs) {
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator{examples_dir}) {
        if (entry.path().extension() != ".toml") continue;
        ++files;
        const run_output r = simulate({entry.path().string(), "--seed", "2"});
        EXPECT_EQ(r.code, 0) << entry.path() << '\n' << r.err;
    }
    EXPECT_EQ(files, 4u);
}

TEST(simulate_command, a_bad_file_is_exit_2_with_its_position) {
    const fs::path dir = temp_file("simulate-bad");
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path csv = dir / "never.csv";
    struct bad_file {
        std::string text;
        std::vector<std::string> options;
        std::string message;
    };
    const std::vector<bad_file> cases{
        {"[simulate]\nstrategy = \"fast\"\n", {}, ":2:12: [simulate]: strategy: unknown strategy 'fast'"},
        {"[simulate]\ntrials = 0\n", {}, ":2:10: [simulate]: trials: must be in [1, 100000], got 0"},
        {"[simulate]\nclients = \"190..10:10\"\n", {}, ":2:11: [simulate]: clients: the range '190..10:10' is inverted"},
        {"[simulate]\nclient = 10\n", {}, ":2:1: [simulate]: unknown key \"client\""},
        {"[simulate]\nmodel = 1\n", {}, ":2:9: [simulate]: model: expected a string, got an integer"},
        {"[simulate]\nclients = \"10000\"\ntrials = 1000\n", {}, ":1:1: [simulate]: the sweep would process"},
        // The options are checked against the file: a capacity file with an occ-only option.
        {"[simulate]\nmodel = \"capacity\"\nscenario = \"layers_3x3\"\n", {"--trials", "3"}, "apply to --model occ"},
        // ... and what they make of the file must be runnable too.
        {"[simulate]\nclients = \"10000\"\n", {"--trials", "1000"}, "the sweep would process"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const fs::path file = dir / ("bad" + std::to_string(i) + ".toml");
        std::ofstream{file} << cases[i].text;
        std::vector<std::string> args{file.string(), "--csv", csv.string()};
        args.insert(args.end(), cases[i].options.begin(), cases[i].options.end());
        const run_output r = simulate(args);
        EXPECT_EQ(r.code, 2) << cases[i].text << r.err;
        EXPECT_NE(r.err.find(cases[i].message), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(csv)) << cases[i].text;
    }
    const run_output missing = simulate({(dir / "missing.toml").string()});
    EXPECT_EQ(missing.code, 2);
    EXPECT_NE(missing.err.find("missing.toml"), std::string::npos) << missing.err;
    fs::remove_all(dir);
}

struct bad_case {
    std::vector<std::string> args;
    std::string message;
};

TEST(simulate_command, bad_input_is_exit_2_before_anything_runs) {
    const fs::path csv = temp_file("never.csv");
    fs::remove(csv);
    const std::vector<bad_case> cases{
        {{"--model", "queue"}, "--model"},
        {{"--strategy", "fast"}, "unknown strategy 'fast'"},
        {{"--clients", "190..10:10"}, "inverted"},
        {{"--clients", ""}, "empty"},
        {{"--clients", "10..20:0"}, "step of 0"},
        {{"--trials", "0"}, "--trials"},
        {{"--clients", "10000", "--trials", "1000"}, "events"},
        {{"--clients", "200000"}, "clients must be in 1..10000"},
        {{"--model", "capacity"}, "needs --scenario"},
        {{"--model", "capacity", "--scenario", "nope"}, "unknown scenario 'nope'"},
        {{"--model", "capacity", "--scenario", "layers_3x3", "--trials", "3"}, "apply to --model occ"},
        {{"--model", "capacity", "--scenario", "layers_3x3", "--clients", "1000000", "--ops", "1000"}, "at most"},
        {{"--svg", "/nonexistent-dir/x.svg"}, "cannot write"},
        {{"--base", "5"}, "--base: bad duration"},
        {{"--hop-mean", "2h"}, "hop latency mean and deviation must be in [0, 1h]"},
        {{"--cap", "25h"}, "at most 24h"},
        // 40 minutes a hop: the first retries already pass the virtual clock's 13 days.
        {{"--clients", "190", "--strategy", "none", "--trials", "1", "--hop-mean", "40m"}, "13 days of virtual time"},
        {{"--model", "capacity", "--scenario", "layers_3x3", "--cap", "1s"}, "apply to --model occ"},
    };
    for (const bad_case& c : cases) {
        std::vector<std::string> argv{FAULTLINE_BINARY, "simulate", "--csv", csv.string()};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        child proc{argv};
        const auto r = proc.finish();
        EXPECT_EQ(r.code, 2) << c.message << '\n' << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(csv)) << c.message;
    }
}

}  // namespace
}  // namespace faultline::cli::testing
