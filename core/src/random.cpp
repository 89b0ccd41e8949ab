#include "faultline/core/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace faultline {

sequence_random::sequence_random(std::vector<std::uint64_t> words) : words_{std::move(words)} {
    if (words_.empty()) throw std::invalid_argument{"sequence_random needs at least one word"};
}

sequence_random sequence_random::of_units(std::initializer_list<double> units) {
    std::vector<std::uint64_t> words;
    words.reserve(units.size());
    for (const double u : units) {
        if (!(u >= 0.0 && u < 1.0)) throw std::invalid_argument{"unit draws must lie in [0, 1)"};
        // Inverse of uniform_unit: the unit value lives in the top 53 bits.
        words.push_back(static_cast<std::uint64_t>(std::ldexp(u, 53)) << 11);
    }
    return sequence_random{std::move(words)};
}

std::uint64_t sequence_random::next() {
    const auto word = words_[position_];
    position_ = (position_ + 1) % words_.size();
    return word;
}

double uniform_unit(random_source& random) { return unit_from_hash(random.next()); }

double uniform(random_source& random, double low, double high) {
    return low + (high - low) * uniform_unit(random);
}

std::uint64_t uniform_below(random_source& random, std::uint64_t bound) {
    // Reject the top partial block of 2^64 so every residue is equally likely.
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                std::numeric_limits<std::uint64_t>::max() % bound;
    std::uint64_t word = random.next();
    while (word >= limit) word = random.next();
    return word % bound;
}

bool bernoulli(random_source& random, double p) {
    if (p <= 0.0) return false;
    if (p >= 1.0) return true;
    return uniform_unit(random) < p;
}

std::uint64_t hash_bytes(std::string_view bytes) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return mix64(h);
}

}  // namespace faultline
