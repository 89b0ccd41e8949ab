#include "faultline/config/reader.hpp"

#include <gtest/gtest.h>

namespace faultline::config {
namespace {

using namespace std::chrono_literals;

class reader_test : public ::testing::Test {
protected:
    table_reader read(std::string_view text, std::string context = "[t]") {
        table_ = toml::parse(text, std::string_view{"f.toml"});
        return table_reader{table_, "f.toml", std::move(context), errors_};
    }

    std::string only_error() const {
        EXPECT_EQ(errors_.size(), 1u);
        return errors_.empty() ? std::string{} : errors_.front().to_string();
    }

    toml::table table_;
    config_errors errors_;
};

TEST_F(reader_test, reads_every_type_and_accepts_a_complete_table) {
    auto r = read(R"(
        b = true
        i = 3
        n = 0.5
        s = "x"
        c = "two"
        d = "250ms"
        dn = "none"
        list = ["a", "b"]
        one = "a"
        ints = [1, 2]
        h = { "X-A" = "1" }
        [sub]
        [[rows]]
    )");
    EXPECT_EQ(r.boolean("b"), true);
    EXPECT_EQ(r.integer("i", 0, 10), 3);
    EXPECT_EQ(r.number("n", 0.0, 1.0), 0.5);
    EXPECT_EQ(r.string("s"), "x");
    EXPECT_EQ(r.choice("c", {"one", "two"}), "two");
    EXPECT_EQ(r.duration("d"), 250ms);
    const auto none = r.duration_or_none("dn", 0ns, 1s);
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->has_value());
    EXPECT_EQ(r.strings("list"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(r.string_or_strings("one"), std::vector<std::string>{"a"});
    EXPECT_EQ(r.integers("ints", 0, 5), (std::vector<std::int64_t>{1, 2}));
    EXPECT_EQ(r.string_table("h")->front(), (std::pair<std::string, std::string>{"X-A", "1"}));
    EXPECT_NE(r.table("sub"), nullptr);
    EXPECT_NE(r.array_of_tables("rows"), nullptr);
    EXPECT_FALSE(r.integer("absent", 0, 1).has_value());
    r.finish();
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(errors_.empty());
}

TEST_F(reader_test, reports_a_wrong_type_at_the_value) {
    auto r = read("\n\ni = \"3\"");
    EXPECT_FALSE(r.integer("i", 0, 10));
    EXPECT_EQ(only_error(), "f.toml:3:5: [t]: i: expected an integer, got a string");
    EXPECT_FALSE(r.ok());
}

TEST_F(reader_test, reports_ranges_with_their_bounds) {
    auto r = read("i = 11\nj = -1\nn = 2.5\np = 0\nd = \"5s\"\ne = \"0s\"");
    EXPECT_FALSE(r.integer("i", 0, 10));
    EXPECT_FALSE(r.integer("j", 0, std::numeric_limits<std::int64_t>::max()));
    EXPECT_FALSE(r.number("n", 0.0, 1.0));
    EXPECT_FALSE(r.number_above("p", 0.0, std::numeric_limits<double>::infinity()));
    EXPECT_FALSE(r.duration("d", 0ns, 1s));
    EXPECT_FALSE(r.duration("e", 1ns));
    ASSERT_EQ(errors_.size(), 6u);
    EXPECT_EQ(errors_[0].message, "[t]: i: must be in [0, 10], got 11");
    EXPECT_EQ(errors_[1].message, "[t]: j: must be at least 0, got -1");
    EXPECT_EQ(errors_[2].message, "[t]: n: must be in [0, 1], got 2.5");
    EXPECT_EQ(errors_[3].message, "[t]: p: must be greater than 0, got 0");
    EXPECT_EQ(errors_[4].message, "[t]: d: must be in [0s, 1s], got \"5s\"");
    EXPECT_EQ(errors_[5].message, "[t]: e: must be longer than 0, got \"0s\"");
}

TEST_F(reader_test, prints_bounds_whole_or_shortest) {
    auto r = read("a = 2e9\nb = 1e-9");
    EXPECT_FALSE(r.number("a", 1.0, 1e9));
    EXPECT_FALSE(r.number("b", 1e-6, 1.0));
    ASSERT_EQ(errors_.size(), 2u);
    EXPECT_EQ(errors_[0].message, "[t]: a: must be in [1, 1000000000], got 2000000000");
    EXPECT_EQ(errors_[1].message, "[t]: b: must be in [1e-06, 1], got 1e-09");
}

TEST_F(reader_test, accepts_an_empty_array_of_tables) {
    auto r = read("rows = []\nbad = [1]");
    const toml::array* rows = r.array_of_tables("rows");
    ASSERT_NE(rows, nullptr);
    EXPECT_TRUE(rows->empty());
    EXPECT_EQ(r.array_of_tables("bad"), nullptr);
    EXPECT_EQ(only_error(), "f.toml:2:7: [t]: bad: expected an array of tables, got an array");
}

TEST_F(reader_test, rejects_nan_in_every_range) {
    auto r = read("n = nan");
    EXPECT_FALSE(r.number("n", -1e300, 1e300));
    EXPECT_EQ(errors_.size(), 1u);
}

TEST_F(reader_test, explains_a_bad_duration_and_an_unknown_choice) {
    auto r = read("d = \"5\"\nc = \"three\"");
    EXPECT_FALSE(r.duration("d"));
    EXPECT_FALSE(r.choice("c", {"one", "two"}));
    ASSERT_EQ(errors_.size(), 2u);
    EXPECT_NE(errors_[0].message.find("[t]: d: bad duration \"5\": "), std::string::npos) << errors_[0].message;
    EXPECT_NE(errors_[0].message.find("missing unit"), std::string::npos);
    EXPECT_EQ(errors_[1].message, "[t]: c: unknown value \"three\"; allowed: one, two");
}

TEST_F(reader_test, reports_a_missing_required_key_at_the_table) {
    auto r = read("[inner]\nx = 1");
    auto inner = r.child(*r.table("inner"), "[inner]");
    EXPECT_FALSE(inner.string("wait", need::required));
    EXPECT_EQ(errors_.size(), 1u);
    EXPECT_EQ(errors_[0].message, "[inner]: missing required key \"wait\"");
    EXPECT_EQ(errors_[0].where.line, 1u);
}

TEST_F(reader_test, lists_the_allowed_keys_sorted_for_an_unknown_key) {
    auto r = read("wait = \"1s\"\nwiat = \"2s\"\nother = 1");
    r.duration("wait");
    r.allow("kind");
    r.reject("other", "belongs to [x]");
    r.finish();
    ASSERT_EQ(errors_.size(), 2u);
    EXPECT_EQ(errors_[0].to_string(), "f.toml:3:9: [t]: other: belongs to [x]");
    EXPECT_EQ(errors_[1].to_string(), "f.toml:2:1: [t]: unknown key \"wiat\"; allowed: kind, wait");
}

TEST_F(reader_test, reports_a_bad_item_at_the_item) {
    auto r = read("list = [\"a\", 2]\nints = [1, 99]\nh = { A = 1 }");
    EXPECT_FALSE(r.strings("list"));
    EXPECT_FALSE(r.integers("ints", 0, 10));
    EXPECT_FALSE(r.string_table("h"));
    ASSERT_EQ(errors_.size(), 3u);
    EXPECT_EQ(errors_[0].to_string(), "f.toml:1:14: [t]: list: every item must be a string, got an integer");
    EXPECT_EQ(errors_[1].message, "[t]: ints: every item must be an integer in [0, 10], got 99");
    EXPECT_EQ(errors_[2].message, "[t]: h.A: expected a string, got an integer");
}

TEST_F(reader_test, reads_a_mixed_array_and_reports_an_item_by_its_path) {
    auto r = read("mixed = [1, { a = 2 }, \"x\"]\nscalar = 3");
    const toml::array* mixed = r.array("mixed");
    ASSERT_NE(mixed, nullptr);
    EXPECT_EQ(mixed->size(), 3u);
    r.fail_at(*mixed->get(2), "mixed[2]", "expected an integer or a table, got a string");
    EXPECT_EQ(r.array("scalar"), nullptr);
    EXPECT_EQ(r.array("absent"), nullptr);
    ASSERT_EQ(errors_.size(), 2u);
    EXPECT_EQ(errors_[0].to_string(), "f.toml:1:24: [t]: mixed[2]: expected an integer or a table, got a string");
    EXPECT_EQ(errors_[1].to_string(), "f.toml:2:10: [t]: scalar: expected an array, got an integer");
}

TEST_F(reader_test, omits_the_prefix_for_an_empty_context) {
    auto r = read("x = 1", "");
    r.finish();
    EXPECT_EQ(only_error(), "f.toml:1:1: unknown key \"x\"; allowed: ");
}

TEST_F(reader_test, fail_names_the_key_at_its_value) {
    auto r = read("a = 1\nb = 2");
    r.fail("b", "contradicts a");
    r.fail_table("too many keys");
    ASSERT_EQ(errors_.size(), 2u);
    EXPECT_EQ(errors_[0].to_string(), "f.toml:2:5: [t]: b: contradicts a");
    EXPECT_EQ(errors_[1].message, "[t]: too many keys");
}

TEST(type_name, names_every_toml_type) {
    const toml::table t = toml::parse("s = \"x\"\ni = 1\nf = 1.5\nb = true\na = []\nt = {}");
    EXPECT_EQ(type_name(*t.get("s")), "a string");
    EXPECT_EQ(type_name(*t.get("i")), "an integer");
    EXPECT_EQ(type_name(*t.get("f")), "a float");
    EXPECT_EQ(type_name(*t.get("b")), "a boolean");
    EXPECT_EQ(type_name(*t.get("a")), "an array");
    EXPECT_EQ(type_name(*t.get("t")), "a table");
}

}  // namespace
}  // namespace faultline::config
