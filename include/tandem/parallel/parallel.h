// tandem::parallel (also reachable as tandem::nn::parallel, LibTorch's
// name): scatter, gather, replicate, parallel_apply, data_parallel, and the
// nn::DataParallel module.
#pragma once
