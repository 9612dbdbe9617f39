// The table of families; see family_registry.h.
//
// A table rather than static registrars in each file: the harness is a
// static library, whose linker drops an object file nothing refers to
// (a registrar there would never run), and the order of the cases, which
// the CSV and the tests see, is the table's order here rather than the
// link order.
#include "family_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collbench/collectives/collective.h"
#include "options.h"

namespace collbench::harness {

// Each defined in its family's file.
extern const FamilyEntry kCollectiveFamilies;
extern const FamilyEntry kP2pFamilies;
extern const FamilyEntry kLocalFamilies;
extern const FamilyEntry kGemmFamily;
extern const FamilyEntry kTrainFamily;
extern const FamilyEntry kBarrierFamily;

namespace {

constexpr const FamilyEntry* kFamilies[] = {
    &kCollectiveFamilies,  // collective_family.cpp
    &kP2pFamilies,         // p2p_family.cpp
    &kLocalFamilies,       // local_family.cpp
    &kGemmFamily,          // gemm_family.cpp
    &kTrainFamily,         // train_family.cpp
    &kBarrierFamily,       // barrier_family.cpp
};

}  // namespace

std::span<const FamilyEntry* const> family_entries() { return kFamilies; }

std::vector<FamilyName> family_names() {
  std::vector<FamilyName> names;
  for (const FamilyEntry* entry : kFamilies) {
    const std::vector<FamilyName> own = entry->names();
    names.insert(names.end(), own.begin(), own.end());
  }
  return names;
}

const FamilyName* find_family_name(std::string_view name) {
  // The names are views of constants: a copy of the entry outlives the vector.
  static const std::vector<FamilyName> names = family_names();
  const auto found = std::find_if(names.begin(), names.end(),
                                  [&](const FamilyName& family) { return family.name == name; });
  return found == names.end() ? nullptr : &*found;
}

std::string accepted_family_names() {
  std::vector<std::string_view> names;
  for (const FamilyName& family : family_names()) names.push_back(family.name);
  names.push_back(kAllCollectivesFamily);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string default_families() {
  std::vector<std::string_view> names;
  for (const FamilyName& family : family_names()) {
    if (family.in_default_list) names.push_back(family.name);
  }
  return fmt::format("{}", fmt::join(names, ","));
}

std::vector<std::string> select_families(const std::vector<std::string>& listed) {
  std::vector<std::string> selected;
  const auto add = [&](std::string_view name) {
    if (std::find(selected.begin(), selected.end(), name) == selected.end()) {
      selected.emplace_back(name);
    }
  };
  for (const std::string& name : listed) {
    if (name == kAllCollectivesFamily) {
      for (const CollectiveInfo& collective : collectives()) add(collective.name);
      continue;
    }
    if (find_family_name(name) == nullptr) {
      throw UsageError(fmt::format("unknown family '{}' in --families; accepted: {}", name,
                                   accepted_family_names()));
    }
    add(name);
  }
  if (selected.empty()) {
    throw UsageError(fmt::format("--families is empty; accepted: {}", accepted_family_names()));
  }
  return selected;
}

bool selects_mpi_off_the_main_thread(const std::vector<std::string>& listed) {
  std::vector<std::string> selected;
  try {
    selected = select_families(listed);
  } catch (const UsageError&) {
    return false;
  }
  for (const FamilyEntry* entry : family_entries()) {
    if (!entry->calls_mpi_off_the_main_thread) continue;
    for (const FamilyName& name : entry->names()) {
      if (std::find(selected.begin(), selected.end(), name.name) != selected.end()) return true;
    }
  }
  return false;
}

std::string families_flag_help() {
  std::vector<std::string> defaults;
  std::vector<std::string_view> others;
  for (const FamilyName& family : family_names()) {
    if (!family.in_default_list) {
      others.push_back(family.name);
    } else if (family.condition.empty()) {
      defaults.emplace_back(family.name);
    } else {
      defaults.push_back(fmt::format("{} ({})", family.name, family.condition));
    }
  }
  return fmt::format(
      "Comma-separated benchmark families to register (default: {}; also {}; '{}' names every "
      "collective)",
      fmt::join(defaults, ","), fmt::join(others, ", "), kAllCollectivesFamily);
}

std::string benchmark_names_help() {
  std::string text;
  for (const FamilyEntry* entry : kFamilies) text += entry->help;
  return text;
}

}  // namespace collbench::harness
