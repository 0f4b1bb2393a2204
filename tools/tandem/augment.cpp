#include "augment.h"

#include "tandem/core/error.h"
#include "tandem/ops/factory.h"

namespace tandem::cli {
namespace {

constexpr int64_t kMaxShift = 2;

// SplitMix64's finaliser: a well-mixed 64-bit value from a counter.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Draw {
  bool flip;
  int64_t dy, dx;  // the image moves down and right by these
};

Draw draw(const AugmentKey& key, int64_t row) {
  uint64_t bits = mix(key.seed);
  bits = mix(bits ^ static_cast<uint64_t>(key.epoch));
  bits = mix(bits ^ static_cast<uint64_t>(key.batch));
  bits = mix(bits ^ static_cast<uint64_t>(row));
  constexpr uint64_t kChoices = 2 * kMaxShift + 1;
  return {(bits & 1) != 0,
          static_cast<int64_t>((bits >> 8) % kChoices) - kMaxShift,
          static_cast<int64_t>((bits >> 24) % kChoices) - kMaxShift};
}

template <typename T>
void move_images(const T* in,
                 T* out,
                 int64_t n,
                 int64_t channels,
                 int64_t height,
                 int64_t width,
                 const AugmentKey& key,
                 int64_t first_row,
                 T background) {
  const int64_t plane = height * width;
  for (int64_t i = 0; i < n; ++i) {
    const Draw d = draw(key, first_row + i);
    for (int64_t c = 0; c < channels; ++c) {
      const T* src = in + (i * channels + c) * plane;
      T* dst = out + (i * channels + c) * plane;
      for (int64_t y = 0; y < height; ++y) {
        const int64_t sy = y - d.dy;
        for (int64_t x = 0; x < width; ++x) {
          const int64_t shifted = x - d.dx;
          const int64_t sx = d.flip ? width - 1 - shifted : shifted;
          const bool inside = sy >= 0 && sy < height && sx >= 0 && sx < width;
          dst[y * width + x] = inside ? src[sy * width + sx] : background;
        }
      }
    }
  }
}

}  // namespace

Tensor augment(const Tensor& images,
               const AugmentKey& key,
               int64_t first_row,
               double background) {
  TANDEM_CHECK(images.dim() == 4 && images.device().is_cpu(),
               "augment: expected a CPU batch of images [N, C, H, W], got shape ",
               images.sizes(),
               " on ",
               images.device());
  const Tensor in = images.contiguous();
  Tensor out = empty(in.sizes(), in.options());
  const int64_t n = in.size(0), channels = in.size(1), height = in.size(2),
                width = in.size(3);
  if (in.dtype() == kFloat32) {
    move_images(in.data_ptr<float>(),
                out.data_ptr<float>(),
                n,
                channels,
                height,
                width,
                key,
                first_row,
                static_cast<float>(background));
  } else {
    TANDEM_CHECK(in.dtype() == kFloat64,
                 "augment: expected float32 or float64 images, got ",
                 in.dtype());
    move_images(in.data_ptr<double>(),
                out.data_ptr<double>(),
                n,
                channels,
                height,
                width,
                key,
                first_row,
                background);
  }
  return out;
}

}  // namespace tandem::cli
