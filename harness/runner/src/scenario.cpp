#include "faultline/runner/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <system_error>
#include <tuple>

#include "faultline/config/document.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/faults/kind.hpp"
#include "faultline/faults/rules_toml.hpp"

namespace faultline::runner {
namespace {

template <typename Names>
std::string join(const Names& names) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

std::string file_stem(const std::string& file) {
    std::string stem = std::filesystem::path(file).stem().string();
    return stem.empty() ? std::string{"scenario"} : stem;
}

std::vector<std::string> preset_names() {
    std::vector<std::string> out;
    for (const drivers::client_preset p : drivers::all_presets) out.emplace_back(to_string(p));
    return out;
}

// Collects the errors of one document. The top-level keys are read through one table_reader (no
// context: they are the file's own keys); each table is handed to its owner's parser.
class loader {
public:
    loader(const toml::table& document, std::string file, const scenario_options& options)
        : document_{document}, file_{std::move(file)}, options_{options}, top_{document, file_, "", errors_} {}

    scenario_result load() {
        scenario out;
        out.file = file_;
        out.name = read_name();
        out.description = top_.string("description").value_or("");
        out.seed = read_seed();
        out.time_limit = read_time_limit();
        out.strict = top_.boolean("strict").value_or(false);
        read_server(out.server, out.tls);
        server_limits_ = out.server.limits;
        out.faults = read_faults();
        out.client = read_client();
        out.expectations = read_expectations();
        out.relays = read_relays();
        out.proxy = read_proxy(out);
        // A conformance probe's metadata, validated by `faultline score` (harness/score); `run` only
        // needs to know whether the probe's client must speak gRPC.
        if (const toml::table* probe = top_.table("probe")) {
            out.needs_grpc_client = (*probe)["client"].value_or(std::string_view{}) == "grpc";
        }
        top_.finish();

        scenario_result result;
        if (errors_.empty()) {
            result.value = std::move(out);
        }
        // File order reads best; errors of one position keep the order they were found in.
        std::stable_sort(errors_.begin(), errors_.end(), [](const config_error& a, const config_error& b) {
            return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
        });
        result.errors = std::move(errors_);
        return result;
    }

private:
    std::string read_name() {
        std::optional<std::string> name = top_.string("name");
        if (!name) return file_stem(file_);
        if (name->empty()) top_.fail("name", "must not be empty");
        return *name;
    }

    std::uint64_t read_seed() {
        const auto seed = top_.integer("seed", 0, std::numeric_limits<std::int64_t>::max());
        return seed ? static_cast<std::uint64_t>(*seed) : default_seed;
    }

    std::chrono::nanoseconds read_time_limit() {
        return top_.duration("time_limit", std::chrono::nanoseconds{1}).value_or(default_time_limit);
    }

    void read_server(server::model_config& out, bool& tls) {
        const toml::table* table = top_.table("server");
        if (table == nullptr) return;
        // The listener's own key; the service model's are parse_model_config's.
        config::table_reader listener = top_.child(*table, "[server]");
        tls = listener.boolean("tls").value_or(false);
        if (std::optional<server::model_config> parsed = server::parse_model_config(*table, file_, errors_, {"tls"})) {
            out = std::move(*parsed);
        }
    }

    std::vector<faults::rule> read_faults() {
        // faults::parse_rules checks the node's type itself.
        top_.allow("fault");
        const toml::node* node = document_.get("fault");
        if (node == nullptr) return {};
        // [server] is read first: its max_fault_wait bounds every rule's waits, at the rule's key.
        faults::rules_result parsed = faults::parse_rules(*node, file_, {server_limits_.max_fault_wait});
        errors_.insert(errors_.end(), parsed.errors.begin(), parsed.errors.end());
        return std::move(parsed.rules);
    }

    std::shared_ptr<drivers::driver> read_client() {
        const bool present = top_.has("client");
        const toml::table* table = top_.table("client");
        if (present && table == nullptr) return nullptr;
        const toml::table empty;
        return parse_client(table != nullptr ? *table : empty, file_, errors_, options_.client);
    }

    std::vector<checks::expectation> read_expectations() {
        if (!top_.has("expect")) {
            errors_.push_back(config_error{{file_, 1, 1},
                                           "a scenario needs at least one [[expect]] table with `check = \"NAME\"`; "
                                           "checks: " + join(checks::check_names())});
            return {};
        }
        const toml::array* array = top_.array_of_tables("expect");
        if (array == nullptr) return {};
        if (array->empty()) {
            top_.fail("expect", "must not be empty; a scenario needs at least one [[expect]] table");
            return {};
        }
        std::vector<checks::expectation> out;
        for (const toml::node& item : *array) {
            if (std::optional<checks::expectation> e = checks::parse_expectation(*item.as_table(), file_, errors_)) {
                out.push_back(std::move(*e));
            }
        }
        return out;
    }

    std::vector<relay_tier> read_relays() {
        const toml::array* array = top_.array_of_tables("relay");
        if (array == nullptr) return {};
        std::vector<relay_tier> out;
        std::set<std::string> names{std::string{backend_instance}};
        std::size_t index = 0;
        for (const toml::node& item : *array) {
            ++index;
            config::table_reader r = top_.child(*item.as_table(), "[[relay]] #" + std::to_string(index));
            relay_tier tier;
            tier.name = r.string("name").value_or("relay-" + std::to_string(index));
            if (!names.insert(tier.name).second) {
                r.fail("name", "\"" + tier.name + "\" is taken; every tier needs its own instance name (\"" +
                                   std::string{backend_instance} + "\" is the service's)");
            }
            drivers::client_preset preset = drivers::client_preset::good;
            if (const auto v = r.choice("preset", preset_names())) {
                preset = *drivers::preset_from_string(*v);
            }
            tier.policy = drivers::preset_policy(preset);
            if (const toml::table* policy = r.table("policy")) {
                config::table_reader sub = r.child(*policy, "[relay.policy] #" + std::to_string(index));
                read_client_policy(sub, tier.policy);
            }
            r.finish();
            out.push_back(std::move(tier));
        }
        return out;
    }

    // `[proxy]`, and what in the rest of the file contradicts it: the [server] keys that describe the
    // built-in service's own replies and idempotency layer (the upstream answers and owns its keys),
    // and relay tiers (the runner chains them only in front of the built-in service).
    std::optional<server::proxy_config> read_proxy(const scenario& s) {
        const toml::table* table = top_.table("proxy");
        if (table == nullptr) return std::nullopt;
        std::optional<server::proxy_config> out = server::parse_proxy_config(*table, file_, errors_);
        constexpr std::string_view why = "the upstream behind [proxy] ";
        if (const toml::table* server = document_["server"].as_table()) {
            config::table_reader r = top_.child(*server, "[server]");
            if (s.server.idempotency.mode != server::idempotency_mode::off) {
                r.fail("idempotency", std::string{why} + "owns its idempotency keys; the proxy has no "
                                                         "idempotency layer (remove the key, or drop [proxy])");
            }
            if (s.server.idempotency.required) {
                r.fail("idempotency_required",
                       std::string{why} + "owns its idempotency keys; the proxy cannot refuse requests without one");
            }
            if (const toml::array* endpoints = (*server)["endpoint"].as_array()) {
                std::size_t index = 0;
                for (const toml::node& item : *endpoints) {
                    ++index;
                    const toml::table* endpoint = item.as_table();
                    if (endpoint == nullptr) continue;
                    config::table_reader e = top_.child(*endpoint, "[[server.endpoint]] #" + std::to_string(index));
                    for (const std::string_view key : {"status", "body", "content_type"}) {
                        if (endpoint->contains(key)) {
                            e.fail(key, std::string{why} + "answers; behind [proxy] an endpoint only declares what "
                                                           "commits (method, path, effect)");
                        }
                    }
                }
            }
        }
        if (!s.relays.empty()) {
            top_.fail("relay", "[[relay]] tiers and [proxy] do not go together yet: the runner chains relays only "
                               "in front of the built-in service (remove [proxy] or the [[relay]] tables)");
        }
        return out;
    }

    const toml::table& document_;
    std::string file_;
    const scenario_options& options_;
    config_errors errors_;
    config::table_reader top_;  // reports into errors_, so declared after it
    server::server_limits server_limits_;  // the scenario's [server] limits, once read
};

}  // namespace

namespace {

scenario_result load_parsed(config::document document, const std::string& file, const scenario_options& options) {
    if (!document.table) {
        scenario_result result;
        result.errors = std::move(document.errors);
        return result;
    }
    return loader{*document.table, file, options}.load();
}

}  // namespace

scenario_result parse_scenario(std::string_view toml_text, const std::string& file, const scenario_options& options) {
    return load_parsed(config::parse_document(toml_text, file), file, options);
}

scenario_result load_scenario_file(const std::string& path, const scenario_options& options) {
    return load_parsed(config::load_document(path, "scenario file"), path, options);
}

expectations_result load_expectations_file(const std::string& path) {
    scenario_result loaded = load_scenario_file(path);
    expectations_result out;
    out.errors = std::move(loaded.errors);
    if (loaded.value) out.expectations = std::move(loaded.value->expectations);
    return out;
}

scenario_files collect_scenario_files(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    std::set<std::string> files;
    scenario_files out;
    for (const std::string& path : paths) {
        std::error_code ec;
        const fs::file_status status = fs::status(path, ec);
        if (ec || !fs::exists(status)) {
            out.errors.push_back(config_error{{path, 0, 0}, "no such file or folder"});
            continue;
        }
        if (!fs::is_directory(status)) {
            files.insert(path);
            continue;
        }
        std::size_t found = 0;
        for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
            if (it->is_regular_file(ec) && it->path().extension() == ".toml") {
                files.insert(it->path().string());
                ++found;
            }
        }
        if (ec) {
            out.errors.push_back(config_error{{path, 0, 0}, "cannot list the folder: " + ec.message()});
        } else if (found == 0) {
            out.errors.push_back(config_error{{path, 0, 0}, "no scenario files (*.toml) in this folder"});
        }
    }
    out.files.assign(files.begin(), files.end());
    return out;
}

}  // namespace faultline::runner
