#include "backend/dispatch.h"

#include "backend/cpu/cpu_kernels.h"

namespace tandem::backend {

namespace cpu {

const Kernels& cpu_kernels() {
  static const Kernels table = [] {
    Kernels k;
    k.copy = cpu::copy;
    k.fill = cpu::fill;
    k.unary = cpu::unary;
    k.binary = cpu::binary;
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
    k.uniform = cpu::uniform;
    k.normal = cpu::normal;
    k.randint = cpu::randint;
    k.bernoulli = cpu::bernoulli;
    return k;
  }();
  return table;
}

}  // namespace cpu

const Kernels& kernels(Device device) {
  if (device.is_cpu()) return cpu::cpu_kernels();
  throw Error(detail::str("no kernels for ",
                          device,
                          ": tandem was built without CUDA (configure with ",
                          "-DTANDEM_CUDA=ON on a machine with nvcc)"));
}

}  // namespace tandem::backend
