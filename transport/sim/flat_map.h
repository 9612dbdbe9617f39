// A hash map from 64-bit keys to small values in one array (open
// addressing, linear probing), for the sim transport's matching state: its
// unmatched queues and its lanes, one lookup per message each.
//
// Why not std::unordered_map: a node per entry (an allocation, a cache miss
// per lookup) and the key modulo a prime as its hash. collbench's keys are
// ranks and tags at fixed bit offsets, and a prime that divides 2^16 ± 1 or
// 2^32 + 1 (257, 641) put every key of a ring in one bucket: at p = 256,
// ring allreduce walked 127 nodes per message. Here the hash multiplies by
// a 64-bit odd constant and keeps the top bits (Fibonacci hashing), which
// mixes every bit of the key into the slot.
//
// A pointer to a value stays valid until the next try_emplace or erase.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace collbench::sim {

template <typename Value>
class FlatMap {
 public:
  // The value at `key`, and true if it was absent and is now `fresh`.
  std::pair<Value*, bool> try_emplace(std::uint64_t key, const Value& fresh) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t at = home(key);
    while (slots_[at].key != kEmpty) {
      if (slots_[at].key == key) return {&slots_[at].value, false};
      at = next(at);
    }
    slots_[at] = Slot{key, fresh};
    ++size_;
    return {&slots_[at].value, true};
  }

  Value* find(std::uint64_t key) {
    if (slots_.empty()) return nullptr;
    for (std::size_t at = home(key); slots_[at].key != kEmpty; at = next(at)) {
      if (slots_[at].key == key) return &slots_[at].value;
    }
    return nullptr;
  }

  // Removes `key`'s entry, which must be present.
  void erase(std::uint64_t key) {
    std::size_t hole = home(key);
    while (slots_[hole].key != key) hole = next(hole);
    // Backward shift: each later entry of the run that may move to the
    // hole (its home is not inside (hole, at]) does, so that every entry
    // stays reachable from its home without tombstones.
    for (std::size_t at = next(hole); slots_[at].key != kEmpty; at = next(at)) {
      const std::size_t wanted = home(slots_[at].key);
      const bool wanted_after_hole = ((wanted - hole - 1) & mask()) < ((at - hole) & mask());
      if (wanted_after_hole) continue;
      slots_[hole] = slots_[at];
      hole = at;
    }
    slots_[hole].key = kEmpty;
    --size_;
  }

  std::size_t size() const { return size_; }

  void clear() {
    slots_.clear();
    size_ = 0;
  }

 private:
  // No key is all ones: ranks and tags are far below their fields' width.
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  struct Slot {
    std::uint64_t key = kEmpty;
    Value value{};
  };

  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t next(std::size_t at) const { return (at + 1) & mask(); }
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }

  // Keeps the table at most half full, its size a power of two.
  void grow() {
    std::vector<Slot> old(slots_.empty() ? 16 : 2 * slots_.size());
    old.swap(slots_);
    shift_ = 64 - std::countr_zero(slots_.size());
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.key != kEmpty) try_emplace(slot.key, slot.value);
    }
  }

  std::vector<Slot> slots_;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace collbench::sim
