#include "tandem/core/dtype.h"

#include <algorithm>

namespace tandem {

size_t element_size(ScalarType t) {
  switch (t) {
    case kBool:
    case kUInt8:
      return 1;
    case kInt64:
    case kFloat64:
      return 8;
    case kFloat32:
      return 4;
  }
  return 0;
}

std::string_view dtype_name(ScalarType t) {
  switch (t) {
    case kBool:
      return "bool";
    case kUInt8:
      return "uint8";
    case kInt64:
      return "int64";
    case kFloat32:
      return "float32";
    case kFloat64:
      return "float64";
  }
  return "unknown";
}

bool is_floating_point(ScalarType t) { return t == kFloat32 || t == kFloat64; }

bool is_integral(ScalarType t, bool include_bool) {
  return t == kUInt8 || t == kInt64 || (include_bool && t == kBool);
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  // The enum is ordered by promotion rank for these five types.
  return std::max(a, b);
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

}  // namespace tandem
