#include "faultline/server/ledger.hpp"

#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace faultline::server {
namespace {

ledger_entry entry(std::string op, std::uint32_t attempt, std::uint64_t seq,
                   effect_semantics s = effect_semantics::non_idempotent) {
    return ledger_entry{std::move(op), attempt, seq, 1, static_cast<std::int64_t>(seq) * 1000, "POST", "/payments", s,
                        "charge"};
}

TEST(ledger, counts_commits_per_operation) {
    ledger l;
    l.record(entry("a", 1, 1));
    l.record(entry("b", 1, 2));
    l.record(entry("a", 2, 3));
    EXPECT_EQ(l.size(), 3U);
    EXPECT_EQ(l.commits_for("a"), 2U);
    EXPECT_EQ(l.commits_for("b"), 1U);
    EXPECT_EQ(l.commits_for("c"), 0U);
}

TEST(ledger, double_effects_are_operations_with_two_commits_in_first_commit_order) {
    ledger l;
    l.record(entry("b", 1, 1));
    l.record(entry("a", 1, 2));
    l.record(entry("c", 1, 3));
    l.record(entry("a", 3, 4));
    l.record(entry("b", 2, 5));
    l.record(entry("b", 4, 6));
    const auto doubles = l.double_effects();
    ASSERT_EQ(doubles.size(), 2U);
    EXPECT_EQ(doubles[0].operation, "b");
    ASSERT_EQ(doubles[0].commits.size(), 3U);
    EXPECT_EQ(doubles[0].commits[1].attempt, 2U);
    EXPECT_EQ(doubles[0].commits[2].seq, 6U);
    EXPECT_EQ(doubles[1].operation, "a");
    EXPECT_EQ(doubles[1].commits[1].attempt, 3U);
}

TEST(ledger, idempotent_writes_count_only_in_the_all_scope) {
    ledger l;
    l.record(entry("put", 1, 1, effect_semantics::idempotent_write));
    l.record(entry("put", 2, 2, effect_semantics::idempotent_write));
    EXPECT_TRUE(l.double_effects().empty());
    EXPECT_EQ(l.commits_for("put"), 0U);
    EXPECT_EQ(l.commits_for("put", commit_scope::all), 2U);
    ASSERT_EQ(l.double_effects(commit_scope::all).size(), 1U);
}

TEST(ledger, snapshot_and_reset) {
    ledger l;
    l.record(entry("a", 1, 1));
    const auto snap = l.snapshot();
    ASSERT_EQ(snap.size(), 1U);
    EXPECT_EQ(snap[0], entry("a", 1, 1));
    l.reset();
    EXPECT_EQ(l.size(), 0U);
    EXPECT_TRUE(l.double_effects().empty());
}

TEST(ledger, one_that_keeps_the_count_refuses_to_answer_from_entries_it_did_not_keep) {
    ledger l{ledger_keeps::count};
    l.record(entry("a", 1, 1));
    l.record(entry("a", 2, 2));
    EXPECT_EQ(l.size(), 2U);
    // "No double effects" would be a silent wrong answer: it throws instead.
    EXPECT_THROW(l.double_effects(), std::logic_error);
    EXPECT_THROW(l.commits_for("a"), std::logic_error);
    EXPECT_THROW(l.snapshot(), std::logic_error);
    EXPECT_THROW(l.to_json(), std::logic_error);
    l.reset();
    EXPECT_EQ(l.size(), 0U);
}

TEST(ledger, json_lists_entries_and_double_effects) {
    ledger l;
    l.record(entry("a", 1, 7));
    l.record(entry("a", 2, 9));
    EXPECT_EQ(boost::json::serialize(l.to_json()),
              R"({"entries":[)"
              R"({"op":"a","attempt":1,"seq":7,"conn":1,"t":7000,"method":"POST","target":"/payments","semantics":"non_idempotent","effect":"charge"},)"
              R"({"op":"a","attempt":2,"seq":9,"conn":1,"t":9000,"method":"POST","target":"/payments","semantics":"non_idempotent","effect":"charge"}],)"
              R"("double_effects":[{"op":"a","commits":2,"seqs":[7,9]}]})");
}

TEST(ledger, concurrent_records_are_all_kept) {
    ledger l;
    constexpr int threads = 4;
    constexpr int per_thread = 500;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&l, t] {
            for (int i = 0; i < per_thread; ++i) {
                l.record(entry("op" + std::to_string(i), static_cast<std::uint32_t>(t + 1), 0));
            }
        });
    }
    for (auto& th : pool) th.join();
    EXPECT_EQ(l.size(), static_cast<std::size_t>(threads * per_thread));
    EXPECT_EQ(l.double_effects().size(), static_cast<std::size_t>(per_thread));
    EXPECT_EQ(l.commits_for("op17"), static_cast<std::size_t>(threads));
}

}  // namespace
}  // namespace faultline::server
