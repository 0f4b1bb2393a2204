// IValue: one value of a few kinds (None, bool, int, double, string,
// Tensor, and lists of ints, doubles or tensors), LibTorch's type for what
// a custom autograd function keeps in ctx->saved_data between forward and
// backward. It holds what it was given; reading it as another kind is an
// error that names both kinds (as LibTorch's: no int-to-double conversion).
//
//   ctx->saved_data["constant"] = 5.5;                 // a Double
//   ctx->saved_data["sizes"] = input.sizes();          // an IntList
//   double c = ctx->saved_data["constant"].toDouble();
//   auto sizes = ctx->saved_data["sizes"].toIntVector();
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tandem/core/int_list.h"
#include "tandem/core/tensor.h"

namespace tandem {

class IValue {
 public:
  /// None. The constructors below are implicit, as LibTorch's, so that
  /// `ctx->saved_data["n"] = n;` stores n.
  IValue() = default;
  IValue(bool value) : value_(value) {}  // implicit
  template <std::integral I>
  requires(!std::same_as<I, bool>) IValue(I value)
      : value_(static_cast<int64_t>(value)) {}  // implicit
  template <std::floating_point F>
  IValue(F value) : value_(static_cast<double>(value)) {}           // implicit
  IValue(std::string value) : value_(std::move(value)) {}           // implicit
  IValue(const char* value) : value_(std::string(value)) {}         // implicit
  IValue(Tensor value) : value_(std::move(value)) {}                // implicit
  IValue(std::vector<int64_t> value) : value_(std::move(value)) {}  // implicit
  IValue(const IntList& value)                                      // implicit
      : value_(std::vector<int64_t>(value.begin(), value.end())) {}
  IValue(std::vector<double> value) : value_(std::move(value)) {}  // implicit
  IValue(std::vector<Tensor> value) : value_(std::move(value)) {}  // implicit

  bool isNone() const { return holds<std::monostate>(); }
  bool isBool() const { return holds<bool>(); }
  bool isInt() const { return holds<int64_t>(); }
  bool isDouble() const { return holds<double>(); }
  bool isString() const { return holds<std::string>(); }
  bool isTensor() const { return holds<Tensor>(); }
  bool isIntList() const { return holds<std::vector<int64_t>>(); }
  bool isDoubleList() const { return holds<std::vector<double>>(); }
  bool isTensorList() const { return holds<std::vector<Tensor>>(); }

  /// Each throws tandem::Error ("IValue::toInt: expected Int but got
  /// Double") when the value is of another kind.
  bool toBool() const { return get<bool>("toBool", "Bool"); }
  int64_t toInt() const { return get<int64_t>("toInt", "Int"); }
  double toDouble() const { return get<double>("toDouble", "Double"); }
  const std::string& toStringRef() const {
    return get<std::string>("toStringRef", "String");
  }
  std::string_view toStringView() const {
    return get<std::string>("toStringView", "String");
  }
  Tensor toTensor() const { return get<Tensor>("toTensor", "Tensor"); }
  std::vector<int64_t> toIntVector() const {
    return get<std::vector<int64_t>>("toIntVector", "IntList");
  }
  std::vector<double> toDoubleVector() const {
    return get<std::vector<double>>("toDoubleVector", "DoubleList");
  }
  std::vector<Tensor> toTensorVector() const {
    return get<std::vector<Tensor>>("toTensorVector", "TensorList");
  }

  /// The kind held, as LibTorch names it: "None", "Bool", "Int", "Double",
  /// "String", "Tensor", "IntList", "DoubleList", "TensorList".
  std::string tagKind() const;

 private:
  template <class T>
  bool holds() const {
    return std::holds_alternative<T>(value_);
  }
  template <class T>
  const T& get(const char* method, const char* kind) const {
    if (const T* held = std::get_if<T>(&value_)) return *held;
    throw_wrong_kind(method, kind);
  }
  [[noreturn]] void throw_wrong_kind(const char* method, const char* expected) const;

  std::variant<std::monostate,
               bool,
               int64_t,
               double,
               std::string,
               Tensor,
               std::vector<int64_t>,
               std::vector<double>,
               std::vector<Tensor>>
      value_;
};

}  // namespace tandem
