// The containers, as LibTorch's torch/nn/modules/container/: ModuleList,
// ModuleDict, ParameterList, ParameterDict and Functional (Sequential has
// its own header, tandem/nn/modules/sequential.h).
//
//   tandem::nn::ModuleList blocks(tandem::nn::Linear(4, 4), tandem::nn::Linear(4, 2));
#pragma once

#include "tandem/nn/modules/container/functional.h"
#include "tandem/nn/modules/container/module_dict.h"
#include "tandem/nn/modules/container/module_list.h"
#include "tandem/nn/modules/container/parameter_dict.h"
#include "tandem/nn/modules/container/parameter_list.h"
