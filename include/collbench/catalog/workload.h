// Workloads: the allreduce messages that one training iteration of a catalog
// model sends, as `collbench --workload SPEC` names them.
//
//   MODEL               every gradient tensor as its own allreduce
//   MODEL:total         the whole gradient as one message
//   MODEL:ddp[=CAP]     PyTorch DDP buckets (first bucket 1 MiB, then CAP,
//                       default 25 MiB)
//   MODEL:fusion[=CAP]  Horovod tensor fusion into buffers of CAP (128 MiB)
//   deepbench           the 7 DeepBench all-reduce sizes, in elements
// CAP is a byte size as sizes.h parses it ("50MiB", "32MB", "1048576").
// Message bytes are elements x the dtype's element size, so a cap holds
// twice as many f16 elements as f32 ones.
//
// A Workload carries two views of the same messages:
//   sequence  one iteration's messages in the order they are issued (backprop
//             order), for the per-model exchange benchmark;
//   distinct  one message per distinct byte size, ascending, with the number
//             of times it occurs per iteration, for per-size benchmarks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/catalog/catalog.h"

namespace collbench {

enum class WorkloadKind { tensors, total, ddp, fusion, deepbench };
std::string_view to_string(WorkloadKind kind);

// torch.distributed._DEFAULT_FIRST_BUCKET_BYTES and DDP's bucket_cap_mb=25.
inline constexpr std::uint64_t kDdpFirstBucketBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kDdpBucketBytes = std::uint64_t{25} << 20;
// Horovod's default HOROVOD_FUSION_THRESHOLD: 128 MiB since v0.21.0 (its
// CHANGELOG.md, v0.21.0 "Changed": "Changed default cycle time from 5ms to
// 1ms and fusion threshold from 64MB to 128MB", horovod/horovod#2468; 64 MiB
// before). Its MB are MiB: horovod/common/operations.cc sets
// SetTensorFusionThresholdBytes(128 * 1024 * 1024).
inline constexpr std::uint64_t kHorovodFusionBytes = std::uint64_t{128} << 20;

// DeepBench's all-reduce sizes (baidu-research/DeepBench, all_reduce
// kernels), counted in floats.
inline constexpr std::array<std::uint64_t, 7> kDeepBenchAllreduceElements = {
    100000, 3097600, 4194304, 6553600, 16777217, 38360000, 64500000};

// A run of consecutive tensors of Model::tensors_backprop_order reduced as
// one message. Tensors are never split across buckets.
struct Bucket {
  std::size_t first_tensor = 0;
  std::size_t tensor_count = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  std::uint64_t cap_bytes = 0;  // the cap in force while this bucket filled
};

// PyTorch DDP's bucket assignment after its first-iteration rebuild
// (Reducer::rebuild_buckets -> compute_bucket_assignment_by_size), with the
// tensors in gradient-ready order: a tensor is appended to the open bucket,
// and the bucket closes as soon as its size reaches the cap (>=). The first
// bucket's cap is `first_cap_bytes`, every later one `cap_bytes`. So, as in
// torch, a closed bucket may pass its cap by less than its last tensor, and
// a tensor larger than the cap closes the bucket it joins.
// Throws std::invalid_argument for a zero element size or cap.
std::vector<Bucket> ddp_buckets(const Model& model, std::size_t element_bytes,
                                std::uint64_t cap_bytes = kDdpBucketBytes,
                                std::uint64_t first_cap_bytes = kDdpFirstBucketBytes);

// Horovod tensor fusion (Controller::FuseResponses) with every gradient
// ready in backprop order: tensors fill a buffer of `cap_bytes` in order; a
// tensor that would overflow it starts the next buffer, and a tensor larger
// than the cap travels alone. Per-cycle readiness and alignment padding are
// not modelled. Throws std::invalid_argument for a zero element size or cap.
std::vector<Bucket> fusion_buckets(const Model& model, std::size_t element_bytes,
                                   std::uint64_t cap_bytes = kHorovodFusionBytes);

struct Message {
  std::string item;  // tensor name, "bucket N", "all N tensors" or "N elements"
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  int multiplicity = 1;  // occurrences per iteration (1 in `sequence`)
};

struct Workload {
  std::string spec;   // canonical form, e.g. "resnet50:ddp=25MiB"
  std::string model;  // empty for deepbench
  WorkloadKind kind = WorkloadKind::tensors;
  std::uint64_t cap_bytes = 0;  // ddp and fusion only
  std::size_t element_bytes = 0;
  std::vector<Message> sequence;
  std::vector<Message> distinct;
};

// Throws std::invalid_argument quoting `spec` and saying what is accepted:
// unknown model (with the list of known names), unknown kind, a cap where
// none is taken, an empty or invalid cap, a zero element size.
Workload parse_workload(std::string_view spec, std::size_t element_bytes);
// Several specs separated by commas, e.g. "resnet50:ddp,bert_base:total".
std::vector<Workload> parse_workloads(std::string_view specs, std::size_t element_bytes);
// The grammar above as help text for command-line tools.
std::string workload_syntax();

}  // namespace collbench
