// The schema comes from a parser: a toy format with a discriminated [[shape]] array, a nested table,
// a plain table read only when present and a key of several forms — the generator finds every key by
// growing its probes.
#include "faultline/config/document.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/config/schema.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace faultline::config;

void parse_toy(std::string_view text) {
    document doc = parse_document(text, "toy.toml");
    if (!doc.table) return;
    faultline::config_errors errors;
    table_reader top{*doc.table, "toy.toml", "", errors};
    top.string("name", need::required);
    top.duration_or_none("timeout", std::chrono::nanoseconds{0}, std::chrono::hours{1});
    // `size`: one count, a list of counts or a range in its own syntax, declared at once; each read
    // below sees only the form present.
    key_spec size_forms;
    size_forms.type = key_spec::shape::integers_or_string;
    size_forms.minimum = 1;
    size_forms.maximum = 9;
    schema_recorder::note(*doc.table, "size", size_forms);
    const toml::node* size = doc.table->get("size");
    if (size != nullptr && size->is_string()) {
        top.string("size");
    } else if (size != nullptr && size->is_integer()) {
        top.integer("size", 1, 9);
    } else {
        top.integers("size", 1, 9);
    }
    if (const toml::table* limits = top.table("limits")) {
        table_reader r = top.child(*limits, "[limits]");
        r.integer("max", 1, 10);
        r.finish();
    }
    if (const toml::array* shapes = top.array_of_tables("shape")) {
        for (const toml::node& item : *shapes) {
            table_reader r = top.child(*item.as_table(), "[[shape]]");
            const auto kind = r.choice("kind", {"circle", "square"}, need::required);
            r.number_above("scale", 0, 100);
            if (kind == "circle") r.number("radius", 0, 5);
            if (kind == "square") r.strings("corners");
            r.finish();
        }
    }
    top.finish();
}

boost::json::object toy_schema() { return generate_schema("toy", parse_toy, {"kind"}); }

TEST(schema, the_documents_keys_with_their_rules) {
    const auto schema = toy_schema();
    EXPECT_EQ(schema.at("$schema"), "http://json-schema.org/draft-07/schema#");
    EXPECT_EQ(schema.at("title"), "toy");
    EXPECT_EQ(schema.at("additionalProperties"), false);
    EXPECT_EQ(boost::json::serialize(schema.at("required")), R"(["name"])");
    const auto& properties = schema.at("properties").as_object();
    EXPECT_EQ(boost::json::serialize(properties.at("name")), R"({"type":"string"})");
    EXPECT_EQ(boost::json::serialize(properties.at("timeout")),
              R"({"anyOf":[{"type":"string","pattern":"^[0-9]+(ns|us|ms|s|m|h)$"},{"const":"none"}]})");
}

TEST(schema, a_table_read_only_when_present_is_found_by_probing) {
    const auto limits = toy_schema().at("properties").at("limits").as_object();
    EXPECT_EQ(boost::json::serialize(limits.at("properties")), R"({"max":{"type":"integer","minimum":1E0,"maximum":1E1}})");
    EXPECT_EQ(limits.at("additionalProperties"), false);
}

// Keys read for one kind only are allowed for that kind only.
TEST(schema, a_discriminated_array_says_which_keys_each_kind_takes) {
    const auto shape = toy_schema().at("properties").at("shape").as_object();
    EXPECT_EQ(shape.at("type"), "array");
    const auto& item = shape.at("items").as_object();
    EXPECT_EQ(boost::json::serialize(item.at("required")), R"(["kind"])");
    const auto& properties = item.at("properties").as_object();
    EXPECT_EQ(boost::json::serialize(properties.at("kind")), R"({"type":"string","enum":["circle","square"]})");
    EXPECT_EQ(boost::json::serialize(properties.at("scale")), R"({"type":"number","exclusiveMinimum":0E0,"maximum":1E2})");
    EXPECT_TRUE(properties.contains("radius"));
    EXPECT_TRUE(properties.contains("corners"));
    EXPECT_EQ(boost::json::serialize(item.at("allOf")),
              R"([{"if":{"properties":{"kind":{"const":"circle"}},"required":["kind"]},)"
              R"("then":{"propertyNames":{"enum":["kind","scale","radius"]},"required":["kind"]}},)"
              R"({"if":{"properties":{"kind":{"const":"square"}},"required":["kind"]},)"
              R"("then":{"propertyNames":{"enum":["kind","scale","corners"]},"required":["kind"]}}])");
}

TEST(schema, a_key_of_several_forms_takes_each_of_them) {
    EXPECT_EQ(boost::json::serialize(toy_schema().at("properties").at("size")),
              R"({"anyOf":[{"type":"integer","minimum":1E0,"maximum":9E0},)"
              R"({"type":"array","items":{"type":"integer","minimum":1E0,"maximum":9E0}},{"type":"string"}]})");
}

TEST(schema, nothing_is_recorded_outside_a_recorder) {
    parse_toy("name = \"x\"\n");  // no recorder: the readers note nothing, and nothing breaks
    schema_recorder recorder{{}};
    EXPECT_EQ(recorder.size(), 0U);
    parse_toy("name = \"x\"\n");
    EXPECT_EQ(recorder.size(), 5U);  // name, timeout, size, limits, shape
}

}  // namespace
