#include "io/png_encoder.h"

#include <zlib.h>

#include <string_view>

#include "tandem/core/error.h"

namespace tandem::io::detail {
namespace {

// PNG stores every integer big-endian.
void append_u32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out += static_cast<char>((value >> shift) & 0xff);
  }
}

void append_chunk(std::string& out, std::string_view type, std::string_view data) {
  append_u32(out, static_cast<uint32_t>(data.size()));
  const size_t type_at = out.size();
  out.append(type);
  out.append(data);
  const auto* covered = reinterpret_cast<const Bytef*>(out.data() + type_at);
  append_u32(
      out,
      static_cast<uint32_t>(crc32(0L, covered, static_cast<uInt>(out.size() - type_at))));
}

// Each row prefixed by its filter type byte, 0 (none).
std::string scanlines(const uint8_t* pixels, int64_t height, size_t row_bytes) {
  std::string raw;
  raw.reserve(static_cast<size_t>(height) * (row_bytes + 1));
  for (int64_t row = 0; row < height; ++row) {
    raw += '\0';
    raw.append(
        reinterpret_cast<const char*>(pixels) + static_cast<size_t>(row) * row_bytes,
        row_bytes);
  }
  return raw;
}

std::string deflate(const std::string& raw) {
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string compressed(size, '\0');
  const int status = compress2(reinterpret_cast<Bytef*>(compressed.data()),
                               &size,
                               reinterpret_cast<const Bytef*>(raw.data()),
                               static_cast<uLong>(raw.size()),
                               Z_BEST_COMPRESSION);
  TANDEM_CHECK(
      status == Z_OK, "encode_png: zlib failed to deflate the pixels: ", zError(status));
  compressed.resize(size);
  return compressed;
}

}  // namespace

std::string encode_png(const uint8_t* pixels,
                       int64_t width,
                       int64_t height,
                       int64_t channels) {
  TANDEM_CHECK(channels == 1 || channels == 3,
               "encode_png: expected 1 (grey) or 3 (RGB) channels, got ",
               channels);
  // The specification's limit on each dimension, and on a chunk's length.
  constexpr int64_t kMaxPngValue = (int64_t{1} << 31) - 1;
  TANDEM_CHECK(
      width >= 1 && height >= 1 && width <= kMaxPngValue && height <= kMaxPngValue,
      "encode_png: a PNG is 1 to 2^31 - 1 pixels wide and high, got ",
      width,
      " x ",
      height);
  const std::string compressed =
      deflate(scanlines(pixels, height, static_cast<size_t>(width * channels)));
  TANDEM_CHECK(static_cast<int64_t>(compressed.size()) <= kMaxPngValue,
               "encode_png: the deflated pixels (",
               compressed.size(),
               " bytes) exceed the 2^31 - 1 bytes of a PNG chunk");

  std::string header;
  append_u32(header, static_cast<uint32_t>(width));
  append_u32(header, static_cast<uint32_t>(height));
  constexpr char kBitDepth = 8, kGrey = 0, kRgb = 2;
  // Bit depth, colour type, then compression, filter and interlace methods
  // (all 0: deflate, adaptive filtering with per-row types, no interlace).
  header += kBitDepth;
  header += channels == 1 ? kGrey : kRgb;
  header.append(3, '\0');

  std::string png("\x89PNG\r\n\x1a\n", 8);
  append_chunk(png, "IHDR", header);
  append_chunk(png, "IDAT", compressed);
  append_chunk(png, "IEND", {});
  return png;
}

}  // namespace tandem::io::detail
