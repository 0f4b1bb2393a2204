#include "tandem/autograd/ivalue.h"

#include "tandem/core/error.h"

namespace tandem {

std::string IValue::tagKind() const {
  // In the order of value_'s alternatives.
  static constexpr const char* kinds[] = {"None",
                                          "Bool",
                                          "Int",
                                          "Double",
                                          "String",
                                          "Tensor",
                                          "IntList",
                                          "DoubleList",
                                          "TensorList"};
  static_assert(std::size(kinds) == std::variant_size_v<decltype(value_)>);
  return kinds[value_.index()];
}

void IValue::throw_wrong_kind(const char* method, const char* expected) const {
  throw Error(detail::str(
      "IValue::",
      method,
      ": expected ",
      expected,
      " but got ",
      tagKind(),
      isNone() ? " (a saved_data key that was never set reads as None)" : ""));
}

}  // namespace tandem
