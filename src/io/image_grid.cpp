#include "tandem/io/image_grid.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "io/png_encoder.h"
#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/io/atomic_file.h"
#include "tandem/ops/factory.h"

namespace tandem::io {
namespace {

// What make_grid and save_image accept; `op` names the call (and, for
// save_image, the path) in the error.
void check_images(const Tensor& images,
                  const ImageGridOptions& options,
                  std::string_view op) {
  TANDEM_CHECK(
      images.defined(), op, ": expected a tensor of images, got an undefined tensor");
  TANDEM_CHECK(images.dim() == 3 || images.dim() == 4,
               op,
               ": expected images [N, C, H, W] or one image [C, H, W], got shape ",
               images.sizes());
  const int64_t channels = images.size(images.dim() - 3);
  TANDEM_CHECK(channels == 1 || channels == 3,
               op,
               ": expected 1 (grey) or 3 (RGB) channels, got ",
               channels,
               " in shape ",
               images.sizes());
  TANDEM_CHECK(images.numel() > 0,
               op,
               ": expected at least one image of at least one pixel, got shape ",
               images.sizes());
  TANDEM_CHECK(images.is_floating_point(),
               op,
               ": expected images of a floating dtype (values in [0, 1]), got ",
               images.dtype());
  TANDEM_CHECK(options.nrow() >= 1, op, ": expected nrow >= 1, got ", options.nrow());
  TANDEM_CHECK(
      options.padding() >= 0, op, ": expected padding >= 0, got ", options.padding());
  if (const auto& range = options.value_range()) {
    TANDEM_CHECK(range->first < range->second,
                 op,
                 ": expected a value range (low, high) with low < high, got (",
                 range->first,
                 ", ",
                 range->second,
                 ")");
  }
}

// torchvision's norm_range: clamp to [low, high], then map it to [0, 1].
Tensor normalized(const Tensor& batch,
                  const std::optional<std::pair<double, double>>& range) {
  const double low = range ? range->first : batch.min().item<double>();
  const double high = range ? range->second : batch.max().item<double>();
  return batch.clamp(low, high).sub(low).div(std::max(high - low, 1e-5));
}

Tensor make_checked_grid(const Tensor& images, const ImageGridOptions& options) {
  Tensor batch = images.dim() == 3 ? images.unsqueeze(0) : images;
  if (options.normalize()) batch = normalized(batch, options.value_range());
  const int64_t count = batch.size(0);
  if (count == 1) return batch[0];

  const int64_t channels = batch.size(1), height = batch.size(2), width = batch.size(3);
  const int64_t padding = options.padding();
  const int64_t columns = std::min(options.nrow(), count);
  const int64_t rows = (count + columns - 1) / columns;
  const int64_t cell_height = height + padding, cell_width = width + padding;
  Tensor grid =
      full({channels, rows * cell_height + padding, columns * cell_width + padding},
           options.pad_value(),
           TensorOptions(batch.dtype()).device(batch.device()));
  for (int64_t k = 0; k < count; ++k) {
    grid.narrow(/*dim=*/1, (k / columns) * cell_height + padding, height)
        .narrow(/*dim=*/2, (k % columns) * cell_width + padding, width)
        .copy_(batch[k]);
  }
  return grid;
}

}  // namespace

Tensor make_grid(const Tensor& images, const ImageGridOptions& options) {
  check_images(images, options, "make_grid");
  return make_checked_grid(images, options);
}

void save_image(const Tensor& images,
                const std::filesystem::path& path,
                const ImageGridOptions& options) {
  check_images(images, options, "save_image '" + path.string() + "'");
  NoGradGuard no_grad;
  const Tensor grid = make_checked_grid(images.to(kCPU), options);
  // torchvision's conversion, truncating to bytes; rows of interleaved
  // channels as PNG lays them out.
  const Tensor pixels =
      grid.mul(255).add(0.5).clamp(0, 255).permute({1, 2, 0}).to(kUInt8).contiguous();
  write_file_atomically(
      path,
      detail::encode_png(
          pixels.data_ptr<uint8_t>(), grid.size(2), grid.size(1), grid.size(0)));
}

}  // namespace tandem::io
