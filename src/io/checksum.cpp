#include "io/checksum.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace tandem::io::detail {

FileChecksum FileChecksum::of_header(const Header& header) {
  // By name: the writer lays tensors out by dtype and the reader sorts them
  // by offset, and empty tensors share offsets, so neither order is stable.
  std::vector<const TensorRecord*> by_name;
  for (const TensorRecord& tensor : header.tensors) by_name.push_back(&tensor);
  std::sort(by_name.begin(), by_name.end(), [](const auto* a, const auto* b) {
    return a->name < b->name;
  });
  FileChecksum checksum;
  for (const TensorRecord* record : by_name) {
    const TensorRecord& tensor = *record;
    checksum.update_field(tensor.name);
    checksum.update_field(tensor.dtype->name);
    for (uint64_t dim : tensor.shape) checksum.update_field(std::to_string(dim));
    checksum.update_field("");  // ends the shape, so [1, 23] and [12, 3] differ
  }
  for (const auto& [key, value] : header.metadata) {
    if (key == kChecksumKey) continue;
    checksum.update_field(key);
    checksum.update_field(value);
  }
  return checksum;
}

// Each field ends with a NUL so that moving bytes between neighbouring
// fields changes the checksum.
void FileChecksum::update_field(std::string_view field) {
  update(field.data(), field.size());
  update("", 1);
}

void FileChecksum::update(const void* data, size_t size) {
  // zlib reads a null buffer as "start over"; an empty tensor may have one.
  if (size == 0) return;
  crc_ = static_cast<uint32_t>(
      crc32_z(crc_, static_cast<const Bytef*>(data), static_cast<z_size_t>(size)));
}

std::string format_checksum(uint32_t value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i, value >>= 4) out[i] = kHex[value & 0xf];
  return out;
}

std::optional<uint32_t> parse_checksum(std::string_view text) {
  // Only what format_checksum writes: "3FA0..." for "3fa0..." would let a
  // corrupted byte pass as harmless.
  if (text.size() != 8 ||
      text.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    return std::nullopt;
  }
  uint32_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return value;
}

}  // namespace tandem::io::detail
