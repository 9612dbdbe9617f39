#include "collbench/core/malloc_name.h"

#include <dlfcn.h>

#include <cstddef>

namespace collbench {

std::string malloc_name() {
  // jemalloc's control interface; glibc has no such symbol.
  using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  const auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  if (mallctl == nullptr) return "glibc";
  const char* version = nullptr;
  std::size_t length = sizeof(version);
  if (mallctl("version", &version, &length, nullptr, 0) != 0 || version == nullptr) {
    return "jemalloc";
  }
  return std::string("jemalloc ") + version;
}

}  // namespace collbench
