// Tests of gradient bucketing (PyTorch DDP and Horovod fusion), of the
// sharded, tensor- and expert-parallel workloads (FSDP, ZeRO-2, Megatron
// TP, MoE) and of
// workload specs: exact messages on models small enough to check by hand,
// invariants on every catalog model, and the parser's errors.
#include "collbench/catalog/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/catalog/catalog.h"

namespace collbench {
namespace {

constexpr std::size_t kF32 = 4;

// Eight tensors in backprop order; with f32 their sizes in bytes are
// 8, 12, 4, 80, 20, 20, 16, 4 (164 in all).
Model tiny_model() {
  Model model;
  model.name = "tiny";
  const std::vector<std::int64_t> elements = {2, 3, 1, 20, 5, 5, 4, 1};
  for (std::size_t i = 0; i < elements.size(); ++i) {
    std::string name = "t";
    name += std::to_string(i);  // not "t" + ...: GCC 12's -Wrestrict misfires on it
    model.tensors_backprop_order.push_back({name, {elements[i]}, elements[i], ""});
  }
  return model;
}

struct Expected {
  std::size_t first_tensor;
  std::size_t tensor_count;
  std::uint64_t bytes;
  std::uint64_t cap_bytes;
};

void expect_buckets(const std::vector<Bucket>& actual, const std::vector<Expected>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("bucket " + std::to_string(i));
    EXPECT_EQ(actual[i].first_tensor, expected[i].first_tensor);
    EXPECT_EQ(actual[i].tensor_count, expected[i].tensor_count);
    EXPECT_EQ(actual[i].bytes, expected[i].bytes);
    EXPECT_EQ(actual[i].elements, expected[i].bytes / kF32);
    EXPECT_EQ(actual[i].cap_bytes, expected[i].cap_bytes);
  }
}

TEST(DdpBuckets, HandCheckedBoundaries) {
  // First cap 16: 8 (<16), +12 = 20 >= 16 closes {t0, t1}.
  // Cap 40: 4, +80 = 84 >= 40 closes {t2, t3}: the 80-byte tensor joins
  // the open bucket and closes it, as torch's compute_bucket_assignment_by_size does.
  // 20, +20 = 40 >= 40 closes {t4, t5}; 16 + 4 = 20 is the remainder.
  expect_buckets(ddp_buckets(tiny_model(), kF32, /*cap_bytes=*/40, /*first_cap_bytes=*/16),
                 {{0, 2, 20, 16}, {2, 2, 84, 40}, {4, 2, 40, 40}, {6, 2, 20, 40}});
}

TEST(DdpBuckets, OversizedTensorIntoAnEmptyBucketStandsAlone) {
  // Caps of 4: every tensor reaches the cap by itself.
  const auto buckets = ddp_buckets(tiny_model(), kF32, 4, 4);
  ASSERT_EQ(buckets.size(), 8u);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(buckets[i].first_tensor, i);
    EXPECT_EQ(buckets[i].tensor_count, 1u);
  }
}

TEST(FusionBuckets, HandCheckedBoundaries) {
  // Cap 40: 8 + 12 + 4 = 24, +80 would overflow -> {t0..t2}; 80 alone
  // (larger than the cap); 20 + 20 = 40 fits exactly, +16 would not;
  // 16 + 4 = 20.
  expect_buckets(fusion_buckets(tiny_model(), kF32, 40),
                 {{0, 3, 24, 40}, {3, 1, 80, 40}, {4, 2, 40, 40}, {6, 2, 20, 40}});
}

TEST(FusionBuckets, CapAboveTheGradientGivesOneBuffer) {
  expect_buckets(fusion_buckets(tiny_model(), kF32, 1000), {{0, 8, 164, 1000}});
}

TEST(Buckets, ZeroCapOrElementSizeIsRejected) {
  EXPECT_THROW(ddp_buckets(tiny_model(), kF32, 0), std::invalid_argument);
  EXPECT_THROW(ddp_buckets(tiny_model(), kF32, 40, 0), std::invalid_argument);
  EXPECT_THROW(ddp_buckets(tiny_model(), 0), std::invalid_argument);
  EXPECT_THROW(fusion_buckets(tiny_model(), kF32, 0), std::invalid_argument);
  EXPECT_THROW(fusion_buckets(tiny_model(), 0), std::invalid_argument);
}

// Buckets must partition the tensor list: contiguous, in order, none split,
// none left out, sizes summing to the tensors they hold.
void expect_partition(const Model& model, const std::vector<Bucket>& buckets,
                      std::size_t element_bytes) {
  std::size_t next = 0;
  for (const Bucket& bucket : buckets) {
    ASSERT_EQ(bucket.first_tensor, next);
    ASSERT_GT(bucket.tensor_count, 0u);
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < bucket.tensor_count; ++i) {
      bytes += model.tensors_backprop_order[next + i].bytes(element_bytes);
    }
    EXPECT_EQ(bucket.bytes, bytes);
    EXPECT_EQ(bucket.elements * element_bytes, bytes);
    next += bucket.tensor_count;
  }
  EXPECT_EQ(next, model.tensors_backprop_order.size());
}

class EveryModel : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryModel, DdpBucketsCloseAtTheFirstTensorThatReachesTheCap) {
  const Model& model = find_model(GetParam());
  for (std::size_t element_bytes : {2u, 4u, 8u}) {
    SCOPED_TRACE("element bytes " + std::to_string(element_bytes));
    const auto buckets = ddp_buckets(model, element_bytes);
    expect_partition(model, buckets, element_bytes);
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const Bucket& bucket = buckets[b];
      EXPECT_EQ(bucket.cap_bytes, b == 0 ? kDdpFirstBucketBytes : kDdpBucketBytes);
      const std::uint64_t last_tensor_bytes =
          model.tensors_backprop_order[bucket.first_tensor + bucket.tensor_count - 1].bytes(
              element_bytes);
      // Without its last tensor, no bucket had reached its cap yet.
      EXPECT_LT(bucket.bytes - last_tensor_bytes, bucket.cap_bytes) << "bucket " << b;
      // Every bucket but the last was closed by reaching its cap.
      if (b + 1 < buckets.size()) {
        EXPECT_GE(bucket.bytes, bucket.cap_bytes) << "bucket " << b;
      }
    }
  }
}

TEST_P(EveryModel, FusionBuffersRespectTheCapAndAreFull) {
  const Model& model = find_model(GetParam());
  for (std::uint64_t cap : {kHorovodFusionBytes, std::uint64_t{4} << 20}) {
    const auto buckets = fusion_buckets(model, kF32, cap);
    expect_partition(model, buckets, kF32);
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const Bucket& bucket = buckets[b];
      // Over the cap only when a single tensor is larger than the cap.
      if (bucket.tensor_count > 1) {
        EXPECT_LE(bucket.bytes, cap) << "bucket " << b;
      }
      // A buffer was closed only because the next tensor would not fit.
      if (b + 1 < buckets.size()) {
        const std::uint64_t next_bytes =
            model.tensors_backprop_order[buckets[b + 1].first_tensor].bytes(kF32);
        EXPECT_GT(bucket.bytes + next_bytes, cap) << "bucket " << b;
      }
    }
  }
}

TEST_P(EveryModel, EveryWorkloadKindCarriesTheWholeGradient) {
  const Model& model = find_model(GetParam());
  for (const char* suffix : {"", ":total", ":ddp", ":ddp=50MiB", ":fusion", ":fusion=8MB"}) {
    for (std::size_t element_bytes : {2u, 4u}) {
      const Workload workload = parse_workload(model.name + suffix, element_bytes);
      SCOPED_TRACE(workload.spec);
      std::uint64_t sequence_bytes = 0;
      for (const Message& message : workload.sequence) {
        EXPECT_EQ(message.multiplicity, 1);
        EXPECT_EQ(message.bytes, message.elements * element_bytes);
        sequence_bytes += message.bytes;
      }
      EXPECT_EQ(sequence_bytes, model.gradient_bytes(element_bytes));
      std::uint64_t distinct_bytes = 0;
      std::size_t distinct_count = 0;
      for (std::size_t i = 0; i < workload.distinct.size(); ++i) {
        if (i > 0) {
          EXPECT_LT(workload.distinct[i - 1].bytes, workload.distinct[i].bytes);
        }
        distinct_bytes += workload.distinct[i].bytes *
                          static_cast<std::uint64_t>(workload.distinct[i].multiplicity);
        distinct_count += static_cast<std::size_t>(workload.distinct[i].multiplicity);
      }
      EXPECT_EQ(distinct_bytes, sequence_bytes);
      EXPECT_EQ(distinct_count, workload.sequence.size());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, EveryModel, ::testing::ValuesIn(model_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

TEST(Workload, ResNet50PerTensorSequenceIsBackpropOrder) {
  const Workload workload = parse_workload("resnet50", kF32);
  EXPECT_EQ(workload.spec, "resnet50");
  EXPECT_EQ(workload.kind, WorkloadKind::tensors);
  EXPECT_EQ(workload.model, "resnet50");
  ASSERT_EQ(workload.sequence.size(), 161u);
  EXPECT_EQ(workload.sequence[0].item, "fc.bias");
  EXPECT_EQ(workload.sequence[0].bytes, 1000u * kF32);
  EXPECT_EQ(workload.sequence[1].item, "fc.weight");
  EXPECT_EQ(workload.sequence[1].bytes, 2048u * 1000u * kF32);
  // The smallest distinct size is the 64-channel batch-norm vectors: bn1
  // and, per layer1 block, bn1 and bn2 (3 blocks): 2 x (1 + 3 x 2) = 14.
  ASSERT_FALSE(workload.distinct.empty());
  EXPECT_EQ(workload.distinct[0].bytes, 64u * kF32);
  EXPECT_EQ(workload.distinct[0].multiplicity, 14);
}

TEST(Workload, TotalIsOneMessageOfTheWholeGradient) {
  const Workload workload = parse_workload("bert_base:total", 2);
  EXPECT_EQ(workload.spec, "bert_base:total");
  ASSERT_EQ(workload.sequence.size(), 1u);
  EXPECT_EQ(workload.sequence[0].elements, 109'482'240u);
  EXPECT_EQ(workload.sequence[0].bytes, 109'482'240u * 2);
  ASSERT_EQ(workload.distinct.size(), 1u);
  EXPECT_EQ(workload.distinct[0].multiplicity, 1);
}

TEST(Workload, DdpDefaultsAndCapSyntax) {
  const Workload by_default = parse_workload("resnet50:ddp", kF32);
  EXPECT_EQ(by_default.spec, "resnet50:ddp=25MiB");
  EXPECT_EQ(by_default.cap_bytes, kDdpBucketBytes);
  // fc.bias (4 KB) then fc.weight (8.2 MB) reaches the 1 MiB first cap.
  ASSERT_FALSE(by_default.sequence.empty());
  EXPECT_EQ(by_default.sequence[0].bytes, (1000u + 2048u * 1000u) * kF32);
  EXPECT_EQ(by_default.sequence[0].item, "bucket 0");

  const Workload capped = parse_workload(" resnet50:ddp=50MiB ", kF32);
  EXPECT_EQ(capped.spec, "resnet50:ddp=50MiB");
  EXPECT_EQ(capped.cap_bytes, 50u << 20);
  EXPECT_LT(capped.sequence.size(), by_default.sequence.size());

  const Workload decimal = parse_workload("resnet50:fusion=1000000", kF32);
  EXPECT_EQ(decimal.spec, "resnet50:fusion=1000000B");
  // Horovod's default fusion threshold since v0.21.0 (64 MiB before).
  const Workload horovod_default = parse_workload("gpt2:fusion", kF32);
  EXPECT_EQ(horovod_default.spec, "gpt2:fusion=128MiB");
  EXPECT_EQ(horovod_default.cap_bytes, std::uint64_t{128} << 20);
}

TEST(Workload, CapsCountBytesSoHalfPrecisionFitsMoreTensors) {
  const auto f32 = parse_workload("vgg16:fusion=32MiB", 4);
  const auto f16 = parse_workload("vgg16:fusion=32MiB", 2);
  EXPECT_LT(f16.sequence.size(), f32.sequence.size());
}

TEST(Workload, DeepBenchSizesAreElements) {
  const Workload f32 = parse_workload("deepbench", 4);
  EXPECT_EQ(f32.spec, "deepbench");
  EXPECT_EQ(f32.kind, WorkloadKind::deepbench);
  EXPECT_TRUE(f32.model.empty());
  const std::vector<std::uint64_t> elements = {100000,   3097600,  4194304, 6553600,
                                               16777217, 38360000, 64500000};
  ASSERT_EQ(f32.sequence.size(), elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) {
    EXPECT_EQ(f32.sequence[i].elements, elements[i]);
    EXPECT_EQ(f32.sequence[i].bytes, elements[i] * 4);
  }
  EXPECT_EQ(parse_workload("deepbench", 8).sequence[4].bytes, 16777217u * 8);
}

TEST(Workload, ListsCombineSpecs) {
  const auto workloads = parse_workloads("resnet50:ddp, deepbench,gpt2", kF32);
  ASSERT_EQ(workloads.size(), 3u);
  EXPECT_EQ(workloads[0].spec, "resnet50:ddp=25MiB");
  EXPECT_EQ(workloads[1].spec, "deepbench");
  EXPECT_EQ(workloads[2].spec, "gpt2");
}

// --- Collectives of the messages ---------------------------------------------

TEST_P(EveryModel, DataParallelKindsAreAllreducesOnly) {
  for (const char* suffix : {"", ":total", ":ddp", ":fusion"}) {
    const Workload workload = parse_workload(GetParam() + suffix, kF32);
    for (const Message& message : workload.sequence) {
      EXPECT_EQ(message.collective, "allreduce") << workload.spec << " " << message.item;
    }
  }
}

// distinct: grouped by collective in the table's order, ascending sizes
// within each, multiplicities adding up to the sequence per collective.
void expect_distinct_per_collective(const Workload& workload) {
  SCOPED_TRACE(workload.spec);
  std::size_t previous_position = 0;
  for (std::size_t i = 0; i < workload.distinct.size(); ++i) {
    const Message& message = workload.distinct[i];
    const auto position = static_cast<std::size_t>(
        std::find(kWorkloadCollectives.begin(), kWorkloadCollectives.end(), message.collective) -
        kWorkloadCollectives.begin());
    ASSERT_LT(position, kWorkloadCollectives.size()) << message.collective;
    EXPECT_GE(position, previous_position);
    if (i > 0 && position == previous_position) {
      EXPECT_LT(workload.distinct[i - 1].bytes, message.bytes);
    }
    previous_position = position;
  }
  for (const std::string_view collective : kWorkloadCollectives) {
    std::uint64_t sequence_bytes = 0;
    std::size_t sequence_count = 0;
    for (const Message& message : workload.sequence) {
      if (message.collective != collective) continue;
      sequence_bytes += message.bytes;
      ++sequence_count;
    }
    std::uint64_t distinct_bytes = 0;
    std::size_t distinct_count = 0;
    for (const Message& message : workload.distinct) {
      if (message.collective != collective) continue;
      distinct_bytes += message.bytes * static_cast<std::uint64_t>(message.multiplicity);
      distinct_count += static_cast<std::size_t>(message.multiplicity);
    }
    EXPECT_EQ(distinct_bytes, sequence_bytes) << collective;
    EXPECT_EQ(distinct_count, sequence_count) << collective;
  }
}

// --- FSDP -----------------------------------------------------------------------

// In forward (registration) order: root "embed" (10), unit b0 (3 + 4),
// unit b1 (5), root "head" (2); stored in backprop order.
Model tiny_blocks_model() {
  Model model;
  model.name = "tiny_blocks";
  const std::vector<ParamTensor> forward = {{"embed", {10}, 10, ""},
                                            {"b0.x", {3}, 3, "b0"},
                                            {"b0.y", {4}, 4, "b0"},
                                            {"b1.x", {5}, 5, "b1"},
                                            {"head", {2}, 2, ""}};
  model.tensors_backprop_order.assign(forward.rbegin(), forward.rend());
  return model;
}

struct ExpectedMessage {
  const char* collective;
  const char* item;
  std::uint64_t elements;
};

void expect_messages(const std::vector<Message>& actual,
                     const std::vector<ExpectedMessage>& expected, std::size_t element_bytes) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    EXPECT_EQ(actual[i].collective, expected[i].collective);
    EXPECT_EQ(actual[i].item, expected[i].item);
    EXPECT_EQ(actual[i].elements, expected[i].elements);
    EXPECT_EQ(actual[i].bytes, expected[i].elements * element_bytes);
    EXPECT_EQ(actual[i].multiplicity, 1);
  }
}

TEST(Fsdp, HandCheckedIterationOfBlocksAndRoot) {
  // Forward gathers the root (embed + head = 12), then b0 and b1; backward
  // gathers each block again, last first, and reduce-scatters its
  // gradients; the root is not gathered again and reduces last.
  expect_messages(fsdp_messages(tiny_blocks_model(), FsdpUnit::block, 2),
                  {{"allgather", "root forward", 12},
                   {"allgather", "b0 forward", 7},
                   {"allgather", "b1 forward", 5},
                   {"allgather", "b1 backward", 5},
                   {"reduce_scatter", "b1 gradients", 5},
                   {"allgather", "b0 backward", 7},
                   {"reduce_scatter", "b0 gradients", 7},
                   {"reduce_scatter", "root gradients", 12}},
                  2);
  expect_messages(fsdp_messages(tiny_blocks_model(), FsdpUnit::model, 4),
                  {{"allgather", "root forward", 24}, {"reduce_scatter", "root gradients", 24}}, 4);
}

TEST(Fsdp, AModelOfBlocksOnlyHasNoRootMessages) {
  Model model = tiny_blocks_model();
  std::erase_if(model.tensors_backprop_order,
                [](const ParamTensor& tensor) { return tensor.unit.empty(); });
  expect_messages(fsdp_messages(model, FsdpUnit::block, 2),
                  {{"allgather", "b0 forward", 7},
                   {"allgather", "b1 forward", 5},
                   {"allgather", "b1 backward", 5},
                   {"reduce_scatter", "b1 gradients", 5},
                   {"allgather", "b0 backward", 7},
                   {"reduce_scatter", "b0 gradients", 7}},
                  2);
  EXPECT_THROW(fsdp_messages(model, FsdpUnit::block, 0), std::invalid_argument);
}

std::uint64_t root_elements(const Model& model) {
  std::uint64_t elements = 0;
  for (const ParamTensor& tensor : model.tensors_backprop_order) {
    if (tensor.unit.empty()) elements += static_cast<std::uint64_t>(tensor.elements);
  }
  return elements;
}

TEST_P(EveryModel, FsdpReducesEveryGradientOnceAndGathersBlocksTwice) {
  const Model& model = find_model(GetParam());
  const auto parameters = static_cast<std::uint64_t>(model.parameters());
  for (const char* suffix : {":fsdp", ":fsdp=model:f32"}) {
    const Workload workload = parse_workload(model.name + suffix, kF32);
    SCOPED_TRACE(workload.spec);
    const bool whole_model = workload.fsdp_unit == FsdpUnit::model;
    const std::uint64_t root = whole_model ? parameters : root_elements(model);
    std::uint64_t gathered = 0;
    std::uint64_t reduced = 0;
    bool reduced_yet = false;
    for (const Message& message : workload.sequence) {
      EXPECT_EQ(message.bytes, message.elements * workload.element_bytes);
      if (message.collective == "allgather") {
        gathered += message.elements;
        // Every forward gather comes before the first gradient.
        if (reduced_yet) {
          EXPECT_NE(message.item.find("backward"), std::string::npos) << message.item;
        }
      } else {
        ASSERT_EQ(message.collective, "reduce_scatter");
        reduced += message.elements;
        reduced_yet = true;
      }
    }
    EXPECT_EQ(reduced, parameters);
    EXPECT_EQ(gathered, 2 * parameters - root);
    expect_distinct_per_collective(workload);
  }
}

TEST(Fsdp, Llama2BlocksAndRootWithSpecDefaults) {
  const Workload workload = parse_workload("llama2_7b:fsdp", kF32);
  EXPECT_EQ(workload.spec, "llama2_7b:fsdp=block:bf16");
  EXPECT_EQ(workload.kind, WorkloadKind::fsdp);
  // bf16 whatever element size the caller passes.
  EXPECT_EQ(workload.element_bytes, 2u);
  // The root: embed_tokens and lm_head (32000 x 4096 each) and model.norm.
  constexpr std::uint64_t kRoot = 2 * 32000 * 4096 + 4096;
  constexpr std::uint64_t kBlock = 202'383'360;
  ASSERT_EQ(workload.sequence.size(), 1u + 32 + 2 * 32 + 1);
  EXPECT_EQ(workload.sequence.front().item, "root forward");
  EXPECT_EQ(workload.sequence.front().elements, kRoot);
  EXPECT_EQ(workload.sequence[1].item, "model.layers.0 forward");
  EXPECT_EQ(workload.sequence[33].item, "model.layers.31 backward");
  EXPECT_EQ(workload.sequence[34].item, "model.layers.31 gradients");
  EXPECT_EQ(workload.sequence.back().item, "root gradients");
  // Per collective: reduce_scatter {block x 32, root x 1}, allgather
  // {block x 64, root x 1}.
  ASSERT_EQ(workload.distinct.size(), 4u);
  const std::vector<std::tuple<std::string, std::uint64_t, int>> expected = {
      {"reduce_scatter", kBlock * 2, 32},
      {"reduce_scatter", kRoot * 2, 1},
      {"allgather", kBlock * 2, 64},
      {"allgather", kRoot * 2, 1}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(workload.distinct[i].collective, std::get<0>(expected[i]));
    EXPECT_EQ(workload.distinct[i].bytes, std::get<1>(expected[i]));
    EXPECT_EQ(workload.distinct[i].multiplicity, std::get<2>(expected[i]));
  }
  const Workload f32 = parse_workload("llama2_7b:fsdp=block:f32", 2);
  EXPECT_EQ(f32.element_bytes, 4u);
  EXPECT_EQ(f32.sequence.front().bytes, kRoot * 4);
}

TEST(Fsdp, ResNetStagesAreUnits) {
  const Workload workload = parse_workload("resnet50:fsdp:f32", kF32);
  EXPECT_EQ(workload.spec, "resnet50:fsdp=block:f32");
  std::vector<std::string> forward;
  for (const Message& message : workload.sequence) {
    if (message.item.ends_with(" forward")) forward.push_back(message.item);
  }
  EXPECT_EQ(forward, (std::vector<std::string>{"root forward", "layer1 forward", "layer2 forward",
                                               "layer3 forward", "layer4 forward"}));
}

// --- ZeRO-2 ---------------------------------------------------------------------

TEST(Zero2, HandCheckedBucketsThenOneParameterAllgather) {
  // Elements 2, 3, 1, 20, 5, 5, 4, 1 into buckets of 10 elements: 2+3+1 = 6
  // (20 would pass 10); 20 alone; 5+5 = 10 (4 would pass); 4+1 = 5.
  expect_messages(zero2_messages(tiny_model(), 10, 2),
                  {{"reduce_scatter", "bucket 0", 6},
                   {"reduce_scatter", "bucket 1", 20},
                   {"reduce_scatter", "bucket 2", 10},
                   {"reduce_scatter", "bucket 3", 5},
                   {"allgather", "updated parameters", 41}},
                  2);
  EXPECT_THROW(zero2_messages(tiny_model(), 0, 2), std::invalid_argument);
  EXPECT_THROW(zero2_messages(tiny_model(), 10, 0), std::invalid_argument);
}

TEST(Zero2, DeepSpeedDefaultBucketIsFiveHundredMillionElements) {
  const Workload workload = parse_workload("llama3_8b:zero2", kF32);
  EXPECT_EQ(workload.spec, "llama3_8b:zero2=500000000:bf16");
  EXPECT_EQ(workload.bucket_elements, 500'000'000u);
  EXPECT_EQ(workload.element_bytes, 2u);
  std::uint64_t reduced = 0;
  for (std::size_t i = 0; i + 1 < workload.sequence.size(); ++i) {
    const Message& message = workload.sequence[i];
    EXPECT_EQ(message.collective, "reduce_scatter");
    // Over the bucket only as a single tensor: lm_head and embed_tokens
    // (128256 x 4096 = 525,336,576 elements each) are larger than 5e8.
    if (message.elements != 128256u * 4096) {
      EXPECT_LE(message.elements, 500'000'000u) << message.item;
    }
    reduced += message.elements;
  }
  EXPECT_EQ(workload.sequence.front().elements, 128256u * 4096);
  EXPECT_EQ(reduced, 8'030'261'248u);
  EXPECT_EQ(workload.sequence.back().collective, "allgather");
  EXPECT_EQ(workload.sequence.back().elements, 8'030'261'248u);
  expect_distinct_per_collective(workload);

  const Workload small = parse_workload("bert_base:zero2=1000000:f32", 2);
  EXPECT_EQ(small.spec, "bert_base:zero2=1000000:f32");
  EXPECT_EQ(small.sequence.back().bytes, 109'482'240u * 4);
  EXPECT_GT(small.sequence.size(), 50u);
}

// --- Tensor parallelism ---------------------------------------------------------

TEST(TensorParallel, FourAllreducesPerLayerOfBatchTimesSequenceTimesHidden) {
  const Workload workload = parse_workload("gpt2:tp=2", kF32);
  EXPECT_EQ(workload.spec, "gpt2:tp=2:batch=1:seq=1024:bf16");
  EXPECT_EQ(workload.tensor_parallel, 2);
  ASSERT_EQ(workload.sequence.size(), 12u * 4);
  for (const Message& message : workload.sequence) {
    EXPECT_EQ(message.collective, "allreduce");
    EXPECT_EQ(message.elements, 1024u * 768);
    EXPECT_EQ(message.bytes, 1024u * 768 * 2);
  }
  EXPECT_EQ(workload.sequence[0].item, "layer 0 attention forward");
  EXPECT_EQ(workload.sequence[1].item, "layer 0 mlp forward");
  EXPECT_EQ(workload.sequence[23].item, "layer 11 mlp forward");
  EXPECT_EQ(workload.sequence[24].item, "layer 11 mlp backward");
  EXPECT_EQ(workload.sequence[25].item, "layer 11 attention backward");
  EXPECT_EQ(workload.sequence.back().item, "layer 0 attention backward");
  ASSERT_EQ(workload.distinct.size(), 1u);
  EXPECT_EQ(workload.distinct[0].multiplicity, 48);

  const Workload options = parse_workload("llama3_8b:tp=8:seq=2048:batch=4:f32", 2);
  EXPECT_EQ(options.spec, "llama3_8b:tp=8:batch=4:seq=2048:f32");
  EXPECT_EQ(options.sequence.size(), 32u * 4);
  EXPECT_EQ(options.sequence.front().elements, 4u * 2048 * 4096);
  EXPECT_EQ(options.sequence.front().bytes, 4u * 2048 * 4096 * 4);
  EXPECT_EQ(parse_workload("vit_b16:tp=4", kF32).sequence.front().elements, 197u * 768);
  EXPECT_EQ(parse_workload("mixtral_8x7b:tp=2", kF32).sequence.front().elements, 32768u * 4096);
}

TEST(TensorParallel, RefusesWhatMegatronCannotSplit) {
  EXPECT_THROW(tensor_parallel_messages(find_model("resnet50"), 2, 1, 1, 2), std::invalid_argument);
  EXPECT_THROW(tensor_parallel_messages(find_model("gpt2"), 1, 1, 1, 2), std::invalid_argument);
  // 8 key/value heads: 16 ranks cannot split them.
  EXPECT_THROW(tensor_parallel_messages(find_model("llama3_8b"), 16, 1, 1, 2),
               std::invalid_argument);
  EXPECT_NO_THROW(tensor_parallel_messages(find_model("llama3_8b"), 8, 1, 1, 2));
  EXPECT_THROW(tensor_parallel_messages(find_model("gpt2"), 2, 0, 1, 2), std::invalid_argument);
  EXPECT_THROW(tensor_parallel_messages(find_model("gpt2"), 2, std::uint64_t{1} << 40,
                                        std::uint64_t{1} << 40, 2),
               std::invalid_argument);
}

TEST_P(EveryModel, CanonicalSpecsParseBackToThemselves) {
  const Model& model = find_model(GetParam());
  std::vector<std::string> suffixes = {"",      ":total",          ":ddp",   ":fusion=8MB",
                                       ":fsdp", ":fsdp=model:f32", ":zero2", ":zero2=1000:f32"};
  if (model.transformer.layers > 0) suffixes.push_back(":tp=2:seq=64");
  if (model.transformer.experts > 0) {
    suffixes.insert(suffixes.end(), {":moe", ":moe:skew=1.2:seq=64:f32", ":moe:batch=3:skew=0.25"});
  }
  for (const std::string& suffix : suffixes) {
    const Workload workload = parse_workload(model.name + suffix, kF32);
    const Workload again = parse_workload(workload.spec, kF32);
    EXPECT_EQ(again.spec, workload.spec);
    EXPECT_EQ(again.sequence.size(), workload.sequence.size()) << workload.spec;
  }
}

// Every error must quote the bad spec and carry `expected` in its message.
void expect_rejected(const std::string& spec, const std::string& expected,
                     std::size_t element_bytes = kF32) {
  try {
    parse_workload(spec, element_bytes);
    ADD_FAILURE() << "\"" << spec << "\" was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("\"" + spec + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_TRUE(message.find("MODEL:ddp[=CAP]") != std::string::npos ||
                message.find("MODEL:fusion[=CAP]") != std::string::npos)
        << message;
  }
}

TEST(Workload, ParseErrorsSayWhatFailedAndWhatIsAccepted) {
  expect_rejected("", "empty");
  expect_rejected("resnet", "\"resnet\" is neither a known model nor deepbench");
  expect_rejected("resnet", "resnet50, resnet152");
  expect_rejected("resnet50:", "nothing follows ':'");
  expect_rejected("resnet50:buckets", "unknown kind \"buckets\"");
  expect_rejected("resnet50:total=4MiB", "total takes no =CAP");
  expect_rejected("resnet50:ddp=", "bad CAP");
  expect_rejected("resnet50:ddp=12XB", "unknown unit \"XB\"");
  expect_rejected("resnet50:fusion=0", "zero bytes");
  expect_rejected("resnet50:fusion=-1MiB", "negative");
  expect_rejected("deepbench:total", "deepbench takes no ':' suffix");
  expect_rejected("resnet50", "element size", 0);
  expect_rejected("resnet50:ddp:f32", "ddp takes no ':' options");
  expect_rejected("resnet50:total:bf16", "total takes no ':' options");
}

TEST(Workload, ParallelSpecErrorsSayWhatFailed) {
  expect_rejected("resnet50:tp=2", "resnet50 is not a transformer");
  expect_rejected("gpt2:tp=0", "K = 0 must be at least 2");
  expect_rejected("gpt2:tp=1", "degree 1 exchanges nothing");
  expect_rejected("gpt2:tp", "tp needs its degree, tp=K");
  expect_rejected("gpt2:tp=", "the degree K \"\" must be a whole number");
  expect_rejected("gpt2:tp=two", "the degree K \"two\" must be a whole number");
  expect_rejected("bert_base:tp=8", "must divide bert_base's 12 attention heads");
  expect_rejected("llama3_8b:tp=16", "8 key/value heads");
  expect_rejected("gpt2:tp=2:batch=0", "batch \"0\" must be a whole number of at least 1");
  expect_rejected("gpt2:tp=2:seq=-5",
                  "seq \"-5\" is negative; it must be a whole number of at least 1");
  expect_rejected("gpt2:tp=-2", "the degree K \"-2\" is negative");
  expect_rejected(
      "gpt2:tp=2:batch=18446744073709551616",
      "batch \"18446744073709551616\" overflows 64 bits (at most 18446744073709551615)");
  expect_rejected("gpt2:tp=2:seq", "unknown option \"seq\" of tp");
  expect_rejected("gpt2:tp=2:batch=2:batch=3", "option \"batch\" is given twice");
  expect_rejected("gpt2:tp=2:", "an option between ':' is empty");
  expect_rejected("llama2_7b:fsdp=layer", "unknown fsdp unit \"layer\" (accepted: block, model)");
  expect_rejected("llama2_7b:fsdp:f16", "unknown option \"f16\" of fsdp (accepted: bf16, f32)");
  expect_rejected("llama2_7b:fsdp:batch=2", "unknown option \"batch=2\" of fsdp");
  expect_rejected("llama2_7b:fsdp:bf16:f32", "option \"f32\" gives the precision again");
  expect_rejected("llama2_7b:zero2=0", "ELEMENTS \"0\" must be a whole number of at least 1");
  expect_rejected("llama2_7b:zero2=5e8", "ELEMENTS \"5e8\" must be a whole number");
  expect_rejected("llama2_7b:zero2=99999999999999999999",
                  "ELEMENTS \"99999999999999999999\" overflows 64 bits");
  // The bucket's bytes (bf16, ZeRO-2's default) overflow: said without the
  // generator's name.
  expect_rejected("llama2_7b:zero2=18446744073709551615",
                  "invalid workload \"llama2_7b:zero2=18446744073709551615\": a bucket of "
                  "18446744073709551615 elements of 2 bytes overflows 64 bits");
  expect_rejected("llama2_7b:experts", "unknown kind \"experts\"");
  EXPECT_THROW(parse_workloads("resnet50,,gpt2", kF32), std::invalid_argument);
  EXPECT_THROW(parse_workloads("", kF32), std::invalid_argument);
}

// --- Expert parallelism (MoE) ---------------------------------------------------

// Two MoE layers of hidden 7, top-3 of 4 experts: batch 2 x sequence 5
// tokens give 2 x 5 x 3 x 7 = 210 elements per alltoallv.
Model tiny_moe_model() {
  Model model;
  model.name = "tiny_moe";
  model.transformer = {.layers = 2,
                       .hidden = 7,
                       .heads = 1,
                       .kv_heads = 1,
                       .sequence = 5,
                       .experts = 4,
                       .experts_per_token = 3};
  return model;
}

TEST(Moe, HandCheckedIterationOfDispatchesAndCombines) {
  const std::vector<Message> messages = moe_messages(tiny_moe_model(), 2, 5, 0.75, 4);
  // Forward: each layer dispatches to the experts, then combines back;
  // backward, last layer first: the combine's gradient (towards the
  // experts), then the dispatch's (back from them).
  expect_messages(messages,
                  {{"alltoallv", "layer 0 dispatch forward", 210},
                   {"alltoallv", "layer 0 combine forward", 210},
                   {"alltoallv", "layer 1 dispatch forward", 210},
                   {"alltoallv", "layer 1 combine forward", 210},
                   {"alltoallv", "layer 1 combine backward", 210},
                   {"alltoallv", "layer 1 dispatch backward", 210},
                   {"alltoallv", "layer 0 combine backward", 210},
                   {"alltoallv", "layer 0 dispatch backward", 210}},
                  4);
  const std::vector<bool> returns = {false, true, false, true, false, true, false, true};
  ASSERT_EQ(messages.size(), returns.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    SCOPED_TRACE(messages[i].item);
    EXPECT_EQ(messages[i].routing_returns, returns[i]);
    EXPECT_EQ(messages[i].routing_skew, 0.75);
  }
}

TEST(Moe, Mixtral8x7bDefaultsAreBf16TopTwoOfTheFullContext) {
  const Workload workload = parse_workload("mixtral_8x7b:moe", kF32);
  EXPECT_EQ(workload.spec, "mixtral_8x7b:moe:batch=1:seq=32768:skew=0:bf16");
  EXPECT_EQ(workload.kind, WorkloadKind::moe);
  EXPECT_EQ(to_string(workload.kind), "moe");
  EXPECT_EQ(workload.batch, 1u);
  EXPECT_EQ(workload.sequence_length, 32768u);
  EXPECT_EQ(workload.routing_skew, 0.0);
  EXPECT_EQ(workload.element_bytes, kBf16Bytes);
  // 32 layers, every one MoE, 4 alltoallvs each; 32768 tokens x top-2 x
  // hidden 4096 (models_llama.cpp's Mixtral shape).
  const std::uint64_t elements = 1u * 32768 * 2 * 4096;
  ASSERT_EQ(workload.sequence.size(), 32u * 4);
  for (std::size_t i = 0; i < workload.sequence.size(); ++i) {
    const Message& message = workload.sequence[i];
    SCOPED_TRACE(message.item);
    EXPECT_EQ(message.collective, "alltoallv");
    EXPECT_EQ(message.elements, elements);
    EXPECT_EQ(message.bytes, elements * 2);
    EXPECT_EQ(message.multiplicity, 1);
    EXPECT_EQ(message.routing_skew, 0.0);
    const bool forward = i < 64;
    const std::size_t layer = forward ? i / 2 : 31 - (i - 64) / 2;
    const bool first_of_layer = i % 2 == 0;
    const char* stage = forward ? (first_of_layer ? "dispatch" : "combine")
                                : (first_of_layer ? "combine" : "dispatch");
    std::string item = "layer ";  // not "layer " + ...: GCC 12's -Wrestrict misfires on it
    item += std::to_string(layer);
    item += std::string(" ") + stage + (forward ? " forward" : " backward");
    EXPECT_EQ(message.item, item);
    EXPECT_EQ(message.routing_returns, !first_of_layer);
  }
  EXPECT_EQ(workload.sequence[64].item, "layer 31 combine backward");
  EXPECT_EQ(workload.sequence.back().item, "layer 0 dispatch backward");
  // Dispatches and combines of one size are one distinct alltoallv.
  ASSERT_EQ(workload.distinct.size(), 1u);
  EXPECT_EQ(workload.distinct[0].collective, "alltoallv");
  EXPECT_EQ(workload.distinct[0].bytes, elements * 2);
  EXPECT_EQ(workload.distinct[0].multiplicity, 128);
  expect_distinct_per_collective(workload);
}

TEST(Moe, OptionsSetBatchSequenceSkewAndPrecision) {
  const Workload workload = parse_workload("mixtral_8x7b:moe:skew=1.2:seq=2048:batch=4:f32", 2);
  EXPECT_EQ(workload.spec, "mixtral_8x7b:moe:batch=4:seq=2048:skew=1.2:f32");
  EXPECT_EQ(workload.batch, 4u);
  EXPECT_EQ(workload.sequence_length, 2048u);
  EXPECT_EQ(workload.routing_skew, 1.2);
  EXPECT_EQ(workload.element_bytes, kF32Bytes);
  ASSERT_EQ(workload.sequence.size(), 128u);
  for (const Message& message : workload.sequence) {
    EXPECT_EQ(message.elements, 4u * 2048 * 2 * 4096);
    EXPECT_EQ(message.bytes, 4u * 2048 * 2 * 4096 * 4);
    EXPECT_EQ(message.routing_skew, 1.2);
  }
  EXPECT_EQ(parse_workload("mixtral_8x7b:moe:skew=0.5", kF32).spec,
            "mixtral_8x7b:moe:batch=1:seq=32768:skew=0.5:bf16");
  EXPECT_EQ(parse_workload("mixtral_8x7b:moe:skew=4:bf16", kF32).routing_skew, 4.0);
  EXPECT_EQ(parse_workload("mixtral_8x7b:moe:skew=0.0", kF32).spec,
            parse_workload("mixtral_8x7b:moe", kF32).spec);
  EXPECT_EQ(parse_workload("mixtral_8x7b:moe:skew=01.50", kF32).spec,
            "mixtral_8x7b:moe:batch=1:seq=32768:skew=1.5:bf16");
  // Never in exponent notation, which the parser refuses.
  EXPECT_EQ(parse_workload("mixtral_8x7b:moe:skew=0.0000001", kF32).spec,
            "mixtral_8x7b:moe:batch=1:seq=32768:skew=0.0000001:bf16");
  EXPECT_NE(workload_syntax().find("MODEL:moe[:batch=B][:seq=S][:skew=Z]"), std::string::npos);
}

TEST(Moe, CanonicalSpecGivesTheSameMessages) {
  for (const char* spec :
       {"mixtral_8x7b:moe", "mixtral_8x7b:moe:batch=3:seq=100:skew=2.75:f32",
        "mixtral_8x7b:moe:skew=0.1", "mixtral_8x7b:moe:skew=0.000000123456789"}) {
    const Workload workload = parse_workload(spec, kF32);
    const Workload again = parse_workload(workload.spec, kF32);
    SCOPED_TRACE(workload.spec);
    EXPECT_EQ(again.spec, workload.spec);
    EXPECT_EQ(again.routing_skew, workload.routing_skew);
    ASSERT_EQ(again.sequence.size(), workload.sequence.size());
    for (std::size_t i = 0; i < workload.sequence.size(); ++i) {
      EXPECT_EQ(again.sequence[i].item, workload.sequence[i].item);
      EXPECT_EQ(again.sequence[i].bytes, workload.sequence[i].bytes);
      EXPECT_EQ(again.sequence[i].routing_skew, workload.sequence[i].routing_skew);
      EXPECT_EQ(again.sequence[i].routing_returns, workload.sequence[i].routing_returns);
    }
  }
}

TEST_P(EveryModel, MoeNeedsExpertsAndThenRoutesEveryLayer) {
  const Model& model = find_model(GetParam());
  if (model.transformer.experts == 0) {
    EXPECT_THROW(moe_messages(model, 1, 1, 0, 2), std::invalid_argument);
    return;
  }
  const std::vector<Message> messages = moe_messages(model, 1, 8, 1, 2);
  ASSERT_EQ(messages.size(), static_cast<std::size_t>(model.transformer.layers) * 4);
  for (const Message& message : messages) {
    EXPECT_EQ(message.collective, "alltoallv");
    EXPECT_EQ(message.elements, static_cast<std::uint64_t>(8 * model.transformer.experts_per_token *
                                                           model.transformer.hidden));
  }
}

// What moe_messages itself refuses, as the exception's message says it.
void expect_moe_refused(const Model& model, std::uint64_t batch, std::uint64_t sequence,
                        double skew, std::size_t element_bytes, const std::string& expected) {
  try {
    moe_messages(model, batch, sequence, skew, element_bytes);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
  }
}

TEST(Moe, RefusesModelsWithoutExpertsAndBadShapes) {
  const Model& mixtral = find_model("mixtral_8x7b");
  expect_moe_refused(find_model("gpt2"), 1, 1, 0, 2,
                     "gpt2 has no experts: moe needs a mixture-of-experts model such as "
                     "mixtral_8x7b");
  expect_moe_refused(find_model("resnet50"), 1, 1, 0, 2, "resnet50 has no experts");
  expect_moe_refused(mixtral, 0, 1, 0, 2, "the batch and the sequence must be at least 1");
  expect_moe_refused(mixtral, 1, 0, 0, 2, "the batch and the sequence must be at least 1");
  expect_moe_refused(mixtral, 1, 1, -1, 2, "the routing skew -1 must be a number from 0 to 4");
  expect_moe_refused(mixtral, 1, 1, 4.5, 2, "must be a number from 0 to 4");
  expect_moe_refused(mixtral, 1, 1, std::nan(""), 2, "must be a number from 0 to 4");
  expect_moe_refused(mixtral, 1, 1, std::numeric_limits<double>::infinity(), 2,
                     "must be a number from 0 to 4");
  expect_moe_refused(mixtral, 1, 1, 0, 0, "the element size must be at least 1 byte");
  expect_moe_refused(mixtral, std::uint64_t{1} << 40, std::uint64_t{1} << 20, 0, 2,
                     "overflows 64 bits");
  // Elements fit, bytes do not: 2^62 elements of 4 bytes.
  expect_moe_refused(mixtral, std::uint64_t{1} << 49, 1, 0, 4, "overflow 64 bits");
  EXPECT_NO_THROW(moe_messages(mixtral, 1, 1, kMaxRoutingSkew, 2));
}

TEST(Moe, SpecErrorsSayWhatFailed) {
  expect_rejected("gpt2:moe",
                  "gpt2 has no experts: moe needs a mixture-of-experts model such as mixtral_8x7b");
  expect_rejected("llama2_7b:moe:skew=1", "llama2_7b has no experts");
  expect_rejected("mixtral_8x7b:moe:skew=-1",
                  "skew \"-1\" must be a decimal number from 0 to 4, such as 0, 0.5 or 1.2");
  for (const char* skew :
       {"abc", "5", "4.01", "1e0", "inf", "nan", ".5", "1.", "+1", "0x1", "", "1.2.3", "1,5"}) {
    expect_rejected(std::string("mixtral_8x7b:moe:skew=") + skew,
                    std::string("skew \"") + skew + "\" must be a decimal number from 0 to 4");
  }
  expect_rejected("mixtral_8x7b:moe:skew=1:skew=2", "option \"skew\" is given twice");
  expect_rejected("mixtral_8x7b:moe:skew", "unknown option \"skew\" of moe");
  expect_rejected("mixtral_8x7b:moe:batch=0", "batch \"0\" must be a whole number of at least 1");
  expect_rejected("mixtral_8x7b:moe:seq=0", "seq \"0\" must be a whole number of at least 1");
  expect_rejected("mixtral_8x7b:moe:f16",
                  "unknown option \"f16\" of moe (accepted: batch=B, seq=S, skew=Z, bf16, f32)");
  expect_rejected("mixtral_8x7b:moe=8", "moe takes no =ARG");
  expect_rejected("mixtral_8x7b:moe:batch=18446744073709551615", "overflows 64 bits");
  expect_rejected("gpt2:tp=2:skew=1",
                  "unknown option \"skew=1\" of tp (accepted: batch=B, seq=S, bf16, f32)");
  expect_rejected("llama2_7b:fsdp:skew=1",
                  "unknown option \"skew=1\" of fsdp (accepted: bf16, f32)");
}

}  // namespace
}  // namespace collbench
