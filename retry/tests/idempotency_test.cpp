#include "faultline/retry/idempotency.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace faultline::retry {
namespace {

// Both header forms, as the server reads them and clients name operations by them.
TEST(IdempotencyKey, HeaderValueInEitherForm) {
    EXPECT_EQ(idempotency_key_value(R"("abc")"), "abc");
    EXPECT_EQ(idempotency_key_value(R"(  "abc" )"), "abc");
    EXPECT_EQ(idempotency_key_value("\tabc "), "abc");
    EXPECT_EQ(idempotency_key_value(R"("a\"b\\c")"), R"(a"b\c)");
    EXPECT_EQ(idempotency_key_value(R"("")"), "");
    EXPECT_EQ(idempotency_key_value("   "), "");
    EXPECT_EQ(idempotency_key_value(R"(")"), R"(")");
}

TEST(IdempotencyKey, ExactUuidFromFixedWords) {
    sequence_random random{{0x0123456789abcdefULL, 0xfedcba9876543210ULL}};
    const auto key = idempotency_key::generate(random);
    // Bytes little-endian from each word; version nibble 4 in byte 6, variant 10xx in byte 8.
    EXPECT_EQ(key.view(), "efcdab89-6745-4301-9032-547698badcfe");
    EXPECT_TRUE(is_uuid_v4(key.view()));
}

TEST(IdempotencyKey, ManyKeysAreValidAndDistinct) {
    seeded_random random{99};
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        const auto key = idempotency_key::generate(random);
        ASSERT_TRUE(is_uuid_v4(key.view())) << key.view();
        seen.emplace(key.view());
    }
    EXPECT_EQ(seen.size(), 1000U);
}

TEST(IdempotencyKey, ExtremeWordsStillGiveVersion4) {
    for (const std::uint64_t w : {std::uint64_t{0}, ~std::uint64_t{0}}) {
        sequence_random random{{w}};
        EXPECT_TRUE(is_uuid_v4(idempotency_key::generate(random).view()));
    }
}

TEST(IdempotencyKey, Parse) {
    const auto k = idempotency_key::parse("8E03978E-40D5-43E8-BC93-6894A57F9324");
    ASSERT_TRUE(k);
    EXPECT_EQ(k->view(), "8E03978E-40D5-43E8-BC93-6894A57F9324");
    EXPECT_FALSE(idempotency_key::parse("8e03978e40d543e8bc936894a57f9324"));
    EXPECT_FALSE(idempotency_key::parse("8e03978e-40d5-43e8-bc93-6894a57f932g"));
    EXPECT_FALSE(idempotency_key::parse(""));
}

TEST(IdempotencyKey, Uuidv4Check) {
    EXPECT_TRUE(is_uuid_v4("8e03978e-40d5-43e8-bc93-6894a57f9324"));
    EXPECT_FALSE(is_uuid_v4("8e03978e-40d5-13e8-bc93-6894a57f9324"));  // version 1
    EXPECT_FALSE(is_uuid_v4("8e03978e-40d5-43e8-cc93-6894a57f9324"));  // wrong variant
    EXPECT_FALSE(is_uuid_v4("8E03978E-40D5-43E8-BC93-6894A57F9324"));  // not canonical lowercase
}

TEST(IdempotencyKey, HeaderForms) {
    sequence_random random{{0x0123456789abcdefULL, 0xfedcba9876543210ULL}};
    const auto key = idempotency_key::generate(random);
    EXPECT_EQ(key_header_value(key, key_format::quoted).view(), "\"efcdab89-6745-4301-9032-547698badcfe\"");
    EXPECT_EQ(key_header_value(key, key_format::bare).view(), "efcdab89-6745-4301-9032-547698badcfe");
    EXPECT_TRUE(key_header_value{}.empty());
}

}  // namespace
}  // namespace faultline::retry
