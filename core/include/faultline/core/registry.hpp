// The one way faultline's extension points are found by name: fault kinds, checks, client drivers and
// report writers. Each implementation is one file that registers its entry with a namespace-scope
// `registration` object; its library is built with `faultline_add_registering_library` (cmake/
// faultline.cmake), which links it whole-archive so those unreferenced objects survive static linking.
//
//   const core::registration<check_info> registered{"backoff", "gaps grow exponentially", &make};
//
// An entry type is an aggregate whose first member is `std::string name` (its second, by convention,
// a one-line `summary` for `faultline list`). The registry is filled during static initialisation and
// read-only afterwards, so reads are thread-safe once main() has started.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::core {

template <class Entry>
class registry {
public:
    static registry& instance() {
        static registry r;
        return r;
    }

    // A duplicate name is a programming error: throws std::logic_error (during static initialisation,
    // so the program stops before main).
    void add(Entry entry) {
        const auto at = std::lower_bound(entries_.begin(), entries_.end(), entry.name, by_name{});
        if (at != entries_.end() && at->name == entry.name) {
            throw std::logic_error{"registered twice: " + entry.name};
        }
        entries_.insert(at, std::move(entry));
    }

    const Entry* find(std::string_view name) const {
        const auto at = std::lower_bound(entries_.begin(), entries_.end(), name, by_name{});
        return at != entries_.end() && at->name == name ? &*at : nullptr;
    }

    // Sorted by name.
    const std::vector<Entry>& entries() const { return entries_; }

    std::vector<std::string> names() const {
        std::vector<std::string> out;
        out.reserve(entries_.size());
        for (const Entry& e : entries_) out.push_back(e.name);
        return out;
    }

private:
    struct by_name {
        bool operator()(const Entry& e, std::string_view name) const { return e.name < name; }
    };

    registry() = default;

    std::vector<Entry> entries_;
};

// Adds `Entry{args...}` to the registry when constructed; one per implementation file.
template <class Entry>
struct registration {
    template <class... Args>
    explicit registration(Args&&... args) {
        registry<Entry>::instance().add(Entry{std::forward<Args>(args)...});
    }
};

}  // namespace faultline::core
