// Memory registration, for providers that require FI_MR_LOCAL (verbs, efa)
// or when forced: regions are registered when an algorithm is built, and a
// send or receive looks its buffer's descriptor up.
#include <algorithm>

#include "ofi_state.h"

namespace collbench {

void* OfiTransport::State::lookup_desc(const std::byte* data, std::size_t length) const {
  if (!registration_required || length == 0) return nullptr;
  // The region that starts last at or before `data` is usually the one;
  // walk back over earlier ones only if regions overlap.
  auto it = std::upper_bound(regions.begin(), regions.end(), data,
                             [](const std::byte* p, const Region& r) { return p < r.begin; });
  while (it != regions.begin()) {
    --it;
    if (data >= it->begin && data + length <= it->end) return it->desc;
  }
  throw std::runtime_error(fmt::format(
      "OFI transport (provider {}): buffer {} of {} bytes is not registered; the provider needs "
      "memory registration ({}): call register_memory() on it when the algorithm is built",
      info->fabric_attr->prov_name, static_cast<const void*>(data), length,
      options.force_memory_registration ? "forced" : "FI_MR_LOCAL"));
}

void OfiTransport::State::register_region(std::span<std::byte> region) {
  if (!registration_required || region.empty()) return;
  std::byte* begin = region.data();
  std::byte* end = begin + region.size();
  auto it = std::lower_bound(regions.begin(), regions.end(), begin,
                             [](const Region& r, const std::byte* p) { return r.begin < p; });
  for (auto same = it; same != regions.end() && same->begin == begin; ++same) {
    if (same->end == end) {
      ++same->references;
      return;
    }
  }
  fid_mr* mr = nullptr;
  // Local access only: nothing here is ever the target of RMA. The key
  // matters only when the provider does not choose it (no FI_MR_PROV_KEY).
  const std::uint64_t key = next_mr_key++;
  check_fi(fi_mr_reg(domain, begin, region.size(), FI_SEND | FI_RECV, 0, key, 0, &mr, nullptr),
           "fi_mr_reg", fmt::format("{} bytes at {}", region.size(), static_cast<void*>(begin)));
  if ((info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0) {
    try {
      check_fi(fi_mr_bind(mr, &ep->fid, 0), "fi_mr_bind");
      check_fi(fi_mr_enable(mr), "fi_mr_enable");
    } catch (...) {
      fi_close(&mr->fid);
      throw;
    }
  }
  regions.insert(it, Region{begin, end, mr, fi_mr_desc(mr), 1});
}

void OfiTransport::State::deregister_region(std::span<std::byte> region) {
  if (!registration_required || region.empty()) return;
  std::byte* begin = region.data();
  std::byte* end = begin + region.size();
  auto it = std::find_if(regions.begin(), regions.end(),
                         [&](const Region& r) { return r.begin == begin && r.end == end; });
  if (it == regions.end()) {
    throw std::invalid_argument(
        fmt::format("deregister_memory: {} bytes at {} were never registered", region.size(),
                    static_cast<void*>(begin)));
  }
  if (--it->references > 0) return;
  check_fi(fi_close(&it->mr->fid), "fi_close", "memory region");
  regions.erase(it);
}

void OfiTransport::register_memory(std::span<std::byte> region) { state_->register_region(region); }

void OfiTransport::deregister_memory(std::span<std::byte> region) {
  state_->deregister_region(region);
}

}  // namespace collbench
