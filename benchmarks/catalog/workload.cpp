// Workload specs and gradient bucketing (see include/collbench/catalog/workload.h).
#include "collbench/catalog/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

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
    case WorkloadKind::fsdp:
      return "fsdp";
    case WorkloadKind::zero2:
      return "zero2";
    case WorkloadKind::tp:
      return "tp";
    case WorkloadKind::moe:
      return "moe";
  }
  return "unknown";
}

std::string_view to_string(FsdpUnit unit) {
  switch (unit) {
    case FsdpUnit::block:
      return "block";
    case FsdpUnit::model:
      return "model";
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

Message make_message(std::string_view collective, std::string item, std::uint64_t elements,
                     std::size_t element_bytes) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, element_bytes, &bytes)) {
    throw std::invalid_argument(
        fmt::format("{}: {} elements of {} bytes overflow 64 bits", item, elements, element_bytes));
  }
  return {std::string(collective), std::move(item), elements, bytes, 1};
}

}  // namespace

std::vector<FlatUnit> fsdp_units(const Model& model, FsdpUnit unit) {
  std::vector<FlatUnit> units(1);
  const auto& tensors = model.tensors_backprop_order;
  for (auto tensor = tensors.rbegin(); tensor != tensors.rend(); ++tensor) {
    const std::string& name = unit == FsdpUnit::model ? std::string() : tensor->unit;
    if (name.empty()) {
      units.front().elements += static_cast<std::uint64_t>(tensor->elements);
      continue;
    }
    if (units.back().name != name) units.push_back({name, 0});
    units.back().elements += static_cast<std::uint64_t>(tensor->elements);
  }
  return units;
}

std::vector<Message> fsdp_messages(const Model& model, FsdpUnit unit, std::size_t element_bytes) {
  require_positive(element_bytes, 1, "fsdp_messages");
  const std::vector<FlatUnit> units = fsdp_units(model, unit);
  std::vector<Message> messages;
  for (const FlatUnit& flat : units) {
    if (flat.elements == 0) continue;  // every tensor is in a block: no root
    messages.push_back(
        make_message(kAllgather, flat.label() + " forward", flat.elements, element_bytes));
  }
  for (auto flat = units.rbegin(); flat + 1 < units.rend(); ++flat) {
    messages.push_back(
        make_message(kAllgather, flat->label() + " backward", flat->elements, element_bytes));
    messages.push_back(
        make_message(kReduceScatter, flat->label() + " gradients", flat->elements, element_bytes));
  }
  const FlatUnit& root = units.front();
  if (root.elements > 0) {
    messages.push_back(
        make_message(kReduceScatter, root.label() + " gradients", root.elements, element_bytes));
  }
  return messages;
}

std::vector<Bucket> zero2_buckets(const Model& model, std::uint64_t bucket_elements,
                                  std::size_t element_bytes) {
  require_positive(element_bytes, bucket_elements, "zero2_buckets");
  std::uint64_t cap_bytes = 0;
  if (__builtin_mul_overflow(bucket_elements, element_bytes, &cap_bytes)) {
    throw std::invalid_argument(fmt::format("a bucket of {} elements of {} bytes overflows 64 bits",
                                            bucket_elements, element_bytes));
  }
  return fusion_buckets(model, element_bytes, cap_bytes);
}

std::vector<Message> zero2_messages(const Model& model, std::uint64_t bucket_elements,
                                    std::size_t element_bytes) {
  std::vector<Message> messages;
  const std::vector<Bucket> buckets = zero2_buckets(model, bucket_elements, element_bytes);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    messages.push_back(make_message(kReduceScatter, fmt::format("bucket {}", i),
                                    buckets[i].elements, element_bytes));
  }
  messages.push_back(make_message(kAllgather, "updated parameters",
                                  static_cast<std::uint64_t>(model.parameters()), element_bytes));
  return messages;
}

std::vector<Message> tensor_parallel_messages(const Model& model, std::int64_t degree,
                                              std::uint64_t batch, std::uint64_t sequence,
                                              std::size_t element_bytes) {
  const TransformerShape& shape = model.transformer;
  if (shape.layers == 0) {
    throw std::invalid_argument(fmt::format(
        "tensor parallelism splits transformer layers, and {} is not a transformer", model.name));
  }
  if (degree < 2) {
    throw std::invalid_argument(
        fmt::format("the degree K = {} must be at least 2 (degree 1 exchanges nothing)", degree));
  }
  if (shape.heads % degree != 0 || shape.kv_heads % degree != 0) {
    throw std::invalid_argument(
        fmt::format("the degree K = {} must divide {}'s {} attention heads and {} key/value heads",
                    degree, model.name, shape.heads, shape.kv_heads));
  }
  if (batch == 0 || sequence == 0) {
    throw std::invalid_argument("the batch and the sequence must be at least 1");
  }
  std::uint64_t elements = 0;
  if (__builtin_mul_overflow(batch, sequence, &elements) ||
      __builtin_mul_overflow(elements, static_cast<std::uint64_t>(shape.hidden), &elements)) {
    throw std::invalid_argument(fmt::format("batch {} x sequence {} x hidden {} overflows 64 bits",
                                            batch, sequence, shape.hidden));
  }
  std::vector<Message> messages;
  for (std::int64_t layer = 0; layer < shape.layers; ++layer) {
    for (const char* block : {"attention", "mlp"}) {
      messages.push_back(make_message(kAllreduce, fmt::format("layer {} {} forward", layer, block),
                                      elements, element_bytes));
    }
  }
  for (std::int64_t layer = shape.layers - 1; layer >= 0; --layer) {
    for (const char* block : {"mlp", "attention"}) {
      messages.push_back(make_message(kAllreduce, fmt::format("layer {} {} backward", layer, block),
                                      elements, element_bytes));
    }
  }
  return messages;
}

std::vector<Message> moe_messages(const Model& model, std::uint64_t batch, std::uint64_t sequence,
                                  double skew, std::size_t element_bytes) {
  const TransformerShape& shape = model.transformer;
  if (shape.experts == 0) {
    throw std::invalid_argument(
        fmt::format("{} has no experts: moe needs a mixture-of-experts model such as mixtral_8x7b",
                    model.name));
  }
  if (batch == 0 || sequence == 0) {
    throw std::invalid_argument("the batch and the sequence must be at least 1");
  }
  if (!std::isfinite(skew) || skew < 0 || skew > kMaxRoutingSkew) {
    throw std::invalid_argument(
        fmt::format("the routing skew {} must be a number from 0 to {}", skew, kMaxRoutingSkew));
  }
  require_positive(element_bytes, 1, "moe_messages");
  std::uint64_t elements = 0;
  if (__builtin_mul_overflow(batch, sequence, &elements) ||
      __builtin_mul_overflow(elements, static_cast<std::uint64_t>(shape.experts_per_token),
                             &elements) ||
      __builtin_mul_overflow(elements, static_cast<std::uint64_t>(shape.hidden), &elements)) {
    throw std::invalid_argument(
        fmt::format("batch {} x sequence {} x top-{} x hidden {} overflows 64 bits", batch,
                    sequence, shape.experts_per_token, shape.hidden));
  }
  const auto alltoallv = [&](std::int64_t layer, std::string_view what, bool returns) {
    Message message =
        make_message(kAlltoallv, fmt::format("layer {} {}", layer, what), elements, element_bytes);
    message.routing_skew = skew;
    message.routing_returns = returns;
    return message;
  };
  std::vector<Message> messages;
  for (std::int64_t layer = 0; layer < shape.layers; ++layer) {
    messages.push_back(alltoallv(layer, "dispatch forward", false));
    messages.push_back(alltoallv(layer, "combine forward", true));
  }
  // Backward runs each forward exchange's transpose, in reverse order.
  for (std::int64_t layer = shape.layers - 1; layer >= 0; --layer) {
    messages.push_back(alltoallv(layer, "combine backward", false));
    messages.push_back(alltoallv(layer, "dispatch backward", true));
  }
  return messages;
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
    messages.push_back({std::string(kAllreduce), fmt::format("bucket {}", i), buckets[i].elements,
                        buckets[i].bytes, 1});
  }
  return messages;
}

std::size_t collective_position(const std::string& collective) {
  const auto found =
      std::find(kWorkloadCollectives.begin(), kWorkloadCollectives.end(), collective);
  if (found == kWorkloadCollectives.end()) {
    throw std::logic_error(fmt::format("workload message of unknown collective {}", collective));
  }
  return static_cast<std::size_t>(found - kWorkloadCollectives.begin());
}

// Groups the sequence by collective, in the table's order, then by byte
// size; the item of a group is its first member's, so a per-size row still
// names a real tensor, bucket or unit.
std::vector<Message> distinct_sizes(const std::vector<Message>& sequence) {
  std::map<std::pair<std::size_t, std::uint64_t>, Message> by_size;
  for (const Message& message : sequence) {
    auto [entry, inserted] =
        by_size.try_emplace({collective_position(message.collective), message.bytes}, message);
    if (!inserted) ++entry->second.multiplicity;
  }
  std::vector<Message> distinct;
  for (auto& [key, message] : by_size) distinct.push_back(std::move(message));
  return distinct;
}

// A count typed in a spec: decimal digits only, at least `minimum`.
std::uint64_t parse_count(std::string_view spec, std::string_view what, std::string_view text,
                          std::uint64_t minimum) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (!text.empty() && text.front() == '-') {
    fail_spec(spec, fmt::format("{} \"{}\" is negative; it must be a whole number of at least {}",
                                what, text, minimum));
  }
  if (error == std::errc::result_out_of_range && stop == end) {
    fail_spec(spec, fmt::format("{} \"{}\" overflows 64 bits (at most {})", what, text,
                                std::numeric_limits<std::uint64_t>::max()));
  }
  if (text.empty() || error != std::errc() || stop != end || value < minimum) {
    fail_spec(spec, minimum == 0 ? fmt::format("{} \"{}\" must be a whole number", what, text)
                                 : fmt::format("{} \"{}\" must be a whole number of at least {}",
                                               what, text, minimum));
  }
  return value;
}

// The part after MODEL: "KIND[=ARG]" then ':'-separated options.
struct SpecParts {
  std::string_view kind;
  bool has_argument = false;
  std::string_view argument;
  std::vector<std::string_view> options;
};

SpecParts split_suffix(std::string_view spec, std::string_view suffix) {
  SpecParts parts;
  std::vector<std::string_view> fields;
  std::size_t begin = 0;
  while (true) {
    const std::size_t colon = suffix.find(':', begin);
    fields.push_back(suffix.substr(begin, colon - begin));
    if (colon == std::string_view::npos) break;
    begin = colon + 1;
  }
  for (const std::string_view field : fields) {
    if (field.empty()) fail_spec(spec, "an option between ':' is empty");
  }
  const std::size_t equals = fields.front().find('=');
  parts.kind = fields.front().substr(0, equals);
  parts.has_argument = equals != std::string_view::npos;
  if (parts.has_argument) parts.argument = fields.front().substr(equals + 1);
  parts.options.assign(fields.begin() + 1, fields.end());
  return parts;
}

// A routing skew typed in a spec: a decimal number, digits with at most
// one '.' between them (no sign, exponent, inf or nan), from 0 to
// kMaxRoutingSkew.
double parse_skew(std::string_view spec, std::string_view text) {
  const std::size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view{} : text.substr(point + 1);
  const auto digits = [](std::string_view part) {
    return !part.empty() &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  double value = 0;
  const bool decimal = digits(whole) && (point == std::string_view::npos || digits(fraction));
  if (decimal) {
    const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || stop != text.data() + text.size()) value = -1;
  }
  if (!decimal || value < 0 || value > kMaxRoutingSkew) {
    fail_spec(spec, fmt::format("skew \"{}\" must be a decimal number from 0 to {}, such as 0, "
                                "0.5 or 1.2",
                                text, kMaxRoutingSkew));
  }
  return value;
}

// The shortest decimal that parses back to `value`, never in exponent
// notation (parse_skew takes none): "0", "0.5", "1.2", "0.0000001".
std::string decimal_text(double value) {
  // A double's shortest fixed form is at most 2 + 323 zeros + 17 digits long.
  char text[400];
  const auto [end, error] =
      std::to_chars(std::begin(text), std::end(text), value, std::chars_format::fixed);
  if (error != std::errc()) throw std::logic_error("decimal_text: the buffer is too small");
  return std::string(std::begin(text), end);
}

// Options of fsdp, zero2, tp and moe: the precision (bf16 or f32), for tp
// and moe batch=B and seq=S, for moe skew=Z. Each may be given once.
struct ParallelOptions {
  std::size_t element_bytes = kBf16Bytes;
  std::uint64_t batch = 1;
  std::uint64_t sequence = 0;  // 0: the model's
  double skew = 0;
};

std::string_view accepted_options(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::tp:
      return "batch=B, seq=S, bf16, f32";
    case WorkloadKind::moe:
      return "batch=B, seq=S, skew=Z, bf16, f32";
    default:
      return "bf16, f32";
  }
}

ParallelOptions parse_parallel_options(std::string_view spec, WorkloadKind kind,
                                       const std::vector<std::string_view>& options) {
  ParallelOptions parsed;
  const bool moe = kind == WorkloadKind::moe;
  const bool tokens = kind == WorkloadKind::tp || moe;  // batch and seq
  std::set<std::string_view> seen;
  for (const std::string_view option : options) {
    const std::string_view name = option.substr(0, option.find('='));
    const bool precision = name == "bf16" || name == "f32";
    if (!seen.insert(precision ? "precision" : name).second) {
      fail_spec(spec, precision ? fmt::format("option \"{}\" gives the precision again", name)
                                : fmt::format("option \"{}\" is given twice", name));
    }
    if (option == "bf16" || option == "f32") {
      parsed.element_bytes = option == "f32" ? kF32Bytes : kBf16Bytes;
    } else if (tokens && name == "batch" && option.size() > name.size()) {
      parsed.batch = parse_count(spec, "batch", option.substr(name.size() + 1), 1);
    } else if (tokens && name == "seq" && option.size() > name.size()) {
      parsed.sequence = parse_count(spec, "seq", option.substr(name.size() + 1), 1);
    } else if (moe && name == "skew" && option.size() > name.size()) {
      parsed.skew = parse_skew(spec, option.substr(name.size() + 1));
    } else {
      fail_spec(spec, fmt::format("unknown option \"{}\" of {} (accepted: {})", option,
                                  to_string(kind), accepted_options(kind)));
    }
  }
  return parsed;
}

std::string precision_suffix(std::size_t element_bytes) {
  return element_bytes == kF32Bytes ? ":f32" : ":bf16";
}

}  // namespace

std::string workload_syntax() {
  return fmt::format(
      "MODEL (one allreduce per gradient tensor), MODEL:total (the whole gradient), "
      "MODEL:ddp[=CAP] (PyTorch DDP buckets: first {}, then CAP, default {}), "
      "MODEL:fusion[=CAP] (Horovod fusion buffers, default {}), deepbench (the 7 DeepBench "
      "all-reduce sizes), MODEL:fsdp[=UNIT] (PyTorch FSDP / ZeRO-3 allgathers and "
      "reduce_scatters per unit; UNIT block, the default, or model), MODEL:zero2[=ELEMENTS] "
      "(DeepSpeed ZeRO-2 gradient reduce_scatter buckets, default {} elements, then a parameter "
      "allgather), MODEL:tp=K[:batch=B][:seq=S] (Megatron tensor parallelism of degree K: 4 "
      "allreduces of B x S x hidden per transformer layer; B 1, S the model's sequence), "
      "MODEL:moe[:batch=B][:seq=S][:skew=Z] (expert parallelism: per MoE layer 4 alltoallv of "
      "B x S x top-k x hidden, tokens routed to ranks in Zipf shares of exponent Z, 0 uniform, "
      "at most {}); fsdp, zero2, tp and moe are bf16 unless followed by :f32; CAP is a byte "
      "size such as 50MiB; MODEL is one of: {}",
      format_bytes(kDdpFirstBucketBytes), format_bytes(kDdpBucketBytes),
      format_bytes(kHorovodFusionBytes), kZeroReduceBucketElements, kMaxRoutingSkew,
      model_name_list());
}

namespace {

Workload deepbench_workload(std::string_view spec, bool has_suffix, std::size_t element_bytes) {
  if (has_suffix) fail_spec(spec, "deepbench takes no ':' suffix");
  Workload workload;
  workload.element_bytes = element_bytes;
  workload.spec = "deepbench";
  workload.kind = WorkloadKind::deepbench;
  for (std::uint64_t elements : kDeepBenchAllreduceElements) {
    workload.sequence.push_back(
        make_message(kAllreduce, fmt::format("{} elements", elements), elements, element_bytes));
  }
  return workload;
}

WorkloadKind parse_kind(std::string_view spec, std::string_view kind) {
  static constexpr std::pair<std::string_view, WorkloadKind> kKinds[] = {
      {"total", WorkloadKind::total},   {"ddp", WorkloadKind::ddp},
      {"fusion", WorkloadKind::fusion}, {"fsdp", WorkloadKind::fsdp},
      {"zero2", WorkloadKind::zero2},   {"tp", WorkloadKind::tp},
      {"moe", WorkloadKind::moe}};
  for (const auto& [name, value] : kKinds) {
    if (name == kind) return value;
  }
  fail_spec(spec,
            fmt::format("unknown kind \"{}\" (accepted after ':': total, ddp, ddp=CAP, "
                        "fusion, fusion=CAP, fsdp, fsdp=UNIT, zero2, zero2=ELEMENTS, tp=K, moe)",
                        kind));
}

// The gradient-allreduce kinds: the caller's element size, no options.
void data_parallel_workload(std::string_view spec, const Model& model, const SpecParts& parts,
                            Workload& workload) {
  if (!parts.options.empty()) {
    fail_spec(spec, fmt::format("{} takes no ':' options", to_string(workload.kind)));
  }
  const bool takes_cap =
      workload.kind == WorkloadKind::ddp || workload.kind == WorkloadKind::fusion;
  if (parts.has_argument && !takes_cap) {
    fail_spec(spec, fmt::format("{} takes no =CAP", to_string(workload.kind)));
  }
  if (takes_cap) {
    workload.cap_bytes = workload.kind == WorkloadKind::ddp ? kDdpBucketBytes : kHorovodFusionBytes;
    if (parts.has_argument) {
      try {
        workload.cap_bytes = parse_byte_size(parts.argument, ZeroSize::reject);
      } catch (const std::invalid_argument& error) {
        fail_cap(spec, parts.kind, error.what());
      }
    }
  }
  const std::size_t element_bytes = workload.element_bytes;
  switch (workload.kind) {
    case WorkloadKind::tensors:
      workload.spec = model.name;
      for (const ParamTensor& tensor : model.tensors_backprop_order) {
        workload.sequence.push_back(make_message(
            kAllreduce, tensor.name, static_cast<std::uint64_t>(tensor.elements), element_bytes));
      }
      break;
    case WorkloadKind::total:
      workload.spec = model.name + ":total";
      workload.sequence.push_back(make_message(
          kAllreduce, fmt::format("all {} tensors", model.tensors_backprop_order.size()),
          static_cast<std::uint64_t>(model.parameters()), element_bytes));
      break;
    case WorkloadKind::ddp:
      workload.spec = fmt::format("{}:ddp={}", model.name, compact_bytes(workload.cap_bytes));
      workload.sequence = bucket_messages(ddp_buckets(model, element_bytes, workload.cap_bytes));
      break;
    case WorkloadKind::fusion:
      workload.spec = fmt::format("{}:fusion={}", model.name, compact_bytes(workload.cap_bytes));
      workload.sequence = bucket_messages(fusion_buckets(model, element_bytes, workload.cap_bytes));
      break;
    default:
      throw std::logic_error("data_parallel_workload: not a data-parallel kind");
  }
}

FsdpUnit parse_fsdp_unit(std::string_view spec, const SpecParts& parts) {
  if (!parts.has_argument || parts.argument == "block") return FsdpUnit::block;
  if (parts.argument == "model") return FsdpUnit::model;
  fail_spec(spec, fmt::format("unknown fsdp unit \"{}\" (accepted: block, model)", parts.argument));
}

// fsdp, zero2, tp and moe: their own precision, options after ':'.
void parallel_workload(std::string_view spec, const Model& model, const SpecParts& parts,
                       Workload& workload) {
  const ParallelOptions options = parse_parallel_options(spec, workload.kind, parts.options);
  workload.element_bytes = options.element_bytes;
  const std::string precision = precision_suffix(options.element_bytes);
  try {
    switch (workload.kind) {
      case WorkloadKind::fsdp:
        workload.fsdp_unit = parse_fsdp_unit(spec, parts);
        workload.spec =
            fmt::format("{}:fsdp={}{}", model.name, to_string(workload.fsdp_unit), precision);
        workload.sequence = fsdp_messages(model, workload.fsdp_unit, workload.element_bytes);
        break;
      case WorkloadKind::zero2:
        workload.bucket_elements = parts.has_argument
                                       ? parse_count(spec, "ELEMENTS", parts.argument, 1)
                                       : kZeroReduceBucketElements;
        workload.spec =
            fmt::format("{}:zero2={}{}", model.name, workload.bucket_elements, precision);
        workload.sequence = zero2_messages(model, workload.bucket_elements, workload.element_bytes);
        break;
      case WorkloadKind::tp: {
        if (!parts.has_argument) fail_spec(spec, "tp needs its degree, tp=K");
        const std::uint64_t degree = parse_count(spec, "the degree K", parts.argument, 0);
        workload.tensor_parallel = static_cast<std::int64_t>(
            std::min<std::uint64_t>(degree, std::numeric_limits<std::int64_t>::max()));
        workload.batch = options.batch;
        workload.sequence_length = options.sequence != 0
                                       ? options.sequence
                                       : static_cast<std::uint64_t>(model.transformer.sequence);
        workload.spec =
            fmt::format("{}:tp={}:batch={}:seq={}{}", model.name, workload.tensor_parallel,
                        workload.batch, workload.sequence_length, precision);
        workload.sequence =
            tensor_parallel_messages(model, workload.tensor_parallel, workload.batch,
                                     workload.sequence_length, workload.element_bytes);
        break;
      }
      case WorkloadKind::moe:
        if (parts.has_argument) fail_spec(spec, "moe takes no =ARG (its options follow ':')");
        workload.batch = options.batch;
        workload.sequence_length = options.sequence != 0
                                       ? options.sequence
                                       : static_cast<std::uint64_t>(model.transformer.sequence);
        workload.routing_skew = options.skew;
        workload.spec =
            fmt::format("{}:moe:batch={}:seq={}:skew={}{}", model.name, workload.batch,
                        workload.sequence_length, decimal_text(workload.routing_skew), precision);
        workload.sequence = moe_messages(model, workload.batch, workload.sequence_length,
                                         workload.routing_skew, workload.element_bytes);
        break;
      default:
        throw std::logic_error("parallel_workload: not a parallel kind");
    }
  } catch (const std::invalid_argument& error) {
    // Messages of the generators name no spec; those of fail_spec already do.
    const std::string message = error.what();
    if (message.rfind("invalid workload", 0) == 0) throw;
    fail_spec(spec, message);
  }
}

}  // namespace

Workload parse_workload(std::string_view spec_text, std::size_t element_bytes) {
  const std::string_view spec = trim(spec_text);
  if (spec.empty()) fail_spec(spec_text, "it is empty");
  if (element_bytes == 0) fail_spec(spec, "the element size must be at least 1 byte");

  const std::size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const bool has_suffix = colon != std::string_view::npos;
  const std::string_view suffix = has_suffix ? spec.substr(colon + 1) : std::string_view{};
  if (has_suffix && suffix.empty()) fail_spec(spec, "nothing follows ':'");

  Workload workload;
  if (name == "deepbench") {
    workload = deepbench_workload(spec, has_suffix, element_bytes);
  } else {
    const auto& names = model_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      fail_spec(spec, fmt::format("\"{}\" is neither a known model nor deepbench", name));
    }
    const Model& model = find_model(name);
    workload.model = model.name;
    workload.element_bytes = element_bytes;
    const SpecParts parts = has_suffix ? split_suffix(spec, suffix) : SpecParts{};
    workload.kind = has_suffix ? parse_kind(spec, parts.kind) : WorkloadKind::tensors;
    const bool parallel = workload.kind == WorkloadKind::fsdp ||
                          workload.kind == WorkloadKind::zero2 ||
                          workload.kind == WorkloadKind::tp || workload.kind == WorkloadKind::moe;
    if (parallel) {
      parallel_workload(spec, model, parts, workload);
    } else {
      data_parallel_workload(spec, model, parts, workload);
    }
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
