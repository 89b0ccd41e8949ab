#include "faultline/storm/simulate_file.hpp"

#include <array>
#include <limits>
#include <stdexcept>
#include <variant>

#include "faultline/config/document.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/config/schema.hpp"
#include "faultline/storm/client_list.hpp"

namespace faultline::storm {

namespace {

using std::chrono::nanoseconds;

constexpr std::string_view model_name(simulate_model model) { return model == simulate_model::occ ? "occ" : "capacity"; }

// The keys that belong to one model only, as a file names them.
constexpr std::array<std::string_view, 7> occ_only_keys{"strategy", "trials", "threads", "base", "cap", "hop_mean", "hop_sd"};
constexpr std::array<std::string_view, 3> capacity_only_keys{"scenario", "ops", "capacity"};

std::vector<std::string> scenario_names() {
    std::vector<std::string> out;
    for (const capacity_scenario& s : capacity_scenarios()) out.emplace_back(s.name);
    return out;
}

std::string scenario_list() {
    std::string out;
    for (const capacity_scenario& s : capacity_scenarios()) out += "\n  " + std::string{s.name} + ": " + std::string{s.summary};
    return out;
}

// clients = "10..190:10" (the --clients syntax), clients = [10, 50, 100], or one count: clients = 400.
std::optional<std::vector<std::uint32_t>> read_clients(config::table_reader& r) {
    constexpr auto most = std::numeric_limits<std::uint32_t>::max();
    // The three forms at once for `faultline schema simulate`: the typed reads below see one each.
    config::key_spec forms;
    forms.type = config::key_spec::shape::integers_or_string;
    forms.minimum = 1;
    forms.maximum = most;
    config::schema_recorder::note(r.source(), "clients", forms);
    const toml::node* node = r.source().get("clients");
    if (node != nullptr && node->is_integer()) {
        const auto one = r.integer("clients", 1, most);
        if (!one) return std::nullopt;
        return std::vector<std::uint32_t>{static_cast<std::uint32_t>(*one)};
    }
    if (node == nullptr || !node->is_string()) {
        const auto list = r.integers("clients", 1, most);
        if (!list) return std::nullopt;
        if (list->empty()) {
            r.fail("clients", "the client list is empty");
            return std::nullopt;
        }
        if (list->size() > max_client_list) {
            r.fail("clients", "the client list has more than " + std::to_string(max_client_list) + " points");
            return std::nullopt;
        }
        return std::vector<std::uint32_t>(list->begin(), list->end());
    }
    const auto parsed = parse_client_list(*r.string("clients"));
    if (const auto* error = std::get_if<std::string>(&parsed)) {
        r.fail("clients", *error);
        return std::nullopt;
    }
    return std::get<std::vector<std::uint32_t>>(parsed);
}

// strategy = "all", "full,equal" (the --strategy syntax) or strategy = ["full", "equal"].
std::optional<std::vector<occ_strategy>> read_strategies(config::table_reader& r) {
    const auto names = r.string_or_strings("strategy");
    if (!names) return std::nullopt;
    if (names->empty()) {
        r.fail("strategy", "the strategy list is empty");
        return std::nullopt;
    }
    std::vector<occ_strategy> out;
    for (const std::string& name : *names) {
        const auto parsed = parse_occ_strategies(name);
        if (const auto* error = std::get_if<std::string>(&parsed)) {
            r.fail("strategy", *error);
            return std::nullopt;
        }
        const auto& list = std::get<std::vector<occ_strategy>>(parsed);
        out.insert(out.end(), list.begin(), list.end());
    }
    return out;
}

template <class T, class Source>
std::optional<T> narrow(const std::optional<Source>& v) {
    return v ? std::optional<T>{static_cast<T>(*v)} : std::nullopt;
}

capacity_overrides read_capacity(config::table_reader& r) {
    capacity_overrides o;
    constexpr nanoseconds positive{1};
    constexpr nanoseconds zero{0};
    o.op_interval = r.duration("op_interval", positive);
    o.capacity_per_sec = r.number("capacity_per_sec", 0.001, 1e9);
    o.queue_limit = narrow<std::uint32_t>(r.integer("queue_limit", 1, max_capacity_queue));
    o.failure_probability = r.number("failure_probability", 0, 1);
    o.outage_start = r.duration("outage_start", zero);
    o.outage_end = r.duration("outage_end", zero);
    o.outage_capacity_factor = r.number("outage_capacity_factor", 0, 1);
    o.attempt_timeout = r.duration("attempt_timeout", positive);
    o.hop = r.duration("hop", zero);
    o.bin = r.duration("bin", positive);
    r.finish();
    return o;
}

simulate_settings read_simulate(config::table_reader& r) {
    simulate_settings s;
    if (const auto model = r.choice("model", {"occ", "capacity"}))
        s.model = *model == "occ" ? simulate_model::occ : simulate_model::capacity;
    s.clients = read_clients(r);
    s.strategies = read_strategies(r);
    s.trials = narrow<std::uint32_t>(r.integer("trials", 1, max_occ_trials));
    s.threads = narrow<unsigned>(r.integer("threads", 1, max_occ_threads));
    s.base = r.duration("base", nanoseconds{1}, max_occ_cap);
    s.cap = r.duration("cap", nanoseconds{1}, max_occ_cap);
    s.hop_mean = r.duration("hop_mean", nanoseconds{0}, max_occ_hop);
    s.hop_sd = r.duration("hop_sd", nanoseconds{0}, max_occ_hop);
    s.scenario = r.choice("scenario", scenario_names());
    s.ops = narrow<std::uint32_t>(r.integer("ops", 1, max_ops_per_client));
    if (const toml::table* capacity = r.table("capacity")) {
        config::table_reader sub = r.child(*capacity, "[simulate.capacity]");
        s.capacity = read_capacity(sub);
    }
    for (const std::string_view key : {"csv", "json", "svg"}) {
        const auto path = r.string(key);
        if (path && path->empty()) r.fail(key, "must name a file");
        (key == "csv" ? s.csv : key == "json" ? s.json : s.svg) = path;
    }
    r.reject("seed", "seed is a top-level key, as in scenarios");
    r.finish();

    // Keys of the other model are mistakes, reported where they stand.
    const simulate_model model = s.model.value_or(simulate_model::occ);
    const simulate_model other = model == simulate_model::occ ? simulate_model::capacity : simulate_model::occ;
    const auto report_foreign = [&](std::string_view key) {
        if (r.source().contains(key))
            r.fail(key, "applies to model = \"" + std::string{model_name(other)} + "\"; this file's model is \"" +
                            std::string{model_name(model)} + "\"");
    };
    if (model == simulate_model::occ)
        for (const std::string_view key : capacity_only_keys) report_foreign(key);
    else
        for (const std::string_view key : occ_only_keys) report_foreign(key);
    return s;
}

}  // namespace

bool capacity_overrides::any() const {
    return op_interval || capacity_per_sec || queue_limit || failure_probability || outage_start || outage_end ||
           outage_capacity_factor || attempt_timeout || hop || bin;
}

void apply(const capacity_overrides& o, capacity_config& c) {
    if (o.op_interval) c.op_interval = *o.op_interval;
    if (o.capacity_per_sec) c.capacity_per_sec = *o.capacity_per_sec;
    if (o.queue_limit) c.queue_limit = *o.queue_limit;
    if (o.failure_probability) c.failure_probability = *o.failure_probability;
    if (o.outage_start) c.outage_start = *o.outage_start;
    if (o.outage_end) c.outage_end = *o.outage_end;
    if (o.outage_capacity_factor) c.outage_capacity_factor = *o.outage_capacity_factor;
    if (o.attempt_timeout) c.attempt_timeout = *o.attempt_timeout;
    if (o.hop) c.hop = *o.hop;
    if (o.bin) c.bin = *o.bin;
}

occ_sweep_config make_occ_config(const simulate_settings& s) {
    if (s.scenario) throw std::invalid_argument{"scenario applies to the capacity model"};
    if (s.ops) throw std::invalid_argument{"ops applies to the capacity model"};
    if (s.capacity.any()) throw std::invalid_argument{"[simulate.capacity] applies to the capacity model"};
    occ_sweep_config c;
    c.clients = s.clients.value_or(std::vector<std::uint32_t>{});
    if (!s.clients)
        for (std::uint32_t n = 10; n <= 190; n += 10) c.clients.push_back(n);
    c.strategies = s.strategies.value_or(std::vector<occ_strategy>{all_occ_strategies.begin(), all_occ_strategies.end()});
    c.trials = s.trials.value_or(100);
    c.seed = s.seed.value_or(1);
    c.threads = s.threads.value_or(2);
    c.base = s.base.value_or(c.base);
    c.cap = s.cap.value_or(c.cap);
    c.hop_mean = s.hop_mean.value_or(c.hop_mean);
    c.hop_sd = s.hop_sd.value_or(c.hop_sd);
    validate(c);
    return c;
}

capacity_config make_capacity_config(const simulate_settings& s) {
    if (s.strategies) throw std::invalid_argument{"strategy applies to the occ model"};
    if (s.trials) throw std::invalid_argument{"trials applies to the occ model"};
    if (s.threads) throw std::invalid_argument{"threads applies to the occ model (the capacity model runs on one)"};
    if (s.base || s.cap || s.hop_mean || s.hop_sd)
        throw std::invalid_argument{"base, cap, hop_mean and hop_sd apply to the occ model"};
    if (!s.scenario)
        throw std::invalid_argument{"model capacity needs --scenario NAME (in a file: scenario = \"NAME\"); the scenarios:" +
                                    scenario_list()};
    const auto found = find_capacity_scenario(*s.scenario);
    if (!found) throw std::invalid_argument{"unknown scenario '" + *s.scenario + "'; the scenarios:" + scenario_list()};
    capacity_config c = *found;
    if (s.clients) {
        if (s.clients->size() != 1)
            throw std::invalid_argument{"the capacity model takes one client count, got " +
                                        std::to_string(s.clients->size())};
        c.clients = s.clients->front();
    }
    if (s.ops) c.ops_per_client = *s.ops;
    apply(s.capacity, c);
    c.seed = s.seed.value_or(1);
    validate(c);
    return c;
}

namespace {

simulate_file_result from_document(config::document doc, const std::string& file) {
    simulate_file_result out;
    if (!doc.table) {
        out.errors = std::move(doc.errors);
        return out;
    }
    simulate_file f;
    config::table_reader top{*doc.table, file, "", out.errors};
    f.name = top.string("name").value_or("");
    f.description = top.string("description").value_or("");
    const auto seed = narrow<std::uint64_t>(top.integer("seed", 0, std::numeric_limits<std::int64_t>::max()));
    const toml::table* table = top.table("simulate", config::need::required);
    top.finish();
    if (table == nullptr || !out.errors.empty()) return out;

    config::table_reader r = top.child(*table, "[simulate]");
    f.settings = read_simulate(r);
    f.settings.seed = seed;
    if (!out.errors.empty()) return out;

    // The file's run on its own must be one that can run (sizes and the like): reported at the table.
    try {
        if (f.settings.model.value_or(simulate_model::occ) == simulate_model::occ)
            (void)make_occ_config(f.settings);
        else
            (void)make_capacity_config(f.settings);
    } catch (const std::invalid_argument& e) {
        r.fail_table(e.what());
        return out;
    }
    out.value = std::move(f);
    return out;
}

}  // namespace

simulate_file_result parse_simulate_file(std::string_view text, const std::string& file) {
    return from_document(config::parse_document(text, file), file);
}

simulate_file_result load_simulate_file(const std::string& path) {
    return from_document(config::load_document(path, "simulation file"), path);
}

}  // namespace faultline::storm
