#include "tandem/parallel/scatter_gather.h"

#include <iostream>
#include <mutex>
#include <string>
#include <utility>

#include "parallel/parallel_utils.h"
#include "tandem/core/profiler.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem::parallel {
namespace {

using autograd::tensor_list;
using autograd::TensorMeta;

std::vector<TensorMeta> meta_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorMeta> meta;
  meta.reserve(tensors.size());
  for (const Tensor& t : tensors) meta.push_back({t.sizes(), t.dtype(), t.device()});
  return meta;
}

// The scatter dim of `t` (named `what` in errors), after the chunk rule's
// check that there is a dim to split.
int64_t scatter_dim(const Tensor& t, int64_t dim, const std::string& what) {
  TANDEM_CHECK(t.dim() > 0,
               "scatter: chunk expects at least a 1-dimensional tensor, but ",
               what,
               " is 0-dimensional");
  return wrap_dim(dim, t.dim(), "scatter");
}

// `pieces` (already checked) concatenated along `dim` into a new tensor on
// `destination`, each copied once. No autograd.
Tensor concat_on(const std::vector<Tensor>& pieces, Device destination, int64_t dim) {
  NoGradGuard no_grad;
  IntList sizes = pieces.front().sizes();
  sizes[dim] = 0;
  for (const Tensor& p : pieces) sizes[dim] += p.size(dim);
  Tensor out = empty(sizes, TensorOptions(pieces.front().dtype()).device(destination));
  int64_t offset = 0;
  for (const Tensor& p : pieces) {
    out.narrow(dim, offset, p.size(dim)).copy_(p);
    offset += p.size(dim);
  }
  return out;
}

void warn_scalar_gather() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::cerr << "tandem: warning: gather: Was asked to gather along dimension 0, but "
                 "all input tensors were scalars; will instead unsqueeze and return a "
                 "vector.\n";
  });
}

// Checks what gather() accepts (PyTorch's comm.gather messages) and returns
// the pieces to concatenate: the tensors, or for 0-d ones, 1-element views.
std::vector<Tensor> gather_pieces(const std::vector<Tensor>& tensors, int64_t& dim) {
  TANDEM_CHECK(!tensors.empty(), "gather: Expected at least one tensor to gather from");
  bool all_scalars = true;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TANDEM_CHECK(tensors[i].defined(), "gather: tensor at index ", i, " is undefined");
    all_scalars = all_scalars && tensors[i].dim() == 0;
  }
  std::vector<Tensor> pieces;
  pieces.reserve(tensors.size());
  const bool unsqueeze = all_scalars && dim == 0;
  if (unsqueeze) warn_scalar_gather();
  for (const Tensor& t : tensors) pieces.push_back(unsqueeze ? t.detach().view({1}) : t);
  const Tensor& first = pieces.front();
  TANDEM_CHECK(first.dim() > 0,
               "gather: 0-dimensional tensors can only be gathered along dim 0, got dim ",
               dim);
  dim = wrap_dim(dim, first.dim(), "gather");
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Tensor& t = pieces[i];
    TANDEM_CHECK(t.dim() == first.dim(),
                 "gather: Expected all input tensors to have the same number of "
                 "dimensions, but tensor at index ",
                 i,
                 " has ",
                 t.dim(),
                 " dimensions, (expected ",
                 first.dim(),
                 ")");
    IntList expected = first.sizes();
    expected[dim] = t.size(dim);
    TANDEM_CHECK(t.sizes() == expected,
                 "gather: Input tensor at index ",
                 i,
                 " has invalid shape ",
                 t.sizes(),
                 ", but expected ",
                 expected);
    TANDEM_CHECK(t.dtype() == first.dtype(),
                 "gather: Expected all input tensors to have dtype ",
                 first.dtype(),
                 ", but tensor at index ",
                 i,
                 " has dtype ",
                 t.dtype());
  }
  return pieces;
}

// Depth-first defined tensors of `tree` with their paths ("input[1][0]").
void collect_leaves(const TensorTree& tree,
                    const std::string& path,
                    std::vector<std::pair<std::string, Tensor>>& out) {
  if (tree.is_tensor()) {
    if (tree.tensor().defined()) out.emplace_back(path, tree.tensor());
    return;
  }
  for (size_t i = 0; i < tree.size(); ++i) {
    collect_leaves(tree[i], path + "[" + std::to_string(i) + "]", out);
  }
}

TensorTree gather_tree(const std::vector<TensorTree>& outputs,
                       Device destination,
                       int64_t dim,
                       const std::string& path) {
  const TensorTree& first = outputs.front();
  if (first.is_tensor()) {
    if (!first.tensor().defined()) return first;
    std::vector<Tensor> tensors;
    for (size_t j = 0; j < outputs.size(); ++j) {
      TANDEM_CHECK(outputs[j].is_tensor(),
                   "gather: replica ",
                   j,
                   " returned a list at ",
                   path,
                   " where replica 0 returned a tensor");
      tensors.push_back(outputs[j].tensor());
    }
    return gather(tensors, destination, dim);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    TANDEM_CHECK(outputs[j].is_list() && outputs[j].size() == first.size(),
                 "gather: replica ",
                 j,
                 " returned ",
                 outputs[j].is_list() ? "a list of " + std::to_string(outputs[j].size())
                                      : std::string("a tensor"),
                 " at ",
                 path,
                 " where replica 0 returned a list of ",
                 first.size());
  }
  std::vector<TensorTree> items;
  for (size_t i = 0; i < first.size(); ++i) {
    std::vector<TensorTree> column;
    for (const TensorTree& out : outputs) column.push_back(out[i]);
    items.push_back(
        gather_tree(column, destination, dim, path + "[" + std::to_string(i) + "]"));
  }
  return TensorTree(std::move(items));
}

}  // namespace

namespace {

// `pieces` of `input` (views along `d`) put on `devices`, with one backward
// node that joins their gradients on the input's device.
std::vector<Tensor> scatter_pieces(const Tensor& input,
                                   const std::vector<Tensor>& views,
                                   const std::vector<Device>& devices,
                                   int64_t d) {
  const profiler::Span span("parallel", "scatter", input.device());
  std::vector<Tensor> pieces = detail::move_to_devices(views, devices);
  std::vector<Tensor*> outputs;
  for (Tensor& p : pieces) outputs.push_back(&p);
  const Device source = input.device();
  autograd::record_function(
      "ScatterBackward",
      {input},
      outputs,
      [source, d, meta = meta_of(pieces)](const tensor_list& grads) {
        tensor_list all = detail::zeros_for_missing(grads, meta);
        // Under create_graph, a recorded gather (PyTorch's Scatter.backward).
        if (GradMode::is_enabled()) return tensor_list{gather(all, source, d)};
        return tensor_list{concat_on(all, source, d)};
      });
  return pieces;
}

void check_chunk_sizes(const std::vector<int64_t>& chunk_sizes,
                       size_t devices,
                       int64_t rows) {
  TANDEM_CHECK(chunk_sizes.size() == devices,
               "scatter: Expected devices and chunk_sizes to be of same length, but got "
               "len(devices) = ",
               devices,
               " and len(chunk_sizes) = ",
               chunk_sizes.size());
  int64_t sum = 0;
  for (size_t i = 0; i < chunk_sizes.size(); ++i) {
    TANDEM_CHECK(chunk_sizes[i] > 0,
                 "scatter: Chunk size must be positive, but chunk_sizes[",
                 i,
                 "] is ",
                 chunk_sizes[i]);
    sum += chunk_sizes[i];
  }
  TANDEM_CHECK(sum == rows,
               "scatter: given chunk sizes don't sum up to the tensor's size "
               "(sum(chunk_sizes) == ",
               sum,
               ", but expected ",
               rows,
               ")");
}

}  // namespace

std::vector<Tensor> scatter(const Tensor& input,
                            const std::vector<Device>& devices,
                            int64_t dim) {
  TANDEM_CHECK(input.defined(), "scatter: the input tensor is undefined");
  TANDEM_CHECK(!devices.empty(), "scatter: expected at least one device");
  const int64_t d = scatter_dim(input, dim, "the input");
  return scatter_pieces(
      input, input.detach().chunk(static_cast<int64_t>(devices.size()), d), devices, d);
}

std::vector<Tensor> scatter(const Tensor& input,
                            const std::vector<Device>& devices,
                            const std::vector<int64_t>& chunk_sizes,
                            int64_t dim) {
  TANDEM_CHECK(input.defined(), "scatter: the input tensor is undefined");
  TANDEM_CHECK(!devices.empty(), "scatter: expected at least one device");
  const int64_t d = scatter_dim(input, dim, "the input");
  check_chunk_sizes(chunk_sizes, devices.size(), input.size(d));
  return scatter_pieces(input, input.detach().split(chunk_sizes, d), devices, d);
}

namespace {

// scatter(TensorTree) with the cut `chunk_sizes`, or the chunk rule's when
// it is empty.
std::vector<TensorTree> scatter_tree(const TensorTree& inputs,
                                     const std::vector<Device>& devices,
                                     const std::vector<int64_t>& chunk_sizes,
                                     int64_t dim) {
  TANDEM_CHECK(!devices.empty(), "scatter: expected at least one device");
  if (inputs.is_tensor() && inputs.tensor().defined()) {
    // A plain tensor (DataParallel's usual input): no leaves to walk.
    const Tensor& input = inputs.tensor();
    const std::vector<Tensor> pieces = chunk_sizes.empty()
                                           ? scatter(input, devices, dim)
                                           : scatter(input, devices, chunk_sizes, dim);
    return std::vector<TensorTree>(pieces.begin(), pieces.end());
  }
  std::vector<std::pair<std::string, Tensor>> leaves;
  collect_leaves(inputs, "input", leaves);
  if (leaves.empty()) return std::vector<TensorTree>(devices.size(), inputs);
  const auto& [first_path, first] = leaves.front();
  const int64_t rows = first.size(scatter_dim(first, dim, first_path));
  for (const auto& [path, t] : leaves) {
    const int64_t size = t.size(scatter_dim(t, dim, path));
    TANDEM_CHECK(size == rows,
                 "scatter: tensors of different sizes along dim ",
                 dim,
                 " cannot be split alike: ",
                 first_path,
                 " has ",
                 rows,
                 " and ",
                 path,
                 " has ",
                 size,
                 " (PyTorch would silently drop the extra rows)");
  }
  std::vector<std::vector<Tensor>> pieces;  // [leaf][device]
  for (const auto& leaf : leaves) {
    pieces.push_back(chunk_sizes.empty()
                         ? scatter(leaf.second, devices, dim)
                         : scatter(leaf.second, devices, chunk_sizes, dim));
  }
  std::vector<TensorTree> result;
  for (size_t i = 0; i < pieces.front().size(); ++i) {
    size_t leaf = 0;
    result.push_back(inputs.map([&](const Tensor&) { return pieces[leaf++][i]; }));
  }
  return result;
}

}  // namespace

std::vector<TensorTree> scatter(const TensorTree& inputs,
                                const std::vector<Device>& devices,
                                int64_t dim) {
  return scatter_tree(inputs, devices, {}, dim);
}

std::vector<TensorTree> scatter(const TensorTree& inputs,
                                const std::vector<Device>& devices,
                                const std::vector<int64_t>& chunk_sizes,
                                int64_t dim) {
  return scatter_tree(inputs, devices, chunk_sizes, dim);
}

Tensor gather(const std::vector<Tensor>& tensors, Device destination, int64_t dim) {
  const profiler::Span span("parallel", "gather", destination);
  const std::vector<Tensor> pieces = gather_pieces(tensors, dim);
  Tensor out = concat_on(pieces, destination, dim);
  IntList sizes;
  std::vector<Device> devices;
  for (const Tensor& p : pieces) {
    sizes.push_back(p.size(dim));
    devices.push_back(p.device());
  }
  const bool scalars = tensors.front().dim() == 0;
  autograd::record_function("GatherBackward",
                            tensors,
                            {&out},
                            [sizes, devices, dim, scalars](const tensor_list& grads) {
                              tensor_list parts = detail::move_to_devices(
                                  grads[0].split(sizes, dim), devices);
                              if (scalars) {
                                for (Tensor& p : parts) p = p.view({});
                              }
                              return parts;
                            });
  return out;
}

TensorTree gather(const std::vector<TensorTree>& outputs,
                  Device destination,
                  int64_t dim) {
  TANDEM_CHECK(!outputs.empty(), "gather: Expected at least one output to gather from");
  return gather_tree(outputs, destination, dim, "output");
}

}  // namespace tandem::parallel
