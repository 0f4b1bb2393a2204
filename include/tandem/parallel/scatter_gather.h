// scatter and gather: splitting a batch over devices and joining the
// replicas' outputs, as torch.nn.parallel's. Both are differentiable:
// scatter's backward gathers the pieces' gradients back onto the input's
// device, gather's backward sends each input its rows of the gradient.
//
// The split is Tensor::chunk's: chunks of ceil(B / n) rows, so there may be
// fewer pieces than devices (B=10 over 8 devices gives 5 pieces of 2) and
// only the first k devices are used; or, given chunk_sizes, exactly those
// (shares.h computes cuts by weight). A piece that stays on the input's
// device is a view of it; other pieces are copies.
//
//   namespace parallel = tandem::parallel;
//   std::vector<tandem::Device> devices = {"cpu:0", "cpu:1", "cpu:2"};
//   auto pieces = parallel::scatter(x, devices);         // x: [10, 5] -> 4, 4, 2 rows
//   auto y = parallel::gather(outputs, "cpu:0");          // rows in replica order
//   auto per_device = parallel::scatter(TensorTree{a, {b, c}}, devices);
//   auto uneven = parallel::scatter(x, devices, {5, 3, 2});  // x: [10, 5]
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/parallel/tensor_tree.h"

namespace tandem::parallel {

/// Splits `input` along `dim` into input.chunk(devices.size(), dim) and puts
/// piece i on devices[i]; returns the k <= devices.size() pieces.
std::vector<Tensor> scatter(const Tensor& input,
                            const std::vector<Device>& devices,
                            int64_t dim = 0);

/// Splits `input` along `dim` into pieces of chunk_sizes[i] rows (each > 0,
/// one per device, summing to the size along `dim`: PyTorch's comm.scatter
/// with chunk_sizes) and puts piece i on devices[i].
std::vector<Tensor> scatter(const Tensor& input,
                            const std::vector<Device>& devices,
                            const std::vector<int64_t>& chunk_sizes,
                            int64_t dim = 0);

/// Scatters every tensor of `inputs` as above and returns one tree of the
/// same nesting per used device. All tensors must have the same size along
/// `dim` (an error names them otherwise; PyTorch would silently drop rows).
/// A tree without tensors is handed to every device unchanged.
std::vector<TensorTree> scatter(const TensorTree& inputs,
                                const std::vector<Device>& devices,
                                int64_t dim = 0);
/// ... cut into chunk_sizes[i] rows for devices[i], as the Tensor overload.
std::vector<TensorTree> scatter(const TensorTree& inputs,
                                const std::vector<Device>& devices,
                                const std::vector<int64_t>& chunk_sizes,
                                int64_t dim = 0);

/// Concatenates `tensors` (one per replica, in replica order) along `dim`
/// on `destination`. All must match in dtype and in every size but `dim`.
/// 0-d tensors gathered along dim 0 become a vector, one element each.
Tensor gather(const std::vector<Tensor>& tensors, Device destination, int64_t dim = 0);
/// gather({a, b}, device): a braced list is a list of tensors.
inline Tensor gather(std::initializer_list<Tensor> tensors,
                     Device destination,
                     int64_t dim = 0) {
  return gather(std::vector<Tensor>(tensors), destination, dim);
}

/// Gathers the replicas' outputs (trees of the same nesting) leaf by leaf.
/// An undefined tensor in outputs[0] gathers to an undefined tensor.
TensorTree gather(const std::vector<TensorTree>& outputs,
                  Device destination,
                  int64_t dim = 0);

}  // namespace tandem::parallel
