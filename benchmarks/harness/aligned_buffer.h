// The buffers every family's benchmarks run on.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace collbench::harness {

// Buffers start on cache-line (and AVX-512 vector) boundaries, so that a
// size's timing does not depend on where malloc happened to put it.
inline constexpr std::size_t kBufferAlignment = 64;

// A zero-filled, aligned buffer whose pages are touched at allocation, so
// that no page fault lands in a timed call.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Throws std::runtime_error when `bytes` cannot be allocated.
  explicit AlignedBuffer(std::size_t bytes);
  // Address space that is never backed until written, for size-only
  // simulation (--no-payload), where no byte of a buffer is read or
  // written: p·n need not fit in memory. Page-aligned.
  static AlignedBuffer untouched(std::size_t bytes);
  std::span<std::byte> span() const { return {data_.get(), size_}; }
  std::byte* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct Free {
    Free() noexcept : mapped(0) {}
    explicit Free(std::size_t bytes) noexcept : mapped(bytes) {}
    std::size_t mapped;  // > 0: an untouched mapping of this many bytes
    void operator()(std::byte* pointer) const;
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace collbench::harness
