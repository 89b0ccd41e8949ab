#include "faultline/config/document.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

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


std::string dotted_key(std::size_t parts) {
    std::string key = "a";
    for (std::size_t i = 1; i < parts; ++i) key += ".a";
    return key;
}

TEST(parse_document, refuses_a_dotted_key_past_the_bound_at_its_position) {
    const std::string past = dotted_key(max_dotted_key_parts + 1);
    for (const std::string& text : {"x = 1\n" + past + " = 1", "x = 1\n[" + past + "]", "x = 1\ny = { " + past + " = 1 }"}) {
        const document d = parse_document(text, "f.toml");
        EXPECT_FALSE(d.table) << text;
        ASSERT_EQ(d.errors.size(), 1u) << text;
        EXPECT_EQ(d.errors[0].where.line, 2u) << text;
        EXPECT_NE(d.errors[0].message.find("dotted key of more than 32 parts"), std::string::npos) << d.errors[0].message;
    }
}

TEST(parse_document, counts_quoted_parts_and_spaces_around_dots_but_not_dots_inside_strings_or_comments) {
    std::string quoted = "\"a\"";
    for (std::size_t i = 1; i <= max_dotted_key_parts; ++i) quoted += " . \"a\"";
    EXPECT_FALSE(parse_document(quoted + " = 1", "f.toml").table);

    const std::string dots(10 * max_dotted_key_parts, '.');
    const document d = parse_document("a.b.c = \"" + dots + "\"\nd = '" + dots + "' # " + dots +
                                          "\ne = \"\"\"\n" + dots + "\"\"\"\"\nf = 1.5\ng = 1979-05-27T07:32:00.999Z\n" +
                                          dotted_key(max_dotted_key_parts) + " = 1",
                                      "f.toml");
    ASSERT_TRUE(d.table) << d.errors[0].to_string();
    EXPECT_EQ(d.table->at_path("e").value<std::string>(), dots + "\"");
}

TEST(parse_document, refuses_nesting_past_the_bound) {
    const std::string deep = "a = " + std::string(max_nesting_depth + 1, '[') + std::string(max_nesting_depth + 1, ']');
    const document d = parse_document(deep, "f.toml");
    EXPECT_FALSE(d.table);
    ASSERT_EQ(d.errors.size(), 1u);
    EXPECT_EQ(d.errors[0].where.column, 5u + max_nesting_depth);
    EXPECT_NE(d.errors[0].message.find("nested more than 32 deep"), std::string::npos) << d.errors[0].message;

    const std::string at_bound = "a = " + std::string(max_nesting_depth, '[') + std::string(max_nesting_depth, ']');
    EXPECT_TRUE(parse_document(at_bound, "f.toml").table);
}

TEST(parse_document, refuses_text_past_the_size_bound_unparsed) {
    const document d = parse_document("a = \"" + std::string(max_document_bytes, 'x') + "\"", "f.toml");
    EXPECT_FALSE(d.table);
    ASSERT_EQ(d.errors.size(), 1u);
    EXPECT_NE(d.errors[0].message.find("at most 1048576 bytes"), std::string::npos) << d.errors[0].message;
}

TEST(parse_document, a_key_of_forty_thousand_parts_is_an_error_not_a_crash) {
    const document d = parse_document(dotted_key(40'000) + " = 1", "f.toml");
    EXPECT_FALSE(d.table);
    ASSERT_EQ(d.errors.size(), 1u);
    EXPECT_EQ(d.errors[0].where.line, 1u);
    EXPECT_EQ(d.errors[0].where.column, 1u);
}

TEST(load_document, refuses_a_file_past_the_size_bound) {
    const std::string path = ::testing::TempDir() + "/faultline_large.toml";
    {
        std::ofstream out(path, std::ios::binary);
        out << "a = \"" << std::string(max_document_bytes, 'x') << "\"\n";
    }
    const document d = load_document(path, "scenario file");
    std::remove(path.c_str());
    EXPECT_FALSE(d.table);
    ASSERT_EQ(d.errors.size(), 1u);
    EXPECT_EQ(d.errors[0].to_string(), path + ": the scenario file is larger than 1048576 bytes (1 MiB), the most faultline reads");
}

}  // namespace
}  // namespace faultline::config
