#include "faultline/drivers/builtin_driver.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/verb.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include "backoff_table.hpp"
#include "faultline/core/random.hpp"
#include "faultline/retry/async_execute.hpp"
#include "faultline/retry/classify.hpp"
#include "faultline/retry/deadline.hpp"
#include "faultline/retry/http_client.hpp"
#include "faultline/tls/contexts.hpp"
#include "faultline/retry/idempotency.hpp"

namespace faultline::drivers {

namespace {

using config::need;
using config::table_reader;

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

// How long cancelled operations get to wind down after the time limit before the io_context is
// stopped outright.
constexpr auto cancel_grace = 1s;

// Distinct streams derived from the run's seed (idempotency keys have their own: operation_key).
constexpr std::uint64_t client_stream = 0x636c6e74ULL;    // "clnt"
constexpr std::uint64_t template_stream = 0x74706c73ULL;  // "tpls"

constexpr std::uint32_t max_clients = 1000;
constexpr std::uint64_t max_total_operations = 1'000'000;
constexpr double max_rate = 100'000.0;

// --- reading the [client] table -------------------------------------------------------------

// "[client.policy]" + "backoff" -> "[client.policy.backoff]".
std::string nested(const std::string& context, std::string_view key) {
    const std::string base = context.ends_with("]") ? context.substr(0, context.size() - 1) : context;
    return base + "." + std::string(key) + "]";
}

void read_budget(table_reader& r, budget_spec& spec) {
    constexpr std::array<std::string_view, 5> options{"max_tokens", "token_ratio", "ttl", "percent_can_retry",
                                                      "min_retries_per_sec"};
    // Without a valid kind the other keys cannot be checked; one error, not one per key.
    const auto kind = r.choice("kind", {"none", "token_bucket", "ratio"}, need::required);
    if (!kind) {
        for (const auto key : options) r.allow(key);
        r.finish();
        return;
    }
    spec.kind = *kind == "none" ? budget_kind::none : *kind == "ratio" ? budget_kind::ratio : budget_kind::token_bucket;
    // Options of the other kind are errors rather than silently ignored.
    const bool bucket = spec.kind == budget_kind::token_bucket;
    const bool ratio = spec.kind == budget_kind::ratio;
    for (const std::string_view key : {"max_tokens", "token_ratio"}) {
        if (r.has(key) && !bucket) r.fail(key, "only applies to kind = \"token_bucket\"");
    }
    for (const std::string_view key : {"ttl", "percent_can_retry", "min_retries_per_sec"}) {
        if (r.has(key) && !ratio) r.fail(key, "only applies to kind = \"ratio\"");
    }
    if (bucket) {
        // The retry library's token_bucket_budget keeps three decimals and refuses less than 0.001 (gRFC A6's
        // bounds); reading the same range here reports it at load time, at the key.
        if (const auto v = r.number("max_tokens", 0.001, 1000.0)) spec.max_tokens = *v;
        if (const auto v = r.number("token_ratio", 0.001, 1000.0)) spec.token_ratio = *v;
    }
    if (ratio) {
        if (const auto v = r.duration("ttl", 1ms, 1h)) spec.ratio.ttl = *v;
        if (const auto v = r.number("percent_can_retry", 0.0, 1000.0)) spec.ratio.percent_can_retry = *v;
        if (const auto v = r.number("min_retries_per_sec", 0.0, 1'000'000.0)) spec.ratio.min_retries_per_sec = *v;
    }
    r.finish();
}

void read_breaker(table_reader& r, std::optional<retry::circuit_breaker_options>& breaker) {
    retry::circuit_breaker_options o = breaker.value_or(retry::circuit_breaker_options{});
    bool enabled = true;
    if (const auto v = r.boolean("enabled")) enabled = *v;
    if (const auto v = r.integer("window_size", 1, 100'000)) o.window_size = static_cast<std::uint32_t>(*v);
    if (const auto v = r.integer("minimum_calls", 1, 100'000)) o.minimum_calls = static_cast<std::uint32_t>(*v);
    if (const auto v = r.number_above("failure_ratio", 0.0, 1.0)) o.failure_ratio = *v;
    if (const auto v = r.duration("open_duration", 1ms, 1h)) o.open_duration = *v;
    if (const auto v = r.integer("half_open_probes", 1, 1000)) o.half_open_probes = static_cast<std::uint32_t>(*v);
    if (r.ok() && o.minimum_calls > o.window_size) {
        r.fail("minimum_calls", "minimum_calls (" + std::to_string(o.minimum_calls) + ") exceeds window_size (" +
                                        std::to_string(o.window_size) + ")");
    }
    r.finish();
    if (enabled) {
        breaker = o;
    } else {
        breaker.reset();
    }
}

void read_policy(table_reader& r, client_policy& p) {
    retry::retry_policy& rp = p.policy;
    if (const auto v = r.integer("max_attempts", 1, 100)) rp.max_attempts = static_cast<std::uint32_t>(*v);
    if (const auto v = r.duration_or_none("per_attempt_timeout", 1ms, 1h)) rp.per_attempt_timeout = *v;
    if (const auto v = r.duration_or_none("overall_timeout", 1ms, 24h)) rp.overall_timeout = *v;
    if (const auto v = r.duration("max_retry_after", 0ns, 24h)) rp.max_retry_after = *v;
    if (const auto v = r.boolean("honour_retry_after")) rp.honour_retry_after = *v;
    if (const auto v = r.integers("retry_on", 100, 599)) {
        for (const std::int64_t s : *v) rp.classify.retry_on(static_cast<int>(s));
    }
    if (const auto v = r.integers("never_retry", 100, 599)) {
        for (const std::int64_t s : *v) rp.classify.never_retry(static_cast<int>(s));
    }
    if (const auto v = r.integers("unprocessed", 100, 599)) {
        for (const std::int64_t s : *v) rp.classify.unprocessed(static_cast<int>(s));
    }
    if (const auto v = r.choice("idempotency_keys", {"auto", "none"})) rp.keys.auto_add = *v == "auto";
    if (const auto v = r.choice("key_format", {"quoted", "bare"})) {
        rp.keys.format = *v == "bare" ? retry::key_format::bare : retry::key_format::quoted;
    }
    if (const auto v = r.boolean("assume_idempotent")) p.assume_idempotent = *v;
    if (const auto v = r.boolean("enforce_deadline")) p.enforce_deadline = *v;
    if (const toml::table* t = r.table("backoff")) {
        table_reader sub = r.child(*t, nested(r.context(), "backoff"));
        read_backoff_table(sub, rp.backoff, need::optional);
    }
    if (const toml::table* t = r.table("budget")) {
        table_reader sub = r.child(*t, nested(r.context(), "budget"));
        read_budget(sub, p.budget);
    }
    if (const toml::table* t = r.table("circuit_breaker")) {
        table_reader sub = r.child(*t, nested(r.context(), "circuit_breaker"));
        read_breaker(sub, p.breaker);
    }
    r.finish();
}

std::optional<request_template> read_request(table_reader& r) {
    request_template t;
    if (const auto v = r.choice("method", {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})) t.method = *v;
    if (const auto v = r.string("path")) {
        if (v->empty() || v->front() != '/') {
            r.fail("path", "must start with '/', got \"" + *v + "\"");
        } else {
            t.path = *v;
        }
    }
    if (const auto v = r.string("body")) t.body = *v;
    if (const auto headers = r.string_table("headers")) {
        for (const auto& [name, value] : *headers) {
            if (name.empty() || name.find_first_of(" :\r\n\t") != std::string::npos) {
                r.fail("headers", "\"" + name + "\" is not a valid header name");
                continue;
            }
            if (value.find_first_of("\r\n") != std::string::npos) {
                r.fail("headers", "header \"" + name + "\" has a line break in its value");
                continue;
            }
            t.headers.emplace_back(name, value);
        }
    }
    if (const auto v = r.integer("weight", 1, 1'000'000)) t.weight = static_cast<std::uint32_t>(*v);
    r.finish();
    if (!r.ok()) return std::nullopt;
    return t;
}

void read_workload(table_reader& r, workload& w) {
    if (const auto v = r.integer("clients", 1, max_clients)) w.clients = static_cast<std::uint32_t>(*v);
    const bool by_count = r.has("operations");
    const bool has_rate = r.has("rate");
    const bool has_duration = r.has("duration");
    const bool by_rate = has_rate || has_duration;
    r.allow("concurrency");
    if (by_count && by_rate) {
        r.fail(has_rate ? "rate" : "duration", "give either operations (per client) or rate and duration, not both");
        return;
    }
    if (by_rate) {
        w.kind = workload_kind::rate;
        if (!has_rate) r.fail("duration", "duration needs rate (operations per second)");
        if (!has_duration) r.fail("rate", "rate needs duration (how long the rate runs)");
        if (const auto v = r.number_above("rate", 0.0, max_rate)) w.rate = *v;
        if (const auto v = r.duration("duration", 1ms, 1h)) w.span = *v;
    } else if (const auto v = r.integer("operations", 1, static_cast<std::int64_t>(max_total_operations))) {
        w.operations_per_client = static_cast<std::uint64_t>(*v);
    }
    w.concurrency = w.clients;
    if (const auto v = r.integer("concurrency", 1, max_clients)) w.concurrency = static_cast<std::uint32_t>(*v);
    if (r.ok() && total_operations(w) > max_total_operations) {
        r.fail(by_rate ? "rate" : "operations",
                   "the workload has " + std::to_string(total_operations(w)) + " operations; at most " +
                       std::to_string(max_total_operations) + " are allowed");
    }
}

std::optional<builtin_config> read_builtin(table_reader& r) {
    builtin_config c;
    if (const auto v = r.choice("preset", {"good", "naive", "no_jitter", "no_budget", "no_keys",
                                           "ignores_retry_after", "ignores_deadline"})) {
        c.preset = *preset_from_string(*v);
    }
    c.policy = preset_policy(c.preset);
    read_workload(r, c.load);
    if (const auto v = r.choice("order", {"round_robin", "weighted"})) {
        c.order = *v == "weighted" ? template_order::weighted : template_order::round_robin;
    }
    if (const auto v = r.integer("threads", 1, 2)) c.threads = static_cast<std::uint32_t>(*v);
    if (const auto v = r.choice("protocol", {"http1", "h2"})) {
        c.protocol = *v == "h2" ? client_protocol::h2 : client_protocol::http1;
    }
    if (const toml::array* requests = r.array_of_tables("request")) {
        c.requests.clear();
        if (requests->empty()) r.fail("request", "needs at least one [[client.request]] table");
        std::size_t i = 0;
        for (const toml::node& item : *requests) {
            table_reader sub = r.child(*item.as_table(), "[[client.request]] #" + std::to_string(++i));
            if (auto t = read_request(sub)) c.requests.push_back(std::move(*t));
        }
    }
    if (const toml::table* p = r.table("policy")) {
        table_reader sub = r.child(*p, "[client.policy]");
        read_policy(sub, c.policy);
    }
    if (!r.ok()) return std::nullopt;
    return c;
}

// --- running ---------------------------------------------------------------------------------


std::int64_t since(time_point start, time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - start).count();
}

std::string outcome_text(const retry::attempt_outcome& o) {
    if (o.kind == retry::outcome_kind::response) return std::to_string(o.status);
    return std::string(retry::to_string(o.kind));
}

// A counting gate for "at most `concurrency` operations in flight". Used only on the run's strand.
class slot_gate {
public:
    slot_gate(asio::any_io_executor ex, std::uint32_t slots) : ex_{std::move(ex)}, free_{slots} {}

    // True with a slot; false when the wait was cancelled (time limit).
    asio::awaitable<bool> acquire() {
        if (closed_) co_return false;
        if (free_ > 0) {
            --free_;
            co_return true;
        }
        auto w = std::make_shared<waiter>(ex_);
        waiters_.push_back(w);
        co_await w->timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (!w->granted) std::erase(waiters_, w);
        co_return w->granted;
    }

    void release() {
        if (!waiters_.empty()) {
            // Hand the slot straight to the oldest waiter.
            auto w = waiters_.front();
            waiters_.pop_front();
            w->granted = true;
            w->timer.cancel();
            return;
        }
        ++free_;
    }

    void close() {
        closed_ = true;
        for (auto& w : waiters_) w->timer.cancel();
    }

private:
    struct waiter {
        explicit waiter(const asio::any_io_executor& ex) : timer{ex, asio::steady_timer::time_point::max()} {}
        asio::steady_timer timer;
        bool granted = false;
    };

    asio::any_io_executor ex_;
    std::uint32_t free_;
    bool closed_ = false;
    std::deque<std::shared_ptr<waiter>> waiters_;
};

// One run: owns the io_context and everything the coroutines touch. Everything below `strand` is
// touched only on that strand; the http clients run on their own strands.
class run_state {
public:
    run_state(const builtin_config& config, const driver_context& ctx)
        : config_{config},
          ctx_{ctx},
          strand_{asio::make_strand(io_)},
          gate_{strand_, std::max<std::uint32_t>(config.load.concurrency, 1)},
          limit_timer_{strand_},
          grace_timer_{strand_},
          rate_timer_{strand_},
          interrupt_wait_{strand_},
          total_{total_operations(config.load)},
          budget_{make_budget(config.policy.budget)} {
        if (config.policy.breaker) breaker_ = std::make_shared<retry::circuit_breaker>(*config.policy.breaker);
        for (const auto& t : config.requests) total_weight_ += t.weight;
        make_clients();
    }

    driver_result run(builtin_stats& stats) {
        asio::post(strand_, [this] { start(); });
        const std::uint32_t extra = std::clamp<std::uint32_t>(config_.threads, 1, 2) - 1;
        std::vector<std::thread> threads;
        for (std::uint32_t i = 0; i < extra; ++i) threads.emplace_back([this] { run_io(); });
        run_io();
        for (auto& t : threads) t.join();

        driver_result result;
        result.timed_out = stopped_ && !interrupted_;
        result.interrupted = interrupted_;
        result.error = error_.empty() ? io_error_ : error_;
        const std::int64_t end_ns = since(ctx_.run_start, ctx_.clk.now());
        stats.operations_started = records_.size();
        for (record::client_record& r : records_) {
            if (r.decision.empty()) {
                // Stopped outright after the grace period: it never got its final decision.
                r.decision = std::string(retry::to_string(retry::decision::cancelled));
                r.finished_ns = end_ns;
            }
        }
        // Handed over as they are (docs/benchmarks.md: a copy into a vector held them twice).
        result.clients = std::move(records_);
        stats.operations_finished = finished_;
        if (budget_) {
            stats.retries_allowed = budget_->allowed();
            stats.retries_refused = budget_->refused();
        }
        if (breaker_) stats.breaker_opened = breaker_->times_opened();
        return result;
    }

private:
    void run_io() {
        try {
            io_.run();
        } catch (const std::exception& e) {
            // Nothing is meant to throw here; a throw ends the run as a harness error.
            const std::lock_guard lock{io_error_mutex_};
            if (io_error_.empty()) io_error_ = std::string("builtin driver: ") + e.what();
            io_.stop();
        }
    }

    void make_clients() {
        const retry::retry_policy& declared = config_.policy.policy;
        retry::retry_policy client_policy = declared;
        client_policy.budget = budget_;
        client_policy.breaker = breaker_;
        // The deadline is computed per operation (so it can be recorded) and passed explicitly.
        client_policy.overall_timeout.reset();
        const std::uint32_t n = config_.load.clients;
        randoms_.reserve(n);
        clients_.reserve(n);
        // With TLS every client trusts the run's CA alone, and verifies the name (127.0.0.1).
        const tls::context_ptr tls = ctx_.ca_file.empty() ? nullptr : tls::client_context({ctx_.ca_file, true});
        for (std::uint32_t c = 0; c < n; ++c) {
            randoms_.push_back(std::make_unique<seeded_random>(mix64(ctx_.seed ^ client_stream, c)));
            retry::http_client_options options;
            options.clk = &ctx_.clk;
            options.random = randoms_.back().get();
            options.tls = tls;
            options.protocol = config_.protocol == client_protocol::h2 ? retry::http_protocol::http2
                                                                       : retry::http_protocol::http1;
            clients_.push_back(std::make_unique<retry::http_client>(io_.get_executor(), ctx_.host, ctx_.port,
                                                                    client_policy, options));
        }
    }

    void start() {
        if (total_ == 0) return;
        limit_timer_.expires_at(ctx_.run_start + ctx_.time_limit);
        limit_timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) stop();
        });
        if (ctx_.interrupt != nullptr) {
            // A duplicate, since the descriptor closes what it owns.
            interrupt_wait_.assign(::dup(ctx_.interrupt->fd()));
            interrupt_wait_.async_wait(asio::posix::descriptor_base::wait_read, [this](boost::system::error_code ec) {
                if (ec || stopped_) return;
                interrupted_ = record::run_interruption{ctx_.interrupt->signal(), since(ctx_.run_start, ctx_.clk.now()), 0};
                stop();
            });
        }
        if (config_.load.kind == workload_kind::operations) {
            lanes_left_ = config_.load.clients;
            for (std::uint32_t c = 0; c < config_.load.clients; ++c) spawn(lane(c));
        } else {
            lanes_left_ = 1;
            spawn(scheduler());
        }
    }

    // Runs `work` on the strand, cancellable at the time limit.
    void spawn(asio::awaitable<void> work) {
        signals_.emplace_back();
        auto it = std::prev(signals_.end());
        asio::co_spawn(strand_, std::move(work),
                       asio::bind_cancellation_slot(it->slot(), [this, it](std::exception_ptr e) {
                           if (e && error_.empty()) {
                               try {
                                   std::rethrow_exception(e);
                               } catch (const std::exception& ex) {
                                   error_ = std::string("builtin driver: ") + ex.what();
                               } catch (...) {
                                   error_ = "builtin driver: unknown exception";
                               }
                           }
                           // Runs on the strand (co_spawn completes on it); the slot is done with.
                           asio::post(strand_, [this, it] { signals_.erase(it); });
                       }));
    }

    void stop() {
        if (stopped_) return;
        stopped_ = true;
        gate_.close();
        rate_timer_.cancel();
        for (auto& s : signals_) s.emit(asio::cancellation_type::terminal);
        grace_timer_.expires_after(cancel_grace);
        grace_timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) io_.stop();
        });
    }

    // One lane finished: when it was the last, nothing keeps the io_context busy any more.
    void lane_done() {
        if (--lanes_left_ > 0) return;
        // No operation is left to use them. An idle HTTP/2 connection keeps a read pending; gone with
        // its client, it lets the io_context run out of work.
        clients_.clear();
        limit_timer_.cancel();
        grace_timer_.cancel();
        if (interrupt_wait_.is_open()) interrupt_wait_.cancel();
    }

    asio::awaitable<void> lane(std::uint32_t client) {
        co_await asio::this_coro::throw_if_cancelled(false);
        const std::uint64_t clients = config_.load.clients;
        for (std::uint64_t n = 0; n < config_.load.operations_per_client && !stopped_; ++n) {
            if (!co_await gate_.acquire()) break;
            co_await operation(n * clients + client);
            gate_.release();
        }
        lane_done();
    }

    asio::awaitable<void> scheduler() {
        co_await asio::this_coro::throw_if_cancelled(false);
        const double rate = config_.load.rate;
        // Bounded by total_, the workload's operation count.
        for (std::uint64_t op = 0; op < total_ && !stopped_; ++op) {
            const auto due = ctx_.run_start + std::chrono::duration_cast<duration>(
                                                  std::chrono::duration<double>(static_cast<double>(op) / rate));
            rate_timer_.expires_at(due);
            co_await rate_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
            if (stopped_ || !co_await gate_.acquire()) break;
            ++lanes_left_;
            spawn([](run_state& self, std::uint64_t o) -> asio::awaitable<void> {
                co_await asio::this_coro::throw_if_cancelled(false);
                co_await self.operation(o);
                self.gate_.release();
                self.lane_done();
            }(*this, op));
        }
        lane_done();
    }

    const request_template& pick(std::uint64_t op) const {
        if (config_.order == template_order::round_robin || config_.requests.size() == 1) {
            return config_.requests[op % config_.requests.size()];
        }
        // A hash, not a draw, so the choice does not depend on the order operations start in. The
        // modulo bias is far below one in a million for any total weight allowed.
        std::uint64_t point = mix64(ctx_.seed ^ template_stream, op) % total_weight_;
        for (const auto& t : config_.requests) {
            if (point < t.weight) return t;
            point -= t.weight;
        }
        return config_.requests.back();
    }

    asio::awaitable<void> operation(std::uint64_t op) {
        const std::uint64_t clients = config_.load.clients;
        const std::uint64_t client = op % clients;
        const std::uint64_t n = op / clients;
        const request_template& t = pick(op);
        const placeholder_values values{op, client, n, std::nullopt, std::nullopt};

        retry::http_request request;
        request.method = http::string_to_verb(t.method);
        request.target = substitute(t.path, values);
        request.body = substitute(t.body, values);
        std::optional<std::string> template_key;
        for (const auto& [name, value] : t.headers) {
            std::string v = substitute(value, values);
            if (boost::beast::iequals(name, retry::idempotency_key_header)) template_key = retry::idempotency_key_value(v);
            request.headers.insert(name, v);
        }
        const std::string op_name = operation_name(client, n);
        request.headers.set(std::string(operation_header), op_name);

        const retry::retry_policy& policy = config_.policy.policy;
        std::string identity = op_name;
        if (template_key && !template_key->empty()) {
            identity = *template_key;
        } else if (!template_key && !retry::is_idempotent_method(t.method) && policy.keys.auto_add) {
            // Our own key, so the record knows it; the client adopts a UUID it finds in the headers.
            const retry::idempotency_key key = operation_key(ctx_.seed, op);
            identity = std::string(key.view());
            request.headers.set(std::string(retry::idempotency_key_header),
                                std::string(retry::key_header_value{key, policy.keys.format}.view()));
        }

        records_.emplace_back();
        const std::size_t index = records_.size() - 1;
        {
            record::client_record& r = records_[index];
            r.operation = identity;
            r.client = std::to_string(client);
            r.method = t.method;
            r.target = request.target;
        }
        const time_point started = ctx_.clk.now();
        records_[index].started_ns = since(ctx_.run_start, started);
        std::optional<time_point> deadline;
        if (policy.overall_timeout) {
            deadline = started + *policy.overall_timeout;
            records_[index].deadline_ns = since(ctx_.run_start, *deadline);
        }
        retry::request_options options;
        if (config_.policy.enforce_deadline) options.deadline = deadline;

        // The deliberately unsafe presets re-send a POST without a key after a reset or a timeout.
        if (config_.policy.assume_idempotent) options.safety = retry::request_safety::idempotent;
        const retry::http_result result =
            co_await clients_[client]->async_request(std::move(request), std::move(options), asio::use_awaitable);

        record::client_record& r = records_[index];
        r.finished_ns = since(ctx_.run_start, ctx_.clk.now());
        r.attempts = result.attempts;
        r.decision = std::string(retry::to_string(result.final_decision));
        r.success = result.succeeded();
        std::string outcomes;
        for (const auto& a : result.history) outcomes.append(outcomes.empty() ? "" : ", ").append(outcome_text(a.outcome));
        r.attempt_outcomes = outcomes;
        ++finished_;
    }

    const builtin_config& config_;
    const driver_context& ctx_;
    asio::io_context io_;
    asio::any_io_executor strand_;
    slot_gate gate_;
    asio::steady_timer limit_timer_;
    asio::steady_timer grace_timer_;
    asio::steady_timer rate_timer_;
    asio::posix::stream_descriptor interrupt_wait_;  // the run_interrupt's descriptor, when there is one
    std::uint64_t total_;
    std::uint64_t total_weight_ = 0;
    std::shared_ptr<retry::retry_budget> budget_;
    std::shared_ptr<retry::circuit_breaker> breaker_;
    std::vector<std::unique_ptr<seeded_random>> randoms_;
    std::vector<std::unique_ptr<retry::http_client>> clients_;
    std::list<asio::cancellation_signal> signals_;
    std::deque<record::client_record> records_;
    std::uint64_t lanes_left_ = 0;
    std::uint64_t finished_ = 0;
    bool stopped_ = false;
    std::optional<record::run_interruption> interrupted_;
    std::string error_;
    std::mutex io_error_mutex_;
    std::string io_error_;
};

}  // namespace

std::string operation_name(std::uint64_t client, std::uint64_t n) {
    return "c" + std::to_string(client) + "-n" + std::to_string(n);
}

builtin_driver::builtin_driver(builtin_config config) : config_{std::move(config)} {}

record::declared_client builtin_driver::declared() const {
    record::declared_client out;
    out.max_attempts = std::max<std::uint32_t>(1, config_.policy.policy.max_attempts);
    out.backoff = declared_backoff_of(config_.policy.policy.backoff);
    if (const auto& timeout = config_.policy.policy.per_attempt_timeout) {
        out.attempt_timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(*timeout);
    }
    return out;
}

driver_result builtin_driver::run(const driver_context& ctx) {
    stats_ = {};
    try {
        run_state state{config_, ctx};
        return state.run(stats_);
    } catch (const std::exception& e) {
        driver_result failed;
        failed.error = std::string("builtin driver: ") + e.what();
        return failed;
    }
}

std::string_view to_string(budget_kind kind) {
    switch (kind) {
        case budget_kind::none: return "none";
        case budget_kind::token_bucket: return "token_bucket";
        case budget_kind::ratio: return "ratio";
    }
    return "unknown";
}

std::string_view to_string(template_order order) {
    return order == template_order::weighted ? "weighted" : "round_robin";
}

std::shared_ptr<retry::retry_budget> make_budget(const budget_spec& spec) {
    switch (spec.kind) {
        case budget_kind::none: return nullptr;
        case budget_kind::token_bucket: return std::make_shared<retry::token_bucket_budget>(spec.max_tokens, spec.token_ratio);
        case budget_kind::ratio: return std::make_shared<retry::ratio_budget>(spec.ratio);
    }
    return nullptr;
}

void read_client_policy(config::table_reader& policy_table, client_policy& policy) { read_policy(policy_table, policy); }

client_policy preset_policy(client_preset preset) {
    client_policy good;
    good.policy.max_attempts = 4;
    good.policy.backoff = retry::backoff_policy{}.with_base(50ms).with_cap(2s).with_multiplier(2.0).with_jitter(
        retry::jitter_kind::full);
    good.policy.per_attempt_timeout = 1s;
    good.policy.overall_timeout = 5s;
    good.policy.max_retry_after = 10s;
    good.policy.honour_retry_after = true;
    good.policy.keys = retry::idempotency_options{}.with_auto_add(true).with_format(retry::key_format::quoted);
    good.budget.kind = budget_kind::ratio;
    good.budget.ratio = retry::ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.2).with_min_retries_per_sec(10.0);

    client_policy p = good;
    switch (preset) {
        case client_preset::good: break;
        case client_preset::naive:
            p.policy.max_attempts = 5;
            p.policy.backoff = retry::backoff_policy{}.with_base(0ns).with_cap(0ns).with_multiplier(1.0).with_jitter(
                retry::jitter_kind::none);
            // Every error status is retried, even for a POST without a key (all marked "unprocessed").
            for (int s = 400; s <= 599; ++s) p.policy.classify.retry_on(s).unprocessed(s);
            p.policy.honour_retry_after = false;
            p.policy.keys.auto_add = false;
            p.budget.kind = budget_kind::none;
            p.assume_idempotent = true;
            p.enforce_deadline = false;
            break;
        case client_preset::no_jitter: p.policy.backoff.jitter = retry::jitter_kind::none; break;
        case client_preset::no_budget:
            p.policy.max_attempts = 10;
            p.budget.kind = budget_kind::none;
            break;
        case client_preset::no_keys:
            p.policy.keys.auto_add = false;
            p.assume_idempotent = true;
            break;
        case client_preset::ignores_retry_after: p.policy.honour_retry_after = false; break;
        case client_preset::ignores_deadline:
            p.policy.max_attempts = 10;
            p.enforce_deadline = false;
            break;
    }
    return p;
}

std::uint64_t total_operations(const workload& w) {
    if (w.kind == workload_kind::operations) return std::uint64_t{w.clients} * w.operations_per_client;
    const double seconds = std::chrono::duration<double>(w.span).count();
    const double n = std::floor(w.rate * seconds);
    if (!(n >= 1.0)) return 1;
    // Far above any allowed workload; only guards the conversion.
    if (n >= 1e15) return std::uint64_t{1'000'000'000'000'000};
    return static_cast<std::uint64_t>(n);
}

std::optional<builtin_config> parse_builtin_config(config::table_reader& client) { return read_builtin(client); }

namespace {

// Every key read_builtin reads (driver.hpp: other drivers' tables reject them by name).
constexpr std::string_view builtin_keys[] = {"preset",  "clients", "operations", "rate",   "duration", "concurrency",
                                             "order",   "threads", "protocol",   "request", "policy"};

std::unique_ptr<driver> make_builtin(config::table_reader& client, const client_overrides&) {
    std::optional<builtin_config> config = parse_builtin_config(client);
    if (!config) return nullptr;
    return std::make_unique<builtin_driver>(std::move(*config));
}

}  // namespace

const core::registration<driver_info> registered{
    "builtin", "virtual clients in this process, retrying through faultline's HTTP client with a preset or policy",
    builtin_keys, &make_builtin};

}  // namespace faultline::drivers
