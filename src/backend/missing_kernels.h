// Private: a device table whose empty kernel slots refuse to run. A device
// type may lack a kernel (a backend still being written, a build without
// one); calling such a slot must not jump through a null pointer but throw
// an Error naming the kernel and the device of its operands.
// kernels(device) hands out only tables that went through this. The
// table's services have no empty slot to refuse: core's own set them all,
// and core checks a backend's when they are registered
// (core/device_services.h).
//
//   Kernels k = refuse_missing_kernels(table);
//   k.sgd_step(param, grad, buf, args);  // "sgd_step: no kernel for cuda:0 ..."
#pragma once

#include "backend/dispatch.h"

namespace tandem::backend {

/// `table` with each null kernel slot replaced by a stand-in that throws.
Kernels refuse_missing_kernels(Kernels table);

}  // namespace tandem::backend
