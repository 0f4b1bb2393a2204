#include "tandem/distributed/options.h"

namespace tandem::distributed {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "sum";
    case ReduceOp::AVG:
      return "avg";
    case ReduceOp::PRODUCT:
      return "product";
    case ReduceOp::MIN:
      return "min";
    case ReduceOp::MAX:
      return "max";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, ReduceOp op) {
  return out << reduce_op_name(op);
}

}  // namespace tandem::distributed
