#include "faultline/config/document.hpp"

#include <gtest/gtest.h>

namespace faultline::config {
namespace {

TEST(parse_document, returns_the_table_of_valid_text) {
    const document d = parse_document("a = 1", "f.toml");
    ASSERT_TRUE(d.table);
    EXPECT_TRUE(d.errors.empty());
    EXPECT_EQ(d.table->get("a")->value<std::int64_t>(), 1);
}

TEST(parse_document, reports_a_syntax_error_with_its_position) {
    const document d = parse_document("a = 1\nb = = 2", "f.toml");
    EXPECT_FALSE(d.table);
    ASSERT_EQ(d.errors.size(), 1u);
    EXPECT_EQ(d.errors[0].where.file, "f.toml");
    EXPECT_EQ(d.errors[0].where.line, 2u);
    EXPECT_EQ(d.errors[0].message.rfind("TOML syntax error: ", 0), 0u) << d.errors[0].message;
}

TEST(load_document, names_a_file_it_cannot_read) {
    const document d = load_document("/nonexistent/faultline.toml", "scenario file");
    EXPECT_FALSE(d.table);
    ASSERT_EQ(d.errors.size(), 1u);
    EXPECT_EQ(d.errors[0].to_string(), "/nonexistent/faultline.toml: cannot read the scenario file");
}

}  // namespace
}  // namespace faultline::config
