// Private: a kernel table whose empty slots refuse to run. A device type
// may lack a kernel (a backend still being written, a build without one);
// calling such a slot must not jump through a null pointer but throw an
// Error naming the kernel and the device of its operands. kernels(device)
// hands out only tables that went through this.
//
//   Kernels k = refuse_missing_kernels(table);
//   k.sgd_step(param, grad, buf, args);  // "sgd_step: no kernel for cuda:0 ..."
#pragma once

#include "backend/dispatch.h"

namespace tandem::backend {

/// `table` with each null slot replaced by a stand-in that throws.
Kernels refuse_missing_kernels(Kernels table);

}  // namespace tandem::backend
