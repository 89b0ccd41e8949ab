// `faultline new` writes a starter scenario that validates and passes as written, fails with the
// evidence when its client is switched to the naive preset (so its checks can fail), and never
// overwrites a file unasked.
#include "child_process.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace faultline::cli::testing {
namespace {

using ::testing::HasSubstr;

TEST(new_command, the_starter_validates_and_passes_as_written) {
    const fs::path path = temp_file("starter.toml");
    fs::remove(path);
    const auto wrote = run_faultline({"new", path.string()});
    ASSERT_EQ(wrote.code, 0) << wrote.err;
    EXPECT_THAT(wrote.out, HasSubstr("run it with `faultline run " + path.string() + "`"));
    EXPECT_EQ(run_faultline({"validate", path.string()}).code, 0);
    const auto ran = run_faultline({"run", path.string()});
    EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
    EXPECT_THAT(ran.out, HasSubstr("no_double_effects"));
    fs::remove(path);
}

TEST(new_command, its_checks_fail_a_naive_client) {
    const fs::path path = temp_file("starter-naive.toml");
    std::string text = run_faultline({"new", "-"}).out;
    const std::string good = "preset = \"good\"";
    ASSERT_NE(text.find(good), std::string::npos);
    text.replace(text.find(good), good.size(), "preset = \"naive\"");
    std::ofstream{path} << text;
    const auto ran = run_faultline({"run", path.string()});
    EXPECT_EQ(ran.code, 1) << ran.out << ran.err;
    EXPECT_THAT(ran.out, HasSubstr("no_double_effects"));
    fs::remove(path);
}

TEST(new_command, an_existing_file_is_kept_unless_forced) {
    const fs::path path = temp_file("starter-kept.toml");
    std::ofstream{path} << "mine\n";
    const auto refused = run_faultline({"new", path.string()});
    EXPECT_EQ(refused.code, 2);
    EXPECT_THAT(refused.err, HasSubstr(path.string() + " exists; choose another path or add --force"));
    EXPECT_EQ(read_file(path), "mine\n");
    EXPECT_EQ(run_faultline({"new", path.string(), "--force"}).code, 0);
    EXPECT_THAT(read_file(path), HasSubstr("[[expect]]"));
    fs::remove(path);
}

}  // namespace
}  // namespace faultline::cli::testing
