// The data layer in one include: datasets (MNIST family, in-memory
// tensors), samplers, transforms, the IDX reader, and two loaders: the
// LibTorch-shaped make_data_loader and the simpler, resumable Loader.
//
//   #include "tandem/data/data.h"
//   tandem::data::datasets::MNIST train(tandem::data::datasets::kFashionMNISTRoot);
//   tandem::data::Loader loader(
//       tandem::data::TensorDataset(train.images(), train.targets()),
//       tandem::data::LoaderOptions().batch_size(64).shuffle(true));
//   for (const auto& batch : loader.epoch(0)) { ... }
#pragma once

#include "tandem/data/data_loader.h"
#include "tandem/data/dataset.h"
#include "tandem/data/example.h"
#include "tandem/data/idx.h"
#include "tandem/data/loader.h"
#include "tandem/data/mnist.h"
#include "tandem/data/sampler.h"
#include "tandem/data/tensor_dataset.h"
#include "tandem/data/transforms.h"
