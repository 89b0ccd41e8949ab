#include "faultline/storm/output.hpp"

#include "faultline/reports/line_chart.hpp"

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace faultline::storm {

namespace {

double seconds(duration d) { return std::chrono::duration<double>(d).count(); }

std::string fixed(double v, int decimals) {
    std::array<char, 64> buf{};
    std::snprintf(buf.data(), buf.size(), "%.*f", decimals, v);
    return buf.data();
}

std::string padded(std::string s, std::size_t width) {
    if (s.size() < width) s.insert(0, width - s.size(), ' ');
    return s;
}

bool has_outage(const capacity_config& config) { return config.outage_end > config.outage_start; }

// "down", or "capacity x 0.10" for a slowed backend.
std::string outage_kind(const capacity_config& config) {
    return config.outage_capacity_factor == 0 ? std::string{"down"}
                                              : "capacity x " + fixed(config.outage_capacity_factor, 2);
}

boost::json::object summary_json(const summary& s) {
    return {{"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min}, {"max", s.max}};
}

}  // namespace

void write_occ_table(std::ostream& out, const occ_sweep_config& config, const occ_sweep_result& result) {
    out << "model occ: one optimistic-concurrency row; hop |N(" << seconds(config.hop_mean) * 1000 << " ms, "
        << seconds(config.hop_sd) * 1000 << " ms)|, base " << seconds(config.base) * 1000 << " ms, cap "
        << seconds(config.cap) * 1000 << " ms; " << config.trials << " trial(s) per point, seed " << config.seed
        << '\n';
    out << "clients  strategy        work (mean ± sd)   completion s (mean ± sd)\n";
    for (const occ_point& p : result.points) {
        std::string name{to_string(p.strategy)};
        name.resize(14, ' ');
        out << padded(std::to_string(p.clients), 7) << "  " << name << padded(fixed(p.work.mean, 0), 9) << " ± "
            << padded(fixed(p.work.stddev, 0), 6) << "   " << padded(fixed(p.completion_s.mean, 2), 9) << " ± "
            << padded(fixed(p.completion_s.stddev, 2), 6) << '\n';
    }
}

void write_occ_csv(std::ostream& out, const occ_sweep_result& result) {
    out << "clients,strategy,work_mean,work_stddev,work_min,work_max,completion_s_mean,completion_s_stddev,"
           "completion_s_min,completion_s_max\n";
    for (const occ_point& p : result.points)
        out << p.clients << ',' << to_string(p.strategy) << ',' << fixed(p.work.mean, 2) << ','
            << fixed(p.work.stddev, 2) << ',' << fixed(p.work.min, 0) << ',' << fixed(p.work.max, 0) << ','
            << fixed(p.completion_s.mean, 6) << ',' << fixed(p.completion_s.stddev, 6) << ','
            << fixed(p.completion_s.min, 6) << ',' << fixed(p.completion_s.max, 6) << '\n';
}

void write_occ_json(std::ostream& out, const occ_sweep_config& config, const occ_sweep_result& result) {
    boost::json::array points;
    for (const occ_point& p : result.points)
        points.push_back({{"clients", p.clients},
                          {"strategy", to_string(p.strategy)},
                          {"work", summary_json(p.work)},
                          {"completion_s", summary_json(p.completion_s)}});
    const boost::json::object doc{{"model", "occ"},
                                  {"seed", config.seed},
                                  {"trials", config.trials},
                                  {"base_ms", seconds(config.base) * 1000},
                                  {"cap_ms", seconds(config.cap) * 1000},
                                  {"hop_mean_ms", seconds(config.hop_mean) * 1000},
                                  {"hop_sd_ms", seconds(config.hop_sd) * 1000},
                                  {"events", result.events},
                                  {"points", std::move(points)}};
    out << boost::json::serialize(doc) << '\n';
}

void write_occ_svg(std::ostream& out, const occ_sweep_result& result) {
    reports::line_chart work{"Work (write calls) vs clients", "clients", "write calls (mean)", {}};
    reports::line_chart completion{"Completion time vs clients", "clients", "seconds (mean)", {}};
    for (const occ_point& p : result.points) {
        const std::string name{to_string(p.strategy)};
        auto series = [&](reports::line_chart& chart) -> reports::chart_series& {
            for (reports::chart_series& s : chart.series)
                if (s.name == name) return s;
            chart.series.push_back({name, {}});
            return chart.series.back();
        };
        series(work).points.emplace_back(p.clients, p.work.mean);
        series(completion).points.emplace_back(p.clients, p.completion_s.mean);
    }
    out << reports::line_charts_svg({work, completion});
}

void write_capacity_table(std::ostream& out, const std::string& scenario, const capacity_config& config,
                          const capacity_result& r) {
    out << "model capacity, scenario " << scenario << ": " << config.clients << " clients x " << config.ops_per_client
        << " operations every " << seconds(config.op_interval) << " s; backend " << config.capacity_per_sec
        << "/s, queue " << config.queue_limit << ", failure p " << config.failure_probability << "; seed "
        << config.seed << '\n';
    if (has_outage(config))
        out << "outage " << seconds(config.outage_start) << " s .. " << seconds(config.outage_end) << " s, "
            << outage_kind(config) << '\n';
    out << "layer  attempts      per call  budget\n";
    for (std::size_t i = 0; i < r.attempts.size(); ++i) {
        const budget_kind b = config.layers[i].budget;
        out << padded(std::to_string(i + 1), 5) << padded(std::to_string(r.attempts[i]), 10) << padded(fixed(r.layer_amplification[i], 3), 14)
            << "  " << (b == budget_kind::none ? "none" : b == budget_kind::ratio ? "ratio" : "token bucket") << '\n';
    }
    out << "operations " << r.operations << " (succeeded " << r.succeeded << ", failed " << r.failed << ")\n";
    out << "amplification at the backend " << fixed(r.amplification, 3) << "x; offered load per "
        << seconds(config.bin) << " s: normal " << fixed(r.normal_load_per_bin, 1) << ", peak "
        << fixed(r.peak_load_per_bin, 1) << '\n';
    if (has_outage(config)) {
        if (r.recovery)
            out << "recovered " << fixed(seconds(*r.recovery), 2) << " s after the outage\n";
        else if (r.metastable)
            out << "METASTABLE: goodput never came back to 90 % of normal while operations kept arriving\n";
        else
            out << "recovery not judged: no whole bin after the outage while operations arrive\n";
    }
}

void write_capacity_csv(std::ostream& out, const capacity_config& config, const capacity_result& r) {
    out << "time_s,ops_started,offered,retries,goodput,rejected,timed_out,max_queue\n";
    for (std::size_t b = 0; b < r.bins.size(); ++b) {
        const capacity_bin& x = r.bins[b];
        out << fixed(seconds(config.bin) * static_cast<double>(b), 3) << ',' << x.ops_started << ',' << x.offered << ','
            << x.retries << ',' << x.goodput << ',' << x.rejected << ',' << x.timed_out << ',' << x.max_queue << '\n';
    }
}

void write_capacity_json(std::ostream& out, const std::string& scenario, const capacity_config& config,
                         const capacity_result& r) {
    boost::json::array layers;
    for (std::size_t i = 0; i < r.attempts.size(); ++i)
        layers.push_back({{"attempts", r.attempts[i]}, {"per_call", r.layer_amplification[i]}});
    boost::json::array bins;
    for (const capacity_bin& x : r.bins)
        bins.push_back({{"ops_started", x.ops_started}, {"offered", x.offered}, {"retries", x.retries},
                        {"goodput", x.goodput}, {"rejected", x.rejected}, {"timed_out", x.timed_out},
                        {"max_queue", x.max_queue}});
    boost::json::object doc{{"model", "capacity"},
                            {"scenario", scenario},
                            {"seed", config.seed},
                            {"operations", r.operations},
                            {"succeeded", r.succeeded},
                            {"failed", r.failed},
                            {"layers", std::move(layers)},
                            {"amplification", r.amplification},
                            {"normal_load_per_bin", r.normal_load_per_bin},
                            {"peak_load_per_bin", r.peak_load_per_bin},
                            {"metastable", r.metastable},
                            {"bin_s", seconds(config.bin)},
                            {"events", r.events},
                            {"bins", std::move(bins)}};
    if (r.recovery) doc["recovery_s"] = seconds(*r.recovery);
    else doc["recovery_s"] = nullptr;
    out << boost::json::serialize(doc) << '\n';
}

void write_capacity_svg(std::ostream& out, const capacity_config& config, const capacity_result& r) {
    const std::string per_bin = "per " + fixed(seconds(config.bin), 3) + " s";
    reports::line_chart load{"Load at the backend over time", "time (s)", "attempts " + per_bin, {}};
    reports::line_chart queue{"Backend queue over time", "time (s)", "longest queue", {}};
    reports::chart_series offered{"offered", {}};
    reports::chart_series goodput{"goodput", {}};
    reports::chart_series retries{"retries", {}};
    reports::chart_series longest{"queue", {}};
    for (std::size_t b = 0; b < r.bins.size(); ++b) {
        const double t = seconds(config.bin) * static_cast<double>(b);
        offered.points.emplace_back(t, static_cast<double>(r.bins[b].offered));
        goodput.points.emplace_back(t, static_cast<double>(r.bins[b].goodput));
        retries.points.emplace_back(t, static_cast<double>(r.bins[b].retries));
        longest.points.emplace_back(t, static_cast<double>(r.bins[b].max_queue));
    }
    load.series = {offered, goodput, retries};
    queue.series = {longest};
    if (has_outage(config)) {
        load.shaded = queue.shaded =
            reports::shaded_span{seconds(config.outage_start), seconds(config.outage_end), "outage", outage_kind(config)};
    }
    out << reports::line_charts_svg({load, queue});
}

}  // namespace faultline::storm
