// Compatibility with the reference format, both ways, through
// tests/reference/safetensors_check.py (the reference reader's checks and
// writer's layout in Python): it must accept and read back what tandem
// writes, and tandem must read what it writes, byte for byte the same file
// tandem's writer makes.
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::io {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

const char* const kPython = "/usr/bin/python3";

// The script, found from this file's path. __FILE__ is absolute unless the
// compiler was given a relative path (ccache with CCACHE_BASEDIR), which is
// relative to the build directory: the golden folder's grandparent.
std::optional<fs::path> find_script() {
  const fs::path here = __FILE__;
  const fs::path build_dir = fs::path(TANDEM_GOLDEN_DIR).parent_path().parent_path();
  for (const fs::path& source : {here, build_dir / here, build_dir / "tests" / here}) {
    fs::path script =
        source.parent_path().parent_path() / "reference" / "safetensors_check.py";
    if (fs::exists(script)) return script;
  }
  return std::nullopt;
}

// Mirrors RECIPE and RECIPE_METADATA in safetensors_check.py.
TensorMap make_recipe() {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {
      {"weight", tandem::arange(0, 12, kFloat32).mul(0.5).sub(1).view({3, 4})},
      {"bias", tandem::arange(0, 5, kFloat64).div(3)},
      {"steps",
       tandem::tensor<int64_t>({-1, int64_t{1} << 40, 7, -(int64_t{1} << 62)})
           .view({2, 2})},
      {"mask", tandem::tensor<bool>({true, false, false, true})},
      {"pixels", tandem::tensor<uint8_t>({0, 1, 127, 128, 254, 255}).view({2, 3})},
      {"empty", zeros({0, 3}, kFloat32)},
      {"scalar", tandem::scalar_tensor(2.5, kFloat64)},
      {"a.z", tandem::tensor<int64_t>({42})},
      {"na\xc3\xafve", tandem::testing::from_values({inf, -0.0, nan}, {3}, kFloat32)},
  };
}

const Metadata kRecipeMetadata = {{"framework", "tandem-test"},
                                  {"note", "\xc3\xbc \"q\"\n"}};

TEST(SafetensorsReference, PythonReadsTandemAndTandemReadsPython) {
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " is missing";
  auto script = find_script();
  ASSERT_TRUE(script) << "tests/reference/safetensors_check.py not found from "
                      << __FILE__;
  ScratchDir dir;
  const fs::path from_tandem = dir.path() / "from_tandem.safetensors";
  const fs::path from_python = dir.path() / "from_python.safetensors";
  const fs::path log = dir.path() / "log.txt";
  const TensorMap recipe = make_recipe();
  save_tensors(recipe, from_tandem, kRecipeMetadata);

  const std::string command = std::string(kPython) + " '" + script->string() + "' '" +
                              from_tandem.string() + "' '" + from_python.string() +
                              "' > '" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << kPython << " has no numpy";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the reference rejected tandem's file:\n"
                                    << testing::read_file(log);

  // Same layout rules, so the same bytes (the reference has no checksum).
  const std::string python_bytes = testing::read_file(from_python);
  EXPECT_EQ(python_bytes, serialize(recipe, kRecipeMetadata, /*store_checksum=*/false));
  auto loaded = load_safetensors(from_python);
  EXPECT_FALSE(loaded.checksum_verified);
  EXPECT_EQ(loaded.metadata, kRecipeMetadata);
  ASSERT_EQ(loaded.tensors.size(), recipe.size());
  for (const auto& [name, want] : recipe) {
    const Tensor& got = loaded.tensors.at(name);
    ASSERT_EQ(got.dtype(), want.dtype()) << name;
    ASSERT_EQ(got.sizes(), want.sizes()) << name;
    if (want.nbytes() == 0) continue;
    EXPECT_EQ(std::memcmp(got.data_ptr(), want.contiguous().data_ptr(), want.nbytes()), 0)
        << name;
  }
}

}  // namespace
}  // namespace tandem::io
