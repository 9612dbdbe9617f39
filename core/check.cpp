// Check inputs and exact expected results; the scheme and why it catches
// what it must are in check.h.
#include "collbench/core/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace collbench {
namespace {

constexpr std::uint64_t kTableMask = CheckPattern::kTableSize - 1;
// Non-owner values are ±1 and the owners' are at most 4 in magnitude.
constexpr int kMaxValue = 4;

// 2, 3 or 4 from 24 bits of a hash, by multiply-and-shift instead of a modulo.
inline int two_to_four(std::uint64_t bits24) { return 2 + static_cast<int>((bits24 * 3) >> 24); }

std::array<int, CheckPattern::kTableSize> make_table() {
  std::array<int, CheckPattern::kTableSize> table{};
  for (std::size_t j = 0; j < table.size(); ++j) {
    table[j] = (mix64(j + 0x7AB1E) >> 63) != 0 ? 1 : -1;
  }
  return table;
}

std::size_t element_count(DType dtype, std::size_t bytes) {
  const std::size_t element_bytes = dtype_size(dtype);
  if (bytes % element_bytes != 0) {
    throw std::invalid_argument(
        fmt::format("{} bytes is not a whole number of {} elements ({} bytes each)", bytes,
                    to_string(dtype), element_bytes));
  }
  return bytes / element_bytes;
}

// Unit roundoff (half an ulp at 1.0) of each dtype.
double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return std::ldexp(1.0, -53);
    case DType::f32:
      return std::ldexp(1.0, -24);
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::bf16:
      return std::ldexp(1.0, -8);
  }
  return 0;
}

// Rounds like storing into `dtype` and reading back. For avg this is the
// correctly rounded quotient: double's 53 bits are enough for the rounding to
// f32 (or through f32 to f16/bf16) after it to be innocuous.
double round_to(DType dtype, double value) {
  std::array<std::byte, 8> scratch{};
  store_element(dtype, scratch.data(), 0, value);
  return load_element(dtype, scratch.data(), 0);
}

// Every value of `values` as the bits of a `Word`-sized element of `dtype`.
template <typename Word>
std::vector<Word> encode_all(DType dtype, const std::vector<double>& values) {
  std::vector<Word> encoded(values.size());
  for (std::size_t k = 0; k < values.size(); ++k) {
    std::array<std::byte, 8> bytes{};
    store_element(dtype, bytes.data(), 0, values[k]);
    std::memcpy(&encoded[k], bytes.data(), sizeof(Word));
  }
  return encoded;
}

// Calls body.template operator()<Word>() with the unsigned integer type of
// dtype's size, so that the loops move whole elements of a known size.
template <typename Body>
auto with_word(DType dtype, Body&& body) {
  switch (dtype_size(dtype)) {
    case 2:
      return body.template operator()<std::uint16_t>();
    case 4:
      return body.template operator()<std::uint32_t>();
    default:
      return body.template operator()<std::uint64_t>();
  }
}

// The hash-derived parts of one element: everything but a rank's own value.
struct Element {
  int window;     // s: the table position of rank 0
  int max_value;  // M
  int min_value;  // m (the min owner holds −m)
};

inline Element element_of(std::uint64_t index, std::uint64_t salt) {
  const std::uint64_t h = mix64(index ^ salt);
  return {static_cast<int>(h & kTableMask), two_to_four((h >> 16) & 0xFFFFFF),
          two_to_four(h >> 40)};
}

std::vector<double> all_values() {
  std::vector<double> values;
  for (int v = -kMaxValue; v <= kMaxValue; ++v) values.push_back(v);
  return values;
}

}  // namespace

const std::array<int, CheckPattern::kTableSize>& CheckPattern::table() {
  static const std::array<int, kTableSize> table = make_table();
  return table;
}

CheckPattern::CheckPattern(int ranks, std::uint64_t generation)
    : ranks_(ranks), generation_(generation), salt_(mix64(generation ^ 0xC0111B5ECULL)) {
  if (ranks < 1) throw std::invalid_argument(fmt::format("check of {} ranks", ranks));
  const std::uint64_t owners = mix64(salt_);
  max_owner_offset_ = static_cast<int>(owners % static_cast<std::uint64_t>(ranks));
  min_owner_step_ =
      ranks > 1 ? 1 + static_cast<int>((owners >> 32) % static_cast<std::uint64_t>(ranks - 1)) : 0;
  const auto& t = table();
  for (int s = 0; s < kTableSize; ++s) {
    int sum = 0;
    for (int r = 0; r < ranks; ++r) sum += t[(static_cast<std::uint64_t>(s + r)) & kTableMask];
    window_sum_[static_cast<std::size_t>(s)] = sum;
  }
}

namespace {

// Walks the max and min owners along consecutive elements without a modulo
// per element (min_owner −1 at one rank, where there is none).
struct Owners {
  int max_owner;
  int min_owner;
  int ranks;
  void advance() {
    if (++max_owner == ranks) max_owner = 0;
    if (min_owner >= 0 && ++min_owner == ranks) min_owner = 0;
  }
};

// M raised to the next of 2, 3, 4 (4 wraps to 2) where the sum over every
// rank would otherwise be 0, so that no element's sum is 0 (one value of M
// at most gives 0): an output of zeros, or a block never written after a
// zeroed buffer, is then wrong at every element for sum and avg, even in a
// reduce_scatter block of a few elements. `window_sum` is the table's sum
// over every rank's position (each counted as a non-owner).
inline Element with_nonzero_sum(Element e, const Owners& owners, const int* window_sum,
                                const int* t) {
  int others = window_sum[e.window] -
               t[static_cast<std::uint64_t>(owners.max_owner + e.window) & kTableMask];
  if (owners.min_owner >= 0) {
    others -= e.min_value + t[static_cast<std::uint64_t>(owners.min_owner + e.window) & kTableMask];
  }
  if (e.max_value + others == 0) e.max_value = e.max_value == kMaxValue ? 2 : e.max_value + 1;
  return e;
}

}  // namespace

int CheckPattern::input(int rank, std::uint64_t index) const {
  const auto p = static_cast<std::uint64_t>(ranks_);
  const int max_owner =
      static_cast<int>((index % p + static_cast<std::uint64_t>(max_owner_offset_)) % p);
  const int min_owner = ranks_ > 1 ? (max_owner + min_owner_step_) % ranks_ : -1;
  const Element e = with_nonzero_sum(element_of(index, salt_), {max_owner, min_owner, ranks_},
                                     window_sum_.data(), table().data());
  if (rank == max_owner) return e.max_value;
  if (rank == min_owner) return -e.min_value;
  return table()[(static_cast<std::uint64_t>(rank + e.window)) & kTableMask];
}

void CheckPattern::fill(DType dtype, int rank, std::uint64_t first,
                        std::span<std::byte> buffer) const {
  const std::size_t count = element_count(dtype, buffer.size());
  const auto p = static_cast<std::uint64_t>(ranks_);
  const int start =
      static_cast<int>((first % p + static_cast<std::uint64_t>(max_owner_offset_)) % p);
  Owners owners{start, ranks_ > 1 ? (start + min_owner_step_) % ranks_ : -1, ranks_};
  const auto& t = table();
  with_word(dtype, [&]<typename Word>() {
    // Every value encoded once, indexed by value + kMaxValue.
    const std::vector<Word> encoded = encode_all<Word>(dtype, all_values());
    // Locals, not captures: stores through std::byte may alias anything the
    // loop reads through a reference, which would reload it every element.
    const Word* codes = encoded.data();
    const int* signs = t.data();
    const int* window_sum = window_sum_.data();
    const std::uint64_t salt = salt_;
    Owners walk = owners;
    std::byte* out = buffer.data();
    for (std::size_t k = 0; k < count; ++k, walk.advance()) {
      const Element e = with_nonzero_sum(element_of(first + k, salt), walk, window_sum, signs);
      int value;
      if (rank == walk.max_owner) {
        value = e.max_value;
      } else if (rank == walk.min_owner) {
        value = -e.min_value;
      } else {
        value = signs[static_cast<std::uint64_t>(rank + e.window) & kTableMask];
      }
      std::memcpy(out + k * sizeof(Word), &codes[value + kMaxValue], sizeof(Word));
    }
  });
}

// Compares element by element with values[key(element, owners) + bias]. The
// common case, an element whose bits equal the expected encoding, costs one
// integer compare; only a differing element is decoded and compared with the
// tolerance (zero wherever the expected value is exact).
template <typename Key>
CheckResult CheckPattern::compare(DType dtype, std::uint64_t first,
                                  std::span<const std::byte> output,
                                  const std::vector<double>& values, int bias, double tolerance,
                                  Key key) const {
  CheckResult result;
  const std::size_t count = element_count(dtype, output.size());
  result.checked = count;
  const auto p = static_cast<std::uint64_t>(ranks_);
  const int start =
      static_cast<int>((first % p + static_cast<std::uint64_t>(max_owner_offset_)) % p);
  Owners owners{start, ranks_ > 1 ? (start + min_owner_step_) % ranks_ : -1, ranks_};
  const std::byte* data = output.data();
  with_word(dtype, [&]<typename Word>() {
    const std::vector<Word> encoded = encode_all<Word>(dtype, values);
    const Word* codes = encoded.data();
    const int* window_sum = window_sum_.data();
    const int* signs = table().data();
    const std::uint64_t salt = salt_;
    Owners walk = owners;
    for (std::size_t k = 0; k < count; ++k, walk.advance()) {
      const Element e = with_nonzero_sum(element_of(first + k, salt), walk, window_sum, signs);
      const auto slot = static_cast<std::size_t>(key(e, walk) + bias);
      Word got_bits;
      std::memcpy(&got_bits, data + k * sizeof(Word), sizeof(Word));
      if (got_bits == codes[slot]) continue;
      const double want = values[slot];
      const double got = load_element(dtype, data, k);
      if (!std::isnan(got) && std::fabs(got - want) <= tolerance) continue;
      if (result.wrong == 0) {
        result.first_mismatch =
            fmt::format("element {}: got {}, expected {}", first + k, got, want);
      }
      ++result.wrong;
    }
  });
  return result;
}

double CheckPattern::expected(DType dtype, ReduceOp op, std::uint64_t index) const {
  double sum = 0;
  int lowest = input(0, index);
  int highest = lowest;
  for (int r = 0; r < ranks_; ++r) {
    const int value = input(r, index);
    sum += value;
    lowest = std::min(lowest, value);
    highest = std::max(highest, value);
  }
  switch (op) {
    case ReduceOp::max:
      return highest;
    case ReduceOp::min:
      return lowest;
    case ReduceOp::sum:
    case ReduceOp::avg:
      break;
  }
  return round_to(dtype, op == ReduceOp::avg ? sum / ranks_ : sum);
}

CheckResult CheckPattern::check_reduced(DType dtype, ReduceOp op, std::uint64_t first,
                                        std::span<const std::byte> output) const {
  if (op == ReduceOp::min || op == ReduceOp::max) {
    // Indexed by the extreme value + kMaxValue.
    const std::vector<double> values = all_values();
    const bool min = op == ReduceOp::min && ranks_ > 1;
    return compare(
        dtype, first, output, values, kMaxValue, 0.0,
        [min](const Element& e, const Owners&) { return min ? -e.min_value : e.max_value; });
  }
  // Indexed by the exact sum + bias: |every partial sum| <= bias = p + 6
  // (two owners of at most kMaxValue, p − 2 others of 1).
  const int bias = ranks_ - 2 + 2 * kMaxValue;
  const double p = ranks_;
  std::vector<double> values;
  for (int sum = -bias; sum <= bias; ++sum) {
    values.push_back(round_to(dtype, op == ReduceOp::avg ? sum / p : sum));
  }
  // Past the dtype's exact integers each of the p − 1 additions may round by
  // one unit roundoff of a partial sum of magnitude <= p + 6; avg's division
  // rounds once more, by at most an ulp of |avg| <= 4.
  const double u = unit_roundoff(dtype);
  double tolerance = 0;
  if (bias > 1.0 / u) {
    tolerance = (p - 1) * u * bias;
    if (op == ReduceOp::avg) tolerance = tolerance / p + 2 * u * kMaxValue;
  }
  const int* t = table().data();
  const int min_weight = ranks_ > 1 ? 1 : 0;
  const int* window_sum = window_sum_.data();
  return compare(dtype, first, output, values, bias, tolerance,
                 [t, window_sum, min_weight](const Element& e, const Owners& owners) {
                   // The window sum counts every rank as a non-owner: swap the
                   // owners' table values for their ±M, ±m.
                   int sum =
                       window_sum[e.window] + e.max_value -
                       t[static_cast<std::uint64_t>(owners.max_owner + e.window) & kTableMask];
                   if (min_weight != 0) {
                     sum -= e.min_value +
                            t[static_cast<std::uint64_t>(owners.min_owner + e.window) & kTableMask];
                   }
                   return sum;
                 });
}

CheckResult CheckPattern::check_input(DType dtype, int rank, std::uint64_t first,
                                      std::span<const std::byte> output) const {
  if (rank < 0 || rank >= ranks_) {
    throw std::invalid_argument(fmt::format("input of rank {} of {}", rank, ranks_));
  }
  const int* t = table().data();
  return compare(dtype, first, output, all_values(), kMaxValue, 0.0,
                 [rank, t](const Element& e, const Owners& owners) {
                   if (rank == owners.max_owner) return e.max_value;
                   if (rank == owners.min_owner) return -e.min_value;
                   return t[static_cast<std::uint64_t>(rank + e.window) & kTableMask];
                 });
}

void poison(std::span<std::byte> buffer) {
  // memset's pointer must not be null, even for no bytes (an empty vector's).
  if (!buffer.empty()) std::memset(buffer.data(), 0xFF, buffer.size());
}

}  // namespace collbench
