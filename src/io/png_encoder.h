// The bytes of a PNG file holding 8-bit pixels, for save_image.
//
//   std::string png = encode_png(pixels.data(), width, height, /*channels=*/3);
//
// The smallest valid layout (PNG specification, ISO/IEC 15948): the
// signature, an IHDR chunk (bit depth 8, colour type grey or RGB, no
// interlace), one IDAT chunk holding every scanline with filter type 0
// (none) deflated by zlib, and IEND; each chunk carries zlib's CRC-32 of
// its type and data.
#pragma once

#include <cstdint>
#include <string>

namespace tandem::io::detail {

/// `pixels` holds `height` rows of `width` pixels, each pixel `channels`
/// bytes (1: grey, 3: red, green, blue), with no gaps. Throws a
/// tandem::Error for other channel counts, sizes PNG cannot hold, or a
/// failure of zlib.
std::string encode_png(const uint8_t* pixels,
                       int64_t width,
                       int64_t height,
                       int64_t channels);

}  // namespace tandem::io::detail
