// Plain and Inception-style CNNs of the catalog: AlexNet (torchvision and the
// original grouped Caffe model), VGG-16, GoogLeNet and Inception v3, written
// with the module names and arguments of their reference definitions.
// 1000 ImageNet classes throughout.
#include <fmt/format.h>

#include <array>
#include <string>

#include "layers.h"
#include "models.h"

namespace collbench::catalog_detail {
namespace {

constexpr std::int64_t kImageNetClasses = 1000;

}  // namespace

// torchvision.models.alexnet (torchvision/models/alexnet.py): the
// single-tower variant of Krizhevsky's "One weird trick" paper (64-192-384-
// 256-256 channels, no groups, no LRN), at 224x224.
// torchvision's AlexNet_Weights.IMAGENET1K_V1 lists num_params 61,100,840:
//   convs 23,296 + 307,392 + 663,936 + 884,992 + 590,080 = 2,469,696
//   fcs   37,752,832 + 16,781,312 + 4,097,000           = 58,631,144
Model make_alexnet() {
  ModelBuilder b("alexnet", "torchvision alexnet (single-tower 'one weird trick' variant)",
                 "torchvision.models.alexnet; params: AlexNet_Weights.IMAGENET1K_V1 num_params "
                 "61100840; FLOPs: its GFLOPS 0.71 (multiply-adds)",
                 "3x224x224 image");
  FeatureMap x{3, 224, 224};
  const Pool max_pool{.kernel = square(3), .stride = square(2)};
  x = b.conv2d(
      "features.0", x,
      {.out_channels = 64, .kernel = square(11), .stride = square(4), .padding = square(2)});
  x = pool2d(x, max_pool);
  x = b.conv2d("features.3", x, {.out_channels = 192, .kernel = square(5), .padding = square(2)});
  x = pool2d(x, max_pool);
  x = b.conv2d("features.6", x, {.out_channels = 384, .kernel = square(3), .padding = square(1)});
  x = b.conv2d("features.8", x, {.out_channels = 256, .kernel = square(3), .padding = square(1)});
  x = b.conv2d("features.10", x, {.out_channels = 256, .kernel = square(3), .padding = square(1)});
  x = pool2d(x, max_pool);
  x = adaptive_avg_pool2d(x, square(6));
  b.linear("classifier.1", x.channels * x.height * x.width, 4096);
  b.linear("classifier.4", 4096, 4096);
  b.linear("classifier.6", 4096, kImageNetClasses);
  return std::move(b).finish();
}

// The original two-tower AlexNet as BVLC Caffe ships it
// (caffe/models/bvlc_alexnet/deploy.prototxt, 227x227 input): 96-256-384-
// 384-256 channels with conv2, conv4 and conv5 split into group: 2, which
// halves their input channels per filter. Parameters, from the prototxt:
//   conv1 34,944 + conv2 307,456 + conv3 885,120 + conv4 663,936
//   + conv5 442,624 + fc6 37,752,832 + fc7 16,781,312 + fc8 4,097,000
//   = 60,965,224
// FLOPs: Sze et al., "Efficient Processing of Deep Neural Networks: A
// Tutorial and Survey", Proc. IEEE 2017, Table III: AlexNet 724M MACs.
// Caffe's pooling rounds up, which gives the same sizes here (55->27->13->6).
Model make_alexnet_caffe() {
  ModelBuilder b("alexnet_caffe", "BVLC Caffe bvlc_alexnet (original grouped two-tower model)",
                 "caffe models/bvlc_alexnet/deploy.prototxt (60965224 params); FLOPs: Sze et al. "
                 "2017, Table III, 724M MACs",
                 "3x227x227 image");
  FeatureMap x{3, 227, 227};
  const Pool max_pool{.kernel = square(3), .stride = square(2), .ceil_mode = true};
  x = b.conv2d("conv1", x, {.out_channels = 96, .kernel = square(11), .stride = square(4)});
  x = pool2d(x, max_pool);
  x = b.conv2d("conv2", x,
               {.out_channels = 256, .kernel = square(5), .padding = square(2), .groups = 2});
  x = pool2d(x, max_pool);
  x = b.conv2d("conv3", x, {.out_channels = 384, .kernel = square(3), .padding = square(1)});
  x = b.conv2d("conv4", x,
               {.out_channels = 384, .kernel = square(3), .padding = square(1), .groups = 2});
  x = b.conv2d("conv5", x,
               {.out_channels = 256, .kernel = square(3), .padding = square(1), .groups = 2});
  x = pool2d(x, max_pool);
  b.linear("fc6", x.channels * x.height * x.width, 4096);
  b.linear("fc7", 4096, 4096);
  b.linear("fc8", 4096, kImageNetClasses);
  return std::move(b).finish();
}

// torchvision.models.vgg16 (torchvision/models/vgg.py, configuration "D",
// no batch-norm), 224x224. torchvision's VGG16_Weights.IMAGENET1K_V1 lists
// num_params 138,357,544: 13 convs 14,714,688 + fcs 102,764,544 +
// 16,781,312 + 4,097,000.
Model make_vgg16() {
  ModelBuilder b("vgg16", "torchvision vgg16 (configuration D, no batch-norm)",
                 "torchvision.models.vgg16; params: VGG16_Weights.IMAGENET1K_V1 num_params "
                 "138357544; FLOPs: its GFLOPS 15.47 (multiply-adds)",
                 "3x224x224 image");
  // Output channels per conv; 0 marks a 2x2 max-pool (vgg.py's "M").
  constexpr std::array<std::int64_t, 18> kConfigurationD = {
      64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  FeatureMap x{3, 224, 224};
  int features_index = 0;  // nn.Sequential index: a conv and its ReLU take two
  for (std::int64_t channels : kConfigurationD) {
    if (channels == 0) {
      x = pool2d(x, {.kernel = square(2), .stride = square(2)});
      features_index += 1;
    } else {
      x = b.conv2d(fmt::format("features.{}", features_index), x,
                   {.out_channels = channels, .kernel = square(3), .padding = square(1)});
      features_index += 2;
    }
  }
  x = adaptive_avg_pool2d(x, square(7));
  b.linear("classifier.0", x.channels * x.height * x.width, 4096);
  b.linear("classifier.3", 4096, 4096);
  b.linear("classifier.6", 4096, kImageNetClasses);
  return std::move(b).finish();
}

namespace {

struct InceptionV1Channels {
  std::int64_t ch1x1, ch3x3_reduce, ch3x3, ch5x5_reduce, ch5x5, pool_projection;
};

// torchvision googlenet.py's Inception block.
FeatureMap googlenet_inception(ModelBuilder& b, const std::string& name, const FeatureMap& in,
                               const InceptionV1Channels& ch) {
  const FeatureMap branch1 = conv_bn(b, name + ".branch1", in, ch.ch1x1, square(1));
  FeatureMap branch2 = conv_bn(b, name + ".branch2.0", in, ch.ch3x3_reduce, square(1));
  branch2 = conv_bn(b, name + ".branch2.1", branch2, ch.ch3x3, square(3), square(1), square(1));
  FeatureMap branch3 = conv_bn(b, name + ".branch3.0", in, ch.ch5x5_reduce, square(1));
  // torchvision uses 3x3 where the paper has 5x5 (pytorch/vision#906); its
  // pretrained weights and published count are for 3x3, so this follows it.
  branch3 = conv_bn(b, name + ".branch3.1", branch3, ch.ch5x5, square(3), square(1), square(1));
  FeatureMap branch4 = pool2d(
      in, {.kernel = square(3), .stride = square(1), .padding = square(1), .ceil_mode = true});
  branch4 = conv_bn(b, name + ".branch4.1", branch4, ch.pool_projection, square(1));
  return concat_channels({branch1, branch2, branch3, branch4});
}

}  // namespace

// torchvision.models.googlenet (torchvision/models/googlenet.py) as its
// pretrained weights define it: aux_logits=False (the two auxiliary heads
// are dropped after loading), BasicConv2d = bias-free conv + batch-norm,
// 224x224. GoogLeNet_Weights.IMAGENET1K_V1 lists num_params 6,624,904.
Model make_googlenet() {
  ModelBuilder b("googlenet", "torchvision googlenet, aux_logits=False (pretrained definition)",
                 "torchvision.models.googlenet; params: GoogLeNet_Weights.IMAGENET1K_V1 "
                 "num_params 6624904; FLOPs: its GFLOPS 1.50 (multiply-adds)",
                 "3x224x224 image");
  const Pool max_pool_ceil{.kernel = square(3), .stride = square(2), .ceil_mode = true};
  FeatureMap x{3, 224, 224};
  x = conv_bn(b, "conv1", x, 64, square(7), square(2), square(3));
  x = pool2d(x, max_pool_ceil);
  x = conv_bn(b, "conv2", x, 64, square(1));
  x = conv_bn(b, "conv3", x, 192, square(3), square(1), square(1));
  x = pool2d(x, max_pool_ceil);
  x = googlenet_inception(b, "inception3a", x, {64, 96, 128, 16, 32, 32});
  x = googlenet_inception(b, "inception3b", x, {128, 128, 192, 32, 96, 64});
  x = pool2d(x, max_pool_ceil);
  x = googlenet_inception(b, "inception4a", x, {192, 96, 208, 16, 48, 64});
  x = googlenet_inception(b, "inception4b", x, {160, 112, 224, 24, 64, 64});
  x = googlenet_inception(b, "inception4c", x, {128, 128, 256, 24, 64, 64});
  x = googlenet_inception(b, "inception4d", x, {112, 144, 288, 32, 64, 64});
  x = googlenet_inception(b, "inception4e", x, {256, 160, 320, 32, 128, 128});
  x = pool2d(x, {.kernel = square(2), .stride = square(2), .ceil_mode = true});
  x = googlenet_inception(b, "inception5a", x, {256, 160, 320, 32, 128, 128});
  x = googlenet_inception(b, "inception5b", x, {384, 192, 384, 48, 128, 128});
  x = adaptive_avg_pool2d(x, square(1));
  b.linear("fc", x.channels, kImageNetClasses);
  return std::move(b).finish();
}

namespace {

// The blocks of torchvision inception.py, in its registration order.
// The average-pool branches (3x3, stride 1, padding 1) keep the spatial size.
FeatureMap inception_a(ModelBuilder& b, const std::string& name, const FeatureMap& in,
                       std::int64_t pool_features) {
  const FeatureMap branch1x1 = conv_bn(b, name + ".branch1x1", in, 64, square(1));
  FeatureMap branch5x5 = conv_bn(b, name + ".branch5x5_1", in, 48, square(1));
  branch5x5 = conv_bn(b, name + ".branch5x5_2", branch5x5, 64, square(5), square(1), square(2));
  FeatureMap dbl = conv_bn(b, name + ".branch3x3dbl_1", in, 64, square(1));
  dbl = conv_bn(b, name + ".branch3x3dbl_2", dbl, 96, square(3), square(1), square(1));
  dbl = conv_bn(b, name + ".branch3x3dbl_3", dbl, 96, square(3), square(1), square(1));
  const FeatureMap pool = conv_bn(b, name + ".branch_pool", in, pool_features, square(1));
  return concat_channels({branch1x1, branch5x5, dbl, pool});
}

FeatureMap inception_b(ModelBuilder& b, const std::string& name, const FeatureMap& in) {
  const FeatureMap branch3x3 = conv_bn(b, name + ".branch3x3", in, 384, square(3), square(2));
  FeatureMap dbl = conv_bn(b, name + ".branch3x3dbl_1", in, 64, square(1));
  dbl = conv_bn(b, name + ".branch3x3dbl_2", dbl, 96, square(3), square(1), square(1));
  dbl = conv_bn(b, name + ".branch3x3dbl_3", dbl, 96, square(3), square(2));
  const FeatureMap pool = pool2d(in, {.kernel = square(3), .stride = square(2)});
  return concat_channels({branch3x3, dbl, pool});
}

FeatureMap inception_c(ModelBuilder& b, const std::string& name, const FeatureMap& in,
                       std::int64_t c7) {
  const Window one_by_seven{1, 7}, seven_by_one{7, 1};
  const Window pad_width{0, 3}, pad_height{3, 0};
  const FeatureMap branch1x1 = conv_bn(b, name + ".branch1x1", in, 192, square(1));
  FeatureMap b7 = conv_bn(b, name + ".branch7x7_1", in, c7, square(1));
  b7 = conv_bn(b, name + ".branch7x7_2", b7, c7, one_by_seven, square(1), pad_width);
  b7 = conv_bn(b, name + ".branch7x7_3", b7, 192, seven_by_one, square(1), pad_height);
  FeatureMap dbl = conv_bn(b, name + ".branch7x7dbl_1", in, c7, square(1));
  dbl = conv_bn(b, name + ".branch7x7dbl_2", dbl, c7, seven_by_one, square(1), pad_height);
  dbl = conv_bn(b, name + ".branch7x7dbl_3", dbl, c7, one_by_seven, square(1), pad_width);
  dbl = conv_bn(b, name + ".branch7x7dbl_4", dbl, c7, seven_by_one, square(1), pad_height);
  dbl = conv_bn(b, name + ".branch7x7dbl_5", dbl, 192, one_by_seven, square(1), pad_width);
  const FeatureMap pool = conv_bn(b, name + ".branch_pool", in, 192, square(1));
  return concat_channels({branch1x1, b7, dbl, pool});
}

FeatureMap inception_d(ModelBuilder& b, const std::string& name, const FeatureMap& in) {
  FeatureMap b3 = conv_bn(b, name + ".branch3x3_1", in, 192, square(1));
  b3 = conv_bn(b, name + ".branch3x3_2", b3, 320, square(3), square(2));
  FeatureMap b7 = conv_bn(b, name + ".branch7x7x3_1", in, 192, square(1));
  b7 = conv_bn(b, name + ".branch7x7x3_2", b7, 192, {1, 7}, square(1), {0, 3});
  b7 = conv_bn(b, name + ".branch7x7x3_3", b7, 192, {7, 1}, square(1), {3, 0});
  b7 = conv_bn(b, name + ".branch7x7x3_4", b7, 192, square(3), square(2));
  const FeatureMap pool = pool2d(in, {.kernel = square(3), .stride = square(2)});
  return concat_channels({b3, b7, pool});
}

FeatureMap inception_e(ModelBuilder& b, const std::string& name, const FeatureMap& in) {
  const FeatureMap branch1x1 = conv_bn(b, name + ".branch1x1", in, 320, square(1));
  const FeatureMap b3 = conv_bn(b, name + ".branch3x3_1", in, 384, square(1));
  const FeatureMap b3a = conv_bn(b, name + ".branch3x3_2a", b3, 384, {1, 3}, square(1), {0, 1});
  const FeatureMap b3b = conv_bn(b, name + ".branch3x3_2b", b3, 384, {3, 1}, square(1), {1, 0});
  FeatureMap dbl = conv_bn(b, name + ".branch3x3dbl_1", in, 448, square(1));
  dbl = conv_bn(b, name + ".branch3x3dbl_2", dbl, 384, square(3), square(1), square(1));
  const FeatureMap dbl_a =
      conv_bn(b, name + ".branch3x3dbl_3a", dbl, 384, {1, 3}, square(1), {0, 1});
  const FeatureMap dbl_b =
      conv_bn(b, name + ".branch3x3dbl_3b", dbl, 384, {3, 1}, square(1), {1, 0});
  const FeatureMap pool = conv_bn(b, name + ".branch_pool", in, 192, square(1));
  return concat_channels({branch1x1, b3a, b3b, dbl_a, dbl_b, pool});
}

// InceptionAux: 5x5/3 average pool, two BasicConv2d, a linear classifier.
void inception_aux(ModelBuilder& b, const std::string& name, const FeatureMap& in) {
  FeatureMap x = pool2d(in, {.kernel = square(5), .stride = square(3)});
  x = conv_bn(b, name + ".conv0", x, 128, square(1));
  x = conv_bn(b, name + ".conv1", x, 768, square(5));
  x = adaptive_avg_pool2d(x, square(1));
  b.linear(name + ".fc", x.channels, kImageNetClasses);
}

}  // namespace

// torchvision.models.inception_v3 (torchvision/models/inception.py) with
// aux_logits=True: the training definition, whose auxiliary classifier also
// receives gradients, and the one Inception_V3_Weights.IMAGENET1K_V1 ships
// (num_params 27,161,264; without AuxLogits it is 23,834,568). 299x299.
// FLOPs include the auxiliary head because a training forward pass runs it;
// it adds ~6M multiply-adds (0.1%) to the 5.71 G that torchvision reports
// for inference.
Model make_inception_v3() {
  ModelBuilder b("inception_v3", "torchvision inception_v3, aux_logits=True (training definition)",
                 "torchvision.models.inception_v3; params: Inception_V3_Weights.IMAGENET1K_V1 "
                 "num_params 27161264; FLOPs: its GFLOPS 5.71 (multiply-adds, inference)",
                 "3x299x299 image");
  const Pool max_pool{.kernel = square(3), .stride = square(2)};
  FeatureMap x{3, 299, 299};
  x = conv_bn(b, "Conv2d_1a_3x3", x, 32, square(3), square(2));
  x = conv_bn(b, "Conv2d_2a_3x3", x, 32, square(3));
  x = conv_bn(b, "Conv2d_2b_3x3", x, 64, square(3), square(1), square(1));
  x = pool2d(x, max_pool);
  x = conv_bn(b, "Conv2d_3b_1x1", x, 80, square(1));
  x = conv_bn(b, "Conv2d_4a_3x3", x, 192, square(3));
  x = pool2d(x, max_pool);
  x = inception_a(b, "Mixed_5b", x, 32);
  x = inception_a(b, "Mixed_5c", x, 64);
  x = inception_a(b, "Mixed_5d", x, 64);
  x = inception_b(b, "Mixed_6a", x);
  x = inception_c(b, "Mixed_6b", x, 128);
  x = inception_c(b, "Mixed_6c", x, 160);
  x = inception_c(b, "Mixed_6d", x, 160);
  x = inception_c(b, "Mixed_6e", x, 192);
  inception_aux(b, "AuxLogits", x);
  x = inception_d(b, "Mixed_7a", x);
  x = inception_e(b, "Mixed_7b", x);
  x = inception_e(b, "Mixed_7c", x);
  x = adaptive_avg_pool2d(x, square(1));
  b.linear("fc", x.channels, kImageNetClasses);
  return std::move(b).finish();
}

}  // namespace collbench::catalog_detail
