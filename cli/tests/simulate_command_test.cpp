// `faultline simulate` as a user types it: a sweep prints its table and writes CSV, JSON and SVG; the
// same seed prints the same numbers; every kind of bad input is exit 2 with a message, before
// anything runs (no output file is written).
#include "child_process.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace faultline::harness::testing {
namespace {

std::string read(const fs::path& p) {
    std::ifstream in{p, std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

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
    EXPECT_NE(read(dir / "occ.csv").find("30,exponential,"), std::string::npos);
    EXPECT_NE(read(dir / "occ.json").find("\"seed\":9"), std::string::npos);
    EXPECT_EQ(read(dir / "occ.svg").rfind("<svg", 0), 0u);

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
}  // namespace faultline::harness::testing
