// Image grids, as torchvision.utils.make_grid and save_image: a batch of
// images laid out in rows of `nrow`, with `padding` pixels of `pad_value`
// around and between them, saved as an 8-bit PNG file.
//
//   Tensor samples = generator->forward(fixed_noise);  // [64, 1, 28, 28] in [-1, 1]
//   tandem::io::save_image(
//       samples, "samples.png",
//       tandem::io::ImageGridOptions().normalize(true).value_range({-1, 1}));
//   Tensor grid = tandem::io::make_grid(images);  // [C, H', W'], same device
//
// Images are [N, C, H, W] or one image [C, H, W], of a floating dtype, with
// C = 1 (grey) or 3 (RGB), on any device. The layout is torchvision's: the
// grid has min(nrow, N) columns and ceil(N / columns) rows, each cell an
// image plus `padding` on its top and left, with `padding` more on the
// bottom and right edges; the last row may be partly empty (pad_value). A
// batch of one image gives that image alone, without padding, as in
// torchvision. Pixel values in [0, 1] become bytes as torchvision's
// save_image makes them: x * 255 + 0.5, clamped to [0, 255], truncated (so
// values outside [0, 1] clamp to 0 and 255).
//
// Unlike torchvision, grey images stay grey (a one-channel grid and a
// greyscale PNG; torchvision repeats them into three equal channels, which
// gives the same pixel values in a file three times the size). The PNG is
// written atomically (see atomic_file.h): a failed save leaves the file at
// `path` as it was. Errors are tandem::Errors naming the path and the
// problem (shape, dtype, or the system's reason the file cannot be written).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>

#include "tandem/core/tensor.h"

namespace tandem::io {

class ImageGridOptions {
 public:
  /// Images per row of the grid (torchvision's nrow); at least 1.
  ImageGridOptions& nrow(int64_t value) {
    nrow_ = value;
    return *this;
  }
  /// Pixels between images and around the grid; at least 0.
  ImageGridOptions& padding(int64_t value) {
    padding_ = value;
    return *this;
  }
  /// Maps the values to [0, 1] before the grid is made: from value_range()
  /// when given (values outside it are clamped first), else from the
  /// batch's own minimum and maximum.
  ImageGridOptions& normalize(bool value) {
    normalize_ = value;
    return *this;
  }
  /// The (low, high) values that normalize maps to 0 and 1.
  ImageGridOptions& value_range(std::pair<double, double> value) {
    value_range_ = value;
    return *this;
  }
  /// The value of the padding pixels, on the [0, 1] scale of the output.
  ImageGridOptions& pad_value(double value) {
    pad_value_ = value;
    return *this;
  }

  int64_t nrow() const noexcept { return nrow_; }
  int64_t padding() const noexcept { return padding_; }
  bool normalize() const noexcept { return normalize_; }
  const std::optional<std::pair<double, double>>& value_range() const noexcept {
    return value_range_;
  }
  double pad_value() const noexcept { return pad_value_; }

 private:
  int64_t nrow_ = 8;
  int64_t padding_ = 2;
  bool normalize_ = false;
  std::optional<std::pair<double, double>> value_range_;
  double pad_value_ = 0.0;
};

/// The images laid out in one [C, H', W'] tensor of their dtype, on their
/// device (torchvision's make_grid, without its grey-to-RGB repeat).
Tensor make_grid(const Tensor& images, const ImageGridOptions& options = {});

/// make_grid(images) as an 8-bit PNG at `path` (grey for one channel, RGB
/// for three), written atomically; the images are copied to the CPU.
void save_image(const Tensor& images,
                const std::filesystem::path& path,
                const ImageGridOptions& options = {});

}  // namespace tandem::io
