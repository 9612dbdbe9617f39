#include "aligned_buffer.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "collbench/catalog/sizes.h"

namespace collbench::harness {

AlignedBuffer::AlignedBuffer(std::size_t bytes) : size_(bytes) {
  const std::size_t padded = saturating_add(bytes, kBufferAlignment - 1);
  const std::size_t rounded =
      std::max<std::size_t>(kBufferAlignment, padded / kBufferAlignment * kBufferAlignment);
  // A size that rounding would wrap is refused here, not allocated small.
  if (padded != kSaturatedBytes) {
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(kBufferAlignment, rounded)));
  }
  if (!data_) {
    throw std::runtime_error(
        fmt::format("cannot allocate a {}-byte buffer ({})", bytes, format_bytes(bytes)));
  }
  std::memset(data_.get(), 0, rounded);
}

AlignedBuffer AlignedBuffer::untouched(std::size_t bytes) {
  AlignedBuffer buffer;
  buffer.size_ = bytes;
  const std::size_t mapped = std::max<std::size_t>(bytes, 1);
  void* data = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (data == MAP_FAILED) {
    throw std::runtime_error(fmt::format("cannot map {} of address space", format_bytes(bytes)));
  }
  buffer.data_ = std::unique_ptr<std::byte, Free>(static_cast<std::byte*>(data), Free{mapped});
  return buffer;
}

void AlignedBuffer::Free::operator()(std::byte* pointer) const {
  if (mapped > 0) {
    munmap(pointer, mapped);
  } else {
    std::free(pointer);
  }
}

}  // namespace collbench::harness
