#include "backend/dispatch.h"

#include "backend/cpu/cpu_kernels.h"
#include "backend/cuda_backend.h"
#include "backend/missing_kernels.h"

namespace tandem::backend {

namespace cpu {

const Kernels& cpu_kernels() {
  static const Kernels table = [] {
    // The host's services are core's own.
    Kernels k{.services = detail::device_services(kCPU)};
    k.copy = cpu::copy;
    k.fill = cpu::fill;
    k.unary = cpu::unary;
    k.binary = cpu::binary;
    k.activation = cpu::activation;
    k.activation_backward = cpu::activation_backward;
    k.where = cpu::where;
    k.reduce_dim = cpu::reduce_dim;
    k.gemm = cpu::gemm;
    k.bmm = cpu::bmm;
    k.softmax = cpu::softmax;
    k.softmax_backward = cpu::softmax_backward;
    k.nll_loss_forward = cpu::nll_loss_forward;
    k.nll_loss_backward = cpu::nll_loss_backward;
    k.index_select = cpu::index_select;
    k.index_add = cpu::index_add;
    k.gather = cpu::gather;
    k.scatter_add = cpu::scatter_add;
    k.conv2d = cpu::conv2d;
    k.conv2d_backward = cpu::conv2d_backward;
    k.max_pool2d = cpu::max_pool2d;
    k.max_pool2d_backward = cpu::max_pool2d_backward;
    k.avg_pool2d = cpu::avg_pool2d;
    k.avg_pool2d_backward = cpu::avg_pool2d_backward;
    k.batch_norm_stats = cpu::batch_norm_stats;
    k.batch_norm_apply = cpu::batch_norm_apply;
    k.batch_norm_backward = cpu::batch_norm_backward;
    k.layer_norm = cpu::layer_norm;
    k.layer_norm_backward = cpu::layer_norm_backward;
    k.lstm_cell = cpu::lstm_cell;
    k.lstm_cell_backward = cpu::lstm_cell_backward;
    k.gru_cell = cpu::gru_cell;
    k.gru_cell_backward = cpu::gru_cell_backward;
    k.uniform = cpu::uniform;
    k.normal = cpu::normal;
    k.randint = cpu::randint;
    k.bernoulli = cpu::bernoulli;
    k.bernoulli_keyed = cpu::bernoulli_keyed;
    k.sgd_step = cpu::sgd_step;
    k.adam_step = cpu::adam_step;
    k.rmsprop_step = cpu::rmsprop_step;
    k.adagrad_step = cpu::adagrad_step;
    return k;
  }();
  return table;
}

}  // namespace cpu

const Kernels& kernels(Device device) {
  if (device.is_cpu()) {
    static const Kernels cpu = refuse_missing_kernels(cpu::cpu_kernels());
    return cpu;
  }
  if (const Kernels* table = cuda_kernel_table()) {
    static const Kernels cuda = refuse_missing_kernels(*table);
    return cuda;
  }
  throw Error(detail::str("no kernels for ",
                          device,
                          ": tandem was built without CUDA (configure with ",
                          "-DTANDEM_CUDA=ON on a machine with nvcc)"));
}

}  // namespace tandem::backend
