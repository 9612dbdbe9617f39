// Model constructors of the catalog (private to the catalog library). Each
// writes one network as its architecture; catalog.cpp lists them.
#pragma once

#include "collbench/catalog/catalog.h"

namespace collbench::catalog_detail {

Model make_alexnet();
Model make_alexnet_caffe();
Model make_vgg16();
Model make_googlenet();
Model make_inception_v3();
Model make_resnet50();
Model make_resnet152();
Model make_bert_base();
Model make_bert_large();
Model make_gpt2();
Model make_vit_b16();
Model make_llama2_7b();
Model make_llama3_8b();
Model make_mixtral_8x7b();

}  // namespace collbench::catalog_detail
