#include "faultline/storm/capacity.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <queue>
#include <stdexcept>

#include <boost/heap/d_ary_heap.hpp>

#include "faultline/retry/budget.hpp"
#include "fast_random.hpp"

namespace faultline::storm {

namespace {

using ns = std::int64_t;

enum class event_kind : std::uint8_t { op_start, backend_arrival, reply };

// Plain data; `id` is a client index (op_start) or an operation slot (the others).
struct event {
    ns at;
    std::uint64_t seq;  // scheduling order: ties at one nanosecond run first-scheduled first
    std::uint32_t id;
    event_kind kind;
    bool ok;  // reply: the attempt succeeded
};

struct later {
    bool operator()(const event& a, const event& b) const { return a.at != b.at ? a.at > b.at : a.seq > b.seq; }
};

// Events that are scheduled in (at, seq) order need no heap: a ring buffer keeps them sorted. Two
// streams are: operation starts (a start at t schedules the client's next at t + op_interval,
// starts run in time order, and seq only grows) and the backend's served replies (at busy_until +
// hop, and busy_until never decreases). With 100,000 clients that keeps 100,000 pending starts and
// nearly every reply out of the heap, which then holds only timeouts, rejections and retries
// waiting out their backoff. The ring grows by doubling, so steady state allocates nothing.
class event_fifo {
public:
    event_fifo() = default;
    // Starts with `first`, sorted here (an earlier seq first on equal times).
    explicit event_fifo(std::vector<event> first) : ring_{std::move(first)}, size_{ring_.size()} {
        std::sort(ring_.begin(), ring_.end(), [](const event& a, const event& b) { return later{}(b, a); });
    }
    bool empty() const { return size_ == 0; }
    const event& front() const { return ring_[head_]; }
    void pop() {
        head_ = head_ + 1 == ring_.size() ? 0 : head_ + 1;
        --size_;
    }
    // `e` must not be earlier than the last event pushed (the caller's invariant, see above).
    void push(const event& e) {
        if (size_ == ring_.size()) grow();
        const std::size_t tail = head_ + size_;
        ring_[tail >= ring_.size() ? tail - ring_.size() : tail] = e;
        ++size_;
    }

private:
    void grow() {
        std::vector<event> bigger(std::max<std::size_t>(16, ring_.size() * 2));
        for (std::size_t i = 0; i < size_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
        ring_ = std::move(bigger);
        head_ = 0;
    }

    std::vector<event> ring_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

// One operation in flight: the state of each layer's retry loop. Slots are reused, so steady state
// allocates nothing.
// The fields every event touches come first, in one cache line; the backoffs follow.
struct operation {
    std::array<std::uint32_t, max_layers> attempts{};
    bool first_backend = true; // the current backend attempt is the operation's first
    ns sent_at = 0;            // the current backend attempt left the innermost layer
    std::array<retry::backoff, max_layers> backoffs;
};

// The backend's requests in the system (waiting or in service), as their finish times in a ring.
class backend_queue {
public:
    explicit backend_queue(std::uint32_t limit) : finish_(static_cast<std::size_t>(limit) + 1) {}
    // Forgets requests finished by `now`; returns how many remain.
    std::uint64_t settle(ns now) {
        while (size_ > 0 && finish_[head_] <= now) {
            head_ = (head_ + 1) % finish_.size();
            --size_;
        }
        return size_;
    }
    void push(ns finish) {
        finish_[(head_ + size_) % finish_.size()] = finish;
        ++size_;
    }

private:
    std::vector<ns> finish_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

time_point virtual_time(ns t) { return time_point{duration{t}}; }

std::unique_ptr<retry::retry_budget> make_budget(const layer_config& layer) {
    switch (layer.budget) {
        case budget_kind::none: return nullptr;
        case budget_kind::ratio:
            return std::make_unique<retry::ratio_budget>(retry::ratio_budget_options{}
                                                             .with_ttl(layer.ratio_ttl)
                                                             .with_percent_can_retry(layer.percent_can_retry)
                                                             .with_min_retries_per_sec(layer.min_retries_per_sec));
        case budget_kind::token_bucket:
            return std::make_unique<retry::token_bucket_budget>(layer.max_tokens, layer.token_ratio);
    }
    return nullptr;
}

void require(bool ok, const char* message) {
    if (!ok) throw std::invalid_argument{message};
}

class simulation {
public:
    explicit simulation(const capacity_config& config)
        : config_{config},
          random_{config.seed},
          layers_{config.layers.size()},
          queue_{config.queue_limit},
          service_ns_{static_cast<ns>(1e9 / config.capacity_per_sec)},
          bin_ns_{config.bin.count()} {
        for (std::size_t i = 0; i < layers_; ++i) budgets_.push_back(make_budget(config.layers[i]));
        result_.attempts.assign(layers_, 0);
        // The operations in flight; more only when operations outlast op_interval.
        events_.reserve(config.clients);
    }

    capacity_result run() {
        const ns interval = config_.op_interval.count();
        std::vector<event> first;
        first.reserve(config_.clients);
        for (std::uint32_t c = 0; c < config_.clients; ++c) {
            // Each client's phase in [0, interval): operations arrive spread out, not in lock-step.
            const auto phase = static_cast<ns>(uniform_unit(random_) * static_cast<double>(interval));
            first.push_back({phase, seq_++, c, event_kind::op_start, false});
        }
        starts_ = event_fifo{std::move(first)};
        next_op_.assign(config_.clients, 0);
        for (;;) {
            // The earliest of the two rings' fronts and the heap's top: the order one heap would give.
            const event* next = events_.empty() ? nullptr : &events_.top();
            event_fifo* from = nullptr;
            for (event_fifo* fifo : {&starts_, &served_})
                if (!fifo->empty() && (next == nullptr || later{}(*next, fifo->front()))) {
                    next = &fifo->front();
                    from = fifo;
                }
            if (next == nullptr) break;
            const event e = *next;
            if (from != nullptr) {
                from->pop();
            } else {
                events_.pop();
            }
            ++result_.events;
            now_ = e.at;
            switch (e.kind) {
                case event_kind::op_start: start_operation(e.id); break;
                case event_kind::backend_arrival: arrive(e.id); break;
                case event_kind::reply: reply(e.id, e.ok); break;
            }
        }
        finish();
        return std::move(result_);
    }

private:
    void schedule(ns at, std::uint32_t id, event_kind kind, bool ok = false) {
        events_.push({at, seq_++, id, kind, ok});
    }

    capacity_bin& bin_at(ns t) {
        const auto index = static_cast<std::size_t>(t / bin_ns_);
        if (index >= result_.bins.size()) result_.bins.resize(index + 1);
        return result_.bins[index];
    }

    bool in_outage(ns t) const { return t >= config_.outage_start.count() && t < config_.outage_end.count(); }

    std::uint32_t new_slot() {
        if (!free_.empty()) {
            const std::uint32_t s = free_.back();
            free_.pop_back();
            return s;
        }
        ops_.push_back(operation{{}, true, 0, make_backoffs()});
        return static_cast<std::uint32_t>(ops_.size() - 1);
    }

    std::array<retry::backoff, max_layers> make_backoffs() const {
        // Unused layers keep a default backoff; only the first layers_ are ever asked.
        auto policy = [&](std::size_t i) { return i < layers_ ? config_.layers[i].backoff : retry::backoff_policy{}; };
        return {retry::backoff{policy(0)}, retry::backoff{policy(1)}, retry::backoff{policy(2)}};
    }

    void start_operation(std::uint32_t client) {
        if (++next_op_[client] < config_.ops_per_client)
            starts_.push({now_ + config_.op_interval.count(), seq_++, client, event_kind::op_start, false});
        last_op_start_ = std::max(last_op_start_, now_);
        ++result_.operations;
        ++bin_at(now_).ops_started;
        const std::uint32_t slot = new_slot();
        operation& op = ops_[slot];
        op.first_backend = true;
        start_calls(op, 0);
        send(slot);
    }

    // Layers `from`.. begin fresh calls (their first attempts): each deposits in its budget.
    void start_calls(operation& op, std::size_t from) {
        for (std::size_t j = from; j < layers_; ++j) {
            op.attempts[j] = 1;
            op.backoffs[j].reset();
            ++result_.attempts[j];
            if (budgets_[j]) budgets_[j]->on_request(virtual_time(now_));
        }
    }

    void send(std::uint32_t slot, ns delay = 0) {
        ops_[slot].sent_at = now_ + delay;
        schedule(now_ + delay + config_.hop.count(), slot, event_kind::backend_arrival);
    }

    void arrive(std::uint32_t slot) {
        operation& op = ops_[slot];
        capacity_bin& bin = bin_at(now_);
        ++bin.offered;
        if (!op.first_backend) ++bin.retries;
        op.first_backend = false;
        const ns hop = config_.hop.count();
        const ns timeout_at = op.sent_at + config_.attempt_timeout.count();
        const bool down = in_outage(now_) && config_.outage_capacity_factor == 0.0;
        const std::uint64_t waiting = queue_.settle(now_);
        bin.max_queue = std::max(bin.max_queue, waiting);
        if (down || waiting >= config_.queue_limit) {
            ++bin.rejected;
            reply_at(std::min(now_ + hop, timeout_at), slot, false);
            return;
        }
        const ns start = std::max(now_, busy_until_);
        const ns service = in_outage(start) ? static_cast<ns>(static_cast<double>(service_ns_) / config_.outage_capacity_factor)
                                            : service_ns_;
        busy_until_ = start + service;
        queue_.push(busy_until_);
        const bool served_ok = !bernoulli(random_, config_.failure_probability);
        const ns answer_at = busy_until_ + hop;
        if (answer_at > timeout_at) {
            ++bin_at(timeout_at).timed_out;
            reply_at(timeout_at, slot, false);
            return;
        }
        if (served_ok) ++bin_at(answer_at).goodput;
        served_.push({answer_at, seq_++, slot, event_kind::reply, served_ok});
    }

    void reply_at(ns at, std::uint32_t slot, bool ok) { schedule(at, slot, event_kind::reply, ok); }

    // The innermost layer's attempt ended; walk outwards until a layer retries or the operation ends.
    void reply(std::uint32_t slot, bool ok) {
        operation& op = ops_[slot];
        std::size_t level = layers_ - 1;
        for (;;) {
            retry::retry_budget* budget = budgets_[level].get();
            if (budget) ok ? budget->on_success() : budget->on_failure();
            if (!ok) {
                const layer_config& layer = config_.layers[level];
                // The budget is asked last, so a retry the attempt limit refuses never takes from it.
                if (op.attempts[level] < layer.max_attempts && (!budget || budget->try_withdraw_retry(virtual_time(now_)))) {
                    ++op.attempts[level];
                    ++result_.attempts[level];
                    const ns delay = op.backoffs[level].next(random_).count();
                    start_calls(op, level + 1);
                    send(slot, delay);
                    return;
                }
            }
            if (level == 0) break;
            --level;
        }
        ++(ok ? result_.succeeded : result_.failed);
        free_.push_back(slot);
    }

    void finish() {
        result_.end = duration{now_};
        std::uint64_t calls = result_.operations;
        for (std::size_t i = 0; i < layers_; ++i) {
            result_.layer_amplification.push_back(calls == 0 ? 0.0 : static_cast<double>(result_.attempts[i]) / static_cast<double>(calls));
            calls = result_.attempts[i];
        }
        if (result_.operations > 0)
            result_.amplification = static_cast<double>(result_.attempts.back()) / static_cast<double>(result_.operations);

        // Bins wholly before the outage (and after the first interval, when every client has begun)
        // are "normal"; healthy = goodput back to 90 % of normal.
        const auto bin_of = [&](ns t) { return static_cast<std::size_t>(t / bin_ns_); };
        const std::size_t first_full = std::min(bin_of(config_.op_interval.count()), result_.bins.size());
        const bool has_outage = config_.outage_end > config_.outage_start;
        const std::size_t normal_end = has_outage ? std::min(bin_of(config_.outage_start.count()), result_.bins.size())
                                                  : bin_of(last_op_start_);
        double normal_offered = 0;
        double normal_goodput = 0;
        std::size_t normal_bins = 0;
        for (std::size_t b = first_full; b < normal_end; ++b, ++normal_bins) {
            normal_offered += static_cast<double>(result_.bins[b].offered);
            normal_goodput += static_cast<double>(result_.bins[b].goodput);
        }
        if (normal_bins > 0) {
            normal_offered /= static_cast<double>(normal_bins);
            normal_goodput /= static_cast<double>(normal_bins);
        }
        result_.normal_load_per_bin = normal_offered;
        for (const capacity_bin& b : result_.bins)
            result_.peak_load_per_bin = std::max(result_.peak_load_per_bin, static_cast<double>(b.offered));
        if (!has_outage || normal_bins == 0) return;
        // Only bins wholly inside the arrivals count: after the last start, load fades by design.
        const std::size_t arrivals_end = bin_of(last_op_start_);
        const std::size_t after = bin_of(config_.outage_end.count() + bin_ns_ - 1);
        if (after >= arrivals_end) return;  // no whole bin after the outage to judge by
        for (std::size_t b = after; b < arrivals_end; ++b) {
            if (static_cast<double>(result_.bins[b].goodput) >= 0.9 * normal_goodput) {
                result_.recovery = duration{static_cast<ns>(b) * bin_ns_} - config_.outage_end;
                return;
            }
        }
        result_.metastable = true;
    }

    const capacity_config& config_;
    fast_random random_;
    std::size_t layers_;
    backend_queue queue_;
    ns service_ns_;
    ns bin_ns_;
    std::vector<std::unique_ptr<retry::retry_budget>> budgets_;
    // Backend arrivals and the replies not in served_. Four children a node: half the depth of a
    // binary heap, so fewer cache misses once it holds tens of thousands of operations.
    boost::heap::d_ary_heap<event, boost::heap::arity<4>, boost::heap::compare<later>> events_;
    event_fifo starts_;
    event_fifo served_;  // replies at busy_until_ + hop
    std::vector<operation> ops_;
    std::vector<std::uint32_t> free_;
    std::vector<std::uint32_t> next_op_;
    std::uint64_t seq_ = 0;
    ns now_ = 0;
    ns busy_until_ = 0;
    ns last_op_start_ = 0;
    capacity_result result_;
};

}  // namespace

void validate(const capacity_config& c) {
    require(c.clients > 0, "clients must be at least 1");
    require(c.ops_per_client > 0, "ops_per_client must be at least 1");
    require(static_cast<std::uint64_t>(c.clients) * c.ops_per_client <= max_capacity_operations,
            "clients x ops_per_client must be at most 100000000");
    require(c.op_interval > duration{0}, "op_interval must be positive");
    require(c.capacity_per_sec >= 0.001 && c.capacity_per_sec <= 1e9, "capacity_per_sec must be in [0.001, 1e9]");
    require(c.queue_limit > 0 && c.queue_limit <= max_capacity_queue, "queue_limit must be in 1..10000000");
    require(c.failure_probability >= 0.0 && c.failure_probability <= 1.0, "failure_probability must be in [0, 1]");
    require(c.outage_capacity_factor >= 0.0 && c.outage_capacity_factor <= 1.0,
            "outage_capacity_factor must be in [0, 1]");
    require(c.outage_start >= duration{0}, "outage_start must not be negative");
    require(c.attempt_timeout > duration{0}, "attempt_timeout must be positive");
    require(c.hop >= duration{0}, "hop must not be negative");
    require(c.bin > duration{0}, "bin must be positive");
    require(!c.layers.empty() && c.layers.size() <= max_layers, "layers must number 1..3");
    for (const layer_config& layer : c.layers) {
        require(layer.max_attempts >= 1 && layer.max_attempts <= max_layer_attempts, "max_attempts must be in 1..100");
        retry::validate(layer.backoff);
        make_budget(layer);  // the budget's own checks (it throws std::invalid_argument)
    }
    // The run ends soon after the last operation starts; bound its length in bins.
    const double horizon = static_cast<double>(c.op_interval.count()) * c.ops_per_client +
                           static_cast<double>(std::max(c.outage_end, c.outage_start).count());
    require(horizon / static_cast<double>(c.bin.count()) <= static_cast<double>(max_capacity_bins),
            "the run would need more than 10000000 bins: widen bin or shorten the run");
}

capacity_result run_capacity(const capacity_config& config) {
    validate(config);
    return simulation{config}.run();
}

}  // namespace faultline::storm
