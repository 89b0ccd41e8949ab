// The per-connection journal: the record's JSON, the file (the anchor line first, then one line per
// connection), and telling a TCP-mode journal from an HTTP one.
#include "faultline/tcp/connection_journal.hpp"

#include "faultline/record/journal_json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace faultline::tcp {
namespace {

connection_record sample() {
    connection_record r;
    r.conn = 3;
    r.t_accept = 1'000;
    r.t_end = 9'000;
    r.bytes_up = 18;
    r.bytes_down = 230;
    r.toxics = {"latency-1", "cut"};
    r.outcome = connection_outcome::closed;
    r.ended_by = "cut";
    r.instance = "edge";
    return r;
}

TEST(connection_journal, a_record_is_one_object_with_the_documented_fields) {
    EXPECT_EQ(boost::json::serialize(to_json(sample())),
              R"({"type":"tcp_connection","conn":3,"t_accept":1000,"t_end":9000,"bytes_up":18,"bytes_down":230,)"
              R"("toxics":["latency-1","cut"],"outcome":"closed","ended_by":"cut","instance":"edge"})");
    connection_record plain;
    plain.outcome = connection_outcome::upstream_refused;
    plain.error = "upstream connect: Connection refused";
    EXPECT_EQ(boost::json::serialize(to_json(plain)),
              R"({"type":"tcp_connection","conn":0,"t_accept":0,"t_end":0,"bytes_up":0,"bytes_down":0,)"
              R"("toxics":[],"outcome":"upstream_refused","error":"upstream connect: Connection refused"})");
}

TEST(connection_journal, the_file_opens_with_the_wall_clock_anchor_then_a_line_per_connection) {
    const auto path = std::filesystem::temp_directory_path() / ("faultline_tcp_journal_" + std::to_string(::getpid()));
    {
        connection_journal journal{path.string(), 5, std::chrono::system_clock::time_point{std::chrono::seconds{7}},
                                   "edge"};
        journal.append(sample());
        EXPECT_FALSE(journal.failed());
    }
    std::ifstream in{path};
    std::string anchor_line;
    std::string record_line;
    ASSERT_TRUE(std::getline(in, anchor_line));
    ASSERT_TRUE(std::getline(in, record_line));
    std::string error;
    const auto anchor = record::server_event_from_json(boost::json::parse(anchor_line), error);
    ASSERT_TRUE(anchor) << error;
    EXPECT_EQ(anchor->kind, record::server_event_kind::started);
    EXPECT_EQ(anchor->detail, "7000000000");
    EXPECT_EQ(anchor->peer, "edge");
    EXPECT_EQ(boost::json::parse(record_line), boost::json::value(to_json(sample())));
    in.clear();
    in.seekg(0);
    EXPECT_TRUE(holds_tcp_connections(in));
    std::filesystem::remove(path);
}

TEST(connection_journal, an_http_journal_or_an_anchor_alone_holds_no_tcp_connections) {
    std::istringstream http{R"({"event":"started","t":0,"detail":"1"})"
                            "\n"
                            R"({"seq":1,"conn":1,"method":"GET"})"
                            "\n"};
    EXPECT_FALSE(holds_tcp_connections(http));
    std::istringstream anchor_only{R"({"event":"started","t":0,"detail":"1"})"
                                   "\n"};
    EXPECT_FALSE(holds_tcp_connections(anchor_only));
    std::istringstream garbage{"not json\n"};
    EXPECT_FALSE(holds_tcp_connections(garbage));
}

}  // namespace
}  // namespace faultline::tcp
