// The IDX file format of (Fashion-)MNIST: read raw or gzip-compressed files,
// or bytes already in memory, into a tensor.
//
//   auto images = tandem::data::read_idx("train-images-idx3-ubyte.gz",
//                                        IdxOptions().ndim(3).type(IdxType::kUInt8));
//   images.sizes();   // [60000, 28, 28], uint8
//
// An IDX file is a 4-byte magic (00 00, element type, number of dims), one
// big-endian uint32 per dim, then the elements in row-major order, each
// big-endian. Everything is checked before the tensor is made: a bad file
// gives a tandem::Error naming the file and the fault (truncated header,
// unknown type, wrong ndim, size overflow or over the cap, payload short or
// long), never a crash or a partly filled tensor. See Note [Reading IDX].
//
// Element types map to tandem dtypes losslessly: uint8 -> uint8; int8,
// int16, int32 -> int64; float32 -> float32; float64 -> float64.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>

#include "tandem/core/tensor.h"

namespace tandem::data {

/// The element type codes of the IDX format (byte 2 of the magic).
enum class IdxType : uint8_t {
  kUInt8 = 0x08,
  kInt8 = 0x09,
  kInt16 = 0x0B,
  kInt32 = 0x0C,
  kFloat32 = 0x0D,
  kFloat64 = 0x0E,
};

/// "uint8", "int8", ... as the format names them.
std::string_view idx_type_name(IdxType type);

enum class IdxCompression { kNone, kGzip };

/// Largest payload read_idx accepts by default (2 GiB; MNIST's is 47 MB).
inline constexpr uint64_t kDefaultIdxMaxBytes = uint64_t{2} << 30;

/// What the caller requires of the file; anything else is an error.
class IdxOptions {
 public:
  /// Required number of dimensions (default: any).
  IdxOptions& ndim(int64_t value) {
    ndim_ = value;
    return *this;
  }
  /// Required element type (default: any).
  IdxOptions& type(IdxType value) {
    type_ = value;
    return *this;
  }
  /// Refuse payloads larger than this, before allocating anything.
  IdxOptions& max_bytes(uint64_t value) {
    max_bytes_ = value;
    return *this;
  }

  std::optional<int64_t> ndim() const { return ndim_; }
  std::optional<IdxType> type() const { return type_; }
  uint64_t max_bytes() const { return max_bytes_; }

 private:
  std::optional<int64_t> ndim_;
  std::optional<IdxType> type_;
  uint64_t max_bytes_ = kDefaultIdxMaxBytes;
};

/// Reads an IDX file; a name ending in ".gz" is decompressed (gzip).
Tensor read_idx(const std::filesystem::path& path, const IdxOptions& options = {});

/// Reads IDX data from memory; `name` stands for the file in messages.
Tensor read_idx(std::span<const uint8_t> bytes,
                IdxCompression compression,
                const IdxOptions& options = {},
                std::string_view name = "<memory>");

}  // namespace tandem::data
