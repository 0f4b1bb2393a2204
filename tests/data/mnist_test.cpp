// datasets::MNIST on tiny files written here (raw and gzip), the checks
// across its two files (T06), and the real Fashion-MNIST when installed.
#include "tandem/data/mnist.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "data/idx_testing.h"
#include "support/tensor_testing.h"

namespace tandem::data::datasets {
namespace {

using data_testing::idx_bytes;
using data_testing::TempDir;
using data_testing::write_file;
using data_testing::write_mnist_split;
using tandem::testing::throws_with;

TEST(MnistTest, ReadsTinyTrainAndTestSplits) {
  for (bool gzipped : {false, true}) {
    TempDir dir;
    write_mnist_split(dir.path(), "train", {3, 0, 9}, gzipped);
    write_mnist_split(dir.path(), "t10k", {7, 1}, gzipped);
    MNIST train(dir.path().string());
    MNIST test(dir.path().string(), MNIST::Mode::kTest);
    EXPECT_TRUE(train.is_train());
    EXPECT_FALSE(test.is_train());
    ASSERT_EQ(train.size(), 3u);
    ASSERT_EQ(test.size(), 2u);
    EXPECT_EQ(train.images().sizes(), IntList({3, 1, 28, 28}));
    EXPECT_EQ(train.images().dtype(), kFloat32);
    EXPECT_EQ(train.targets().dtype(), kInt64);
    EXPECT_EQ(train.targets()[2].item<int64_t>(), 9);
    EXPECT_EQ(test.targets()[0].item<int64_t>(), 7);
    // Image 2, pixel 5 holds (2 + 5) / 255.
    EXPECT_FLOAT_EQ(train.images()[2][0][0][5].item<float>(), 7.0f / 255.0f);
    EXPECT_FLOAT_EQ(train.images().max().item<float>(), 255.0f / 255.0f);
    Example<> example = train.get(1);
    EXPECT_EQ(example.data.sizes(), IntList({1, 28, 28}));
    EXPECT_EQ(example.target.item<int64_t>(), 0);
    EXPECT_THROW(train.get(3), IndexError);
  }
}

TEST(MnistTest, T06_LabelCountOtherThanImageCountNamesBoth) {
  TempDir dir;
  write_mnist_split(dir.path(), "train", {1, 2}, /*gzipped=*/true, /*images=*/3);
  EXPECT_TRUE(throws_with([&] { MNIST m(dir.path().string()); }, "has 3 images but"));
  EXPECT_TRUE(throws_with([&] { MNIST m(dir.path().string()); },
                          "train-labels-idx1-ubyte.gz has 2 labels"));
}

TEST(MnistTest, T06_LabelOfTenOrMoreNamesIndexAndValue) {
  TempDir dir;
  write_mnist_split(dir.path(), "train", {1, 10, 200}, /*gzipped=*/false);
  EXPECT_TRUE(
      throws_with([&] { MNIST m(dir.path().string()); },
                  "train-labels-idx1-ubyte: label 10 at index 1 is outside [0, 10)"));
}

TEST(MnistTest, ImagesOtherThan28x28AreRefused) {
  TempDir dir;
  write_mnist_split(
      dir.path(), "train", {1}, /*gzipped=*/false, /*images=*/1, /*rows=*/27);
  EXPECT_TRUE(throws_with([&] { MNIST m(dir.path().string()); },
                          "expected 28x28 images, got 27x28"));
}

TEST(MnistTest, WrongKindOfFileIsRefused) {
  TempDir dir;
  write_mnist_split(dir.path(), "train", {1, 2}, /*gzipped=*/false);
  // Labels where the images should be: one dimension, not three.
  write_file(dir.path() / "train-images-idx3-ubyte", idx_bytes(0x08, {2}, {1, 2}));
  EXPECT_TRUE(throws_with([&] { MNIST m(dir.path().string()); },
                          "expected 3 dimensions, the IDX magic gives 1"));
}

TEST(MnistTest, MissingFilesPointToTheDebianPackage) {
  TempDir dir;
  EXPECT_TRUE(
      throws_with([&] { MNIST m(dir.path().string()); },
                  "cannot find train-images-idx3-ubyte or train-images-idx3-ubyte.gz"));
  EXPECT_TRUE(throws_with([&] { MNIST m(dir.path().string(), MNIST::Mode::kTest); },
                          "t10k-images-idx3-ubyte"));
  EXPECT_TRUE(throws_with([&] { MNIST m((dir.path() / "absent").string()); },
                          "(no such folder)"));
  EXPECT_TRUE(throws_with([&] { MNIST m(dir.path().string()); },
                          "Debian's dataset-fashion-mnist package (apt-get install "
                          "dataset-fashion-mnist), which installs it in "
                          "/usr/share/datasets/fashion-mnist"));
}

// ---- the real data (Debian's dataset-fashion-mnist) ----

class FashionMnistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(std::filesystem::path(kFashionMNISTRoot) /
                                 "train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "Fashion-MNIST is not installed in " << kFashionMNISTRoot
                   << " (apt-get install dataset-fashion-mnist)";
    }
  }
};

TEST_F(FashionMnistTest, TrainSplit) {
  MNIST train(kFashionMNISTRoot);
  ASSERT_EQ(train.size(), 60000u);
  EXPECT_EQ(train.images().sizes(), IntList({60000, 1, 28, 28}));
  EXPECT_EQ(train.targets().sizes(), IntList({60000}));
  EXPECT_EQ(train.targets().min().item<int64_t>(), 0);
  EXPECT_EQ(train.targets().max().item<int64_t>(), 9);
  EXPECT_GE(train.images().min().item<float>(), 0.0f);
  EXPECT_LE(train.images().max().item<float>(), 1.0f);
  const std::vector<int64_t> first = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(train.targets()[static_cast<int64_t>(i)].item<int64_t>(), first[i]) << i;
  }
  // The first image's pixels add up to 76247 (of 255 each).
  EXPECT_NEAR(train.images()[0].sum().item<double>() * 255.0, 76247.0, 0.5);
}

TEST_F(FashionMnistTest, TestSplit) {
  MNIST test(kFashionMNISTRoot, MNIST::Mode::kTest);
  ASSERT_EQ(test.size(), 10000u);
  EXPECT_EQ(test.images().sizes(), IntList({10000, 1, 28, 28}));
  const std::vector<int64_t> first = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(test.targets()[static_cast<int64_t>(i)].item<int64_t>(), first[i]) << i;
  }
  // Every class appears 1000 times in the test split.
  for (int64_t c = 0; c < 10; ++c) {
    EXPECT_EQ(test.targets().eq(static_cast<double>(c)).to(kFloat64).sum().item<double>(),
              1000.0)
        << c;
  }
  EXPECT_NEAR(test.images()[0].sum().item<double>() * 255.0, 33456.0, 0.5);
}

}  // namespace
}  // namespace tandem::data::datasets
