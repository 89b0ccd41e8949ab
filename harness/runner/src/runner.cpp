#include "faultline/runner/runner.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "faultline/checks/run_verdicts.hpp"
#include "faultline/core/clock.hpp"
#include "faultline/core/random.hpp"
#include "faultline/drivers/driver.hpp"
#include "faultline/record/journal_merge.hpp"
#include "faultline/server/proxy.hpp"
#include "faultline/server/relay.hpp"
#include "faultline/server/server.hpp"
#include "faultline/tls/run_certificates.hpp"

namespace faultline::runner {
namespace {

int severity(exit_code code) {
    switch (code) {
        case exit_code::passed: return 0;
        case exit_code::insufficient_evidence: return 1;
        case exit_code::check_failed: return 2;
        case exit_code::harness_error: return 3;
        case exit_code::bad_input: return 4;
    }
    return 4;
}

// The header a relay names the operation in when the client names none.
constexpr std::string_view relay_identity_header = "Faultline-Op";

// One started [[relay]] tier. Members are destroyed listener first: the server calls the relay.
struct running_relay {
    std::string name;
    std::unique_ptr<server::relay> forwarder;
    std::unique_ptr<server::server_context> context;
    std::unique_ptr<server::server> listener;
};

retry::retry_policy relay_policy(const drivers::client_policy& declared) {
    retry::retry_policy policy = declared.policy;
    policy.budget = drivers::make_budget(declared.budget);
    if (declared.breaker) policy.breaker = std::make_shared<retry::circuit_breaker>(*declared.breaker);
    if (!declared.enforce_deadline) policy.overall_timeout.reset();
    return policy;
}

// A run's journal (the service's or a relay tier's): wire details only when a report writes them,
// and full chunks spilled while the server runs (journal.hpp) to the system's temporary directory
// ($TMPDIR, else /tmp; kept in memory when there is none).
server::journal_options run_journal(const run_options& options) {
    server::journal_options out;
    out.wire_details = options.keep_wire_details;
    std::error_code ec;
    const std::filesystem::path directory = std::filesystem::temp_directory_path(ec);
    if (!ec) out.spill_directory = directory.string();
    return out;
}

// Starts the [[relay]] tiers from the service outwards, so each knows the port of the one after it.
// Returned client side first; empty with harness_error set when one failed to start.
// The first tier, which the client calls, serves `client_tls` when set.
std::vector<running_relay> start_relays(const scenario& s, const run_options& options, std::uint16_t service_port,
                                        const server::identity_config& client_identity, const std::string& identity_header,
                                        const tls::run_certificates* client_tls,
                                        faultline::clock& clk, record::run_record& record) {
    std::vector<running_relay> tiers(s.relays.size());
    std::uint16_t next_port = service_port;
    for (std::size_t i = s.relays.size(); i-- > 0;) {
        const relay_tier& declared = s.relays[i];
        running_relay& tier = tiers[i];
        tier.name = declared.name;
        server::relay_options forward;
        forward.port = next_port;
        forward.policy = relay_policy(declared.policy);
        forward.assume_idempotent = declared.policy.assume_idempotent;
        forward.identity_header = identity_header;
        forward.seed = mix64(record.seed ^ (i + 1));
        tier.forwarder = std::make_unique<server::relay>(std::move(forward));
        server::model_config model;
        // The first tier groups the client's attempts as the service would without relays; the
        // others read the name the tier before them sent.
        if (i == 0) {
            model.identity = client_identity;
        } else {
            model.identity.header = identity_header;
        }
        tier.context = std::make_unique<server::server_context>(model, std::vector<faults::rule>{}, record.seed,
                                                        run_journal(options), faults::engine_limits{},
                                                        server::ledger_keeps::count);
        tier.context->next_tier = tier.forwarder.get();
        server::server_options listen;
        listen.threads = std::max<std::size_t>(1, options.server_threads);
        if (i == 0 && client_tls != nullptr) {
            listen.tls = client_tls->identity();
            listen.tls_faults = client_tls->bad();
        }
        tier.listener = std::make_unique<server::server>(*tier.context, listen, clk);
        if (const boost::system::error_code ec = tier.listener->start()) {
            record.harness_error = "relay tier \"" + tier.name + "\" failed to start: " + ec.message();
            return {};
        }
        next_port = tier.listener->port();
    }
    return tiers;
}

// A tier's journal for merging, with a wall-clock anchor at its run start: the tiers of one run
// started at slightly different moments, and the anchors put their times on one timeline (the
// service's, which started first). The runner's servers journal no anchor of their own (a proxy's
// comes after this one and is ignored: the first anchor counts).
record::named_journal tier_journal(std::string name, server::server_context& context, faultline::time_point run_start,
                           faultline::clock& clk) {
    record::named_journal out;
    out.name = std::move(name);
    server::journal_attempts attempts = context.records.take();
    out.records = std::move(attempts.records);
    out.wire = std::move(attempts.wire);
    const auto since_start = clk.now() - run_start;
    out.server_events.push_back(record::wall_clock_anchor(0, clk.wall_now() - since_start, out.name, context.seed()));
    std::vector<record::server_event> events = context.records.events();
    out.server_events.insert(out.server_events.end(), events.begin(), events.end());
    return out;
}

// What the client (or the first relay) calls as the service: the built-in service model, or with
// `[proxy]` the proxy in front of the scenario's real service. Both work on the same context. It
// serves `tls` when set (the client calls it directly).
class service_front {
public:
    service_front(const scenario& s, server::server_context& context, const run_options& options,
                  const tls::run_certificates* tls, faultline::clock& clk) {
        const std::size_t threads = std::max<std::size_t>(1, options.server_threads);
        if (s.proxy) {
            server::proxy_options forward = s.proxy->options();
            forward.threads = threads;
            forward.watch_lateness = true;
            if (tls != nullptr) {
                forward.tls = tls->identity();
                forward.tls_faults = tls->bad();
            }
            proxy_.emplace(context, std::move(forward), clk);
            upstream_ = *s.proxy;
        } else {
            server::server_options listen;
            listen.threads = threads;
            listen.watch_lateness = true;
            if (tls != nullptr) {
                listen.tls = tls->identity();
                listen.tls_faults = tls->bad();
            }
            server_.emplace(context, listen, clk);
        }
    }

    // "" when started, else why not (an unreachable upstream is a setup error, as for `faultline proxy`).
    std::string start() {
        if (proxy_) {
            const server::host_port& upstream = upstream_->upstream;
            if (const auto ec = server::probe_upstream(upstream.address, upstream.port, upstream_->connect_timeout)) {
                return "the [proxy] upstream " + upstream.address + ":" + std::to_string(upstream.port) +
                       " is not reachable: " + ec.message();
            }
            if (const auto ec = proxy_->start()) return "the proxy failed to start: " + ec.message();
            return {};
        }
        if (const auto ec = server_->start()) return "the fault server failed to start: " + ec.message();
        return {};
    }
    void stop() { proxy_ ? proxy_->stop() : server_->stop(); }
    std::uint16_t port() const { return proxy_ ? proxy_->port() : server_->port(); }
    std::string url() const { return proxy_ ? proxy_->url() : server_->url(); }
    faultline::time_point run_start() const { return proxy_ ? proxy_->run_start() : server_->run_start(); }

private:
    std::optional<server::server> server_;
    std::optional<server::proxy> proxy_;
    std::optional<server::proxy_config> upstream_;
};

// Tells the listener while a scenario's journal is readable: declared after the journal, so it says
// "closed" before the journal goes, however the scope is left.
class attempts_watch {
public:
    attempts_watch(progress_listener* listener, const server::journal& live) : listener_(listener), live_(live) {
        if (listener_ != nullptr) listener_->attempts_opened(live_);
    }
    ~attempts_watch() {
        if (listener_ != nullptr) listener_->attempts_closed(live_);
    }
    attempts_watch(const attempts_watch&) = delete;
    attempts_watch& operator=(const attempts_watch&) = delete;

private:
    progress_listener* listener_;
    const server::journal& live_;
};

// The part of a run that can throw (constructing the server's context, the driver): everything
// that goes wrong becomes `harness_error`.
void execute(const scenario& s, const run_options& options, record::run_record& record) {
    faultline::clock& clk = steady_clock_source::instance();

    server::model_config model = s.server;
    // A driver that names every operation in a header has the server identify operations by it, so
    // the journal and the client records agree on operation names (an Idempotency-Key still takes
    // precedence on the server).
    if (const std::string_view header = s.client->identity_header(); !header.empty()) {
        model.identity.header = std::string(header);
    }
    // Behind relays the service sees the relays' requests, which name the operation in this header.
    const server::identity_config client_identity = model.identity;
    const std::string identity_header =
        model.identity.header.empty() ? std::string{relay_identity_header} : model.identity.header;
    if (!s.relays.empty()) model.identity = server::identity_config{identity_header, ""};
    server::journal_options journal_bound = run_journal(options);
    journal_bound.max_records = model.journal_max_records;
    // Nothing in a run reads the ledger's entries: the checks judge the journal (ledger.hpp).
    server::server_context context(model, s.faults, record.seed, journal_bound, {}, server::ledger_keeps::count);
    const attempts_watch watch(options.progress, context.records);

    // [server] tls: a CA of the run's own, its file handed to the client; whichever tier the client
    // calls serves the certificate it issued.
    std::optional<tls::run_certificates> certificates;
    if (s.tls) {
        static std::atomic<std::uint64_t> runs_with_tls{0};
        certificates.emplace("faultline run CA", std::vector<std::string>{},
                             tls::temporary_ca_path("run" + std::to_string(runs_with_tls.fetch_add(1))), false);
    }
    const tls::run_certificates* client_tls = certificates ? &*certificates : nullptr;
    service_front fault_server(s, context, options, s.relays.empty() ? client_tls : nullptr, clk);
    if (std::string error = fault_server.start(); !error.empty()) {
        record.harness_error = std::move(error);
        return;
    }

    std::vector<running_relay> relays =
        start_relays(s, options, fault_server.port(), client_identity, identity_header, client_tls, clk, record);
    if (!record.harness_error.empty()) return;
    // The client calls the first tier: the first relay, else the service itself.
    const std::uint16_t entry_port = relays.empty() ? fault_server.port() : relays.front().listener->port();
    const std::string entry_url = relays.empty() ? fault_server.url() : relays.front().listener->url();

    // Times are on the service's clock: it started first, so the merged journal's zero is its start.
    drivers::driver_context ctx{"127.0.0.1", entry_port,               entry_url, record.seed,
                       clk,         fault_server.run_start(), s.time_limit};
    ctx.interrupt = options.interrupt;
    if (certificates) ctx.ca_file = certificates->ca_file();
    drivers::driver_result result = s.client->run(ctx);
    // Client side first: a tier stops once nothing calls it any more.
    for (running_relay& tier : relays) tier.listener->stop();
    fault_server.stop();
    // Nothing judges the service's state: freed before the journal is taken, and its pages handed
    // back, since glibc keeps freed memory in the arenas of the server threads that used it, where
    // the checks' threads never reuse it (docs/benchmarks.md: 11 MB of a 230,000-attempt run).
    context.release_service_state();
#ifdef __GLIBC__
    malloc_trim(0);
#endif

    record.duration = clk.now() - fault_server.run_start();
    std::string relay_journal_error;
    if (relays.empty()) {
        // Moved out, not copied: a copy held every record twice at the run's peak (docs/benchmarks.md).
        server::journal_attempts attempts = context.records.take();
        record.journal = std::move(attempts.records);
        record.wire = std::move(attempts.wire);
        std::sort(record.journal.begin(), record.journal.end(),
                  [](const record::journal_record& a, const record::journal_record& b) { return a.seq < b.seq; });
        std::sort(record.wire.begin(), record.wire.end(),
                  [](const record::wire_detail& a, const record::wire_detail& b) { return a.seq < b.seq; });
        record.server_events = context.records.events();
        // A proxy anchors its journal for merging (proxy.hpp); the run record's clock is its own.
        std::erase_if(record.server_events,
                      [](const record::server_event& e) { return e.kind == record::server_event_kind::started; });
    } else {
        // Every tier's attempts, tagged with its instance, as one history (journal_merge.hpp).
        std::vector<record::named_journal> journals;
        for (running_relay& tier : relays) {
            journals.push_back(tier_journal(tier.name, *tier.context, tier.listener->run_start(), clk));
        }
        journals.push_back(tier_journal(std::string{backend_instance}, context, fault_server.run_start(), clk));
        record::merged_journal merged = merge_journals(std::move(journals));
        record.journal = std::move(merged.records);
        record.wire = std::move(merged.wire);
        // The anchors only put the tiers on one timeline; the run record's own clock is the service's.
        std::erase_if(merged.server_events,
                      [](const record::server_event& e) { return e.kind == record::server_event_kind::started; });
        record.server_events = std::move(merged.server_events);
        for (const running_relay& tier : relays) {
            if (tier.context->records.failed()) {
                relay_journal_error =
                    "the journal of relay tier \"" + tier.name + "\" failed: " + tier.context->records.error();
            }
        }
    }
    record.clients = std::move(result.clients);
    record.command = std::move(result.command);
    record.declared = s.client->declared();
    record.rule_firings = rule_firings(s.faults, context.engine.counters(), record.journal);
    record.interrupted = result.interrupted;

    if (!result.error.empty()) {
        record.harness_error = "the client driver failed: " + result.error;
    } else if (!relay_journal_error.empty()) {
        record.harness_error = relay_journal_error;
    } else if (context.records.failed()) {
        record.harness_error = "the journal failed: " + context.records.error();
    } else if (!context.records.memory_complete()) {
        record.harness_error = "the journal outgrew memory (server.journal_max_records = " +
                               std::to_string(model.journal_max_records) + ")";
    }
}

}  // namespace

std::string_view to_string(exit_code code) {
    switch (code) {
        case exit_code::passed: return "passed";
        case exit_code::check_failed: return "check failed";
        case exit_code::insufficient_evidence: return "insufficient evidence";
        case exit_code::bad_input: return "bad input";
        case exit_code::harness_error: return "harness error";
    }
    return "harness error";
}

exit_code worst(exit_code a, exit_code b) { return severity(a) >= severity(b) ? a : b; }

exit_code exit_code_of(const record::run_record& run) {
    if (!run.harness_error.empty()) return exit_code::harness_error;
    switch (record::outcome_of(run)) {
        case record::verdict_outcome::pass: return exit_code::passed;
        case record::verdict_outcome::insufficient_evidence: return exit_code::insufficient_evidence;
        case record::verdict_outcome::fail: break;
    }
    return exit_code::check_failed;
}

exit_code exit_code_of(const std::vector<record::run_record>& runs) {
    exit_code out = exit_code::passed;
    for (const record::run_record& run : runs) out = worst(out, exit_code_of(run));
    return out;
}

std::size_t hardware_threads() { return std::max(1U, std::thread::hardware_concurrency()); }

void evaluate_checks(const std::vector<checks::expectation>& expectations, record::run_record& run, std::size_t threads) {
    run.verdicts.clear();
    const record::operation_groups operations = group_operations(run.journal);
    const record::run_record& judged = run;  // the checks only read it; the verdicts are stored after the join
    std::vector<record::verdict> verdicts(expectations.size());
    std::vector<std::exception_ptr> failures(expectations.size());
    // A shared next index rather than a fixed share per thread: the checks' costs differ by 10x, and
    // whichever thread is free takes the next one, so the slow ones do not queue up behind each other.
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i = next++; i < expectations.size(); i = next++) {
            try {
                verdicts[i] = evaluate(expectations[i], judged, operations);
            } catch (...) {
                failures[i] = std::current_exception();
            }
        }
    };
    const std::size_t count = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(1, expectations.size()));
    {
        // Joined on the way out, also when starting a thread fails after others have started.
        std::vector<std::jthread> pool;
        pool.reserve(count - 1);
        for (std::size_t t = 1; t < count; ++t) pool.emplace_back(worker);
        worker();
    }
    // What the checks evaluated one after another would have thrown: the first failing one's exception.
    for (const std::exception_ptr& failure : failures) {
        if (failure) std::rethrow_exception(failure);
    }
    run.verdicts = std::move(verdicts);
}

std::vector<record::rule_firing> rule_firings(const std::vector<faults::rule>& rules, const faults::engine_counters& counters,
                                      const std::vector<record::journal_record>& journal) {
    std::vector<record::rule_firing> out;
    out.reserve(rules.size());
    for (const faults::rule& r : rules) {
        record::rule_firing f{r.name, r.kind, 0, r.min_fired};
        const auto installed = std::find_if(counters.fired_by_rule.begin(), counters.fired_by_rule.end(),
                                            [&](const auto& entry) { return entry.first == r.name; });
        if (installed != counters.fired_by_rule.end()) {
            f.fired = installed->second;
        } else {
            // Removed during the run (evidence_intact fails it): its connection-level firings are lost.
            f.fired = static_cast<std::uint64_t>(std::count_if(
                journal.begin(), journal.end(), [&](const record::journal_record& a) { return a.rule == r.name; }));
        }
        out.push_back(std::move(f));
    }
    return out;
}

record::run_record run_scenario(const scenario& s, const run_options& options) {
    record::run_record record;
    record.strict = s.strict || options.strict;
    record.scenario = s.name;
    record.scenario_file = s.file;
    record.description = s.description;
    record.seed = options.seed.value_or(s.seed);
    record.started_at = steady_clock_source::instance().wall_now();
    if (!s.client) {
        record.harness_error = "the scenario has no client";
    } else {
        try {
            execute(s, options, record);
        } catch (const std::exception& error) {
            record.harness_error = std::string("the run failed: ") + error.what();
        }
    }
    if (record.harness_error.empty()) {
        evaluate_checks(s.expectations, record, options.check_threads);
        record.verdicts.push_back(checks::evidence_intact(record));
        for (record::verdict& v : checks::firing_verdicts(record)) record.verdicts.push_back(std::move(v));
    }
    if (options.progress != nullptr) options.progress->scenario_finished(record);
    return record;
}

std::vector<record::run_record> run_scenarios(const std::vector<scenario>& scenarios, const run_options& options,
                                      std::size_t jobs,
                                      const std::function<void(std::size_t, const record::run_record&)>& on_finished,
                                      std::size_t lane, std::size_t after_lane,
                                      std::chrono::milliseconds after_lane_stagger) {
    const std::size_t total = scenarios.size();
    lane = std::min(lane, total);
    after_lane = std::min(after_lane, total - lane);
    const std::size_t rest_begin = lane + after_lane;
    // The lane counts as one scenario: the rest are shared by all workers (the after-lane ones have
    // threads of their own).
    const std::size_t parallel = total - rest_begin + (lane > 0 ? 1 : 0);
    const std::size_t threads = std::clamp<std::size_t>(jobs, 1, std::max<std::size_t>(1, parallel));
    // The scenarios running at once share the threads for checks, so -jN does not multiply them.
    run_options shared = options;
    shared.check_threads = std::max<std::size_t>(1, options.check_threads / threads);
    std::vector<record::run_record> records(total);
    std::mutex report_mutex;
    const auto run_one = [&](std::size_t i) {
        if (options.interrupt != nullptr && options.interrupt->requested()) {
            records[i].scenario = scenarios[i].name;
            records[i].not_run = true;
            return;
        }
        records[i] = run_scenario(scenarios[i], shared);
        if (on_finished) {
            const std::lock_guard lock(report_mutex);
            on_finished(i, records[i]);
        }
    };
    // The rest go to whichever worker comes first; the lane's worker joins them once the lane is done.
    std::mutex take_mutex;
    std::size_t next_rest = rest_begin;
    const auto take = [&]() -> std::optional<std::size_t> {
        const std::lock_guard lock(take_mutex);
        if (next_rest < total) return next_rest++;
        return std::nullopt;
    };
    auto worker = [&] {
        while (const std::optional<std::size_t> i = take()) run_one(*i);
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1 + after_lane);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    for (std::size_t i = 0; i < lane; ++i) run_one(i);
    for (std::size_t i = lane; i < rest_begin; ++i) {
        pool.emplace_back([&, i] {
            std::this_thread::sleep_for((i - lane) * after_lane_stagger);
            run_one(i);
        });
    }
    worker();
    for (std::thread& t : pool) t.join();
    return records;
}

}  // namespace faultline::runner
