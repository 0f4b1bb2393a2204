// save_image and make_grid: the PNG files are decoded here by a small
// reader over zlib (which checks the chunk layout and every CRC) and, once,
// by Python's PIL, and their pixels compared with torchvision's layout and
// rounding, written out by hand for tiny grids.
#include <sys/wait.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::io {
namespace {

namespace fs = std::filesystem;
using tandem::testing::from_values;
using testing::read_file;
using testing::ScratchDir;

struct DecodedPng {
  int64_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;  // rows top to bottom, channels interleaved
};

uint32_t read_u32(const std::string& bytes, size_t at) {
  if (at + 4 > bytes.size()) throw std::runtime_error("PNG truncated");
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i)
    value = (value << 8) | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

// Reads the subset of PNG that save_image writes, refusing anything else:
// IHDR first (8-bit grey or RGB, no interlace), IDAT, IEND last, each
// chunk's CRC right, and every scanline of filter type 0.
DecodedPng decode_png(const std::string& bytes) {
  if (bytes.rfind(std::string("\x89PNG\r\n\x1a\n", 8), 0) != 0) {
    throw std::runtime_error("no PNG signature");
  }
  DecodedPng png;
  std::string compressed;
  std::vector<std::string> chunk_types;
  for (size_t at = 8; at < bytes.size();) {
    const uint32_t length = read_u32(bytes, at);
    if (at + 12 + length > bytes.size()) throw std::runtime_error("chunk past the end");
    const std::string type = bytes.substr(at + 4, 4);
    const std::string data = bytes.substr(at + 8, length);
    const uint32_t crc = read_u32(bytes, at + 8 + length);
    const auto* covered = reinterpret_cast<const Bytef*>(bytes.data() + at + 4);
    if (crc32(0L, covered, length + 4) != crc)
      throw std::runtime_error("bad CRC of " + type);
    chunk_types.push_back(type);
    if (type == "IHDR") {
      png.width = read_u32(data, 0);
      png.height = read_u32(data, 4);
      if (data.substr(8) != std::string("\x08\x00\x00\x00\x00", 5) &&
          data.substr(8) != std::string("\x08\x02\x00\x00\x00", 5)) {
        throw std::runtime_error("IHDR is not 8-bit grey or RGB without interlace");
      }
      png.channels = data[9] == 0 ? 1 : 3;
    } else if (type == "IDAT") {
      compressed += data;
    }
    at += 12 + length;
  }
  if (chunk_types != std::vector<std::string>{"IHDR", "IDAT", "IEND"}) {
    throw std::runtime_error("chunks are not IHDR, IDAT, IEND");
  }
  const size_t row_bytes = static_cast<size_t>(png.width * png.channels);
  std::vector<uint8_t> raw(static_cast<size_t>(png.height) * (row_bytes + 1) + 1);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(),
                 &raw_size,
                 reinterpret_cast<const Bytef*>(compressed.data()),
                 compressed.size()) != Z_OK ||
      raw_size != raw.size() - 1) {
    throw std::runtime_error("IDAT does not inflate to height * (1 + row bytes)");
  }
  for (int64_t row = 0; row < png.height; ++row) {
    const uint8_t* line = raw.data() + static_cast<size_t>(row) * (row_bytes + 1);
    if (line[0] != 0) throw std::runtime_error("scanline filter is not 0");
    png.pixels.insert(png.pixels.end(), line + 1, line + 1 + row_bytes);
  }
  return png;
}

DecodedPng saved(const Tensor& images, const ImageGridOptions& options = {}) {
  ScratchDir dir;
  const fs::path path = dir.path() / "grid.png";
  save_image(images, path, options);
  return decode_png(read_file(path));
}

// Five grey 2x3 images, every pixel of image k equal to 10 (k + 1) / 255.
Tensor five_flat_images() {
  std::vector<double> values;
  for (int k = 0; k < 5; ++k) values.insert(values.end(), 6, 10.0 * (k + 1) / 255.0);
  return from_values(values, {5, 1, 2, 3}, kFloat32);
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

size_t files_in(const fs::path& dir) {
  return static_cast<size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// torchvision.utils.make_grid(images, nrow=2, padding=1, pad_value=0.5):
// 2 columns, 3 rows of 3x4 cells, plus 1 pixel at the bottom and right:
// 10 x 9. A, B, C, D, E are images 0..4 (bytes 10..50); 128 = 0.5.
const std::vector<uint8_t> kFiveImagesInRowsOfTwo = {
    128, 128, 128, 128, 128, 128, 128, 128, 128,  //
    128, 10,  10,  10,  128, 20,  20,  20,  128,  // A B
    128, 10,  10,  10,  128, 20,  20,  20,  128,  //
    128, 128, 128, 128, 128, 128, 128, 128, 128,  //
    128, 30,  30,  30,  128, 40,  40,  40,  128,  // C D
    128, 30,  30,  30,  128, 40,  40,  40,  128,  //
    128, 128, 128, 128, 128, 128, 128, 128, 128,  //
    128, 50,  50,  50,  128, 128, 128, 128, 128,  // E and an empty cell
    128, 50,  50,  50,  128, 128, 128, 128, 128,  //
    128, 128, 128, 128, 128, 128, 128, 128, 128,  //
};

TEST(ImageGrid, LaysOutFiveImagesInRowsOfTwoLikeTorchvision) {
  const DecodedPng png =
      saved(five_flat_images(), ImageGridOptions().nrow(2).padding(1).pad_value(0.5));
  EXPECT_EQ(png.width, 9);
  EXPECT_EQ(png.height, 10);
  EXPECT_EQ(png.channels, 1);
  EXPECT_EQ(png.pixels, kFiveImagesInRowsOfTwo);
}

TEST(ImageGrid, DefaultsAreEightPerRowAndTwoPixelsOfBlack) {
  // One row of five 2x3 cells padded by 2: 5 * (3 + 2) + 2 wide, 2 + 2 + 2 high.
  const DecodedPng png = saved(five_flat_images());
  ASSERT_EQ(png.width, 27);
  ASSERT_EQ(png.height, 6);
  const auto at = [&](int64_t row, int64_t column) {
    return png.pixels[row * 27 + column];
  };
  EXPECT_EQ(at(0, 0), 0);
  EXPECT_EQ(at(1, 2), 0);
  EXPECT_EQ(at(2, 2), 10);  // image 0's top left
  EXPECT_EQ(at(3, 4), 10);  // its bottom right
  EXPECT_EQ(at(3, 5), 0);
  EXPECT_EQ(at(2, 7), 20);  // image 1's top left
  EXPECT_EQ(at(2, 22), 50);
  EXPECT_EQ(at(3, 24), 50);
  EXPECT_EQ(at(4, 24), 0);
  EXPECT_EQ(at(3, 25), 0);
}

TEST(ImageGrid, OneImageIsWrittenAloneAndRoundedLikeTorchvision) {
  // One [C, H, W] image: no padding (torchvision returns it as it is). The
  // bytes are torchvision's x * 255 + 0.5 clamped and truncated: 0.998
  // gives 254, where rounding to nearest would give 255.
  const Tensor image =
      from_values({-0.5, 0.0, 0.2, 0.499, 0.5, 0.998, 1.0, 1.2}, {1, 2, 4}, kFloat32);
  for (const Tensor& images : {image, image.unsqueeze(0), image.to(kFloat64)}) {
    const DecodedPng png = saved(images, ImageGridOptions().padding(3).pad_value(1.0));
    EXPECT_EQ(png.width, 4);
    EXPECT_EQ(png.height, 2);
    EXPECT_EQ(png.pixels, (std::vector<uint8_t>{0, 0, 51, 127, 128, 254, 255, 255}));
  }
}

TEST(ImageGrid, RgbImagesGiveInterleavedRgbPixels) {
  // Two 1x2 RGB images side by side, no padding: [red green][blue grey].
  const Tensor images = from_values({1,
                                     0,
                                     0,
                                     1,
                                     0,
                                     0,  //
                                     0,
                                     0.2,
                                     0,
                                     0.2,
                                     1,
                                     0.2},
                                    {2, 3, 1, 2},
                                    kFloat32);
  const DecodedPng png = saved(images, ImageGridOptions().padding(0));
  EXPECT_EQ(png.channels, 3);
  EXPECT_EQ(png.width, 4);
  EXPECT_EQ(png.height, 1);
  EXPECT_EQ(png.pixels,
            (std::vector<uint8_t>{255, 0, 0, 0, 255, 0, 0, 0, 255, 51, 51, 51}));
}

TEST(ImageGrid, NormalizeMapsTheValueRangeOrTheBatchRangeToBlackAndWhite) {
  const Tensor tanh_images = from_values({-1, 0, 1, 3}, {1, 1, 4}, kFloat32);
  EXPECT_EQ(
      saved(tanh_images, ImageGridOptions().normalize(true).value_range({-1, 1})).pixels,
      (std::vector<uint8_t>{0, 128, 255, 255}));
  const Tensor images = from_values({2, 4, 6, 5}, {2, 1, 1, 2}, kFloat32);
  // Without a range, the batch's own minimum and maximum; the padding is
  // not normalised.
  EXPECT_EQ(saved(images, ImageGridOptions().normalize(true).padding(1)).pixels,
            (std::vector<uint8_t>{0, 0, 0,   0, 0,   0,   0,  //
                                  0, 0, 128, 0, 255, 191, 0,  //
                                  0, 0, 0,   0, 0,   0,   0}));
  // Without normalize, the values are taken as they are (all clamp to 255).
  EXPECT_EQ(saved(images, ImageGridOptions().padding(0)).pixels,
            (std::vector<uint8_t>{255, 255, 255, 255}));
}

TEST(ImageGrid, MakeGridKeepsTheDtypeAndDevice) {
  const Tensor images = five_flat_images().to(kFloat64).to(Device("cpu:1"));
  const Tensor grid =
      make_grid(images, ImageGridOptions().nrow(2).padding(1).pad_value(0.5));
  EXPECT_EQ(grid.dtype(), kFloat64);
  EXPECT_EQ(grid.device(), Device("cpu:1"));
  ASSERT_EQ(grid.sizes(), IntList({1, 10, 9}));
  const Tensor bytes = grid.to(kCPU).mul(255).add(0.5).to(kUInt8).flatten();
  const std::vector<uint8_t> values(bytes.data_ptr<uint8_t>(),
                                    bytes.data_ptr<uint8_t>() + bytes.numel());
  EXPECT_EQ(values, kFiveImagesInRowsOfTwo);
  // Images on another device are saved from a copy on the CPU.
  EXPECT_EQ(saved(images, ImageGridOptions().nrow(2).padding(1).pad_value(0.5)).pixels,
            kFiveImagesInRowsOfTwo);
}

TEST(ImageGrid, PythonImagingLibraryReadsTheFiles) {
  const char* const python = "/usr/bin/python3";
  if (!fs::exists(python)) GTEST_SKIP() << python << " is missing";
  ScratchDir dir;
  save_image(five_flat_images(),
             dir.path() / "grey.png",
             ImageGridOptions().nrow(2).padding(1).pad_value(0.5));
  save_image(from_values({1, 0, 0, 0.2, 0.2, 1}, {3, 1, 2}, kFloat32),
             dir.path() / "rgb.png");
  // Prints each file's mode, size and pixel bytes (hex); exit 77 without PIL.
  const std::string script =
      "import sys\n"
      "try:\n"
      "    from PIL import Image\n"
      "except ImportError:\n"
      "    sys.exit(77)\n"
      "for name in ('grey.png', 'rgb.png'):\n"
      "    image = Image.open(sys.argv[1] + '/' + name)\n"
      "    image.load()\n"
      "    print(image.mode, image.size[0], image.size[1], image.tobytes().hex())\n";
  const fs::path script_path = dir.path() / "read.py";
  const fs::path output_path = dir.path() / "output.txt";
  { std::ofstream(script_path) << script; }
  const std::string command = std::string(python) + " '" + script_path.string() + "' '" +
                              dir.path().string() + "' > '" + output_path.string() +
                              "' 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << python << " has no PIL (python3-pil)";
  const std::string output = read_file(output_path);
  ASSERT_EQ(WEXITSTATUS(status), 0) << output;

  std::string grey_hex;
  for (uint8_t byte : kFiveImagesInRowsOfTwo) {
    const char* const digits = "0123456789abcdef";
    grey_hex += digits[byte >> 4];
    grey_hex += digits[byte & 15];
  }
  EXPECT_EQ(output, "L 9 10 " + grey_hex + "\nRGB 2 1 ff00330033ff\n");
}

TEST(ImageGrid, RefusesBadImagesNamingThePathAndTheProblem) {
  ScratchDir dir;
  const fs::path path = dir.path() / "grid.png";
  save_image(five_flat_images(), path);
  const std::string before = read_file(path);
  const std::string named = "save_image '" + path.string() + "': ";
  const struct {
    Tensor images;
    ImageGridOptions options;
    std::string problem;
  } cases[] = {
      {zeros({28, 28}),
       {},
       "expected images [N, C, H, W] or one image [C, H, W], got shape [28, 28]"},
      {zeros({1, 1, 1, 28, 28}),
       {},
       "expected images [N, C, H, W] or one image [C, H, W], got shape [1, 1, 1, 28, "
       "28]"},
      {zeros({4, 2, 28, 28}), {}, "expected 1 (grey) or 3 (RGB) channels, got 2"},
      {zeros({4, 28, 28}),
       {},
       "expected 1 (grey) or 3 (RGB) channels, got 4 in shape [4, 28, 28]"},
      {zeros({0, 1, 28, 28}),
       {},
       "expected at least one image of at least one pixel, got shape [0, 1, 28, 28]"},
      {zeros({2, 1, 0, 28}),
       {},
       "expected at least one image of at least one pixel, got shape [2, 1, 0, 28]"},
      {zeros({2, 1, 28, 28}, kUInt8), {}, "expected images of a floating dtype"},
      {zeros({2, 1, 28, 28}), ImageGridOptions().nrow(0), "expected nrow >= 1, got 0"},
      {zeros({2, 1, 28, 28}),
       ImageGridOptions().padding(-1),
       "expected padding >= 0, got -1"},
      {zeros({2, 1, 28, 28}),
       ImageGridOptions().normalize(true).value_range({1, -1}),
       "expected a value range (low, high) with low < high, got (1, -1)"},
  };
  for (const auto& c : cases) {
    const std::string message = error_of([&] { save_image(c.images, path, c.options); });
    EXPECT_TRUE(contains(message, named + c.problem)) << message;
  }
  EXPECT_EQ(read_file(path), before);
  EXPECT_EQ(files_in(dir.path()), 1u);
  EXPECT_TRUE(contains(error_of([] {
                         make_grid(zeros({4, 2, 3, 3}));
                       }),
                       "make_grid: expected 1 (grey) or 3 (RGB) channels, got 2"));
}

TEST(ImageGrid, UnwritablePathsFailCleanlyAndLeaveNoFile) {
  ScratchDir dir;
  const fs::path regular_file = dir.path() / "a_file";
  std::ofstream(regular_file) << "x";
  const fs::path directory = dir.path() / "a_directory";
  fs::create_directory(directory);
  for (const fs::path& path :
       {dir.path() / "missing" / "grid.png", regular_file / "grid.png", directory}) {
    const std::string message = error_of([&] { save_image(five_flat_images(), path); });
    EXPECT_TRUE(contains(message, "cannot write '" + path.string() + "'")) << message;
  }
  // Nothing beside the two entries made above, and nothing inside the
  // directory that a save tried to replace.
  EXPECT_EQ(files_in(dir.path()), 2u);
  EXPECT_EQ(files_in(directory), 0u);
  EXPECT_EQ(read_file(regular_file), "x");
}

}  // namespace
}  // namespace tandem::io
