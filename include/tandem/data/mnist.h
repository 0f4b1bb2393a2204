// The MNIST family (MNIST, Fashion-MNIST, KMNIST: the same files), with
// LibTorch's names. The whole split is read into memory at construction.
//
//   using tandem::data::datasets::MNIST;
//   MNIST train(tandem::data::datasets::kFashionMNISTRoot);
//   MNIST test(tandem::data::datasets::kFashionMNISTRoot, MNIST::Mode::kTest);
//   train.images().sizes();   // [60000, 1, 28, 28], float32 in [0, 1]
//   train.targets().sizes();  // [60000], int64 in [0, 10)
//
// `root` holds train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each raw or gzipped
// (".gz"). Debian's dataset-fashion-mnist package installs Fashion-MNIST in
// kFashionMNISTRoot. The files are checked as read_idx checks any IDX file,
// and also against each other: 28x28 uint8 images, as many labels as
// images, every label below 10.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tandem/data/dataset.h"

namespace tandem::data::datasets {

/// Where `apt-get install dataset-fashion-mnist` puts Fashion-MNIST.
inline constexpr const char* kFashionMNISTRoot = "/usr/share/datasets/fashion-mnist";

class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };

  static constexpr int64_t kImageRows = 28;
  static constexpr int64_t kImageColumns = 28;
  static constexpr int64_t kNumClasses = 10;

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  /// Image `index` [1, 28, 28] and its label (a 0-dim int64 tensor).
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  bool is_train() const noexcept { return is_train_; }

  /// All images [N, 1, 28, 28] (float32, pixel / 255) and labels [N] (int64).
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_;
  Tensor targets_;
  bool is_train_;
};

}  // namespace tandem::data::datasets
