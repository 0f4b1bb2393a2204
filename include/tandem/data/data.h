// The data layer in one include: datasets (MNIST family, in-memory
// tensors), samplers (LibTorch's distributed ones too), transforms, the
// IDX reader, and the DataLoader.
//
//   #include "tandem/data/data.h"
//   tandem::data::datasets::MNIST train(tandem::data::datasets::kFashionMNISTRoot);
//   auto loader = tandem::data::make_data_loader(
//       tandem::data::TensorDataset(train.images(), train.targets()),
//       tandem::data::DataLoaderOptions().batch_size(64));
//   for (const tandem::data::Batch& batch : loader->epoch(0)) { ... }
#pragma once

#include "tandem/data/batch.h"
#include "tandem/data/data_loader.h"
#include "tandem/data/dataset.h"
#include "tandem/data/distributed_samplers.h"
#include "tandem/data/example.h"
#include "tandem/data/idx.h"
#include "tandem/data/mnist.h"
#include "tandem/data/sampler.h"
#include "tandem/data/tensor_dataset.h"
#include "tandem/data/transforms.h"
