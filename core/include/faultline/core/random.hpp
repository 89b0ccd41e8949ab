// Injected, seeded randomness. `std::mt19937_64`'s output is fixed by the standard, but the standard
// distributions are not, so all draws go through our own helpers below and a seed replays a run on
// any standard library. Tests use `sequence_random` to pin each draw and assert exact results.
//
// Decisions that must not depend on thread interleaving (which fault hits which attempt) do not draw
// from a stream at all: they hash (seed, rule, operation, attempt) with `mix64`/`hash_bytes`.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string_view>
#include <vector>

namespace faultline {

// A source of uniformly distributed 64-bit words. Not thread-safe: give each thread (or each
// operation) its own, or guard it.
class random_source {
public:
    virtual ~random_source() = default;
    virtual std::uint64_t next() = 0;
};

// The default source: a seeded mt19937_64.
class seeded_random final : public random_source {
public:
    explicit seeded_random(std::uint64_t seed) : engine_{seed} {}
    std::uint64_t next() override { return engine_(); }

private:
    std::mt19937_64 engine_;
};

// Replays a fixed sequence of words, cycling when it runs out (tests).
class sequence_random final : public random_source {
public:
    explicit sequence_random(std::vector<std::uint64_t> words);
    // A sequence whose `uniform_unit` draws return exactly these values in [0, 1).
    static sequence_random of_units(std::initializer_list<double> units);
    std::uint64_t next() override;

private:
    std::vector<std::uint64_t> words_;
    std::size_t position_ = 0;
};

// A uniform double in [0, 1) built from the top 53 bits of one word (exact for every word).
double uniform_unit(random_source& random);
// A uniform double in [low, high).
double uniform(random_source& random, double low, double high);
// A uniform integer in [0, bound), unbiased (rejection sampling); `bound` > 0.
std::uint64_t uniform_below(random_source& random, std::uint64_t bound);
// True with probability `p` (clamped to [0, 1]).
bool bernoulli(random_source& random, double p);

// The splitmix64 finaliser: a bijective, well-mixed 64-bit hash, used to derive per-decision values.
constexpr std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
constexpr std::uint64_t mix64(std::uint64_t a, std::uint64_t b) { return mix64(a ^ mix64(b)); }

// A stable 64-bit hash of bytes (FNV-1a, then mixed), the same on every platform and run.
std::uint64_t hash_bytes(std::string_view bytes);

// Maps a hash to [0, 1) the way `uniform_unit` maps a draw.
constexpr double unit_from_hash(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace faultline
