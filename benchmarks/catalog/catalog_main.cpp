// collbench-catalog: prints the DNN model catalog — per-model parameters,
// gradient size, FLOPs and tensor count (`list`), one model's gradient
// tensors in backprop order or its DDP / Horovod buckets (`show`), one
// workload's messages with their collectives (`workload`) — as aligned
// tables or CSV. Bad input prints one message on stderr and exits 2.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "collbench/catalog/sizes.h"
#include "collbench/catalog/workload.h"
#include "standard_output.h"

namespace {

using collbench::Bucket;
using collbench::Model;

constexpr int kUsageError = 2;
constexpr double kMiB = 1024.0 * 1024.0;

// 25557032 -> "25,557,032": parameter counts are read digit by digit when
// compared with published figures.
std::string with_thousands(std::uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("{}", fmt::join(shape, "x"));
}

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void print_csv(const std::vector<std::string>& header,
               const std::vector<std::vector<std::string>>& rows) {
  const auto print_row = [](const std::vector<std::string>& fields) {
    std::vector<std::string> escaped;
    for (const std::string& field : fields) escaped.push_back(csv_field(field));
    fmt::print("{}\n", fmt::join(escaped, ","));
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
}

// Columns whose header is in `left_aligned` are text; the rest are numbers
// and are right-aligned so that digits line up.
void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& left_aligned) {
  std::vector<std::size_t> widths(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) widths[c] = header[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  const auto print_row = [&](const std::vector<std::string>& fields) {
    std::string line;
    for (std::size_t c = 0; c < fields.size(); ++c) {
      if (c > 0) line += "  ";
      line += left_aligned[c] ? fmt::format("{:<{}}", fields[c], widths[c])
                              : fmt::format("{:>{}}", fields[c], widths[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
  };
  print_row(header);
  std::vector<std::string> rule;
  for (std::size_t width : widths) rule.push_back(std::string(width, '-'));
  print_row(rule);
  for (const auto& row : rows) print_row(row);
}

void run_list(const std::string& dtype, bool csv) {
  const std::size_t element_bytes = collbench::dtype_element_bytes(dtype);
  std::vector<std::vector<std::string>> rows;
  for (const Model& model : collbench::all_models()) {
    const auto parameters = static_cast<std::uint64_t>(model.parameters());
    const std::uint64_t gradient = model.gradient_bytes(element_bytes);
    if (csv) {
      rows.push_back({model.name, model.variant, model.input, std::to_string(parameters),
                      std::to_string(model.tensors_backprop_order.size()), dtype,
                      std::to_string(element_bytes), std::to_string(gradient),
                      std::to_string(model.forward_flops_per_sample), model.reference});
    } else {
      rows.push_back(
          {model.name, with_thousands(parameters),
           std::to_string(model.tensors_backprop_order.size()),
           fmt::format("{:.2f}", static_cast<double>(gradient) / kMiB),
           fmt::format("{:.2f}", static_cast<double>(model.forward_flops_per_sample) / 1e9),
           model.input, model.variant});
    }
  }
  if (csv) {
    print_csv({"model", "variant", "input", "parameters", "tensors", "dtype", "element_bytes",
               "gradient_bytes", "forward_flops_per_sample", "reference"},
              rows);
  } else {
    print_table({"model", "parameters", "tensors", fmt::format("gradient {} (MiB)", dtype),
                 "forward (GFLOP/sample)", "input", "variant"},
                rows, {true, false, false, false, false, true, true});
  }
}

void print_model_summary(const Model& model, const std::string& dtype, std::size_t element_bytes) {
  fmt::print("{}: {}\n", model.name, model.variant);
  fmt::print("reference: {}\n", model.reference);
  fmt::print(
      "input: {}; parameters: {} in {} tensors; gradient ({}): {}; forward: {:.2f} GFLOP "
      "per sample\n\n",
      model.input, with_thousands(static_cast<std::uint64_t>(model.parameters())),
      model.tensors_backprop_order.size(), dtype,
      collbench::format_bytes(model.gradient_bytes(element_bytes)),
      static_cast<double>(model.forward_flops_per_sample) / 1e9);
}

void show_tensors(const Model& model, const std::string& dtype, std::size_t element_bytes,
                  bool csv) {
  std::vector<std::vector<std::string>> rows;
  std::uint64_t cumulative = 0;
  const auto& tensors = model.tensors_backprop_order;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::uint64_t bytes = tensors[i].bytes(element_bytes);
    cumulative += bytes;
    if (csv) {
      rows.push_back({model.name, std::to_string(i), tensors[i].name, shape_text(tensors[i].shape),
                      std::to_string(tensors[i].elements), dtype, std::to_string(bytes)});
    } else {
      rows.push_back({std::to_string(i), tensors[i].name, shape_text(tensors[i].shape),
                      with_thousands(static_cast<std::uint64_t>(tensors[i].elements)),
                      with_thousands(bytes),
                      fmt::format("{:.2f}", static_cast<double>(cumulative) / kMiB)});
    }
  }
  if (csv) {
    print_csv({"model", "index", "tensor", "shape", "elements", "dtype", "bytes"}, rows);
    return;
  }
  print_model_summary(model, dtype, element_bytes);
  fmt::print("gradient tensors in backprop order (last layer first):\n");
  print_table(
      {"#", "tensor", "shape", "elements", fmt::format("bytes ({})", dtype), "cumulative (MiB)"},
      rows, {false, true, true, false, false, false});
}

void show_buckets(const Model& model, const std::string& scheme_text, const std::string& dtype,
                  std::size_t element_bytes, bool csv) {
  const std::string_view scheme_kind =
      std::string_view(scheme_text).substr(0, scheme_text.find('='));
  if (scheme_kind != "ddp" && scheme_kind != "fusion") {
    throw std::invalid_argument(fmt::format(
        "--buckets \"{}\": accepted are ddp, ddp=CAP, fusion, fusion=CAP (CAP a byte size such "
        "as 50MiB)",
        scheme_text));
  }
  // The workload parser owns the cap grammar and defaults; reuse it.
  const collbench::Workload workload =
      collbench::parse_workload(model.name + ":" + scheme_text, element_bytes);
  const std::vector<Bucket> buckets =
      workload.kind == collbench::WorkloadKind::ddp
          ? collbench::ddp_buckets(model, element_bytes, workload.cap_bytes)
          : collbench::fusion_buckets(model, element_bytes, workload.cap_bytes);
  const auto& tensors = model.tensors_backprop_order;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const Bucket& bucket = buckets[i];
    const std::string& first = tensors[bucket.first_tensor].name;
    const std::string& last = tensors[bucket.first_tensor + bucket.tensor_count - 1].name;
    if (csv) {
      rows.push_back({model.name, workload.spec, std::to_string(i),
                      std::to_string(bucket.first_tensor), std::to_string(bucket.tensor_count),
                      first, last, std::to_string(bucket.elements), dtype,
                      std::to_string(bucket.bytes), std::to_string(bucket.cap_bytes)});
    } else {
      rows.push_back({std::to_string(i), std::to_string(bucket.tensor_count),
                      fmt::format("{}..{}", bucket.first_tensor,
                                  bucket.first_tensor + bucket.tensor_count - 1),
                      first, last, with_thousands(bucket.elements),
                      fmt::format("{:.2f}", static_cast<double>(bucket.bytes) / kMiB),
                      fmt::format("{:.2f}", static_cast<double>(bucket.cap_bytes) / kMiB)});
    }
  }
  if (csv) {
    print_csv({"model", "workload", "bucket", "first_index", "tensors", "first_tensor",
               "last_tensor", "elements", "dtype", "bytes", "cap_bytes"},
              rows);
    return;
  }
  print_model_summary(model, dtype, element_bytes);
  fmt::print("{} buckets of {} ({} per iteration), tensors in backprop order:\n", buckets.size(),
             workload.spec, collbench::format_bytes(model.gradient_bytes(element_bytes)));
  print_table({"bucket", "tensors", "indices", "first tensor", "last tensor", "elements",
               fmt::format("size {} (MiB)", dtype), "cap (MiB)"},
              rows, {false, false, false, true, true, false, false, false});
}

// One line per collective: how many messages, how many bytes.
std::string per_collective_totals(const collbench::Workload& workload) {
  std::vector<std::string> parts;
  for (const std::string_view collective : collbench::kWorkloadCollectives) {
    std::size_t count = 0;
    std::uint64_t bytes = 0;
    for (const collbench::Message& message : workload.sequence) {
      if (message.collective != collective) continue;
      ++count;
      bytes += message.bytes;
    }
    if (count > 0) {
      parts.push_back(
          fmt::format("{} x {} ({})", count, collective, collbench::format_bytes(bytes)));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Routed (alltoallv) messages' direction: dispatch-like to the experts'
// ranks, or the transpose, back from them.
std::string routing_direction(const collbench::Message& message) {
  return message.routing_returns ? "from experts" : "to experts";
}

bool has_routed_messages(const collbench::Workload& workload) {
  return std::any_of(workload.sequence.begin(), workload.sequence.end(),
                     [](const collbench::Message& message) {
                       return message.collective == collbench::kAlltoallv;
                     });
}

// Workloads with routed messages (moe) get the routing columns; the others
// keep the columns they always had.
void show_workload(const std::string& spec, std::size_t element_bytes, bool distinct, bool csv) {
  const collbench::Workload workload = collbench::parse_workload(spec, element_bytes);
  const std::vector<collbench::Message>& messages =
      distinct ? workload.distinct : workload.sequence;
  const bool routed = has_routed_messages(workload);
  std::vector<std::vector<std::string>> rows;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const collbench::Message& message = messages[i];
    cumulative += message.bytes * static_cast<std::uint64_t>(message.multiplicity);
    if (csv) {
      rows.push_back({workload.spec, std::to_string(i), message.collective, message.item,
                      std::to_string(message.elements), std::to_string(workload.element_bytes),
                      std::to_string(message.bytes), std::to_string(message.multiplicity)});
      if (routed) {
        rows.back().push_back(fmt::format("{}", message.routing_skew));
        rows.back().push_back(message.routing_returns ? "1" : "0");
      }
    } else {
      rows.push_back({std::to_string(i), message.collective, message.item,
                      with_thousands(message.elements), with_thousands(message.bytes),
                      std::to_string(message.multiplicity),
                      fmt::format("{:.2f}", static_cast<double>(cumulative) / kMiB)});
      if (routed) {
        rows.back().push_back(routing_direction(message));
        rows.back().push_back(fmt::format("{}", message.routing_skew));
      }
    }
  }
  if (csv) {
    std::vector<std::string> header = {"workload", "index",         "collective", "item",
                                       "elements", "element_bytes", "bytes",      "multiplicity"};
    if (routed) header.insert(header.end(), {"routing_skew", "routing_returns"});
    print_csv(header, rows);
    return;
  }
  fmt::print("{}: {} messages per iteration of {}-byte elements: {}\n", workload.spec,
             workload.sequence.size(), workload.element_bytes, per_collective_totals(workload));
  fmt::print("{}\n", distinct
                         ? "distinct sizes per collective, ascending (item: the first of each):"
                         : "messages in the order they are issued:");
  std::vector<std::string> header = {
      "#", "collective", "item", "elements", "bytes", "per iteration", "cumulative (MiB)"};
  std::vector<bool> left_aligned = {false, true, true, false, false, false, false};
  if (routed) {
    header.insert(header.end(), {"routing", "skew"});
    left_aligned.insert(left_aligned.end(), {true, false});
  }
  print_table(header, rows, left_aligned);
}

}  // namespace

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench-catalog");
  CLI::App app{
      "collbench-catalog: DNN models written as their architectures, with their gradient "
      "tensors, sizes and FLOPs."};
  app.require_subcommand(1);
  app.footer(
      "Units: parameters and elements are counts; bytes are elements x the dtype's size (f32 4, "
      "f64 8, f16 2, bf16 2); MiB = 2^20 bytes; GFLOP = 10^9 floating-point operations (one "
      "multiply-add = 2). CAP sizes accept B, KiB, MiB, GiB, TiB (powers of 1024) and kB/KB, "
      "MB, GB, TB (powers of 1000), e.g. ddp=50MiB.");

  std::string dtype = "f32";
  bool csv = false;
  CLI::App* list = app.add_subcommand(
      "list", "One line per model: parameters, tensors, gradient size, forward FLOPs per sample");
  list->add_option("--dtype", dtype, "Gradient element type: f32, f64, f16, bf16")
      ->capture_default_str();
  list->add_flag("--csv", csv, "Write CSV to stdout instead of a table");

  std::string model_name;
  std::string buckets;
  CLI::App* show = app.add_subcommand(
      "show", "One model's gradient tensors in backprop order, or its gradient buckets");
  show->add_option("model", model_name, "Model name (see `collbench-catalog list`)")->required();
  CLI::Option* buckets_option =
      show->add_option("--buckets", buckets,
                       fmt::format("Show buckets instead of tensors: ddp, ddp=CAP (PyTorch DDP; "
                                   "first bucket {}, then CAP, default {}), fusion, fusion=CAP "
                                   "(Horovod, default {})",
                                   collbench::format_bytes(collbench::kDdpFirstBucketBytes),
                                   collbench::format_bytes(collbench::kDdpBucketBytes),
                                   collbench::format_bytes(collbench::kHorovodFusionBytes)));
  show->add_option("--dtype", dtype, "Gradient element type: f32, f64, f16, bf16")
      ->capture_default_str();
  show->add_flag("--csv", csv, "Write CSV to stdout instead of a table");

  std::string workload_spec;
  bool distinct = false;
  CLI::App* workload = app.add_subcommand(
      "workload",
      "One workload's messages, each with its collective, in the order one training iteration "
      "issues them, or its distinct sizes per collective");
  workload->add_option("spec", workload_spec, collbench::workload_syntax())->required();
  workload
      ->add_option("--dtype", dtype,
                   "Element type of the kinds that take the run's (MODEL, total, ddp, fusion, "
                   "deepbench): f32, f64, f16, bf16; fsdp, zero2, tp and moe carry their own")
      ->capture_default_str();
  workload->add_flag("--distinct", distinct,
                     "Distinct sizes per collective with their multiplicity instead");
  workload->add_flag("--csv", csv,
                     "Write CSV to stdout instead of a table (moe adds the columns "
                     "routing_skew and routing_returns: 1 for a transfer back from the experts)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
    std::string message = error.what();
    const std::string_view first = argc > 1 ? argv[1] : "";
    if (!list->parsed() && !show->parsed() && !workload->parsed()) {
      // CLI11 says "A subcommand is required" for a misspelt one too.
      message = first.empty() || first.front() == '-'
                    ? "a subcommand is required; accepted: list, show, workload"
                    : fmt::format("unknown subcommand '{}'; accepted: list, show, workload", first);
    }
    fmt::print(stderr, "collbench-catalog: {} (see collbench-catalog --help)\n", message);
    return kUsageError;
  }

  try {
    if (list->parsed()) {
      run_list(dtype, csv);
    } else if (workload->parsed()) {
      show_workload(workload_spec, collbench::dtype_element_bytes(dtype), distinct, csv);
    } else {
      const std::size_t element_bytes = collbench::dtype_element_bytes(dtype);
      const Model& model = collbench::find_model(model_name);
      if (buckets_option->count() == 0) {
        show_tensors(model, dtype, element_bytes, csv);
      } else {
        show_buckets(model, buckets, dtype, element_bytes, csv);
      }
    }
  } catch (const std::invalid_argument& error) {
    fmt::print(stderr, "collbench-catalog: {}\n", error.what());
    return kUsageError;
  } catch (const std::exception& error) {
    fmt::print(stderr, "collbench-catalog: internal error: {}\n", error.what());
    return 1;
  }
  return 0;
}
