#include "tandem/data/mnist.h"

#include <filesystem>
#include <system_error>

#include "tandem/data/idx.h"

namespace tandem::data::datasets {
namespace {

namespace fs = std::filesystem;

// `stem` or `stem`.gz in `root`.
fs::path find_file(const fs::path& root, const std::string& stem) {
  for (const char* suffix : {"", ".gz"}) {
    fs::path path = root / (stem + suffix);
    std::error_code error;
    if (fs::is_regular_file(path, error)) return path;
  }
  std::error_code error;
  const bool root_exists = fs::is_directory(root, error);
  throw Error(tandem::detail::str("MNIST: cannot find ",
                                  stem,
                                  " or ",
                                  stem,
                                  ".gz in ",
                                  root.string(),
                                  root_exists ? "" : " (no such folder)",
                                  "; Fashion-MNIST comes from Debian's "
                                  "dataset-fashion-mnist package (apt-get install "
                                  "dataset-fashion-mnist), which installs it in ",
                                  kFashionMNISTRoot));
}

Tensor read_images(const fs::path& path) {
  Tensor images = read_idx(path, IdxOptions().ndim(3).type(IdxType::kUInt8));
  TANDEM_CHECK(
      images.size(1) == MNIST::kImageRows && images.size(2) == MNIST::kImageColumns,
      "MNIST: ",
      path.string(),
      ": expected ",
      MNIST::kImageRows,
      "x",
      MNIST::kImageColumns,
      " images, got ",
      images.size(1),
      "x",
      images.size(2));
  return images;
}

Tensor read_labels(const fs::path& path) {
  Tensor labels = read_idx(path, IdxOptions().ndim(1).type(IdxType::kUInt8));
  const uint8_t* values = labels.data_ptr<uint8_t>();
  for (int64_t i = 0; i < labels.numel(); ++i) {
    TANDEM_CHECK(values[i] < MNIST::kNumClasses,
                 "MNIST: ",
                 path.string(),
                 ": label ",
                 static_cast<int>(values[i]),
                 " at index ",
                 i,
                 " is outside [0, ",
                 MNIST::kNumClasses,
                 ")");
  }
  return labels;
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode) : is_train_(mode == Mode::kTrain) {
  const std::string prefix = is_train_ ? "train" : "t10k";
  const fs::path images_path = find_file(root, prefix + "-images-idx3-ubyte");
  const fs::path labels_path = find_file(root, prefix + "-labels-idx1-ubyte");
  const Tensor images = read_images(images_path);
  const Tensor labels = read_labels(labels_path);
  TANDEM_CHECK(images.size(0) == labels.size(0),
               "MNIST: ",
               images_path.string(),
               " has ",
               images.size(0),
               " images but ",
               labels_path.string(),
               " has ",
               labels.size(0),
               " labels");
  images_ =
      images.to(kFloat32).div_(255).view({images.size(0), 1, kImageRows, kImageColumns});
  targets_ = labels.to(kInt64);
}

Example<> MNIST::get(size_t index) {
  TANDEM_CHECK_INDEX(index < static_cast<size_t>(images_.size(0)),
                     "MNIST: index ",
                     index,
                     " is out of range for ",
                     images_.size(0),
                     " examples");
  const auto i = static_cast<int64_t>(index);
  return {images_[i], targets_[i]};
}

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace tandem::data::datasets
