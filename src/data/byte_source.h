// Private: sequential byte sources for the IDX reader. A file, a buffer in
// memory, or a gzip stream decompressed on the fly from either, all read
// the same way, so the reader checks each file the same way whatever its
// packing. Errors name the file (`name`) and throw tandem::Error.
//
//   auto source = gzip_source(file_source("x.gz"), "x.gz");
//   size_t n = source->read(buffer, 16);   // < 16 only at the end
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace tandem::data::detail {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Reads up to `n` bytes into `out`; returns fewer only at the end.
  virtual size_t read(uint8_t* out, size_t n) = 0;
  /// Bytes left, where known without reading them (files and buffers; not
  /// gzip streams).
  virtual std::optional<uint64_t> remaining() const = 0;
};

/// A regular file (anything else, such as a folder, is refused).
std::unique_ptr<ByteSource> file_source(const std::string& path);
/// A view of `bytes`, which must outlive the source.
std::unique_ptr<ByteSource> memory_source(std::span<const uint8_t> bytes);
/// The data decompressed from the gzip stream in `compressed` (one or more
/// members, as gzip(1) writes them). A corrupt or cut-off stream throws.
std::unique_ptr<ByteSource> gzip_source(std::unique_ptr<ByteSource> compressed,
                                        std::string name);

}  // namespace tandem::data::detail
