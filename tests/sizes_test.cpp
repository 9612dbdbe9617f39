// Tests of the byte-size parser, the size-list parser and format_bytes.
#include "collbench/catalog/sizes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace collbench {
namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = KiB * 1024;
constexpr std::uint64_t GiB = MiB * 1024;

TEST(ParseByteSize, NumbersAndUnits) {
  EXPECT_EQ(parse_byte_size("8"), 8u);
  EXPECT_EQ(parse_byte_size("8B"), 8u);
  EXPECT_EQ(parse_byte_size("4KiB"), 4 * KiB);
  EXPECT_EQ(parse_byte_size("64MiB"), 64 * MiB);
  EXPECT_EQ(parse_byte_size("1GiB"), GiB);
  EXPECT_EQ(parse_byte_size("2TiB"), 2 * 1024 * GiB);
  EXPECT_EQ(parse_byte_size("1KB"), 1000u);
  EXPECT_EQ(parse_byte_size("1kB"), 1000u);
  EXPECT_EQ(parse_byte_size("25MB"), 25'000'000u);
  EXPECT_EQ(parse_byte_size("3GB"), 3'000'000'000u);
  EXPECT_EQ(parse_byte_size("1TB"), 1'000'000'000'000u);
}

TEST(ParseByteSize, FractionsThatAreWholeBytesAndSpaces) {
  EXPECT_EQ(parse_byte_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_byte_size("0.25MiB"), 256 * KiB);
  EXPECT_EQ(parse_byte_size("2.000B"), 2u);
  EXPECT_EQ(parse_byte_size(" 64 MiB "), 64 * MiB);
}

TEST(ParseByteSize, LimitsOfSixtyFourBits) {
  EXPECT_EQ(parse_byte_size("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_byte_size("16777215TiB"), 16777215ULL << 40);
}

TEST(ParseByteSize, ZeroOnlyWhereAllowed) {
  EXPECT_THROW(parse_byte_size("0"), std::invalid_argument);
  EXPECT_THROW(parse_byte_size("0KiB"), std::invalid_argument);
  EXPECT_EQ(parse_byte_size("0", ZeroSize::allow), 0u);
  EXPECT_EQ(parse_byte_size("0MiB", ZeroSize::allow), 0u);
}

// The message must quote the bad text and contain `expected`.
void expect_size_rejected(const std::string& text, const std::string& expected) {
  try {
    parse_byte_size(text);
    ADD_FAILURE() << "\"" << text << "\" was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("\"" + text + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(ParseByteSize, ErrorsQuoteTheTextAndSayWhatIsAccepted) {
  expect_size_rejected("12XB", "unknown unit \"XB\"; accepted units: B, KiB, MiB");
  expect_size_rejected("12 kib", "unknown unit \"kib\"");
  expect_size_rejected("", "empty");
  expect_size_rejected("   ", "empty");
  expect_size_rejected("-8", "negative");
  expect_size_rejected("-1KiB", "negative");
  expect_size_rejected("99999999999GiB", "does not fit in 64 bits");
  expect_size_rejected("18446744073709551616", "does not fit in 64 bits");
  expect_size_rejected("16777216TiB", "does not fit in 64 bits");
  expect_size_rejected("4K", "ambiguous; write KiB for a power of 1024 or KB for a power of 1000");
  expect_size_rejected("128M", "ambiguous");
  expect_size_rejected("1Gi", "ambiguous");
  expect_size_rejected("1.3B", "not a whole number of bytes");
  expect_size_rejected("0.1KiB", "not a whole number of bytes");
  expect_size_rejected("1.KiB", "decimal point");
  expect_size_rejected(".5KiB", "expected a number");
  expect_size_rejected("KiB", "expected a number");
  expect_size_rejected("0", "zero bytes");
  expect_size_rejected("1 2", "unknown unit \"2\"");
}

TEST(ParseSizeList, RangesDoubleByDefault) {
  EXPECT_EQ(parse_size_list("1KiB:8KiB"),
            (std::vector<std::uint64_t>{KiB, 2 * KiB, 4 * KiB, 8 * KiB}));
  // As nccl-tests: MAX is included only when a step lands on it.
  EXPECT_EQ(parse_size_list("8:100"), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(parse_size_list("5:5"), (std::vector<std::uint64_t>{5}));
}

TEST(ParseSizeList, StepFactors) {
  EXPECT_EQ(parse_size_list("1:1000:x10"), (std::vector<std::uint64_t>{1, 10, 100, 1000}));
  EXPECT_EQ(parse_size_list("1:1000:*10"), (std::vector<std::uint64_t>{1, 10, 100, 1000}));
  EXPECT_EQ(parse_size_list("1MiB:64MiB:x4"),
            (std::vector<std::uint64_t>{MiB, 4 * MiB, 16 * MiB, 64 * MiB}));
}

TEST(ParseSizeList, CommaListsAndCombinations) {
  EXPECT_EQ(parse_size_list("1KiB,4MiB"), (std::vector<std::uint64_t>{KiB, 4 * MiB}));
  // Written order is kept; 16 appears twice and is kept once.
  EXPECT_EQ(parse_size_list("8:32, 1KiB ,16"), (std::vector<std::uint64_t>{8, 16, 32, KiB}));
  EXPECT_EQ(parse_size_list("1GiB,1:2"), (std::vector<std::uint64_t>{GiB, 1, 2}));
}

TEST(ParseSizeList, RangeUpToTheLargestSizeDoesNotOverflow) {
  const auto sizes = parse_size_list("1:18446744073709551615");
  ASSERT_EQ(sizes.size(), 64u);
  EXPECT_EQ(sizes.back(), std::uint64_t{1} << 63);
  const auto tens = parse_size_list("1:18446744073709551615:x10");
  EXPECT_EQ(tens.back(), 10'000'000'000'000'000'000ULL);
}

void expect_list_rejected(const std::string& text, const std::string& expected) {
  try {
    parse_size_list(text);
    ADD_FAILURE() << "\"" << text << "\" was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("invalid size list \"" + text + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find("MIN:MAX:xF"), std::string::npos) << message;
  }
}

TEST(ParseSizeList, ErrorsQuoteTheListAndSayWhatIsAccepted) {
  expect_list_rejected("", "empty");
  expect_list_rejected("0:", "needs both MIN and MAX");
  expect_list_rejected(":8", "needs both MIN and MAX");
  expect_list_rejected("8:", "needs both MIN and MAX");
  expect_list_rejected("1KiB,,2KiB", "item 2 (counting from 1) is empty");
  expect_list_rejected("1KiB,", "item 2 (counting from 1) is empty");
  expect_list_rejected("16:8", "MIN (16 bytes) above MAX (8 bytes)");
  expect_list_rejected("8:64:x1", "at least 2");
  expect_list_rejected("8:64:x0", "at least 2");
  expect_list_rejected("8:64:x1.5", "whole number >= 2");
  expect_list_rejected("8:64:3", "xF or *F");
  expect_list_rejected("8:64:x", "xF or *F");
  expect_list_rejected("8:64:x99999999999999999999", "does not fit in 64 bits");
  expect_list_rejected("1:2:x2:4", "more than three");
  expect_list_rejected("0", "zero bytes");
  expect_list_rejected("0:8", "zero bytes");
  expect_list_rejected("-4:8", "negative");
  expect_list_rejected("4,-8", "negative");
  expect_list_rejected("1KiB,12XB", "\"12XB\": unknown unit \"XB\"");
  expect_list_rejected("1:99999999999GiB", "does not fit in 64 bits");
}

TEST(FormatBytes, LargestBinaryUnitWithAtMostTwoDecimals) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(8), "8 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(64 * MiB), "64 MiB");
  EXPECT_EQ(format_bytes(3097600 * 4), "11.82 MiB");  // 11.8164 MiB
  EXPECT_EQ(format_bytes(MiB - 1), "1 MiB");          // 1023.999 KiB rounds up a unit
  EXPECT_EQ(format_bytes(GiB), "1 GiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<std::uint64_t>::max()), "16 EiB");
}

TEST(FormatBytes, ExactOutputsParseBack) {
  for (std::uint64_t bytes :
       {std::uint64_t{1}, std::uint64_t{1536}, 25 * MiB, 3 * GiB / 2, std::uint64_t{1} << 40}) {
    EXPECT_EQ(parse_byte_size(format_bytes(bytes)), bytes) << format_bytes(bytes);
  }
}

TEST(SaturatingBytes, SumsAndProductsThatDoNotFitSaturateInsteadOfWrapping) {
  constexpr std::uint64_t half = std::uint64_t{1} << 63;
  static_assert(saturating_add(2, 3) == 5);
  static_assert(saturating_multiply(6, 7) == 42);
  EXPECT_EQ(saturating_add(half, half - 1), kSaturatedBytes);  // exactly fits
  EXPECT_EQ(saturating_add(half, half), kSaturatedBytes);      // wraps to 0 unchecked
  EXPECT_EQ(saturating_multiply(2, half), kSaturatedBytes);
  EXPECT_EQ(saturating_multiply(2, half - 1), kSaturatedBytes - 1);
  EXPECT_EQ(saturating_add(kSaturatedBytes, 0), kSaturatedBytes);
  EXPECT_EQ(saturating_multiply(0, kSaturatedBytes), 0u);
  // The largest --sizes value times the in+out buffers of a benchmark.
  EXPECT_EQ(saturating_multiply(2, parse_byte_size("8388608TiB")), kSaturatedBytes);
}

}  // namespace
}  // namespace collbench
