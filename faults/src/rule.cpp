#include "faultline/faults/rule.hpp"

#include <algorithm>

namespace faultline::faults {

bool glob_match(std::string_view pattern, std::string_view text) {
    std::size_t p = 0;
    std::size_t t = 0;
    // Where to resume after the most recent '*': the pattern just past it, and the text position
    // it has absorbed up to. Earlier stars never need revisiting, which keeps this polynomial.
    std::size_t star = std::string_view::npos;
    std::size_t star_text = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_text = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++star_text;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

bool request_match::matches(const request_view& request) const {
    if (!methods.empty() && std::find(methods.begin(), methods.end(), request.method) == methods.end()) {
        return false;
    }
    if (path) {
        const std::string_view target = request.target;
        if (!glob_match(*path, target.substr(0, target.find('?')))) {
            return false;
        }
    }
    for (const header_equals& h : headers) {
        const auto value = request.headers.find(h.name);
        if (!value || *value != h.value) {
            return false;
        }
    }
    for (const std::string& name : headers_present) {
        if (!request.headers.find(name)) {
            return false;
        }
    }
    return true;
}

bool trigger::holds(double trigger_draw, std::uint32_t attempt, std::uint64_t seq,
                    std::chrono::nanoseconds since_start) const {
    if (!attempts.empty() && std::find(attempts.begin(), attempts.end(), attempt) == attempts.end()) {
        return false;
    }
    if (first && seq > *first) {
        return false;
    }
    if (every && seq % *every != 0) {
        return false;
    }
    const std::chrono::nanoseconds start = from.value_or(std::chrono::nanoseconds{0});
    if (since_start < start) {
        return false;
    }
    // Compared as an elapsed span so that start + length cannot overflow.
    if (for_duration && since_start - start >= *for_duration) {
        return false;
    }
    if (probability && !(trigger_draw < *probability)) {
        return false;
    }
    return true;
}

}  // namespace faultline::faults
