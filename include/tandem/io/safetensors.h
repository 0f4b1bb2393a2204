// Named tensors in the safetensors format (huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON naming each tensor's
// dtype, shape and byte range, then the raw little-endian data.
//
//   tandem::io::TensorMap tensors = {{"weight", w}, {"bias", b}};
//   tandem::io::save_tensors(tensors, "fc.safetensors", {{"epoch", "3"}});
//   auto loaded = tandem::io::load_safetensors("fc.safetensors");
//   Tensor w2 = loaded.tensors.at("weight");          // on cpu:0
//   std::string epoch = loaded.metadata.at("epoch");
//
// Reading runs the reference reader's checks, in its order, before anything
// is allocated or read past the header; each failure is a tandem::Error
// naming the source, the check (the reference's error name: HeaderTooLarge,
// InvalidOffset, ...) and the tensor involved. The header parser is strict
// JSON: duplicate keys, unknown fields, trailing bytes other than
// whitespace and non-string metadata values are rejected.
//
// Writing follows the reference writer byte for byte: tensors sorted by
// dtype (widest first) then name, `__metadata__` first with its keys
// sorted, the header padded with spaces to a multiple of 8 so every
// tensor's data is aligned to its element size. Unless told not to, the
// writer also stores a CRC-32 of the file's contents (every name, dtype,
// shape and metadata value, and the data) under the metadata key
// "tandem.crc32"; the reader verifies it when present, so a flipped byte
// fails the load instead of giving wrong weights. Files from other writers
// (without it) load as well.
//
// Dtypes: tandem's own (BOOL, U8, I64, F32, F64). A valid file holding
// another dtype (BF16, I32, ...) fails with "tandem has no dtype BF16".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "tandem/core/tensor.h"

namespace tandem::io {

/// Tensors by name. A std::map: sorted by name, whatever order a file had
/// (the format keeps no order beyond its own sort by dtype).
using TensorMap = std::map<std::string, Tensor>;
/// The file's `__metadata__`: string keys, string values.
using Metadata = std::map<std::string, std::string>;

/// What a safetensors file holds. Loaded tensors are new CPU tensors owning
/// their memory; the checksum entry is verified and left out of `metadata`.
struct SafetensorsContents {
  TensorMap tensors;
  Metadata metadata;
  /// The file carried tandem's checksum (and it matched: else the load
  /// would have failed).
  bool checksum_verified = false;
};

/// The reference reader's cap on the JSON header.
inline constexpr uint64_t kMaxHeaderSize = 100'000'000;
/// The metadata key of the checksum tandem's writer stores.
inline constexpr std::string_view kChecksumKey = "tandem.crc32";

/// The file's bytes. Tensors may live on any device and have any strides
/// (they are written as contiguous row-major data). Throws if a name is
/// "__metadata__" or not UTF-8, or if `metadata` uses kChecksumKey.
/// `store_checksum = false` gives exactly what the reference writer gives.
std::string serialize(const TensorMap& tensors,
                      const Metadata& metadata = {},
                      bool store_checksum = true);

/// Reads a whole safetensors file held in memory; `source` names it in
/// error messages.
SafetensorsContents deserialize(std::string_view bytes,
                                std::string_view source = "in-memory buffer");

/// serialize() to `path`, atomically (see atomic_file.h): afterwards `path`
/// holds either its old contents or the new file, never a mix.
void save_tensors(const TensorMap& tensors,
                  const std::filesystem::path& path,
                  const Metadata& metadata = {});

/// Reads the file at `path`, tensor by tensor (no second copy of the file
/// in memory).
SafetensorsContents load_safetensors(const std::filesystem::path& path);

/// load_safetensors(path).tensors.
TensorMap load_tensors(const std::filesystem::path& path);

}  // namespace tandem::io
