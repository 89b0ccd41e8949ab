#include "faultline/storm/output.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <sstream>

namespace faultline::storm {
namespace {

std::size_t count(const std::string& text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

occ_sweep_config small_sweep() {
    occ_sweep_config c;
    c.clients = {5, 10};
    c.strategies = {occ_strategy::full, occ_strategy::exponential};
    c.trials = 3;
    return c;
}

TEST(occ_output, csv_json_and_svg_hold_every_point) {
    const occ_sweep_config config = small_sweep();
    const occ_sweep_result result = run_occ_sweep(config);
    std::ostringstream csv;
    write_occ_csv(csv, result);
    EXPECT_EQ(count(csv.str(), "\n"), 5u);  // header + 4 points
    EXPECT_EQ(csv.str().rfind("clients,strategy,work_mean", 0), 0u);

    std::ostringstream json;
    write_occ_json(json, config, result);
    const boost::json::value doc = boost::json::parse(json.str());
    EXPECT_EQ(doc.at("model").as_string(), "occ");
    EXPECT_EQ(doc.at("trials").to_number<int>(), 3);
    ASSERT_EQ(doc.at("points").as_array().size(), 4u);
    EXPECT_EQ(doc.at("points").as_array()[1].at("strategy").as_string(), "exponential");

    std::ostringstream svg;
    write_occ_svg(svg, result);
    EXPECT_EQ(svg.str().rfind("<svg", 0), 0u);
    EXPECT_EQ(count(svg.str(), "<polyline"), 4u);  // 2 strategies x (work, completion)

    std::ostringstream table;
    write_occ_table(table, config, result);
    EXPECT_EQ(count(table.str(), "\n"), 6u);
}

TEST(capacity_output, csv_json_and_svg_follow_the_bins) {
    capacity_config c = find_capacity_scenario("metastable").value();
    c.ops_per_client = 20;
    const capacity_result r = run_capacity(c);
    std::ostringstream csv;
    write_capacity_csv(csv, c, r);
    EXPECT_EQ(count(csv.str(), "\n"), r.bins.size() + 1);
    std::ostringstream json;
    write_capacity_json(json, "metastable", c, r);
    const boost::json::value doc = boost::json::parse(json.str());
    EXPECT_EQ(doc.at("bins").as_array().size(), r.bins.size());
    EXPECT_EQ(doc.at("metastable").as_bool(), r.metastable);
    std::ostringstream svg;
    write_capacity_svg(svg, c, r);
    EXPECT_EQ(count(svg.str(), "<polyline"), 4u);
    std::ostringstream table;
    write_capacity_table(table, "metastable", c, r);
    EXPECT_NE(table.str().find("amplification"), std::string::npos);
}

// metastable's slowdown, 10 s to 15 s at 10 % capacity, is shaded on both charts and named in their legends.
TEST(capacity_output, svg_shades_the_outage_window) {
    capacity_config c = find_capacity_scenario("metastable").value();
    c.ops_per_client = 20;
    std::ostringstream svg;
    write_capacity_svg(svg, c, run_capacity(c));
    EXPECT_EQ(count(svg.str(), "<rect class=\"shaded-span\" data-from=\"10\" data-to=\"15\""), 2u);
    EXPECT_EQ(count(svg.str(), ">outage</text>"), 2u);
    EXPECT_EQ(count(svg.str(), ">capacity x 0.10</text>"), 2u);

    c.outage_end = c.outage_start;  // no outage
    std::ostringstream none;
    write_capacity_svg(none, c, run_capacity(c));
    EXPECT_EQ(count(none.str(), "shaded-span"), 0u);
}

}  // namespace
}  // namespace faultline::storm
