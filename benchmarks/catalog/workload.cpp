// Workload specs and gradient bucketing (see include/collbench/catalog/workload.h).
#include "collbench/catalog/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "collbench/catalog/sizes.h"

namespace collbench {

std::string_view to_string(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::tensors:
      return "tensors";
    case WorkloadKind::total:
      return "total";
    case WorkloadKind::ddp:
      return "ddp";
    case WorkloadKind::fusion:
      return "fusion";
    case WorkloadKind::deepbench:
      return "deepbench";
  }
  return "unknown";
}

namespace {

void require_positive(std::size_t element_bytes, std::uint64_t cap_bytes, std::string_view what) {
  if (element_bytes == 0) {
    throw std::invalid_argument(fmt::format("{}: the element size must be at least 1 byte", what));
  }
  if (cap_bytes == 0) {
    throw std::invalid_argument(fmt::format("{}: the bucket cap must be at least 1 byte", what));
  }
}

void add_tensor(Bucket& bucket, std::size_t index, const ParamTensor& tensor,
                std::size_t element_bytes) {
  if (bucket.tensor_count == 0) bucket.first_tensor = index;
  ++bucket.tensor_count;
  bucket.elements += static_cast<std::uint64_t>(tensor.elements);
  bucket.bytes += tensor.bytes(element_bytes);
}

}  // namespace

std::vector<Bucket> ddp_buckets(const Model& model, std::size_t element_bytes,
                                std::uint64_t cap_bytes, std::uint64_t first_cap_bytes) {
  require_positive(element_bytes, cap_bytes, "ddp_buckets");
  require_positive(element_bytes, first_cap_bytes, "ddp_buckets (first bucket)");
  std::vector<Bucket> buckets;
  Bucket open{.cap_bytes = first_cap_bytes};
  const auto& tensors = model.tensors_backprop_order;
  for (std::size_t index = 0; index < tensors.size(); ++index) {
    add_tensor(open, index, tensors[index], element_bytes);
    // torch closes on reaching the cap, after adding, so the closing tensor
    // stays in the bucket it filled.
    if (open.bytes >= open.cap_bytes) {
      buckets.push_back(open);
      open = Bucket{.cap_bytes = cap_bytes};
    }
  }
  if (open.tensor_count > 0) buckets.push_back(open);
  return buckets;
}

std::vector<Bucket> fusion_buckets(const Model& model, std::size_t element_bytes,
                                   std::uint64_t cap_bytes) {
  require_positive(element_bytes, cap_bytes, "fusion_buckets");
  std::vector<Bucket> buckets;
  Bucket open{.cap_bytes = cap_bytes};
  const auto& tensors = model.tensors_backprop_order;
  for (std::size_t index = 0; index < tensors.size(); ++index) {
    const std::uint64_t tensor_bytes = tensors[index].bytes(element_bytes);
    if (open.tensor_count > 0 && open.bytes + tensor_bytes > cap_bytes) {
      buckets.push_back(open);
      open = Bucket{.cap_bytes = cap_bytes};
    }
    add_tensor(open, index, tensors[index], element_bytes);
  }
  if (open.tensor_count > 0) buckets.push_back(open);
  return buckets;
}

namespace {

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

[[noreturn]] void fail_spec(std::string_view spec, std::string_view reason) {
  throw std::invalid_argument(
      fmt::format("invalid workload \"{}\": {}; accepted: {}", spec, reason, workload_syntax()));
}

// A bad CAP's own message already lists the accepted units; the whole
// workload grammar after it would bury them.
[[noreturn]] void fail_cap(std::string_view spec, std::string_view kind,
                           std::string_view size_error) {
  throw std::invalid_argument(fmt::format("invalid workload \"{}\": bad CAP in MODEL:{}[=CAP]: {}",
                                          spec, kind, size_error));
}

// The shortest exact spelling of a cap, so canonical specs read "25MiB".
std::string compact_bytes(std::uint64_t bytes) {
  static constexpr std::string_view kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  static constexpr unsigned kShifts[] = {40, 30, 20, 10};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::uint64_t unit = std::uint64_t{1} << kShifts[i];
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, kUnits[i]);
  }
  return fmt::format("{}B", bytes);
}

std::vector<Message> bucket_messages(const std::vector<Bucket>& buckets) {
  std::vector<Message> messages;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    messages.push_back({fmt::format("bucket {}", i), buckets[i].elements, buckets[i].bytes, 1});
  }
  return messages;
}

// Groups the sequence by byte size; the item of a group is its first
// member's, so a per-size row still names a real tensor or bucket.
std::vector<Message> distinct_sizes(const std::vector<Message>& sequence) {
  std::map<std::uint64_t, Message> by_bytes;
  for (const Message& message : sequence) {
    auto [entry, inserted] = by_bytes.try_emplace(message.bytes, message);
    if (!inserted) ++entry->second.multiplicity;
  }
  std::vector<Message> distinct;
  for (auto& [bytes, message] : by_bytes) distinct.push_back(std::move(message));
  return distinct;
}

}  // namespace

std::string workload_syntax() {
  return fmt::format(
      "MODEL (one allreduce per gradient tensor), MODEL:total (the whole gradient), "
      "MODEL:ddp[=CAP] (PyTorch DDP buckets: first {}, then CAP, default {}), "
      "MODEL:fusion[=CAP] (Horovod fusion buffers, default {}), deepbench (the 7 DeepBench "
      "all-reduce sizes); CAP is a byte size such as 50MiB; MODEL is one of: {}",
      format_bytes(kDdpFirstBucketBytes), format_bytes(kDdpBucketBytes),
      format_bytes(kHorovodFusionBytes), model_name_list());
}

Workload parse_workload(std::string_view spec_text, std::size_t element_bytes) {
  const std::string_view spec = trim(spec_text);
  if (spec.empty()) fail_spec(spec_text, "it is empty");
  if (element_bytes == 0) fail_spec(spec, "the element size must be at least 1 byte");

  const std::size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view suffix =
      colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  if (colon != std::string_view::npos && suffix.empty()) {
    fail_spec(spec, "nothing follows ':'");
  }

  Workload workload;
  workload.element_bytes = element_bytes;
  if (name == "deepbench") {
    if (colon != std::string_view::npos) fail_spec(spec, "deepbench takes no ':' suffix");
    workload.spec = "deepbench";
    workload.kind = WorkloadKind::deepbench;
    for (std::uint64_t elements : kDeepBenchAllreduceElements) {
      workload.sequence.push_back(
          {fmt::format("{} elements", elements), elements, elements * element_bytes, 1});
    }
    workload.distinct = distinct_sizes(workload.sequence);
    return workload;
  }

  const auto& names = model_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    fail_spec(spec, fmt::format("\"{}\" is neither a known model nor deepbench", name));
  }
  const Model& model = find_model(name);
  workload.model = model.name;

  const std::size_t equals = suffix.find('=');
  const std::string_view kind = suffix.substr(0, equals);
  const bool has_cap = equals != std::string_view::npos;
  const std::string_view cap_text = has_cap ? suffix.substr(equals + 1) : std::string_view{};

  if (colon == std::string_view::npos) {
    workload.kind = WorkloadKind::tensors;
  } else if (kind == "total") {
    workload.kind = WorkloadKind::total;
  } else if (kind == "ddp") {
    workload.kind = WorkloadKind::ddp;
  } else if (kind == "fusion") {
    workload.kind = WorkloadKind::fusion;
  } else {
    fail_spec(spec, fmt::format("unknown kind \"{}\" (accepted after ':': total, ddp, ddp=CAP, "
                                "fusion, fusion=CAP)",
                                kind));
  }
  const bool takes_cap =
      workload.kind == WorkloadKind::ddp || workload.kind == WorkloadKind::fusion;
  if (has_cap && !takes_cap) {
    fail_spec(spec, fmt::format("{} takes no =CAP", to_string(workload.kind)));
  }
  if (takes_cap) {
    workload.cap_bytes = workload.kind == WorkloadKind::ddp ? kDdpBucketBytes : kHorovodFusionBytes;
    if (has_cap) {
      try {
        workload.cap_bytes = parse_byte_size(cap_text, ZeroSize::reject);
      } catch (const std::invalid_argument& error) {
        fail_cap(spec, kind, error.what());
      }
    }
  }

  switch (workload.kind) {
    case WorkloadKind::tensors:
      workload.spec = model.name;
      for (const ParamTensor& tensor : model.tensors_backprop_order) {
        workload.sequence.push_back({tensor.name, static_cast<std::uint64_t>(tensor.elements),
                                     tensor.bytes(element_bytes), 1});
      }
      break;
    case WorkloadKind::total:
      workload.spec = model.name + ":total";
      workload.sequence.push_back(
          {fmt::format("all {} tensors", model.tensors_backprop_order.size()),
           static_cast<std::uint64_t>(model.parameters()), model.gradient_bytes(element_bytes), 1});
      break;
    case WorkloadKind::ddp:
      workload.spec = fmt::format("{}:ddp={}", model.name, compact_bytes(workload.cap_bytes));
      workload.sequence = bucket_messages(ddp_buckets(model, element_bytes, workload.cap_bytes));
      break;
    case WorkloadKind::fusion:
      workload.spec = fmt::format("{}:fusion={}", model.name, compact_bytes(workload.cap_bytes));
      workload.sequence = bucket_messages(fusion_buckets(model, element_bytes, workload.cap_bytes));
      break;
    case WorkloadKind::deepbench:
      break;  // handled above
  }
  workload.distinct = distinct_sizes(workload.sequence);
  return workload;
}

std::vector<Workload> parse_workloads(std::string_view specs, std::size_t element_bytes) {
  if (trim(specs).empty()) {
    throw std::invalid_argument(fmt::format(
        "invalid workload list \"{}\": it is empty; accepted: {}", specs, workload_syntax()));
  }
  std::vector<Workload> workloads;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = specs.find(',', begin);
    const std::string_view item = specs.substr(begin, comma - begin);
    if (trim(item).empty()) {
      throw std::invalid_argument(
          fmt::format("invalid workload list \"{}\": an item between commas is empty", specs));
    }
    workloads.push_back(parse_workload(item, element_bytes));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return workloads;
}

}  // namespace collbench
