// The CUDA device table (see backend/dispatch.h): CUDA's memory services
// and kernels, defined here once, and the registration of those services
// with core.
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda_backend.h"
#include "backend/dispatch.h"
#include "core/device_services.h"

namespace tandem::backend {
namespace {

// CUDA's memory services. Constant-initialised, so they exist before any
// static initialiser runs.
constexpr detail::DeviceServices cuda_services{
    .built = true,
    .device_count = cuda_device_count,
    .properties = cuda_device_properties,
    .allocate = cuda_allocate,
    .allocate_pinned = cuda_pinned_allocate,
    .copy_bytes = cuda_copy_bytes,
    .synchronize = cuda_synchronize,
    .memory_stats = cuda_memory_stats,
    .reset_peak_memory_stats = cuda_reset_peak_memory_stats,
    .empty_cache = cuda_empty_cache,
    .pinned_memory_stats = cuda_pinned_memory_stats,
    .queue_mark = cuda_queue_mark,
    .queue_mark_times = cuda_queue_mark_times,
};

}  // namespace

const Kernels* cuda_kernel_table() {
  static const Kernels table = [] {
    Kernels k{.services = cuda_services};
    k.copy = cuda::copy;
    k.fill = cuda::fill;
    k.unary = cuda::unary;
    k.binary = cuda::binary;
    k.activation = cuda::activation;
    k.activation_backward = cuda::activation_backward;
    k.where = cuda::where;
    k.reduce_dim = cuda::reduce_dim;
    k.gemm = cuda::gemm;
    k.bmm = cuda::bmm;
    k.softmax = cuda::softmax;
    k.softmax_backward = cuda::softmax_backward;
    k.nll_loss_forward = cuda::nll_loss_forward;
    k.nll_loss_backward = cuda::nll_loss_backward;
    k.index_select = cuda::index_select;
    k.index_add = cuda::index_add;
    k.gather = cuda::gather;
    k.scatter_add = cuda::scatter_add;
    k.conv2d = cuda::conv2d;
    k.conv2d_backward = cuda::conv2d_backward;
    k.max_pool2d = cuda::max_pool2d;
    k.max_pool2d_backward = cuda::max_pool2d_backward;
    k.avg_pool2d = cuda::avg_pool2d;
    k.avg_pool2d_backward = cuda::avg_pool2d_backward;
    k.batch_norm_stats = cuda::batch_norm_stats;
    k.batch_norm_apply = cuda::batch_norm_apply;
    k.batch_norm_backward = cuda::batch_norm_backward;
    k.layer_norm = cuda::layer_norm;
    k.layer_norm_backward = cuda::layer_norm_backward;
    k.lstm_cell = cuda::lstm_cell;
    k.lstm_cell_backward = cuda::lstm_cell_backward;
    k.gru_cell = cuda::gru_cell;
    k.gru_cell_backward = cuda::gru_cell_backward;
    k.uniform = cuda::uniform;
    k.normal = cuda::normal;
    k.randint = cuda::randint;
    k.bernoulli = cuda::bernoulli;
    k.bernoulli_keyed = cuda::bernoulli_keyed;
    k.sgd_step = cuda::sgd_step;
    k.adam_step = cuda::adam_step;
    k.rmsprop_step = cuda::rmsprop_step;
    k.adagrad_step = cuda::adagrad_step;
    return k;
  }();
  return &table;
}

namespace {

// Core allocates storage through its registry of device services, not
// through this table, which it cannot see; the registration hands it the
// table's own services when tandem loads (Note [Device services] in
// core/device_services.cpp). It sits beside the table that
// backend/dispatch.cpp always links, so a program linked against the
// static library keeps it.
[[maybe_unused]] const bool cuda_services_registered =
    (detail::register_device_services(kCUDA, cuda_kernel_table()->services), true);

}  // namespace

}  // namespace tandem::backend
