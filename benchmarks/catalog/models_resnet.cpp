// Bottleneck ResNets of the catalog, written as torchvision/models/resnet.py
// defines them: ResNet v1.5 (the stride sits on the 3x3 convolution), bias-
// free convolutions each followed by batch-norm, a 1x1 projection shortcut
// ("downsample") where the shape changes, 224x224 input, 1000 classes.
#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <string>

#include "layers.h"
#include "models.h"

namespace collbench::catalog_detail {
namespace {

constexpr std::int64_t kBottleneckExpansion = 4;

// torchvision's Bottleneck, registering conv1, bn1, conv2, bn2, conv3, bn3,
// then downsample (conv, bn) in that order as its __init__ does.
FeatureMap bottleneck(ModelBuilder& b, const std::string& name, const FeatureMap& in,
                      std::int64_t width, std::int64_t stride) {
  const std::int64_t out_channels = width * kBottleneckExpansion;
  FeatureMap x =
      b.conv2d(name + ".conv1", in, {.out_channels = width, .kernel = square(1), .bias = false});
  x = b.batch_norm2d(name + ".bn1", x);
  x = b.conv2d(name + ".conv2", x,
               {.out_channels = width,
                .kernel = square(3),
                .stride = square(stride),
                .padding = square(1),
                .bias = false});
  x = b.batch_norm2d(name + ".bn2", x);
  x = b.conv2d(name + ".conv3", x,
               {.out_channels = out_channels, .kernel = square(1), .bias = false});
  x = b.batch_norm2d(name + ".bn3", x);
  if (stride != 1 || in.channels != out_channels) {
    FeatureMap shortcut = b.conv2d(name + ".downsample.0", in,
                                   {.out_channels = out_channels,
                                    .kernel = square(1),
                                    .stride = square(stride),
                                    .bias = false});
    shortcut = b.batch_norm2d(name + ".downsample.1", shortcut);
    if (shortcut.height != x.height || shortcut.width != x.width) {
      throw std::logic_error(fmt::format("{}: shortcut {}x{} does not match the residual {}x{}",
                                         name, shortcut.height, shortcut.width, x.height, x.width));
    }
  }
  return x;
}

Model make_bottleneck_resnet(std::string name, std::string reference,
                             const std::array<int, 4>& blocks_per_stage) {
  std::string variant = fmt::format("torchvision {} (ResNet v1.5, stride on 3x3)", name);
  ModelBuilder b(std::move(name), std::move(variant), std::move(reference), "3x224x224 image");
  FeatureMap x{3, 224, 224};
  x = b.conv2d("conv1", x,
               {.out_channels = 64,
                .kernel = square(7),
                .stride = square(2),
                .padding = square(3),
                .bias = false});
  x = b.batch_norm2d("bn1", x);
  x = pool2d(x, {.kernel = square(3), .stride = square(2), .padding = square(1)});
  std::int64_t width = 64;
  for (std::size_t stage = 0; stage < blocks_per_stage.size(); ++stage) {
    const std::int64_t first_stride = stage == 0 ? 1 : 2;
    // One residual stage (torchvision's layer1..layer4) is one FSDP unit.
    b.unit(fmt::format("layer{}", stage + 1));
    for (int block = 0; block < blocks_per_stage[stage]; ++block) {
      x = bottleneck(b, fmt::format("layer{}.{}", stage + 1, block), x, width,
                     block == 0 ? first_stride : 1);
    }
    width *= 2;
  }
  b.unit("");
  x = adaptive_avg_pool2d(x, square(1));
  b.linear("fc", x.channels, 1000);
  return std::move(b).finish();
}

}  // namespace

// torchvision.models.resnet50, blocks [3, 4, 6, 3].
// ResNet50_Weights.IMAGENET1K_V1 lists num_params 25,557,032 and GFLOPS 4.09.
Model make_resnet50() {
  return make_bottleneck_resnet("resnet50",
                                "torchvision.models.resnet50; params: "
                                "ResNet50_Weights.IMAGENET1K_V1 num_params 25557032; FLOPs: its "
                                "GFLOPS 4.09 (multiply-adds)",
                                {3, 4, 6, 3});
}

// torchvision.models.resnet152, blocks [3, 8, 36, 3].
// ResNet152_Weights.IMAGENET1K_V1 lists num_params 60,192,808 and GFLOPS 11.51.
Model make_resnet152() {
  return make_bottleneck_resnet("resnet152",
                                "torchvision.models.resnet152; params: "
                                "ResNet152_Weights.IMAGENET1K_V1 num_params 60192808; FLOPs: its "
                                "GFLOPS 11.51 (multiply-adds)",
                                {3, 8, 36, 3});
}

}  // namespace collbench::catalog_detail
