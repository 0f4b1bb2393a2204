// Test helpers for the data layer: IDX bytes built by hand, gzip, and a
// temporary folder that cleans up after itself.
//
//   std::vector<uint8_t> bytes = idx_bytes(0x08, {2, 3}, {1, 2, 3, 4, 5, 6});
//   TempDir dir;
//   write_file(dir.path() / "x.idx.gz", gzip(bytes));
//   write_mnist_split(dir.path(), "train", /*labels=*/{3, 0, 9}, /*gzipped=*/true);
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tandem::data::data_testing {

/// An IDX file: magic (00 00 type ndim), big-endian dims, then `payload`.
inline std::vector<uint8_t> idx_bytes(uint8_t type,
                                      const std::vector<uint32_t>& dims,
                                      const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<uint8_t>(d >> shift));
  }
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

/// `bytes` as one gzip member (what gzip(1) writes).
inline std::vector<uint8_t> gzip(const std::vector<uint8_t>& bytes) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::vector<uint8_t> out(deflateBound(&stream, bytes.size()) + 32);
  stream.next_in = const_cast<uint8_t*>(bytes.data());
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

inline void write_file(const std::filesystem::path& path,
                       const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// A fresh folder under the system's temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tandem-data-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Image i has value (i + p) % 256 at pixel p.
inline std::vector<uint8_t> mnist_pixels(uint32_t count,
                                         uint32_t rows = 28,
                                         uint32_t columns = 28) {
  std::vector<uint8_t> pixels(count * rows * columns);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t p = 0; p < rows * columns; ++p) {
      pixels[i * rows * columns + p] = static_cast<uint8_t>((i + p) % 256);
    }
  }
  return pixels;
}

/// Writes an MNIST split `prefix` ("train" or "t10k") into `dir`: the
/// given labels, as many 28x28 images (or `images` of `rows` x 28).
inline void write_mnist_split(const std::filesystem::path& dir,
                              const std::string& prefix,
                              const std::vector<uint8_t>& labels,
                              bool gzipped,
                              uint32_t images = 0,
                              uint32_t rows = 28) {
  if (images == 0) images = static_cast<uint32_t>(labels.size());
  const std::string suffix = gzipped ? ".gz" : "";
  const auto image_file = idx_bytes(0x08, {images, rows, 28}, mnist_pixels(images, rows));
  const auto label_file = idx_bytes(0x08, {static_cast<uint32_t>(labels.size())}, labels);
  write_file(dir / (prefix + "-images-idx3-ubyte" + suffix),
             gzipped ? gzip(image_file) : image_file);
  write_file(dir / (prefix + "-labels-idx1-ubyte" + suffix),
             gzipped ? gzip(label_file) : label_file);
}

}  // namespace tandem::data::data_testing
