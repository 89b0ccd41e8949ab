// The shared part of the [client] table: the `driver` key, the lookup of the registered driver and
// the command-line override. Every other key belongs to a driver file.
#include "faultline/drivers/driver.hpp"

#include <algorithm>

#include "faultline/core/random.hpp"

namespace faultline::drivers {

namespace {

// The stream of the run's seed idempotency keys are drawn from ("keys").
constexpr std::uint64_t key_stream = 0x6b657973ULL;

bool lists(std::span<const std::string_view> keys, std::string_view key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Keys of the other drivers are mistakes in this one's table, not options to ignore.
void reject_other_drivers_keys(config::table_reader& r, const driver_info& chosen) {
    std::vector<std::string_view> rejected;
    for (const driver_info& other : driver_registry::instance().entries()) {
        if (other.name == chosen.name) continue;
        for (const std::string_view key : other.keys) {
            if (lists(chosen.keys, key) || std::find(rejected.begin(), rejected.end(), key) != rejected.end()) {
                continue;
            }
            rejected.push_back(key);
            r.reject(key, "only applies to driver = \"" + other.name + "\"");
        }
    }
}

}  // namespace

std::unique_ptr<driver> parse_client(const toml::table& client, const std::string& file, config_errors& errors,
                                     const client_overrides& overrides) {
    const driver_registry& registry = driver_registry::instance();
    config::table_reader r{client, file, "[client]", errors};
    const std::string name = r.choice("driver", registry.names()).value_or(std::string{default_driver});
    const driver_info* chosen = registry.find(name);
    if (chosen == nullptr || !r.ok()) {
        r.finish();
        return nullptr;
    }
    std::unique_ptr<driver> out = chosen->make(r, overrides);
    reject_other_drivers_keys(r, *chosen);
    r.finish();
    if (!r.ok()) return nullptr;
    if (overrides.command.empty() || chosen->name == override_driver) return out;

    // A command after `--` replaces this client; its table had to be valid all the same.
    const driver_info* replacement = registry.find(override_driver);
    if (replacement == nullptr) {
        r.fail_table("a command line client needs the \"" + std::string{override_driver} + "\" driver");
        return nullptr;
    }
    const toml::table empty;
    config::table_reader none = r.child(empty, "[client]");
    out = replacement->make(none, overrides);
    none.finish();
    if (!none.ok()) return nullptr;
    return out;
}

std::string substitute(std::string_view text, const placeholder_values& values) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '{') {
            const std::string_view rest = text.substr(i);
            const auto replace = [&](std::string_view name, std::string_view with) {
                if (rest.size() < name.size() + 2 || rest.substr(1, name.size()) != name || rest[name.size() + 1] != '}') {
                    return false;
                }
                out += with;
                i += name.size() + 2;
                return true;
            };
            if (replace("op", std::to_string(values.op)) || replace("client", std::to_string(values.client)) ||
                replace("n", std::to_string(values.n)) || (values.url && replace("url", *values.url)) ||
                (values.key && replace("key", *values.key)) || (values.ca && replace("ca", *values.ca)) ||
                (values.service_config && replace("service_config", *values.service_config))) {
                continue;
            }
        }
        out += text[i];
        ++i;
    }
    return out;
}

retry::idempotency_key operation_key(std::uint64_t seed, std::uint64_t op) {
    seeded_random random{mix64(seed ^ key_stream, op)};
    return retry::idempotency_key::generate(random);
}

}  // namespace faultline::drivers
