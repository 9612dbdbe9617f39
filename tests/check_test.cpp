// The properties of CheckPattern that check.h promises, each tested against
// an independent computation from input(): small nonzero inputs, exact and
// correct expected values, ranks and elements distinct, a unique owner of
// every min and max that goes round the ranks. The mutants it must catch are
// in check_mutation_test.cpp.
#include "collbench/core/check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "collbench/core/reduce.h"

namespace collbench {
namespace {

constexpr int kRankCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 64};

// op over input(0..p−1, index), the way a reader of check.h would compute it.
double reference(const CheckPattern& pattern, DType dtype, ReduceOp op, std::uint64_t index) {
  double sum = 0;
  double low = INFINITY;
  double high = -INFINITY;
  for (int r = 0; r < pattern.ranks(); ++r) {
    const double value = pattern.input(r, index);
    sum += value;
    low = std::min(low, value);
    high = std::max(high, value);
  }
  std::vector<std::byte> one(8);
  switch (op) {
    case ReduceOp::sum:
      store_element(dtype, one.data(), 0, sum);
      break;
    case ReduceOp::avg:
      store_element(dtype, one.data(), 0, sum);
      scale_for_average(dtype, one.data(), 1, pattern.ranks());
      break;
    case ReduceOp::min:
      return low;
    case ReduceOp::max:
      return high;
  }
  return load_element(dtype, one.data(), 0);
}

TEST(CheckPattern, InputsAreSmallNonzeroIntegersAndPartialSumsStayExact) {
  for (const int p : kRankCounts) {
    for (const std::uint64_t generation : {0, 1, 2}) {
      const CheckPattern pattern(p, generation);
      for (std::uint64_t i = 0; i < 2000; ++i) {
        int partial_low = 0;
        int partial_high = 0;
        int sum = 0;
        for (int r = 0; r < p; ++r) {
          const int value = pattern.input(r, i);
          ASSERT_TRUE(value != 0 && std::abs(value) <= 4) << value;
          sum += value;
          partial_low = std::min(partial_low, sum);
          partial_high = std::max(partial_high, sum);
        }
        // Any subset's sum is bounded by the owners' 8 plus one per other rank.
        ASSERT_LE(std::max(-partial_low, partial_high), p + 6);
      }
    }
  }
}

TEST(CheckPattern, FillWritesInputAtGlobalIndices) {
  const CheckPattern pattern(5, 3);
  for (const DType dtype : kAllDTypes) {
    const std::size_t count = 257;
    const std::uint64_t first = 1'000'003;
    std::vector<std::byte> buffer(count * dtype_size(dtype));
    for (int rank = 0; rank < 5; ++rank) {
      pattern.fill(dtype, rank, first, buffer);
      for (std::size_t k = 0; k < count; ++k) {
        ASSERT_EQ(load_element(dtype, buffer.data(), k), pattern.input(rank, first + k))
            << to_string(dtype) << " rank " << rank << " k " << k;
      }
      EXPECT_EQ(pattern.check_input(dtype, rank, first, buffer).wrong, 0u);
      EXPECT_GT(pattern.check_input(dtype, (rank + 1) % 5, first, buffer).wrong, count / 4);
    }
  }
}

TEST(CheckPattern, ExpectedIsTheExactReductionAndTheCheckAcceptsIt) {
  for (const int p : kRankCounts) {
    const CheckPattern pattern(p, 7);
    for (const DType dtype : kAllDTypes) {
      for (const ReduceOp op : kAllReduceOps) {
        const std::size_t count = 600;
        const std::uint64_t first = 12345;
        std::vector<std::byte> output(count * dtype_size(dtype));
        for (std::size_t k = 0; k < count; ++k) {
          const double want = reference(pattern, dtype, op, first + k);
          ASSERT_EQ(pattern.expected(dtype, op, first + k), want)
              << "p=" << p << " " << to_string(dtype) << " " << to_string(op);
          store_element(dtype, output.data(), k, want);
        }
        const CheckResult result = pattern.check_reduced(dtype, op, first, output);
        EXPECT_EQ(result.checked, count);
        EXPECT_EQ(result.wrong, 0u) << result.first_mismatch;
      }
    }
  }
}

TEST(CheckPattern, EveryShiftOfTheSignTableDiffersInAThirdOfItsPositions) {
  const auto& table = CheckPattern::table();
  const int size = CheckPattern::kTableSize;
  for (int shift = 1; shift < size; ++shift) {
    int differ = 0;
    for (int j = 0; j < size; ++j) differ += table[j] != table[(j + shift) % size] ? 1 : 0;
    EXPECT_GE(differ, size / 3) << "shift " << shift;
  }
}

TEST(CheckPattern, MinAndMaxHaveUniqueOwnersGoingRoundTheRanks) {
  for (const int p : kRankCounts) {
    if (p == 1) continue;
    const CheckPattern pattern(p, 2);
    // Any p consecutive elements: every rank the unique max holder once and
    // the unique min holder once.
    const std::uint64_t first = 998;
    std::vector<int> max_owned(static_cast<std::size_t>(p));
    std::vector<int> min_owned(static_cast<std::size_t>(p));
    for (std::uint64_t i = first; i < first + static_cast<std::uint64_t>(p); ++i) {
      std::vector<int> values;
      for (int r = 0; r < p; ++r) values.push_back(pattern.input(r, i));
      const auto high = std::max_element(values.begin(), values.end());
      const auto low = std::min_element(values.begin(), values.end());
      ASSERT_EQ(std::count(values.begin(), values.end(), *high), 1);
      ASSERT_EQ(std::count(values.begin(), values.end(), *low), 1);
      ++max_owned[static_cast<std::size_t>(high - values.begin())];
      ++min_owned[static_cast<std::size_t>(low - values.begin())];
    }
    EXPECT_EQ(std::count(max_owned.begin(), max_owned.end(), 1), p);
    EXPECT_EQ(std::count(min_owned.begin(), min_owned.end(), 1), p);
  }
}

TEST(CheckPattern, RanksElementsAndGenerationsAreDistinct) {
  const int p = 64;
  const std::size_t count = 1000;
  const CheckPattern pattern(p, 1);
  const CheckPattern next(p, 2);
  // Every pair of ranks differs at a good share of the elements.
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      std::size_t differ = 0;
      for (std::uint64_t i = 0; i < count; ++i) {
        differ += pattern.input(a, i) != pattern.input(b, i) ? 1 : 0;
      }
      ASSERT_GT(differ, count / 4) << a << " vs " << b;
    }
  }
  // Neighbouring elements, elements a block apart and the previous
  // generation's sums differ at most elements.
  std::size_t neighbour = 0;
  std::size_t block_apart = 0;
  std::size_t generation = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const double sum = pattern.expected(DType::f32, ReduceOp::sum, i);
    neighbour += sum != pattern.expected(DType::f32, ReduceOp::sum, i + 1) ? 1 : 0;
    block_apart += sum != pattern.expected(DType::f32, ReduceOp::sum, i + 64) ? 1 : 0;
    generation += sum != next.expected(DType::f32, ReduceOp::sum, i) ? 1 : 0;
  }
  EXPECT_GT(neighbour, count * 3 / 4);
  EXPECT_GT(block_apart, count * 3 / 4);
  EXPECT_GT(generation, count * 3 / 4);
  // No period in the element index for any rank.
  std::set<std::vector<int>> windows;
  for (std::uint64_t start = 0; start < 64; ++start) {
    std::vector<int> window;
    for (std::uint64_t i = start; i < start + 16; ++i) window.push_back(pattern.input(5, i));
    windows.insert(window);
  }
  EXPECT_EQ(windows.size(), 64u);
}

TEST(CheckPattern, CountsEveryWrongElementAndNamesTheFirst) {
  const CheckPattern pattern(4, 1);
  for (const DType dtype : kAllDTypes) {
    for (const ReduceOp op : kAllReduceOps) {
      const std::size_t count = 100;
      std::vector<std::byte> output(count * dtype_size(dtype));
      for (std::size_t k = 0; k < count; ++k) {
        store_element(dtype, output.data(), k, pattern.expected(dtype, op, 50 + k));
      }
      for (const std::size_t k : {3, 17, 99}) {
        store_element(dtype, output.data(), k, load_element(dtype, output.data(), k) + 1);
      }
      const CheckResult result = pattern.check_reduced(dtype, op, 50, output);
      EXPECT_EQ(result.wrong, 3u) << to_string(dtype) << " " << to_string(op);
      EXPECT_EQ(result.first_mismatch.rfind("element 53: got ", 0), 0u) << result.first_mismatch;
    }
  }
  // An output nobody wrote is NaN everywhere: all wrong.
  std::vector<std::byte> untouched(10 * sizeof(float));
  poison(untouched);
  const CheckResult result = pattern.check_reduced(DType::f32, ReduceOp::sum, 0, untouched);
  EXPECT_EQ(result.wrong, 10u);
  EXPECT_NE(result.first_mismatch.find("got -nan"), std::string::npos) << result.first_mismatch;
}

TEST(CheckPattern, PastTheExactRankCountsRoundingIsAllowed) {
  // bf16 sums stop being exact past 250 ranks: a reduction that rounds at
  // every step must still pass.
  const int p = 300;
  const CheckPattern pattern(p, 1);
  const std::size_t count = 300;
  for (const ReduceOp op : kAllReduceOps) {
    std::vector<std::byte> result(count * 2);
    std::vector<std::byte> input(result.size());
    pattern.fill(DType::bf16, 0, 0, result);
    for (int r = 1; r < p; ++r) {
      pattern.fill(DType::bf16, r, 0, input);
      reduce_inplace(DType::bf16, op, result.data(), input.data(), count);
    }
    if (op == ReduceOp::avg) scale_for_average(DType::bf16, result.data(), count, p);
    const CheckResult result_check = pattern.check_reduced(DType::bf16, op, 0, result);
    EXPECT_EQ(result_check.wrong, 0u) << to_string(op) << ": " << result_check.first_mismatch;
  }
}

TEST(CheckPattern, TwoRanksCombinedByOneKernelCall) {
  // The harness's local/reduce check: dst and src are ranks 0 and 1, and
  // one reduce_inplace combines avg like sum.
  const CheckPattern pattern(2, 1);
  for (const DType dtype : kAllDTypes) {
    for (const ReduceOp op : kAllReduceOps) {
      const std::size_t count = 1000;
      std::vector<std::byte> dst(count * dtype_size(dtype));
      std::vector<std::byte> src(dst.size());
      pattern.fill(dtype, 0, 0, dst);
      pattern.fill(dtype, 1, 0, src);
      const ReduceOp combine = op == ReduceOp::avg ? ReduceOp::sum : op;
      // Unreduced, dst is rank 0's input: wrong wherever rank 1 changes the
      // result (everywhere for sum; where rank 1 owns the extreme, half).
      EXPECT_GE(pattern.check_reduced(dtype, combine, 0, dst).wrong, count / 2);
      reduce_inplace(dtype, op, dst.data(), src.data(), count);
      EXPECT_EQ(pattern.check_reduced(dtype, combine, 0, dst).wrong, 0u)
          << to_string(dtype) << " " << to_string(op);
    }
  }
}

}  // namespace
}  // namespace collbench
