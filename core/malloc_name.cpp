#include "collbench/core/malloc_name.h"

#include <dlfcn.h>

#include <cstddef>
#include <string_view>

namespace collbench {

std::string malloc_name() {
  // The malloc that runs is the first `malloc` in the lookup order, and an
  // LD_PRELOAD (tcmalloc, or libc itself) puts its own ahead of a linked
  // jemalloc, whose mallctl is still found then: so jemalloc only when
  // mallctl comes from the object that `malloc` comes from.
  Dl_info running{};
  void* const malloc_symbol = dlsym(RTLD_DEFAULT, "malloc");
  if (malloc_symbol == nullptr || dladdr(malloc_symbol, &running) == 0 ||
      running.dli_fname == nullptr) {
    return "unknown";
  }
  using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  const auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  Dl_info control{};
  if (mallctl != nullptr && dladdr(reinterpret_cast<void*>(mallctl), &control) != 0 &&
      control.dli_fbase == running.dli_fbase) {
    const char* version = nullptr;
    std::size_t length = sizeof(version);
    if (mallctl("version", &version, &length, nullptr, 0) != 0 || version == nullptr) {
      return "jemalloc";
    }
    return std::string("jemalloc ") + version;
  }
  const std::string_view file = running.dli_fname;
  const std::string_view name = file.substr(file.rfind('/') + 1);
  return name.starts_with("libc.so") ? "glibc" : std::string(name);
}

}  // namespace collbench
