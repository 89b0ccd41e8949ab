#include "faultline/runner/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>

#include "faultline/config/duration.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/faults/kind.hpp"
#include "faultline/faults/rules_toml.hpp"

namespace faultline::harness {
namespace {

source_position position_of(const toml::node& node, const std::string& file) {
    const auto& begin = node.source().begin;
    return {file, begin.line, begin.column};
}

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

// Collects the errors of one document; each reader below validates one top-level key.
class loader {
public:
    loader(const toml::table& document, std::string file, const scenario_options& options)
        : document_{document}, file_{std::move(file)}, options_{options} {}

    scenario_result load() {
        reject_unknown_keys();
        scenario out;
        out.file = file_;
        out.name = read_name();
        out.description = read_string("description").value_or("");
        out.seed = read_seed();
        out.time_limit = read_time_limit();
        read_server(out.server);
        out.faults = read_faults();
        out.client = read_client();
        out.expectations = read_expectations();

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
    void error_at(const toml::node& node, std::string message) {
        errors_.push_back(config_error{position_of(node, file_), std::move(message)});
    }

    void wrong_type(const toml::node& node, std::string_view key, std::string_view expected) {
        error_at(node, "`" + std::string(key) + "` must be " + std::string(expected) + ", not " +
                           std::string(config::type_name(node)));
    }

    void reject_unknown_keys() {
        for (const auto& [key, value] : document_) {
            const bool known = std::find(std::begin(scenario_keys), std::end(scenario_keys), key.str()) !=
                               std::end(scenario_keys);
            if (!known) {
                errors_.push_back(config_error{{file_, key.source().begin.line, key.source().begin.column},
                                               "unknown key `" + std::string(key.str()) +
                                                   "` in a scenario; allowed keys: " + join(scenario_keys)});
            }
        }
    }

    std::optional<std::string> read_string(std::string_view key) {
        const toml::node* node = document_.get(key);
        if (node == nullptr) return std::nullopt;
        if (const auto* s = node->as_string()) return s->get();
        wrong_type(*node, key, "a string");
        return std::nullopt;
    }

    std::string read_name() {
        const toml::node* node = document_.get("name");
        std::optional<std::string> name = read_string("name");
        if (!name) return file_stem(file_);
        if (name->empty()) error_at(*node, "`name` must not be empty");
        return *name;
    }

    std::uint64_t read_seed() {
        const toml::node* node = document_.get("seed");
        if (node == nullptr) return default_seed;
        const auto* value = node->as_integer();
        if (value == nullptr) {
            wrong_type(*node, "seed", "an integer (e.g. seed = 42)");
            return default_seed;
        }
        if (value->get() < 0) {
            error_at(*node, "`seed` must not be negative");
            return default_seed;
        }
        return static_cast<std::uint64_t>(value->get());
    }

    std::chrono::nanoseconds read_time_limit() {
        const toml::node* node = document_.get("time_limit");
        if (node == nullptr) return default_time_limit;
        const auto* text = node->as_string();
        if (text == nullptr) {
            wrong_type(*node, "time_limit", "a duration string with a unit (e.g. \"30s\")");
            return default_time_limit;
        }
        const config::parsed_duration parsed = config::parse_duration(text->get());
        if (!parsed) {
            error_at(*node, "`time_limit`: " + parsed.error);
            return default_time_limit;
        }
        if (parsed.value->count() <= 0) {
            error_at(*node, "`time_limit` must be greater than 0");
            return default_time_limit;
        }
        return *parsed.value;
    }

    void read_server(model_config& out) {
        const toml::node* node = document_.get("server");
        if (node == nullptr) return;
        const auto* table = node->as_table();
        if (table == nullptr) {
            wrong_type(*node, "server", "a table ([server])");
            return;
        }
        if (std::optional<model_config> parsed = parse_model_config(*table, file_, errors_)) {
            out = std::move(*parsed);
        }
    }

    std::vector<faults::rule> read_faults() {
        const toml::node* node = document_.get("fault");
        if (node == nullptr) return {};
        faults::rules_result parsed = faults::parse_rules(*node, file_);
        errors_.insert(errors_.end(), parsed.errors.begin(), parsed.errors.end());
        return std::move(parsed.rules);
    }

    std::shared_ptr<driver> read_client() {
        const toml::node* node = document_.get("client");
        const toml::table empty;
        const toml::table* table = &empty;
        if (node != nullptr) {
            table = node->as_table();
            if (table == nullptr) {
                wrong_type(*node, "client", "a table ([client])");
                return nullptr;
            }
        }
        return parse_client(*table, file_, errors_, options_.client);
    }

    std::vector<expectation> read_expectations() {
        const toml::node* node = document_.get("expect");
        if (node == nullptr) {
            errors_.push_back(config_error{{file_, 1, 1},
                                           "a scenario needs at least one [[expect]] table with `check = \"NAME\"`; "
                                           "checks: " + join(check_names())});
            return {};
        }
        const auto* array = node->as_array();
        if (array == nullptr || !array->is_array_of_tables()) {
            wrong_type(*node, "expect", "an array of tables ([[expect]])");
            return {};
        }
        if (array->empty()) {
            error_at(*node, "`expect` is empty; a scenario needs at least one [[expect]] table");
            return {};
        }
        std::vector<expectation> out;
        for (const toml::node& item : *array) {
            if (std::optional<expectation> e = parse_expectation(*item.as_table(), file_, errors_)) {
                out.push_back(std::move(*e));
            }
        }
        return out;
    }

    const toml::table& document_;
    std::string file_;
    const scenario_options& options_;
    config_errors errors_;
};

}  // namespace

scenario_result parse_scenario(std::string_view toml_text, const std::string& file, const scenario_options& options) {
    toml::table document;
    try {
        document = toml::parse(toml_text, file);
    } catch (const toml::parse_error& error) {
        const auto& begin = error.source().begin;
        scenario_result result;
        result.errors.push_back(
            config_error{{file, begin.line, begin.column}, "TOML syntax error: " + std::string(error.description())});
        return result;
    }
    return loader{document, file, options}.load();
}

scenario_result load_scenario_file(const std::string& path, const scenario_options& options) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        scenario_result result;
        result.errors.push_back(config_error{{path, 0, 0}, "cannot read the scenario file"});
        return result;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_scenario(text.str(), path, options);
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

}  // namespace faultline::harness
