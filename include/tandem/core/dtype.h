// DType: the element type of a tensor, with LibTorch's names.
//
//   auto x = tandem::zeros({2, 3}, tandem::kFloat64);
//   if (x.dtype() == tandem::kDouble) ...
//
// Promotion follows PyTorch for these five types:
// bool < uint8 < int64 < float32 < float64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

namespace tandem {

enum class ScalarType : int8_t { Bool = 0, Byte = 1, Long = 2, Float = 3, Double = 4 };
using Dtype = ScalarType;
using DType = ScalarType;

inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kUInt8 = ScalarType::Byte;
inline constexpr ScalarType kByte = ScalarType::Byte;
inline constexpr ScalarType kInt64 = ScalarType::Long;
inline constexpr ScalarType kLong = ScalarType::Long;
inline constexpr ScalarType kFloat32 = ScalarType::Float;
inline constexpr ScalarType kFloat = ScalarType::Float;
inline constexpr ScalarType kFloat64 = ScalarType::Double;
inline constexpr ScalarType kDouble = ScalarType::Double;
/// LibTorch's short names. tandem has no int8, int16, int32, float16 or
/// bfloat16, so kI8, kI16, kI32, kF16 and kBF16 do not exist: a ported
/// program that uses them fails to compile rather than compute in another
/// type.
inline constexpr ScalarType kU8 = ScalarType::Byte;
inline constexpr ScalarType kI64 = ScalarType::Long;
inline constexpr ScalarType kF32 = ScalarType::Float;
inline constexpr ScalarType kF64 = ScalarType::Double;

size_t element_size(ScalarType t);
std::string_view dtype_name(ScalarType t);  // "float32", "int64", ...
bool is_floating_point(ScalarType t);
bool is_integral(ScalarType t, bool include_bool = true);
ScalarType promote_types(ScalarType a, ScalarType b);
std::ostream& operator<<(std::ostream& out, ScalarType t);

/// The C++ type of each dtype, and back.
template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr ScalarType value = kBool;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr ScalarType value = kUInt8;
};
template <>
struct dtype_of<int64_t> {
  static constexpr ScalarType value = kInt64;
};
template <>
struct dtype_of<float> {
  static constexpr ScalarType value = kFloat32;
};
template <>
struct dtype_of<double> {
  static constexpr ScalarType value = kFloat64;
};
template <typename T>
inline constexpr ScalarType dtype_of_v = dtype_of<T>::value;

}  // namespace tandem
