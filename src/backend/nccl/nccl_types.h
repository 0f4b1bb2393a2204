// Private to the NCCL code: tandem's dtypes as NCCL's, shared by the
// process-group collectives (distributed/nccl/) and the single-process
// cliques (backend/nccl/nccl_device_comm.cpp).
#pragma once

#include <nccl.h>

#include <optional>

#include "tandem/core/dtype.h"

namespace tandem::backend::nccl {

/// NCCL's type for `dtype`, or nullopt where NCCL's arithmetic would not
/// be tandem's: bool, which NCCL would count (1 + 1 = 2), not "or". uint8
/// sums wrap around in both.
inline std::optional<ncclDataType_t> nccl_type(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float:
      return ncclFloat32;
    case ScalarType::Double:
      return ncclFloat64;
    case ScalarType::Long:
      return ncclInt64;
    case ScalarType::Byte:
      return ncclUint8;
    case ScalarType::Bool:
      break;
  }
  return std::nullopt;
}

}  // namespace tandem::backend::nccl
