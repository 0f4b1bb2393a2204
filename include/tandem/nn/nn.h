// tandem::nn: modules, layers, losses, initialisation and the functional
// API, shaped like LibTorch's torch::nn.
//
//   #include "tandem/nn/nn.h"
//   namespace nn = tandem::nn;
//   namespace F = tandem::nn::functional;
//   nn::Sequential net(nn::Linear(784, 64), nn::ReLU(), nn::Linear(64, 10));
//   auto loss = F::cross_entropy(net->forward(x), y);
#pragma once

#include "tandem/nn/cloneable.h"
#include "tandem/nn/functional.h"
#include "tandem/nn/init.h"
#include "tandem/nn/module.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/activation.h"
#include "tandem/nn/modules/any_module.h"
#include "tandem/nn/modules/batch_norm.h"
#include "tandem/nn/modules/container.h"
#include "tandem/nn/modules/conv.h"
#include "tandem/nn/modules/conv_transpose.h"
#include "tandem/nn/modules/dropout.h"
#include "tandem/nn/modules/embedding.h"
#include "tandem/nn/modules/flatten.h"
#include "tandem/nn/modules/layer_norm.h"
#include "tandem/nn/modules/linear.h"
#include "tandem/nn/modules/loss.h"
#include "tandem/nn/modules/pooling.h"
#include "tandem/nn/modules/rnn.h"
#include "tandem/nn/modules/sequential.h"
#include "tandem/nn/options/activation.h"
#include "tandem/nn/options/batch_norm.h"
#include "tandem/nn/options/conv.h"
#include "tandem/nn/options/conv_transpose.h"
#include "tandem/nn/options/dropout.h"
#include "tandem/nn/options/embedding.h"
#include "tandem/nn/options/flatten.h"
#include "tandem/nn/options/layer_norm.h"
#include "tandem/nn/options/linear.h"
#include "tandem/nn/options/loss.h"
#include "tandem/nn/options/pooling.h"
#include "tandem/nn/options/rnn.h"
#include "tandem/nn/ordered_dict.h"
#include "tandem/nn/utils.h"
