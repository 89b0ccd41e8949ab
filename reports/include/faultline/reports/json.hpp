// The JSON report (Boost.JSON): per scenario its name, file, seed, timings, counts (operations,
// attempts, committed effects, client outcomes), the client command's result, and every verdict with
// its evidence. A pure function of run records, written pretty-printed with a stable key order so
// files diff well. The journal itself is not repeated here: `faultline serve --journal` and the
// journal's JSON Lines form (record/journal_json.hpp) carry it.
#pragma once

#include <span>
#include <string>

#include <boost/json/object.hpp>

#include "faultline/record/run_record.hpp"

namespace faultline::reports {

// One scenario's report object.
boost::json::object to_json(const record::run_record& run);

// `{"passed": …, "scenarios": [ … ]}` for one or more runs, pretty-printed, ending in a newline.
std::string json_report(std::span<const record::run_record> runs);

}  // namespace faultline::reports
