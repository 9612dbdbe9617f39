// Tests of gradient bucketing (PyTorch DDP and Horovod fusion) and of
// workload specs: exact boundaries on a model small enough to check by hand,
// invariants on every catalog model, and the parser's errors.
#include "collbench/catalog/workload.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
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
  EXPECT_THROW(parse_workloads("resnet50,,gpt2", kF32), std::invalid_argument);
  EXPECT_THROW(parse_workloads("", kF32), std::invalid_argument);
}

}  // namespace
}  // namespace collbench
