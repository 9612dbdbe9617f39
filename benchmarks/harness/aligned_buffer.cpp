#include "aligned_buffer.h"

#include <fmt/format.h>

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

void AlignedBuffer::Free::operator()(std::byte* pointer) const { std::free(pointer); }

}  // namespace collbench::harness
