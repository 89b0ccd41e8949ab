// group_operations: every attempt lands in its operation's group, in request order, and operations
// come in the order of their first attempt, however many there are (the grouping table grows with
// the operations, so large journals exercise its probing and growth).
#include "faultline/record/run_record.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace faultline::record {
namespace {

journal_record attempt(std::uint64_t seq, std::int64_t request_ns, std::string operation) {
    journal_record r;
    r.seq = seq;
    r.request_ns = request_ns;
    r.operation = std::move(operation);
    return r;
}

TEST(group_operations, orders_attempts_by_request_time_then_seq) {
    const std::vector<journal_record> journal{attempt(1, 30, "b"), attempt(2, 10, "a"), attempt(3, 30, "a"),
                                              attempt(4, 20, "b"), attempt(5, 20, "a")};
    const auto operations = group_operations(journal);
    ASSERT_EQ(operations.size(), 2U);
    EXPECT_EQ(operations[0].operation, "a");
    EXPECT_EQ(operations[1].operation, "b");
    std::vector<std::uint64_t> seqs;
    for (const journal_record* r : operations[0].attempts) seqs.push_back(r->seq);
    EXPECT_EQ(seqs, (std::vector<std::uint64_t>{2, 5, 3}));
    seqs.clear();
    for (const journal_record* r : operations[1].attempts) seqs.push_back(r->seq);
    EXPECT_EQ(seqs, (std::vector<std::uint64_t>{4, 1}));
}

TEST(group_operations, groups_a_large_journal_exactly) {
    constexpr std::uint64_t operations_count = 5000;
    std::vector<journal_record> journal;
    // Three attempts per operation, interleaved: operation k's attempts at k, k + n and k + 2n.
    for (std::uint64_t round = 0; round < 3; ++round) {
        for (std::uint64_t k = 0; k < operations_count; ++k) {
            const std::uint64_t seq = journal.size() + 1;
            journal.push_back(attempt(seq, static_cast<std::int64_t>(seq), "op-" + std::to_string(k)));
        }
    }
    const auto operations = group_operations(journal);
    ASSERT_EQ(operations.size(), operations_count);
    EXPECT_EQ(count_operations(journal), operations_count);
    for (std::uint64_t k = 0; k < operations_count; ++k) {
        const auto& op = operations[k];
        EXPECT_EQ(op.operation, "op-" + std::to_string(k));
        ASSERT_EQ(op.attempts.size(), 3U);
        for (std::uint64_t round = 0; round < 3; ++round) {
            EXPECT_EQ(op.attempts[round]->seq, round * operations_count + k + 1);
        }
    }
}

TEST(group_operations, groups_a_large_journal_out_of_request_order_by_request_time) {
    // In seq order, but requested in the opposite order: operation k's attempts have seqs k + 1 and
    // k + n + 1, and the later seq was requested first.
    constexpr std::uint64_t operations_count = 5000;
    constexpr auto total = static_cast<std::int64_t>(2 * operations_count);
    std::vector<journal_record> journal;
    for (std::uint64_t round = 0; round < 2; ++round) {
        for (std::uint64_t k = 0; k < operations_count; ++k) {
            const std::uint64_t seq = journal.size() + 1;
            journal.push_back(attempt(seq, total - static_cast<std::int64_t>(seq), "op-" + std::to_string(k)));
        }
    }
    const auto operations = group_operations(journal);
    ASSERT_EQ(operations.size(), operations_count);
    for (std::uint64_t i = 0; i < operations_count; ++i) {
        const std::uint64_t k = operations_count - 1 - i;  // the last operation was requested first
        const auto& op = operations[i];
        EXPECT_EQ(op.operation, "op-" + std::to_string(k));
        ASSERT_EQ(op.attempts.size(), 2U);
        EXPECT_EQ(op.attempts[0]->seq, operations_count + k + 1);
        EXPECT_EQ(op.attempts[1]->seq, k + 1);
    }
}

TEST(group_operations, groups_keep_their_attempts_when_moved) {
    const std::vector<journal_record> journal{attempt(1, 10, "a"), attempt(2, 20, "b"), attempt(3, 30, "a")};
    operation_groups moved = group_operations(journal);
    const operation_groups groups = std::move(moved);  // the spans view the array that moved with them
    ASSERT_EQ(groups.size(), 2U);
    ASSERT_EQ(groups[0].attempts.size(), 2U);
    EXPECT_EQ(groups[0].attempts[0], &journal[0]);
    EXPECT_EQ(groups[0].attempts[1], &journal[2]);
    ASSERT_EQ(groups[1].attempts.size(), 1U);
    EXPECT_EQ(groups[1].attempts[0], &journal[1]);
}

TEST(group_operations, iterate_as_they_index) {
    const std::vector<journal_record> journal{attempt(1, 10, "a"), attempt(2, 20, "b"), attempt(3, 30, "a"),
                                              attempt(4, 40, "c")};
    const operation_groups groups = group_operations(journal);
    std::vector<std::string> names;
    for (const operation_attempts& op : groups) names.push_back(op.operation.str());
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(groups.end() - groups.begin(), 3);
    EXPECT_EQ((*(groups.begin() + 2)).operation, "c");
    EXPECT_EQ(groups.begin()[1].attempts[0], &journal[1]);
    EXPECT_EQ(std::ranges::count_if(groups, [](const operation_attempts& op) { return op.attempts.size() == 2; }), 1);
    EXPECT_EQ(groups.front().operation, "a");
    EXPECT_EQ(groups.back().attempts[0], &journal[3]);
}

TEST(group_operations, an_empty_journal_has_no_operations) {
    EXPECT_TRUE(group_operations({}).empty());
    EXPECT_EQ(count_operations({}), 0U);
}

}  // namespace
}  // namespace faultline::record
