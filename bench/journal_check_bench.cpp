// How fast `faultline check` reads and judges a journal, and how much memory each record costs.
//   journal_check_bench generate RECORDS FILE   writes a realistic journal (seeded, so reproducible)
//   journal_check_bench read FILE               read_jsonl only
//   journal_check_bench check FILE EXPECT.toml  read_jsonl, then the [[expect]] checks of EXPECT: once
//                                               one after another, each timed, then as `faultline
//                                               check` runs them (evaluate_checks, a thread per core)
// A realistic journal: 64 clients, each running operations one after another (payments and counter
// increments named by an idempotency key, key-value writes by a header, reads by request hash), with
// the fault mix of suites/mixed-service (lost replies after commit, 503, 429 with Retry-After,
// resets, latency) and a good client's retries (up to 3 attempts, jittered exponential backoff), so
// about 1.25 attempts per operation, as in a builtin-client run. Reported: records/s of wall time and
// the peak of live heap bytes per record (counted by heap_counter.cpp's operator new), the figure a
// checked journal's memory scales with. Figures in docs/benchmarks.md.
#include "faultline/checks/check.hpp"
#include "faultline/record/journal_json.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/record/symbol.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/runner/scenario.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace faultline::bench {
// Kept by heap_counter.cpp's operator new.
extern std::atomic<long long> live_heap_bytes;
extern std::atomic<long long> peak_heap_bytes;
}  // namespace faultline::bench

namespace {

using namespace faultline::record;
using namespace faultline::runner;
using namespace faultline::checks;

// Uniform in [0, 1) from the top 53 bits: the standard distributions differ between libraries.
double uniform(std::mt19937_64& random) { return static_cast<double>(random() >> 11) * 0x1.0p-53; }

std::string uuid(std::mt19937_64& random) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out(36, '-');
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (i != 8 && i != 13 && i != 18 && i != 23) out[i] = hex[random() & 0xfU];
    }
    return out;
}

std::string hex16(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

struct fault_draw {
    const char* rule;
    const char* fault;
    double probability;
};
// suites/mixed-service.good.toml's rules, tried in order as the engine does.
constexpr std::array faults{
    fault_draw{"lost-reply", "lost_response", 0.05}, fault_draw{"rate-limited", "status", 0.02},
    fault_draw{"unavailable", "status", 0.10},       fault_draw{"reset", "reset", 0.05},
    fault_draw{"latency", "delay", 0.20},
};

// One attempt's result as the server journals it.
void apply_fault(journal_record& r, const fault_draw* fault, bool mutating, bool committed_before) {
    // The idempotency layer replays an effect an earlier attempt committed.
    r.effect = !mutating ? effect_kind::none : committed_before ? effect_kind::replayed : effect_kind::committed;
    r.outcome = wire_outcome::responded;
    r.status = r.method == "POST" && r.target == "/payments" ? 201 : 200;
    if (fault == nullptr) return;
    r.rule = fault->rule;
    r.fault = fault->fault;
    const std::string_view name = fault->rule;
    if (name == "lost-reply") {
        r.outcome = wire_outcome::reset;
        r.status = 0;
    } else if (name == "rate-limited" || name == "unavailable") {
        r.effect = effect_kind::none;
        r.status = name == "rate-limited" ? 429 : 503;
        if (name == "rate-limited") r.retry_after_ms = 1000;
    } else if (name == "reset") {
        r.effect = effect_kind::none;
        r.outcome = wire_outcome::reset;
        r.status = 0;
    }
}

struct generated_attempt {
    journal_record record;
    wire_detail wire;
};

std::vector<generated_attempt> generate(std::size_t count) {
    constexpr std::size_t clients = 64;
    std::mt19937_64 random{20261203};
    std::vector<generated_attempt> out;
    out.reserve(count + 8);
    std::array<std::int64_t, clients> clock{};
    std::array<std::uint64_t, clients> ops_done{};
    std::uint64_t connection = 0;
    for (std::size_t c = 0; out.size() < count; c = (c + 1) % clients) {
        const double kind = uniform(random);
        journal_record first;
        std::string key;
        if (kind < 0.45) {
            first.method = "POST";
            first.target = "/payments";
            key = uuid(random);
            first.identity = identity_source::idempotency_key;
        } else if (kind < 0.65) {
            first.method = "PUT";
            first.target = "/kv/k" + std::to_string(random() % 1000);
            first.operation = "c" + std::to_string(c) + "-n" + std::to_string(ops_done[c]);
            first.identity = identity_source::header;
        } else if (kind < 0.90) {
            first.method = "POST";
            first.target = "/counters/c" + std::to_string(c) + "/increment";
            key = uuid(random);
            first.identity = identity_source::idempotency_key;
        } else {
            first.method = "GET";
            first.target = "/counters/c" + std::to_string(c);
            first.operation = hex16(random());
            first.identity = identity_source::request_hash;
        }
        if (!key.empty()) first.operation = first.idempotency_key = key;
        wire_detail first_wire;
        first_wire.body_hash = random();
        const bool mutating = first.method != "GET";
        ++ops_done[c];
        bool committed = false;
        std::int64_t started = 0;
        for (std::uint32_t attempt = 1; attempt <= 3; ++attempt) {
            journal_record r = first;
            wire_detail w = first_wire;
            r.attempt = attempt;
            r.attempt_header = std::to_string(attempt);
            r.connection = static_cast<std::uint32_t>(++connection);
            r.connection_request = 1;
            w.accepted_ns = clock[c] + 50'000;
            r.request_ns = w.accepted_ns + 10'000 + static_cast<std::int64_t>(random() % 40'000);
            // The client propagates what is left of its 5 s deadline.
            if (attempt == 1) started = r.request_ns;
            r.deadline_ms = 4999 - (r.request_ns - started) / 1'000'000;
            const fault_draw* fault = nullptr;
            for (const auto& f : faults) {
                if (uniform(random) < f.probability) {
                    fault = &f;
                    break;
                }
            }
            apply_fault(r, fault, mutating, committed);
            committed = committed || r.effect == effect_kind::committed;
            const auto delay = fault != nullptr && r.fault == "delay" ? 1'000'000 + random() % 19'000'000 : 0;
            const std::int64_t service = 20'000 + static_cast<std::int64_t>(delay);
            r.response_ns = r.status == 0 ? -1 : r.request_ns + service;
            r.finished_ns = r.request_ns + service + 5'000;
            w.bytes_in = 130 + r.target.size() + (key.empty() ? 0 : 60);
            w.bytes_out = r.status == 0 ? 0 : 110 + random() % 50;
            clock[c] = r.finished_ns;
            out.push_back({r, w});
            const bool retry = r.outcome != wire_outcome::responded || r.status == 429 || r.status == 503;
            if (!retry) break;
            // Full jitter over 10ms·2^n capped at 200ms, or the Retry-After wait.
            const double backoff = std::min(200e6, 10e6 * static_cast<double>(1U << (attempt - 1)));
            clock[c] += r.retry_after_ms ? *r.retry_after_ms * 1'000'000 : static_cast<std::int64_t>(uniform(random) * backoff);
        }
    }
    std::sort(out.begin(), out.end(), [](const generated_attempt& a, const generated_attempt& b) {
        return a.record.request_ns < b.record.request_ns;
    });
    for (std::size_t i = 0; i < out.size(); ++i) out[i].record.seq = out[i].wire.seq = i + 1;
    return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int write_journal(std::size_t count, const std::string& path) {
    const auto attempts = generate(count);
    std::ofstream out{path, std::ios::binary};
    std::string text;
    server_event added{.kind = server_event_kind::rule_added, .seq = 0, .at_ns = 0, .rule = "unavailable",
                       .detail = R"({"kind":"status","status":503})", .peer = "127.0.0.1:40112"};
    append_jsonl_line(text, added);
    for (const auto& a : attempts) {
        append_jsonl_line(text, a.record, &a.wire);
        if (text.size() > (1U << 20)) {
            out << text;
            text.clear();
        }
    }
    out << text;
    std::cout << attempts.size() << " records written to " << path << '\n';
    return out ? 0 : 1;
}

int read_and_check(const std::string& path, const std::string* expect_path) {
    std::vector<expectation> expectations;
    if (expect_path != nullptr) {
        auto loaded = load_expectations_file(*expect_path);
        if (!loaded.ok()) {
            for (const auto& e : loaded.errors) std::cerr << e.to_string() << '\n';
            return 2;
        }
        expectations = std::move(loaded.expectations);
    }
    const long long baseline = faultline::bench::live_heap_bytes.load();
    faultline::bench::peak_heap_bytes = baseline;
    const auto start = std::chrono::steady_clock::now();
    jsonl_read_result read = read_jsonl(path);
    const double read_s = seconds_since(start);
    const long long read_peak = faultline::bench::peak_heap_bytes.load() - baseline;
    if (!read.ok()) {
        for (const auto& e : read.errors) std::cerr << e.to_string() << '\n';
        return 2;
    }
    const auto n = static_cast<double>(read.records.size());
    const symbol_table_stats interned = symbol_stats();
    std::printf("records %zu\nread: %.3f s, %.0f records/s, peak %.0f bytes/record\n", read.records.size(),
                read_s, n / read_s, static_cast<double>(read_peak) / n);
    std::printf("held: the records %.0f bytes/record (%zu of %zu reserved), the intern table %.0f (%zu strings)\n",
                static_cast<double>(read.records.capacity() * sizeof(journal_record)) / n, read.records.size(),
                read.records.capacity(), static_cast<double>(interned.bytes) / n, interned.symbols);
    if (expect_path == nullptr) return 0;
    run_record run;
    run.journal = std::move(read.records);
    run.server_events = std::move(read.server_events);
    // What evaluate_checks does, timed step by step on this one thread: the grouping once, then each check.
    const auto sequential_start = std::chrono::steady_clock::now();
    std::vector<verdict> one_by_one;
    {
        // Each step's own peak above what was live when it began, kept apart from the overall one.
        long long overall_peak = faultline::bench::peak_heap_bytes.load();
        long long step_live = faultline::bench::live_heap_bytes.load();
        const auto step_peak = [&] {
            const long long peak = faultline::bench::peak_heap_bytes.load();
            overall_peak = std::max(overall_peak, peak);
            return static_cast<double>(peak - step_live) / n;
        };
        faultline::bench::peak_heap_bytes = step_live;
        auto step = sequential_start;
        const operation_groups operations = group_operations(run.journal);
        std::printf("group_operations: %.3f s, +%.0f bytes/record at its peak, +%.0f kept\n", seconds_since(step),
                    step_peak(), static_cast<double>(faultline::bench::live_heap_bytes.load() - step_live) / n);
        for (const expectation& e : expectations) {
            step_live = faultline::bench::live_heap_bytes.load();
            faultline::bench::peak_heap_bytes = step_live;
            step = std::chrono::steady_clock::now();
            const verdict& v = one_by_one.emplace_back(evaluate(e, run, operations));
            const double seconds = seconds_since(step);
            std::printf("  %-18s %.3f s  +%3.0f B/rec  %s: %s\n", v.check.c_str(), seconds, step_peak(),
                        std::string{to_string(v.outcome())}.c_str(), v.summary.c_str());
        }
        faultline::bench::peak_heap_bytes = overall_peak;
    }
    const double sequential_s = seconds_since(sequential_start);
    const long long sequential_peak = faultline::bench::peak_heap_bytes.load() - baseline;
    std::printf("group + checks one after another: %.3f s, peak %.0f bytes/record\n", sequential_s,
                static_cast<double>(sequential_peak) / n);
    // The peak from here on: checks that run at once hold their working memory at once.
    faultline::bench::peak_heap_bytes = faultline::bench::live_heap_bytes.load();
    // Then as `faultline check` runs it: grouped once, the checks on one thread per core.
    const std::size_t threads = hardware_threads();
    const auto concurrent_start = std::chrono::steady_clock::now();
    evaluate_checks(expectations, run, threads);
    const double concurrent_s = seconds_since(concurrent_start);
    std::printf("evaluate_checks on %zu threads (group + checks): %.3f s\n", threads, concurrent_s);
    for (std::size_t i = 0; i < one_by_one.size(); ++i) {
        const verdict& v = run.verdicts[i];
        if (v.check != one_by_one[i].check || v.outcome() != one_by_one[i].outcome() || v.summary != one_by_one[i].summary) {
            std::printf("verdict %zu (%s) differs between the two ways\n", i, v.check.c_str());
            return 1;
        }
    }
    const double total_s = read_s + concurrent_s;
    const long long concurrent_peak = faultline::bench::peak_heap_bytes.load() - baseline;
    std::printf("read + evaluate_checks: %.3f s, %.0f records/s, peak %.0f bytes/record\n", total_s, n / total_s,
                static_cast<double>(std::max({read_peak, concurrent_peak})) / n);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 3 && args[0] == "generate") return write_journal(std::stoul(args[1]), args[2]);
    if (args.size() == 2 && args[0] == "read") return read_and_check(args[1], nullptr);
    if (args.size() == 3 && args[0] == "check") return read_and_check(args[1], &args[2]);
    std::cerr << "usage: journal_check_bench generate RECORDS FILE | read FILE | check FILE EXPECT.toml\n";
    return 2;
}
