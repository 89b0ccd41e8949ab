// The "html" report: one self-contained page (inline CSS and SVG, a few lines of plain JS, nothing
// fetched) that shows the shape of the retry traffic. An index of scenarios (verdict, key figures, a
// load thumbnail with its axes), failures first, each linking to its section by an id made from its
// name; then per scenario: the verdict table with the console's evidence text and a folded timeline
// of the operations that evidence names, load over time (first attempts and retries stacked, buckets
// where faults fired shaded), a swimlane timeline of operations (offending attempts and double
// effects highlighted, the journal record on hover), for a merged history (a fleet of sidecars, relay
// tiers) a lane per instance with the commits of one operation by different instances joined, each
// process of a command client from spawn to
// exit, gap histograms per retry index (with the declared backoff envelope when the client declared
// one), and the replayed token bucket where a retry_budget check has one. Large runs are
// down-sampled in the ways the page states, so 10,000 operations stay well under 2 MB. A pure
// function of the runs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "faultline/checks/backoff_curve.hpp"
#include "faultline/checks/token_bucket.hpp"
#include "faultline/reports/console.hpp"
#include "faultline/reports/writer.hpp"
#include "svg.hpp"
#include "text.hpp"

namespace faultline::reports {

namespace {

using record::journal_record;
using record::run_record;
using detail::linear_scale;
using detail::px;
using detail::svg_chart;

constexpr std::size_t load_buckets = 100;
constexpr std::size_t max_timeline_lanes = 120;
constexpr std::size_t histogram_bins = 30;
constexpr std::size_t max_retry_panels = 4;
constexpr std::size_t budget_columns = 400;  // the token level keeps each column's lowest point

std::string h(std::string_view text) { return detail::xml_escape(text, false); }
std::string attr(std::string_view text) { return detail::xml_escape(text, true); }

std::string ms(std::int64_t ns) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f ms", static_cast<double>(ns) / 1e6);
    return buffer;
}

std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

// How an attempt ended, as the timeline colours it.
std::string_view attempt_class(const journal_record& r) {
    if (r.outcome != record::wire_outcome::responded || r.status == 0) return "no-response";
    if (r.status >= 500) return "server-error";
    if (r.status >= 400) return "client-error";
    return "ok";
}

// The journal record as hover text: what `faultline serve --journal` would say about the attempt.
std::string record_title(const journal_record& r) {
    std::string out = "seq " + std::to_string(r.seq) + " · attempt " + std::to_string(r.attempt) + " of " +
                      r.operation + "\n" + r.method + " " + r.target + "\nrequest at " + ms(r.request_ns) +
                      ", ended at " + ms(r.finished_ns) + "\n";
    out += r.outcome == record::wire_outcome::responded ? "status " + std::to_string(r.status)
                                                         : std::string(record::to_string(r.outcome));
    if (r.retry_after_ms) out += ", Retry-After " + std::to_string(*r.retry_after_ms) + " ms";
    if (!r.fault.empty()) out += "\nfault " + r.fault + " (rule " + r.rule + ")";
    out += "\neffect " + std::string(record::to_string(r.effect)) + ", connection " + std::to_string(r.connection);
    if (r.instance && !r.instance->empty()) out += "\ninstance " + *r.instance;
    return h(detail::printable(out));
}

// How an outcome is shown: the badge's word and its CSS class.
struct outcome_badge {
    std::string word;
    std::string css;
};

outcome_badge badge_of(record::verdict_outcome outcome) {
    switch (outcome) {
        case record::verdict_outcome::pass: return {"pass", "pass"};
        case record::verdict_outcome::insufficient_evidence: return {"insufficient evidence", "insufficient"};
        case record::verdict_outcome::fail: break;
    }
    return {"fail", "fail"};
}

// A run the harness could not complete counts as failed.
record::verdict_outcome run_outcome(const run_record& run) {
    return run.harness_error.empty() ? record::outcome_of(run) : record::verdict_outcome::fail;
}

// An `expect_failure` check that failed: the client showed the bug the scenario was written to show.
bool failed_as_expected(const record::verdict& v) { return v.expected_to_fail && v.passed; }

// A scenario that passed because a check failed as declared, which the page keeps apart from a pass.
bool passed_by_expected_failure(const run_record& run) {
    return run_outcome(run) == record::verdict_outcome::pass &&
           std::any_of(run.verdicts.begin(), run.verdicts.end(), failed_as_expected);
}

std::string run_status(const run_record& run) {
    if (!run.harness_error.empty()) return "error";
    return (passed_by_expected_failure(run) ? std::string("failed as expected") : badge_of(run_outcome(run)).word) +
           (run.interrupted ? " (interrupted)" : "");
}

std::string status_css(const run_record& run) {
    return passed_by_expected_failure(run) ? "expected" : badge_of(run_outcome(run)).css;
}

// Failures, then what could not be judged, then passes.
int failures_first_rank(record::verdict_outcome outcome) {
    switch (outcome) {
        case record::verdict_outcome::fail: return 0;
        case record::verdict_outcome::insufficient_evidence: return 1;
        case record::verdict_outcome::pass: break;
    }
    return 2;
}

// Positions 0..count-1 with failures first, keeping the given order within each outcome.
template <class Outcome>
std::vector<std::size_t> failures_first(std::size_t count, Outcome outcome_at) {
    std::vector<std::size_t> order(count);
    for (std::size_t i = 0; i < count; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return failures_first_rank(outcome_at(a)) < failures_first_rank(outcome_at(b));
    });
    return order;
}

// Each scenario's id on the page, so CI can link `report.html#herd-no-jitter`: the name in lower
// case, keeping letters, digits, '.', '_' and '-' (a suite's names stay as they are), every run of
// other characters one '-'. A repeated name gets "-2", "-3"… in the runs' order (the suite's, not
// the outcome's), so a link stays put when a scenario starts to fail.
std::vector<std::string> scenario_anchors(std::span<const run_record> runs) {
    std::set<std::string> taken{"faultline-status"};  // the page's own id
    std::vector<std::string> anchors;
    for (const run_record& run : runs) {
        std::string slug;
        for (const char c : run.scenario) {
            const bool upper = c >= 'A' && c <= 'Z';
            const bool kept = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            if (kept || upper) {
                slug += upper ? static_cast<char>(c - 'A' + 'a') : c;
            } else if (!slug.empty() && slug.back() != '-') {
                slug += '-';
            }
        }
        if (!slug.empty() && slug.back() == '-') slug.pop_back();
        if (slug.empty()) slug = "scenario";
        std::string anchor = slug;
        for (int n = 2; taken.contains(anchor); ++n) anchor = slug + "-" + std::to_string(n);
        taken.insert(anchor);
        anchors.push_back(std::move(anchor));
    }
    return anchors;
}

// What every chart of one run reads: the operations, where the run ends, and the attempts named by
// the evidence of a failed check.
struct run_view {
    record::operation_groups operations;
    std::set<std::uint64_t> offending;
    std::int64_t end_ns = 1;
};

run_view view_of(const run_record& run) {
    run_view v;
    v.operations = record::group_operations(run.journal);
    for (const record::verdict& verdict : run.verdicts) {
        // An expected failure's evidence names the offending attempts just as a failure's does.
        if ((verdict.passed && !verdict.expected_to_fail) || verdict.insufficient_evidence) continue;
        for (const record::evidence_item& item : verdict.evidence) v.offending.insert(item.seqs.begin(), item.seqs.end());
    }
    v.end_ns = std::max<std::int64_t>(1, run.duration.count());
    for (const journal_record& r : run.journal) v.end_ns = std::max({v.end_ns, r.finished_ns, r.request_ns});
    if (run.command) {
        for (const record::process_record& p : run.command->processes) v.end_ns = std::max(v.end_ns, p.finished_ns);
    }
    return v;
}

// --- load over time ------------------------------------------------------------------------------

struct load_bucket {
    std::size_t first = 0;
    std::size_t retries = 0;
};

std::size_t bucket_of(std::int64_t ns, const run_view& view) {
    return std::min<std::size_t>(load_buckets - 1, static_cast<std::size_t>(std::max<std::int64_t>(0, ns) *
                                                                            static_cast<std::int64_t>(load_buckets) /
                                                                            view.end_ns));
}

std::vector<load_bucket> bucket_load(const run_record& run, const run_view& view) {
    std::vector<load_bucket> buckets(load_buckets);
    for (const journal_record& r : run.journal) {
        load_bucket& b = buckets[bucket_of(r.request_ns, view)];
        (r.attempt <= 1 ? b.first : b.retries) += 1;
    }
    return buckets;
}

constexpr std::size_t fault_colours = 6;  // rules beyond share colours, but keep their own titles

// One fault rule's firings per load bucket, as the journal records them (the rule's name, or the
// fault kind for a record that names no rule).
struct rule_windows {
    std::string rule;
    std::string kind;
    std::size_t colour = 0;
    std::vector<std::size_t> fired;  // per bucket
};

// The rules that fired on recorded attempts: the run's rules in file order, then any other name the
// journal holds (a journal checked without its scenario), in order of first firing.
std::vector<rule_windows> fault_windows(const run_record& run, const run_view& view) {
    std::vector<rule_windows> out;
    for (const record::rule_firing& f : run.rule_firings) out.push_back({f.rule, f.kind, 0, {}});
    for (const journal_record& r : run.journal) {
        if (r.fault.empty() && r.rule.empty()) continue;
        const record::symbol name = r.rule.empty() ? r.fault : r.rule;
        auto it = std::find_if(out.begin(), out.end(), [&](const rule_windows& w) { return w.rule == name; });
        if (it == out.end()) it = out.insert(out.end(), rule_windows{name.str(), r.fault.str(), 0, {}});
        if (it->fired.empty()) it->fired.resize(load_buckets);
        ++it->fired[bucket_of(r.request_ns, view)];
    }
    std::erase_if(out, [](const rule_windows& w) { return w.fired.empty(); });
    for (std::size_t i = 0; i < out.size(); ++i) out[i].colour = i % fault_colours;
    return out;
}

std::string load_chart(const run_record& run, const run_view& view, bool thumbnail) {
    const double width = thumbnail ? 200 : 900;
    const double height = thumbnail ? 80 : 220;
    const double left = thumbnail ? 30 : 50, right = thumbnail ? 12 : 10, top = thumbnail ? 20 : 24,
                 bottom = thumbnail ? 20 : 30;
    const std::vector<load_bucket> buckets = bucket_load(run, view);
    std::size_t peak = 1;
    for (const load_bucket& b : buckets) peak = std::max(peak, b.first + b.retries);
    // A thumbnail's count axis is labelled at 0 and at its peak only.
    const double step = thumbnail ? static_cast<double>(peak) : detail::nice_step(static_cast<double>(peak), 4);
    const double y_max = std::ceil(static_cast<double>(peak) / step) * step;
    const linear_scale x{0, static_cast<double>(view.end_ns), left, width - right};
    const linear_scale y{0, y_max, height - bottom, top};
    const double bucket_ns = static_cast<double>(view.end_ns) / load_buckets;
    const double bar = (width - left - right) / load_buckets;
    svg_chart chart(thumbnail ? "load-thumbnail" : "load", "attempts per time bucket", width, height);
    // Shade, per rule, each run of buckets in which it fired, first, so the bars stay on top. Each
    // rule has its own horizontal band of the plot, so rules firing together never blend into one.
    const std::vector<rule_windows> windows = fault_windows(run, view);
    const double band = (height - top - bottom) / static_cast<double>(std::max<std::size_t>(1, windows.size()));
    for (std::size_t k = 0; k < windows.size(); ++k) {
        const rule_windows& w = windows[k];
        for (std::size_t i = 0; i < w.fired.size();) {
            if (w.fired[i] == 0) { ++i; continue; }
            std::size_t j = i;
            std::size_t fired = 0;
            while (j < w.fired.size() && w.fired[j] > 0) fired += w.fired[j++];
            chart.add("<rect class=\"fault-window fault-" + std::to_string(w.colour) + "\" data-rule=\"" +
                      attr(detail::printable(w.rule)) + "\" data-from=\"" + std::to_string(i) + "\" data-to=\"" +
                      std::to_string(j - 1) + "\" data-fired=\"" + std::to_string(fired) + "\" x=\"" +
                      px(left + bar * static_cast<double>(i)) + "\" y=\"" + px(top + band * static_cast<double>(k)) +
                      "\" width=\"" + px(bar * static_cast<double>(j - i)) + "\" height=\"" + px(band) + "\"><title>rule " +
                      h(detail::printable(w.rule)) + (w.kind.empty() ? "" : " (" + h(detail::printable(w.kind)) + ")") +
                      " fired " + std::to_string(fired) + (fired == 1 ? " time" : " times") + " in " +
                      ms(static_cast<std::int64_t>(bucket_ns * static_cast<double>(i))) + "–" +
                      ms(static_cast<std::int64_t>(bucket_ns * static_cast<double>(j))) + "</title></rect>");
            i = j;
        }
    }
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        const load_bucket& b = buckets[i];
        if (b.first + b.retries == 0) continue;
        const double x0 = left + bar * static_cast<double>(i);
        const std::string title = "<title>" + ms(static_cast<std::int64_t>(bucket_ns * static_cast<double>(i))) + "–" +
                                  ms(static_cast<std::int64_t>(bucket_ns * static_cast<double>(i + 1))) + ": " +
                                  std::to_string(b.first) + " first attempts, " + std::to_string(b.retries) +
                                  " retries</title>";
        double base = 0;
        for (const auto& [series, count] : {std::pair{"first", b.first}, std::pair{"retry", b.retries}}) {
            if (count == 0) continue;
            const double top_value = base + static_cast<double>(count);
            chart.add("<rect class=\"" + std::string(series) + "\" data-series=\"" + series + "\" data-bucket=\"" +
                      std::to_string(i) + "\" data-count=\"" + std::to_string(count) + "\" x=\"" + px(x0) + "\" y=\"" +
                      px(y(top_value)) + "\" width=\"" + px(std::max(bar - 0.5, 0.8)) + "\" height=\"" +
                      px(y(base) - y(top_value)) + "\">" + title + "</rect>");
            base = top_value;
        }
    }
    chart.y_axis(left, y, step, "attempts");
    if (thumbnail) {
        chart.time_span_axis(height - bottom, x);
    } else {
        chart.time_axis(height - bottom, x);
    }
    return chart.str();
}

// --- timeline --------------------------------------------------------------------------------------

std::size_t committed_count(const record::operation_attempts& op) {
    return static_cast<std::size_t>(std::count_if(op.attempts.begin(), op.attempts.end(), [](const journal_record* r) {
        return r->effect == record::effect_kind::committed;
    }));
}

bool touches(const record::operation_attempts& op, const std::set<std::uint64_t>& seqs) {
    return std::any_of(op.attempts.begin(), op.attempts.end(), [&](const journal_record* r) { return seqs.contains(r->seq); });
}

struct lane_selection {
    std::vector<std::size_t> lanes;  // indexes into the items, in their order
    std::size_t notable = 0;         // items the reader must see: offending or doubled operations, failed processes
    std::size_t notable_shown = 0;
    std::size_t sample_stride = 1;   // every n-th of the other items is shown
};

// At most max_timeline_lanes of `count` items: every notable one first (up to the cap), then an
// even sample of the rest, in the items' order.
template <class Notable>
lane_selection select_lanes(std::size_t count, Notable notable) {
    lane_selection s;
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < count; ++i) {
        if (!notable(i)) {
            others.push_back(i);
            continue;
        }
        ++s.notable;
        if (s.lanes.size() < max_timeline_lanes) s.lanes.push_back(i);
    }
    s.notable_shown = s.lanes.size();
    const std::size_t room = max_timeline_lanes - s.lanes.size();
    if (room > 0 && !others.empty()) {
        s.sample_stride = (others.size() + room - 1) / room;
        for (std::size_t k = 0; k < others.size(); k += s.sample_stride) s.lanes.push_back(others[k]);
    }
    std::sort(s.lanes.begin(), s.lanes.end());
    return s;
}

// Operations with offending attempts or a double effect are the notable lanes of the timeline.
lane_selection select_lanes(const run_view& view) {
    return select_lanes(view.operations.size(), [&](std::size_t i) {
        return committed_count(view.operations[i]) > 1 || touches(view.operations[i], view.offending);
    });
}

// The operations a verdict's evidence names, by identity or through the attempts it lists: the
// lanes of a timeline of their own, in arrival order (the first max_timeline_lanes of them).
lane_selection evidence_lanes(const record::verdict& v, const run_view& view) {
    std::set<std::string_view> named;
    std::set<std::uint64_t> seqs;
    for (const record::evidence_item& item : v.evidence) {
        if (!item.operation.empty()) named.insert(item.operation);
        seqs.insert(item.seqs.begin(), item.seqs.end());
    }
    lane_selection s;
    for (std::size_t i = 0; i < view.operations.size(); ++i) {
        const record::operation_attempts op = view.operations[i];
        if (!named.contains(op.operation.view()) && !touches(op, seqs)) continue;
        if (++s.notable <= max_timeline_lanes) s.lanes.push_back(i);
    }
    s.notable_shown = s.lanes.size();
    return s;
}

// `kind`: "timeline" for the run's, "evidence-timeline" for the operations one check names.
std::string timeline_chart(const run_view& view, const lane_selection& lanes, std::string_view kind) {
    const double lane_height = lanes.lanes.size() > 50 ? 7 : 16;
    const double left = 110, right = 10, top = 8, bottom = 30, width = 900;
    const double height = top + bottom + lane_height * static_cast<double>(lanes.lanes.size());
    const linear_scale x{0, static_cast<double>(view.end_ns), left, width - right};
    svg_chart chart(kind, "operations as swimlanes, one mark per attempt", width, height);
    for (std::size_t lane = 0; lane < lanes.lanes.size(); ++lane) {
        const record::operation_attempts& op = view.operations[lanes.lanes[lane]];
        const double y0 = top + lane_height * static_cast<double>(lane);
        const bool doubled = committed_count(op) > 1;
        const bool offending = touches(op, view.offending);
        std::string row = "<g class=\"lane\" data-operation=\"" + attr(detail::printable(op.operation)) +
                          "\" data-attempts=\"" + std::to_string(op.attempts.size()) + "\">";
        if (doubled || offending) {
            row += "<rect class=\"" + std::string(doubled ? "lane-double" : "lane-offending") + "\" x=\"0\" y=\"" +
                   px(y0) + "\" width=\"" + px(width) + "\" height=\"" + px(lane_height) + "\"/>";
        }
        if (lane_height >= 12) {
            std::string label = detail::printable(op.operation);
            if (label.size() > 13) label = label.substr(0, 12) + "…";  // with " ×2", within the margin
            row += "<text class=\"lane-label\" x=\"" + px(left - 6) + "\" y=\"" + px(y0 + lane_height - 4) +
                   "\" text-anchor=\"end\">" + h(label) + (doubled ? " ×2" : "") + "</text>";
        }
        for (const journal_record* r : op.attempts) {
            const double x0 = x(static_cast<double>(r->request_ns));
            const double x1 = std::max(x0 + 3, x(static_cast<double>(r->finished_ns)));
            std::string css = "attempt " + std::string(attempt_class(*r));
            if (!r->fault.empty()) css += " faulted";
            if (view.offending.contains(r->seq)) css += " offending";
            row += "<rect class=\"" + css + "\" data-seq=\"" + std::to_string(r->seq) + "\" x=\"" + px(x0) + "\" y=\"" +
                   px(y0 + 1.5) + "\" width=\"" + px(x1 - x0) + "\" height=\"" + px(lane_height - 3) + "\"><title>" +
                   record_title(*r) + "</title></rect>";
            if (r->effect == record::effect_kind::committed) {
                row += "<circle class=\"commit" + std::string(doubled ? " double" : "") + "\" data-seq=\"" +
                       std::to_string(r->seq) + "\" cx=\"" + px(x1 + 3) + "\" cy=\"" + px(y0 + lane_height / 2) +
                       "\" r=\"" + px(lane_height >= 12 ? 3.5 : 2) + "\"><title>effect committed by seq " + std::to_string(r->seq) +
                       "</title></circle>";
            }
        }
        chart.add(row + "</g>");
    }
    chart.time_axis(height - bottom, x);
    return chart.str();
}

std::string timeline_note(const run_view& view, const lane_selection& lanes) {
    if (lanes.lanes.size() == view.operations.size()) {
        return "All " + std::to_string(view.operations.size()) + " operations, one lane each.";
    }
    std::string out = "Showing " + std::to_string(lanes.lanes.size()) + " of " + std::to_string(view.operations.size()) +
                      " operations: ";
    out += lanes.notable_shown == lanes.notable
               ? "all " + std::to_string(lanes.notable) + " with offending attempts or double effects"
               : "the first " + std::to_string(lanes.notable_shown) + " of " + std::to_string(lanes.notable) +
                     " with offending attempts or double effects";
    if (lanes.lanes.size() > lanes.notable_shown) {
        out += lanes.sample_stride == 1 ? ", and all the others"
                                        : ", and one in " + std::to_string(lanes.sample_stride) +
                                              " of the others in arrival order";
    }
    return out + ". The load chart above counts every attempt.";
}

// --- instances -----------------------------------------------------------------------------------

// The instances a merged history holds, in name order; empty when it holds fewer than two (a single
// server's journal has nothing to tell apart).
std::vector<std::string_view> instances_of(const run_record& run) {
    std::set<std::string_view> names;
    for (const journal_record& r : run.journal) {
        if (r.instance && !r.instance->empty()) names.insert(r.instance->view());
    }
    if (names.size() < 2) return {};
    return {names.begin(), names.end()};
}

// The committed attempts of `op` that name their instance, in the order the server read them.
std::vector<const journal_record*> commits_of(const record::operation_attempts& op) {
    std::vector<const journal_record*> commits;
    for (const journal_record* r : op.attempts) {
        if (r->effect == record::effect_kind::committed && r->instance) commits.push_back(r);
    }
    return commits;
}

bool committed_by_several_instances(const std::vector<const journal_record*>& commits) {
    return std::any_of(commits.begin(), commits.end(), [&](const journal_record* r) { return r->instance != commits.front()->instance; });
}

// One lane per instance (the first max_timeline_lanes by name), one mark per attempt it journaled,
// on the run's time axis; a line joins the commits one operation got from different instances, so
// a double effect across instances reads as a line between two lanes.
std::string instances_chart(const run_view& view, const run_record& run, const std::vector<std::string_view>& instances) {
    const std::size_t lanes = std::min(instances.size(), max_timeline_lanes);
    // Lanes apart by a gap, so a line between two of them reads as going from one to the other.
    const double lane_height = 44, lane_gap = 12, left = 110, right = 10, top = 8, bottom = 30, width = 900;
    const double height = top + bottom + lane_height * static_cast<double>(lanes);
    const linear_scale x{0, static_cast<double>(view.end_ns), left, width - right};
    svg_chart chart("instances", "one lane per instance, one mark per attempt it journaled", width, height);
    std::map<std::string_view, std::size_t> lane_of;
    for (std::size_t k = 0; k < lanes; ++k) lane_of.emplace(instances[k], k);
    std::vector<std::vector<const journal_record*>> attempts(lanes);
    for (const journal_record& r : run.journal) {
        if (!r.instance) continue;
        if (const auto lane = lane_of.find(r.instance->view()); lane != lane_of.end()) attempts[lane->second].push_back(&r);
    }
    const auto mid = [&](std::size_t lane) { return top + lane_height * (static_cast<double>(lane) + 0.5); };
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        const double y0 = top + lane_height * static_cast<double>(lane) + lane_gap / 2;
        const double band = lane_height - lane_gap;
        std::string row = "<g class=\"instance-lane\" data-instance=\"" + attr(detail::printable(instances[lane])) +
                          "\" data-attempts=\"" + std::to_string(attempts[lane].size()) + "\"><text class=\"lane-label\" x=\"" +
                          px(left - 6) + "\" y=\"" + px(y0 + band / 2 + 4) + "\" text-anchor=\"end\">" +
                          h(detail::printable(instances[lane])) + "</text>";
        for (const journal_record* r : attempts[lane]) {
            const double x0 = x(static_cast<double>(r->request_ns));
            const double x1 = std::max(x0 + 2, x(static_cast<double>(r->finished_ns)));
            row += "<rect class=\"attempt " + std::string(attempt_class(*r)) + "\" data-seq=\"" + std::to_string(r->seq) +
                   "\" x=\"" + px(x0) + "\" y=\"" + px(y0) + "\" width=\"" + px(x1 - x0) + "\" height=\"" + px(band) +
                   "\"><title>" + record_title(*r) + "</title></rect>";
        }
        chart.add(row + "</g>");
    }
    for (const record::operation_attempts& op : view.operations) {
        const std::vector<const journal_record*> commits = commits_of(op);
        if (commits.size() < 2 || !committed_by_several_instances(commits)) continue;
        std::string points;
        for (const journal_record* r : commits) {
            const auto lane = lane_of.find(r->instance->view());
            if (lane == lane_of.end()) continue;
            points += (points.empty() ? "" : " ") + px(x(static_cast<double>(r->finished_ns))) + "," + px(mid(lane->second));
        }
        chart.add("<polyline class=\"cross-instance\" data-operation=\"" + attr(detail::printable(op.operation)) +
                  "\" points=\"" + points + "\"><title>operation " + h(detail::printable(op.operation)) + ": " +
                  std::to_string(commits.size()) + " effects committed by different instances</title></polyline>");
    }
    chart.time_axis(height - bottom, x);
    return chart.str();
}

// --- client processes ----------------------------------------------------------------------------

bool ended_badly(const record::process_record& p) { return p.exit_status != 0 || p.killed || p.signal; }

std::string_view process_class(const record::process_record& p) {
    if (p.killed || p.signal) return "killed";
    return p.exit_status == 0 ? "ok" : "failed";
}

std::string process_title(const record::process_record& p) {
    std::string out = "pid " + std::to_string(p.pid) + " · operation " + std::to_string(p.op) + "\nstarted at " +
                      ms(p.started_ns) + ", exit seen at " + ms(p.finished_ns) + " (" + ms(p.finished_ns - p.started_ns) +
                      ")\nexit status " + std::to_string(p.exit_status);
    if (p.signal) out += ", ended by signal " + std::to_string(*p.signal);
    if (p.killed) out += ", killed by faultline (time limit or interrupt)";
    return h(out);
}

// Processes that exited non-zero or were killed are the notable lanes of the processes chart.
lane_selection select_processes(const std::vector<record::process_record>& processes) {
    return select_lanes(processes.size(), [&](std::size_t i) { return ended_badly(processes[i]); });
}

// Each process of a command client as a bar from spawn to the exit faultline saw, on the same time
// axis as the attempts, with the attempts the server read during its life ticked on the bar when the
// command ran once (per-operation processes are told apart by their operation number instead).
std::string processes_chart(const run_record& run, const run_view& view, const lane_selection& selection) {
    const std::vector<record::process_record>& processes = run.command->processes;
    const double lane_height = selection.lanes.size() > 50 ? 7 : 16;
    const double left = 110, right = 10, top = 8, bottom = 30, width = 900;
    const double height = top + bottom + lane_height * static_cast<double>(selection.lanes.size());
    const linear_scale x{0, static_cast<double>(view.end_ns), left, width - right};
    svg_chart chart("processes", "client processes, spawn to exit", width, height);
    for (std::size_t lane = 0; lane < selection.lanes.size(); ++lane) {
        const record::process_record& p = processes[selection.lanes[lane]];
        const double y0 = top + lane_height * static_cast<double>(lane);
        const double x0 = x(static_cast<double>(p.started_ns));
        const double x1 = std::max(x0 + 3, x(static_cast<double>(p.finished_ns)));
        std::string row = "<g class=\"process\" data-pid=\"" + std::to_string(p.pid) + "\" data-op=\"" +
                          std::to_string(p.op) + "\" data-exit=\"" + std::to_string(p.exit_status) + "\">";
        if (lane_height >= 12) {
            row += "<text class=\"lane-label\" x=\"" + px(left - 6) + "\" y=\"" + px(y0 + lane_height - 4) +
                   "\" text-anchor=\"end\">" + h("pid " + std::to_string(p.pid)) + "</text>";
        }
        row += "<rect class=\"proc " + std::string(process_class(p)) + "\" x=\"" + px(x0) + "\" y=\"" + px(y0 + 1.5) +
               "\" width=\"" + px(x1 - x0) + "\" height=\"" + px(lane_height - 3) + "\"><title>" + process_title(p) +
               "</title></rect>";
        if (processes.size() == 1) {
            for (const journal_record& r : run.journal) {
                if (r.request_ns < p.started_ns || r.request_ns > p.finished_ns) continue;
                row += "<line class=\"proc-attempt\" data-seq=\"" + std::to_string(r.seq) + "\" x1=\"" +
                       px(x(static_cast<double>(r.request_ns))) + "\" x2=\"" + px(x(static_cast<double>(r.request_ns))) +
                       "\" y1=\"" + px(y0 + 1.5) + "\" y2=\"" + px(y0 + lane_height - 1.5) + "\"/>";
            }
        }
        chart.add(row + "</g>");
    }
    chart.time_axis(height - bottom, x);
    return chart.str();
}

std::string processes_note(const std::vector<record::process_record>& processes, const lane_selection& s) {
    std::string out = std::to_string(processes.size()) + (processes.size() == 1 ? " process" : " processes") + ", " +
                      std::to_string(s.notable) + " exited non-zero or were killed. ";
    if (s.lanes.size() < processes.size()) {
        out += "Showing " + std::to_string(s.lanes.size()) + ": " +
               (s.notable <= max_timeline_lanes ? "all " + std::to_string(s.notable)
                                              : "the first " + std::to_string(max_timeline_lanes) + " of those") +
               " that ended badly" +
               (s.sample_stride > 1 ? ", and one in " + std::to_string(s.sample_stride) + " of the others" : "") + ". ";
    }
    if (processes.size() == 1) out += "Ticks on the bar: each attempt the server read while it ran. ";
    return out + "Hover a bar for its pid, exit status and signal.";
}

// --- gap histograms ------------------------------------------------------------------------------

// The declared curve's band for the gap before retry k (1-based): the backoff check's envelope, at
// its widest for decorrelated jitter (whatever the previous gap was).
std::pair<double, double> declared_band(const record::declared_backoff& declared, std::size_t k) {
    return checks::backoff_envelope(checks::backoff_curve::declared(declared), k,
                                             std::numeric_limits<double>::infinity());
}

std::string gap_histograms(const run_record& run, const run_view& view, std::string& note) {
    std::vector<std::vector<double>> gaps;  // [k - 1]: gaps before retry k, ns
    for (const record::operation_attempts& op : view.operations) {
        for (std::size_t k = 1; k < op.attempts.size(); ++k) {
            if (gaps.size() < k) gaps.resize(k);
            gaps[k - 1].push_back(static_cast<double>(
                std::max<std::int64_t>(0, op.attempts[k]->request_ns - op.attempts[k - 1]->finished_ns)));
        }
    }
    if (gaps.empty()) return "";
    const std::size_t panels = std::min(gaps.size(), max_retry_panels);
    // One x scale for every panel, so growing backoff shows as bars moving right.
    double x_max = 1;
    for (std::size_t k = 0; k < panels; ++k) {
        for (const double g : gaps[k]) x_max = std::max(x_max, g);
        if (run.declared.backoff) {
            x_max = std::max(x_max, declared_band(*run.declared.backoff, k + 1).second);
        }
    }
    x_max *= 1.05;
    const double width = 440, height = 170, left = 40, right = 10, top = 22, bottom = 30;
    const linear_scale x{0, x_max, left, width - right};
    std::string out;
    for (std::size_t k = 0; k < panels; ++k) {
        std::vector<std::size_t> bins(histogram_bins);
        for (const double g : gaps[k]) {
            ++bins[std::min(histogram_bins - 1, static_cast<std::size_t>(g / x_max * histogram_bins))];
        }
        const std::size_t peak = std::max<std::size_t>(1, *std::max_element(bins.begin(), bins.end()));
        const double step = detail::nice_step(static_cast<double>(peak), 3);
        const linear_scale y{0, std::ceil(static_cast<double>(peak) / step) * step, height - bottom, top};
        svg_chart chart("gaps", "gaps before retry " + std::to_string(k + 1), width, height);
        chart.text(left, 14, "before retry " + std::to_string(k + 1) + " (attempt " + std::to_string(k + 2) + "): " +
                                 std::to_string(gaps[k].size()) + " gaps", "start", "panel-title");
        if (run.declared.backoff) {
            const auto [from, to] = declared_band(*run.declared.backoff, k + 1);
            const double x0 = x(from);
            const double x1 = std::max(x0 + 2, x(to));
            chart.add("<rect class=\"envelope\" data-from-ns=\"" + number(from) + "\" data-to-ns=\"" + number(to) +
                      "\" x=\"" + px(x0) + "\" y=\"" + px(top) + "\" width=\"" + px(x1 - x0) + "\" height=\"" +
                      px(height - top - bottom) + "\"><title>declared " +
                      std::string(record::to_string(run.declared.backoff->jitter)) + " jitter: " +
                      ms(static_cast<std::int64_t>(from)) + "–" + ms(static_cast<std::int64_t>(to)) + "</title></rect>");
        }
        const double bin_ns = x_max / histogram_bins;
        for (std::size_t i = 0; i < bins.size(); ++i) {
            if (bins[i] == 0) continue;
            const double x0 = x(bin_ns * static_cast<double>(i));
            chart.add("<rect class=\"gap\" data-series=\"gaps\" data-retry=\"" + std::to_string(k + 1) + "\" data-bin=\"" +
                      std::to_string(i) + "\" data-count=\"" + std::to_string(bins[i]) + "\" x=\"" + px(x0) + "\" y=\"" +
                      px(y(static_cast<double>(bins[i]))) + "\" width=\"" +
                      px(std::max(0.8, x(bin_ns * static_cast<double>(i + 1)) - x0 - 0.5)) + "\" height=\"" +
                      px(y(0) - y(static_cast<double>(bins[i]))) + "\"><title>" + std::to_string(bins[i]) +
                      " gaps of " + ms(static_cast<std::int64_t>(bin_ns * static_cast<double>(i))) + "–" +
                      ms(static_cast<std::int64_t>(bin_ns * static_cast<double>(i + 1))) + "</title></rect>");
        }
        chart.y_axis(left, y, step, "");
        chart.time_axis(height - bottom, x);
        out += chart.str();
    }
    note = "Gap = the previous attempt's end to the retry's request, " + std::to_string(histogram_bins) +
           " bins over one shared axis. ";
    note += run.declared.backoff
                ? "The shaded band is the declared backoff's envelope for that retry."
                : "The client declared no backoff, so no envelope is drawn.";
    if (gaps.size() > panels) {
        std::size_t hidden = 0;
        for (std::size_t k = panels; k < gaps.size(); ++k) hidden += gaps[k].size();
        note += " Retries after the " + std::to_string(panels) + "th are not drawn (" + std::to_string(hidden) +
                " gaps).";
    }
    return out;
}

// --- budget -----------------------------------------------------------------------------------------

// The token bucket a retry_budget verdict replayed, from the parameters the check attached to it.
std::optional<std::pair<double, double>> token_bucket_of(const run_record& run) {
    for (const record::verdict& v : run.verdicts) {
        if (v.check != "retry_budget") continue;
        const std::optional<double> max_tokens = v.parameter("max_tokens");
        const std::optional<double> ratio = v.parameter("token_ratio");
        if (max_tokens && ratio && *max_tokens > 0) return std::pair{*max_tokens, *ratio};
    }
    return std::nullopt;
}

std::string budget_chart(const run_record& run, const run_view& view, std::string& note) {
    const auto parameters = token_bucket_of(run);
    if (!parameters) return "";
    const auto [max_tokens, ratio] = *parameters;
    std::vector<const journal_record*> ended;
    for (const journal_record& r : run.journal) ended.push_back(&r);
    std::sort(ended.begin(), ended.end(),
              [](const journal_record* a, const journal_record* b) { return checks::ended_before(*a, *b); });
    checks::token_bucket bucket{max_tokens, ratio};
    // Per column: the lowest level reached and the level at its end, so a dip shows whatever the scale.
    std::vector<std::optional<std::pair<long long, long long>>> columns(budget_columns);
    for (const journal_record* r : ended) {
        bucket.on_ended(*r);
        const long long tokens = bucket.milli_tokens();
        const auto c = std::min<std::size_t>(budget_columns - 1,
                                             static_cast<std::size_t>(std::max<std::int64_t>(0, r->finished_ns) *
                                                                      static_cast<std::int64_t>(budget_columns) / view.end_ns));
        auto& col = columns[c];
        col = col ? std::pair{std::min(col->first, tokens), tokens} : std::pair{tokens, tokens};
    }
    const long long max_milli = bucket.max_milli_tokens();
    const double width = 900, height = 180, left = 50, right = 10, top = 22, bottom = 30;
    const linear_scale x{0, static_cast<double>(view.end_ns), left, width - right};
    const double step = detail::nice_step(max_tokens, 4);
    const linear_scale y{0, std::ceil(max_tokens / step) * step, height - bottom, top};
    svg_chart chart("budget", "retry budget tokens over time", width, height);
    const double half = y(max_tokens / 2);
    chart.add("<rect class=\"budget-dry\" x=\"" + px(left) + "\" y=\"" + px(half) + "\" width=\"" +
              px(width - left - right) + "\" height=\"" + px(y(0) - half) + "\"><title>at or below max_tokens / 2 = " +
              number(max_tokens / 2) + ": retries are not allowed</title></rect>");
    std::string points = px(left) + "," + px(y(max_tokens));
    std::size_t count = 1;
    long long level = max_milli;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        if (!columns[c]) continue;
        const double x0 = x(static_cast<double>(view.end_ns) * static_cast<double>(c) / budget_columns);
        points += " " + px(x0) + "," + px(y(static_cast<double>(level) / 1000));
        points += " " + px(x0) + "," + px(y(static_cast<double>(columns[c]->first) / 1000));
        points += " " + px(x0) + "," + px(y(static_cast<double>(columns[c]->second) / 1000));
        level = columns[c]->second;
        count += 3;
    }
    points += " " + px(width - right) + "," + px(y(static_cast<double>(level) / 1000));
    chart.add("<polyline class=\"tokens\" data-series=\"tokens\" data-points=\"" + std::to_string(count + 1) +
              "\" points=\"" + points + "\"/>");
    chart.y_axis(left, y, step, "tokens");
    chart.time_axis(height - bottom, x);
    note = "The retry_budget check's token bucket (max " + number(max_tokens) + ", ratio " + number(ratio) +
           ") replayed in the order attempts ended; below the shaded line (half the bucket) retries are not "
           "allowed. Each of " + std::to_string(budget_columns) + " columns keeps its lowest level.";
    return chart.str();
}

// --- the page --------------------------------------------------------------------------------------

constexpr std::string_view style = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1b1b;max-width:1000px}
h1{font-size:22px}h2{font-size:18px;margin-top:40px;border-top:1px solid #ccc;padding-top:16px}
h3{font-size:15px;margin:18px 0 4px}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}table.index td:nth-child(2){min-width:13em}
.badge{display:inline-block;padding:1px 7px;border-radius:9px;font-weight:600;font-size:12px;white-space:nowrap}
.badge.pass{background:#d6f0d8;color:#1b5e20}.badge.fail{background:#fbd5d5;color:#a11}.badge.insufficient{background:#fdf0c4;color:#7a5a00}
.badge.expected{background:#e6e9f8;color:#283593;border:1px dashed #5c6bc0;padding:0 6px}
pre{background:#f6f6f6;padding:6px 8px;margin:4px 0;white-space:pre-wrap;font-size:12px}
.note{color:#555;font-size:12.5px;margin:2px 0 6px}.warn{color:#8a5a00}
.legend span{display:inline-block;margin-right:14px;font-size:12.5px}
.legend i{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:-1px}
svg.chart{display:block;margin:4px 0;max-width:100%;height:auto}svg.chart[data-chart=load-thumbnail]{max-width:none}svg.chart[data-chart=gaps]{display:inline-block;margin-right:8px}
svg .axis{font-size:10.5px;fill:#555}svg .panel-title{font-size:12px;fill:#222}svg .lane-label{font-size:10px;fill:#444}
svg .frame{stroke:#888}svg .grid{stroke:#888}
.first,i.first{fill:#5b8fd4;background:#5b8fd4}.retry,i.retry{fill:#e8862a;background:#e8862a}
.fault-window{fill-opacity:.35}i.fault-window{opacity:.45}
.fault-0{fill:#e53935;background:#e53935}.fault-1{fill:#8e24aa;background:#8e24aa}.fault-2{fill:#00897b;background:#00897b}
.fault-3{fill:#f9a825;background:#f9a825}.fault-4{fill:#546e7a;background:#546e7a}.fault-5{fill:#7cb342;background:#7cb342}
.attempt.ok,i.ok{fill:#43a047;background:#43a047}.attempt.client-error,i.client-error{fill:#f2b705;background:#f2b705}
.attempt.server-error,i.server-error{fill:#d9534f;background:#d9534f}.attempt.no-response,i.no-response{fill:#7e57c2;background:#7e57c2}
.attempt.faulted{stroke:#222;stroke-width:1}i.faulted{border:1.5px solid #222;box-sizing:border-box}
.attempt.offending{stroke:#c2185b;stroke-width:2.5}i.offending{border:2.5px solid #c2185b;box-sizing:border-box}
.commit{fill:#111}.commit.double{fill:#c2185b;stroke:#fff;stroke-width:1}i.commit{background:#111;border-radius:6px;width:9px;height:9px}
.lane-double,i.lane-double{fill:#ffe0ec;background:#ffe0ec}.lane-offending,i.lane-offending{fill:#fff3d6;background:#fff3d6}
.gap,i.gap{fill:#5b8fd4;background:#5b8fd4}.envelope,i.envelope{fill:#cfe8cf;background:#cfe8cf}
.tokens{fill:none;stroke:#2e6ad1;stroke-width:1.5}.budget-dry,i.budget-dry{fill:#f9e2e2;background:#f9e2e2}
.proc.ok,i.proc-ok{fill:#7fb77e;background:#7fb77e}.proc.failed,i.proc-failed{fill:#d9534f;background:#d9534f}
.proc.killed,i.proc-killed{fill:#6d4c41;background:#6d4c41}.proc-attempt{stroke:#111;stroke-width:1}
.cross-instance{fill:none;stroke:#111;stroke-width:1;stroke-opacity:.6}i.cross-instance{background:#111;height:2px;margin-bottom:3px}
#faultline-status{display:none}
)";

// Reports whether every chart has a size, for the headless-browser check (`--dump-dom` shows it); a
// chart in a folded <details> has none until opened.
constexpr std::string_view script = R"(<script>
addEventListener('load',function(){var c=document.querySelectorAll('svg.chart'),e=0;
for(var i=0;i<c.length;i++){if(c[i].closest('details:not([open])'))continue;
var r=c[i].getBoundingClientRect();if(!(r.width>0&&r.height>0))e++;}
document.getElementById('faultline-status').textContent=(e?'empty-charts ':'charts-ok ')+c.length+' '+e;});
</script>)";

std::string legend(const std::vector<std::pair<std::string, std::string>>& items) {
    std::string out = "<div class=\"legend\">";
    for (const auto& [css, label] : items) out += "<span><i class=\"" + std::string(css) + "\"></i>" + h(label) + "</span>";
    return out + "</div>";
}

// First attempts, retries, and one shade per fault rule that fired on a recorded attempt.
std::string load_legend(const run_record& run, const run_view& view) {
    std::vector<std::pair<std::string, std::string>> items{{"first", "first attempts"}, {"retry", "retries"}};
    for (const rule_windows& w : fault_windows(run, view)) {
        items.emplace_back("fault-window fault-" + std::to_string(w.colour),
                           "rule " + detail::printable(w.rule) + (w.kind.empty() ? "" : " (" + detail::printable(w.kind) + ")") +
                               " fired in the bucket");
    }
    return legend(items);
}

std::string timeline_legend() {
    return legend({{"ok", "2xx/3xx"}, {"client-error", "4xx"}, {"server-error", "5xx"},
                   {"no-response", "no response (reset, closed, hung…)"}, {"faulted", "fault injected"},
                   {"offending", "named by a check's evidence"}, {"commit", "effect committed"},
                   {"lane-double", "double effect"}});
}

// A folded timeline of only the operations the verdict's evidence names, on the run's time axis;
// "" when the evidence names none that the journal holds.
std::string evidence_timeline(const record::verdict& v, const run_view& view) {
    const lane_selection lanes = evidence_lanes(v, view);
    if (lanes.lanes.empty()) return "";
    const std::string shown = std::to_string(lanes.lanes.size());
    std::string out = "<details class=\"evidence-timeline\" data-check=\"" + attr(v.check) + "\" data-operations=\"" +
                      std::to_string(lanes.notable) + "\"><summary>show only these operations (" +
                      std::to_string(lanes.notable) + ")</summary>";
    if (lanes.notable > lanes.lanes.size()) {
        out += "<p class=\"note\">The first " + shown + " in arrival order.</p>";
    }
    return out + timeline_legend() + timeline_chart(view, lanes, "evidence-timeline") + "</details>";
}

std::string verdict_table(const run_record& run, const run_view& view) {
    std::string out = "<table class=\"verdicts\"><tr><th>check</th><th>outcome</th><th>summary and evidence</th></tr>";
    for (const std::size_t i : failures_first(run.verdicts.size(), [&](std::size_t k) { return run.verdicts[k].outcome(); })) {
        const record::verdict& v = run.verdicts[i];
        const outcome_badge badge = failed_as_expected(v) ? outcome_badge{"failed as expected", "expected"} : badge_of(v.outcome());
        out += "<tr data-check=\"" + attr(v.check) + "\"><td>" + h(detail::printable(v.check)) +
               "</td><td><span class=\"badge " + badge.css + "\">" + badge.word + "</span></td><td>" +
               h(detail::printable(v.summary));
        const bool failed = !v.passed || failed_as_expected(v);
        if (const std::string evidence = failed ? console_evidence(v, "") : ""; !evidence.empty()) {
            out += "<pre>" + h(evidence) + "</pre>";
        }
        out += "</td></tr>";
        // A row of its own, so the chart has the whole table's width.
        if (const std::string timeline = failed ? evidence_timeline(v, view) : ""; !timeline.empty()) {
            out += "<tr class=\"evidence-timeline\"><td colspan=\"3\">" + timeline + "</td></tr>";
        }
    }
    return out + "</table>";
}

std::string scenario_section(const run_record& run, std::string_view anchor) {
    const run_view view = view_of(run);
    const detail::run_counts counts = detail::count(run);
    std::string out = "<section class=\"scenario\" id=\"" + attr(anchor) + "\" data-status=\"" +
                      status_css(run) + "\"><h2><span class=\"badge " + status_css(run) + "\">" + h(run_status(run)) +
                      "</span> " + h(detail::printable(run.scenario)) + "</h2>";
    if (!run.description.empty()) out += "<p>" + h(detail::printable(run.description)) + "</p>";
    out += "<p class=\"note\">seed " + std::to_string(run.seed) + " · " + detail::seconds(run.duration) + " s · " +
           std::to_string(counts.operations) + " operations · " + std::to_string(counts.attempts) + " attempts · " +
           std::to_string(counts.effects) + " effects · replay: <code>" + h(detail::printable(replay_command(run))) +
           "</code></p>";
    if (!run.harness_error.empty()) out += "<p class=\"warn\">harness error: " + h(detail::printable(run.harness_error)) + "</p>";
    if (run.interrupted) out += "<p class=\"warn\">" + h(detail::interruption_text(run)) + "</p>";
    for (const record::rule_firing* f : record::never_fired(run)) {
        out += "<p class=\"warn\">warning: " + h(detail::printable(detail::never_fired_text(*f, run.strict))) + "</p>";
    }
    for (const record::rule_firing& f : run.rule_firings) out += "<p class=\"note\">" + h(detail::printable(detail::firing_text(f))) + "</p>";
    out += verdict_table(run, view);
    if (run.journal.empty()) return out + "<p class=\"note\">The journal is empty: no attempt reached the server.</p></section>";

    out += "<h3>Load over time</h3><p class=\"note\">Attempts per " + ms(view.end_ns / static_cast<std::int64_t>(load_buckets)) +
           " bucket (" + std::to_string(load_buckets) + " buckets over the run), by the time the server read the request. "
           "A retry storm is the orange stacked on top; synchronised retries show as spikes. Shaded behind: "
           "the buckets in which each fault rule fired on a recorded attempt (a refused connection is no attempt).</p>" +
           load_legend(run, view) + load_chart(run, view, false);

    if (const std::vector<std::string_view> instances = instances_of(run); !instances.empty()) {
        const std::string shown = instances.size() > max_timeline_lanes
                                      ? ", the first " + std::to_string(max_timeline_lanes) + " by name shown"
                                      : std::string{};
        out += "<h3>Instances</h3><p class=\"note\">One lane per instance whose journal was merged into this history (" +
               std::to_string(instances.size()) + shown +
               "), one mark per attempt it journaled; a line joins the commits of one operation made by different "
               "instances: a double effect across the fleet.</p>" +
               legend({{"ok", "2xx/3xx"}, {"client-error", "4xx"}, {"server-error", "5xx"},
                       {"no-response", "no response (reset, closed, hung…)"},
                       {"cross-instance", "one operation committed by several instances"}}) +
               instances_chart(view, run, instances);
    }

    const lane_selection lanes = select_lanes(view);
    out += "<h3>Timeline</h3><p class=\"note\">One lane per operation, one mark per attempt from request read to "
           "attempt end; hover a mark for its journal record. " + h(timeline_note(view, lanes)) + "</p>" +
           timeline_legend() + timeline_chart(view, lanes, "timeline");

    if (run.command && !run.command->processes.empty()) {
        const lane_selection selection = select_processes(run.command->processes);
        out += "<h3>Client processes</h3><p class=\"note\">Each process of the client command, from spawn to the exit "
               "faultline saw, on the timeline's clock. " + h(processes_note(run.command->processes, selection)) + "</p>" +
               legend({{"proc-ok", "exit 0"}, {"proc-failed", "non-zero exit"}, {"proc-killed", "killed or ended by a signal"}}) +
               processes_chart(run, view, selection);
    }

    std::string gap_note;
    if (const std::string gaps = gap_histograms(run, view, gap_note); !gaps.empty()) {
        out += "<h3>Gaps before each retry</h3><p class=\"note\">" + h(gap_note) + "</p>" +
               (run.declared.backoff ? legend({{"gap", "gaps"}, {"envelope", "declared envelope"}}) : legend({{"gap", "gaps"}})) +
               "<div>" + gaps + "</div>";
    } else {
        out += "<h3>Gaps before each retry</h3><p class=\"note\">No operation was retried.</p>";
    }
    std::string budget_note;
    if (const std::string budget = budget_chart(run, view, budget_note); !budget.empty()) {
        out += "<h3>Retry budget</h3><p class=\"note\">" + h(budget_note) + "</p>" +
               legend({{"budget-dry", "retries not allowed"}}) + budget;
    }
    return out + "</section>";
}

std::string html_report(std::span<const run_record> runs) {
    const auto passed = std::count_if(runs.begin(), runs.end(), [](const run_record& run) {
        return run.harness_error.empty() && record::all_checks_passed(run);
    });
    std::string out = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>faultline report</title>"
                      "<meta name=\"viewport\" content=\"width=device-width\"><style>" + std::string(style) +
                      "</style></head><body><h1>faultline: " + std::to_string(passed) + " of " +
                      std::to_string(runs.size()) + " scenarios passed</h1>";
    out += "<table class=\"index\"><tr><th></th><th>scenario</th><th>operations</th><th>attempts</th><th>effects</th>"
           "<th>checks passed</th><th>failed checks</th><th>load over time</th></tr>";
    const std::vector<std::string> anchors = scenario_anchors(runs);
    const std::vector<std::size_t> order = failures_first(runs.size(), [&](std::size_t i) { return run_outcome(runs[i]); });
    for (const std::size_t i : order) {
        const run_record& run = runs[i];
        const detail::run_counts c = detail::count(run);
        std::string failed;
        for (const record::verdict& v : run.verdicts) {
            if (!v.passed || failed_as_expected(v)) {
                failed += (failed.empty() ? "" : ", ") + detail::printable(v.check) + (v.passed ? " (as expected)" : "");
            }
        }
        out += "<tr data-status=\"" + status_css(run) + "\"><td><span class=\"badge " + status_css(run) + "\">" +
               h(run_status(run)) + "</span></td><td><a href=\"#" + attr(anchors[i]) + "\">" +
               h(detail::printable(run.scenario)) + "</a></td><td class=\"n\">" + std::to_string(c.operations) +
               "</td><td class=\"n\">" + std::to_string(c.attempts) + "</td><td class=\"n\">" + std::to_string(c.effects) +
               "</td><td class=\"n\">" + std::to_string(c.checks - c.checks_failed - c.checks_insufficient) + " of " +
               std::to_string(c.checks) + "</td><td>" + h(failed) + "</td><td>" +
               (run.journal.empty() ? std::string{} : load_chart(run, view_of(run), true)) + "</td></tr>";
    }
    out += "</table><p class=\"note\">Thumbnails: attempts per bucket over each run's own time span, first attempts "
           "in blue, retries in orange, shaded where fault rules fired.</p>";
    for (const std::size_t i : order) out += scenario_section(runs[i], anchors[i]);
    return out + "<p id=\"faultline-status\">loading</p>" + std::string(script) + "</body></html>\n";
}

const report_registration registered{"html", "one self-contained page: verdicts, load, timeline, gaps, budget",
                                     &html_report, "report.html"};

}  // namespace

}  // namespace faultline::reports
