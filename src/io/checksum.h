// The checksum tandem's safetensors writer stores and its reader verifies.
//
// It is a CRC-32 (zlib's) over everything a file says, in a fixed order:
// each tensor's name, dtype and shape (in payload order), the metadata
// other than the checksum itself (sorted by key), then the payload bytes.
// Covering the header's contents, not just the data, means a flipped byte
// in a metadata value (an epoch, an RNG state) fails the load too. A CRC-32
// detects every error burst up to 32 bits, so any one corrupted byte.
//
//   FileChecksum crc = FileChecksum::of_header(header);
//   crc.update(data, size);          // for each tensor, in payload order
//   metadata[kChecksumKey] = format_checksum(crc.value());
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/safetensors_header.h"

namespace tandem::io::detail {

class FileChecksum {
 public:
  /// Starts a checksum with the header's names, dtypes, shapes and
  /// metadata (kChecksumKey excluded); the offsets follow from those.
  static FileChecksum of_header(const Header& header);

  void update(const void* data, size_t size);
  uint32_t value() const { return crc_; }

 private:
  void update_field(std::string_view field);

  uint32_t crc_ = 0;
};

/// Eight lowercase hex digits.
std::string format_checksum(uint32_t value);
/// The value of eight lowercase hex digits, or nullopt for anything else.
std::optional<uint32_t> parse_checksum(std::string_view text);

}  // namespace tandem::io::detail
