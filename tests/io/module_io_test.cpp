// io::save / io::load of a module (reliability spec T22): an exact round
// trip, and a file for a different model fails listing the offending keys
// by name, leaving the module as it was.
#include <string>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::io {
namespace {

namespace nn = tandem::nn;
using tandem::testing::throws_with;
using testing::ScratchDir;

// Two layers and a buffer; `hidden` and `extra_layer` make the variants.
struct NetImpl : nn::Module {
  explicit NetImpl(int64_t hidden = 5, bool extra_layer = false, bool second_layer = true)
      : nn::Module("Net") {
    fc1 = register_module("fc1", nn::Linear(4, hidden));
    if (second_layer) fc2 = register_module("fc2", nn::Linear(hidden, 2));
    if (extra_layer) fc3 = register_module("fc3", nn::Linear(2, 2));
    scale = register_buffer("scale", tandem::ones({2}, kFloat64));
  }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  Tensor scale;
};
TANDEM_MODULE(Net);

// A deep copy of every value, to check a failed load changed nothing.
TensorMap snapshot(const nn::Module& module) {
  TensorMap copy;
  for (const auto& item : module.state_dict())
    copy.emplace(item.key(), item.value().clone());
  return copy;
}

::testing::AssertionResult same_values(const TensorMap& got, const TensorMap& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "different keys";
  for (const auto& [name, tensor] : want) {
    auto result = tandem::testing::all_close(got.at(name), tensor, 0, 0);
    if (!result) return result << " (" << name << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(ModuleIo, RoundTripIsExact) {
  ScratchDir dir;
  const auto path = dir.path() / "net.safetensors";
  Net saved;
  saved->scale.fill_(0.125);
  save(saved, path);
  Net loaded;
  ASSERT_FALSE(same_values(snapshot(*loaded), snapshot(*saved)));
  Tensor weight = loaded->fc1->weight;
  load(loaded, path);
  EXPECT_TRUE(same_values(snapshot(*loaded), snapshot(*saved)));
  EXPECT_TRUE(weight.is_same(loaded->fc1->weight));  // loaded in place
  EXPECT_TRUE(loaded->fc1->weight.requires_grad());
  EXPECT_EQ(load_tensors(path).size(), 5u);
}

TEST(ModuleIo, T22_MissingKeysAreListedAndNothingChanges) {
  ScratchDir dir;
  const auto path = dir.path() / "net.safetensors";
  save(Net(), path);
  Net deeper(5, /*extra_layer=*/true);
  const TensorMap before = snapshot(*deeper);
  EXPECT_TRUE(throws_with([&] { load(deeper, path); },
                          "Missing key(s) in state_dict: \"fc3.weight\", \"fc3.bias\""));
  EXPECT_TRUE(throws_with([&] { load(deeper, path); }, path.string()));
  EXPECT_TRUE(same_values(snapshot(*deeper), before));
}

TEST(ModuleIo, T22_UnexpectedKeysAreListed) {
  ScratchDir dir;
  const auto path = dir.path() / "net.safetensors";
  save(Net(), path);
  Net shallow(5, /*extra_layer=*/false, /*second_layer=*/false);
  const TensorMap before = snapshot(*shallow);
  EXPECT_TRUE(
      throws_with([&] { load(shallow, path); },
                  "Unexpected key(s) in state_dict: \"fc2.bias\", \"fc2.weight\""));
  EXPECT_TRUE(same_values(snapshot(*shallow), before));
}

TEST(ModuleIo, T22_ShapeMismatchesAreListed) {
  ScratchDir dir;
  const auto path = dir.path() / "net.safetensors";
  save(Net(), path);
  Net wider(6);
  const TensorMap before = snapshot(*wider);
  EXPECT_TRUE(
      throws_with([&] { load(wider, path); },
                  "size mismatch for fc1.weight: copying a param with shape [5, 4] "
                  "from checkpoint, the shape in current model is [6, 4]"));
  EXPECT_TRUE(throws_with([&] { load(wider, path); }, "size mismatch for fc2.weight"));
  EXPECT_TRUE(same_values(snapshot(*wider), before));
}

TEST(ModuleIo, ValuesConvertToTheModulesDtype) {
  ScratchDir dir;
  const auto path = dir.path() / "net.safetensors";
  Net saved;
  save(saved, path);
  Net loaded;
  loaded->to(kFloat64);
  load(loaded, path);
  EXPECT_EQ(loaded->fc1->weight.dtype(), kFloat64);
  EXPECT_TRUE(tandem::testing::all_close(
      loaded->fc1->weight, saved->fc1->weight.to(kFloat64), 0, 0));
}

}  // namespace
}  // namespace tandem::io
