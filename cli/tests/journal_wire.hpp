// The wire details of a journal file's attempts, in file order: `faultline check` (read_jsonl) keeps
// records only, and these tests look at what the wire saw.
#pragma once

#include "faultline/record/journal_json.hpp"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace faultline::cli::testing {

inline std::vector<record::wire_detail> wire_details_of(const std::string& path) {
    std::vector<record::wire_detail> out;
    std::ifstream in{path};
    for (std::string line; std::getline(in, line);) {
        const boost::json::value v = boost::json::parse(line);
        if (v.as_object().contains("event")) continue;
        std::string error;
        record::wire_detail wire;
        EXPECT_TRUE(record_from_json(v, error, &wire)) << error;
        out.push_back(wire);
    }
    return out;
}

}  // namespace faultline::cli::testing
