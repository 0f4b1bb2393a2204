// Checkpoints: an exact round trip of model, Adam state, training position
// and RNG; resuming from one continues training bit for bit; generators
// restored from one draw the same numbers; clear errors for files that are
// not (this version of) a checkpoint; and every single corrupted byte or
// truncation fails the load (reliability spec T21, T23 on one process).
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::io {
namespace {

namespace fs = std::filesystem;
namespace nn = tandem::nn;
using tandem::testing::throws_with;
using testing::ScratchDir;

nn::Sequential make_model() {
  return nn::Sequential(
      nn::Linear(6, 8), nn::ReLU(), nn::Dropout(0.25), nn::Linear(8, 3));
}

// One training step on fresh random data (from the default generator, as
// dropout's masks are); returns the loss.
double train_step(nn::Sequential& model, optim::Optimizer& optimizer) {
  Tensor x = tandem::randn({16, 6});
  Tensor target = tandem::randint(0, 3, {16});
  Tensor loss = tandem::cross_entropy(model->forward(x), target);
  optimizer.zero_grad();
  loss.backward();
  optimizer.step();
  return loss.item<double>();
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  Tensor ca = a.contiguous();
  Tensor cb = b.contiguous();
  return ca.nbytes() == 0 || std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

Checkpoint capture(const nn::Sequential& model,
                   const optim::Optimizer& optimizer,
                   int64_t step) {
  Checkpoint checkpoint;
  checkpoint.model = model->state_dict();
  checkpoint.optimizer = optimizer.state_dict();
  checkpoint.epoch = 2;
  checkpoint.batch_in_epoch = 7;
  checkpoint.step = step;
  checkpoint.rng_states["default"] = default_generator().get_state();
  checkpoint.extra = {{"model", "mlp"}, {"seed", "1"}};
  return checkpoint;
}

TEST(Checkpoint, RoundTripIsExact) {
  ScratchDir dir;
  const fs::path path = dir.path() / "ck.safetensors";
  manual_seed(1);
  auto model = make_model();
  optim::Adam adam(model->parameters(), optim::AdamOptions(0.01));
  for (int i = 0; i < 3; ++i) train_step(model, adam);
  const Checkpoint saved = capture(model, adam, 3);
  save_checkpoint(saved, path);

  const Checkpoint loaded = load_checkpoint(path);
  EXPECT_EQ(loaded.epoch, 2);
  EXPECT_EQ(loaded.step, 3);
  EXPECT_EQ(loaded.batch_in_epoch, 7);
  EXPECT_EQ(loaded.rng_states, saved.rng_states);
  EXPECT_EQ(loaded.extra, saved.extra);
  ASSERT_EQ(loaded.model.size(), saved.model.size());
  for (const auto& item : saved.model) {
    ASSERT_NE(loaded.model.find(item.key()), nullptr) << item.key();
    EXPECT_TRUE(same_bits(loaded.model[item.key()], item.value())) << item.key();
  }
  ASSERT_EQ(loaded.optimizer.size(), saved.optimizer.size());
  for (const auto& [key, tensor] : saved.optimizer) {
    EXPECT_TRUE(same_bits(loaded.optimizer.at(key), tensor)) << key;
  }
}

TEST(Checkpoint, ResumingContinuesTrainingBitForBit) {
  ScratchDir dir;
  const fs::path path = dir.path() / "ck.safetensors";
  // Six steps straight.
  manual_seed(1);
  auto straight = make_model();
  optim::Adam straight_adam(straight->parameters(), optim::AdamOptions(0.01));
  std::vector<double> straight_losses;
  for (int i = 0; i < 6; ++i)
    straight_losses.push_back(train_step(straight, straight_adam));

  // Three steps, a checkpoint, and the process "ends".
  {
    manual_seed(1);
    auto model = make_model();
    optim::Adam adam(model->parameters(), optim::AdamOptions(0.01));
    for (int i = 0; i < 3; ++i) train_step(model, adam);
    save_checkpoint(capture(model, adam, 3), path);
  }
  // A fresh start elsewhere in the random stream, then resume.
  manual_seed(999);
  auto model = make_model();
  optim::Adam adam(model->parameters(), optim::AdamOptions(0.01));
  Checkpoint checkpoint = load_checkpoint(path);
  model->load_state_dict(checkpoint.model);
  adam.load_state_dict(checkpoint.optimizer);
  default_generator().set_state(checkpoint.rng_states.at("default"));
  for (int i = 3; i < 6; ++i) {
    double loss = train_step(model, adam);
    EXPECT_EQ(std::memcmp(&loss, &straight_losses[i], sizeof(double)), 0)
        << "step " << i << ": " << loss << " vs " << straight_losses[i];
  }
  for (const auto& item : straight->state_dict()) {
    EXPECT_TRUE(same_bits(model->state_dict()[item.key()], item.value())) << item.key();
  }
  const auto want = straight_adam.state_dict();
  for (const auto& [key, tensor] : adam.state_dict()) {
    EXPECT_TRUE(same_bits(tensor, want.at(key))) << key;
  }
}

TEST(Checkpoint, RestoredGeneratorsDrawTheSameNumbers) {
  ScratchDir dir;
  const fs::path path = dir.path() / "ck.safetensors";
  Generator data_order(7);
  tandem::rand({10}, data_order);
  Checkpoint checkpoint;
  checkpoint.rng_states["data"] = data_order.get_state();
  save_checkpoint(checkpoint, path);
  const Tensor next = tandem::rand({5}, data_order);
  const Tensor next_ints = tandem::randint(0, 1000, {5}, data_order);

  Generator restored(123);
  restored.set_state(load_checkpoint(path).rng_states.at("data"));
  EXPECT_TRUE(same_bits(tandem::rand({5}, restored), next));
  EXPECT_TRUE(same_bits(tandem::randint(0, 1000, {5}, restored), next_ints));
  EXPECT_EQ(restored.initial_seed(), 7u);
}

TEST(Checkpoint, FilesThatAreNotThisCheckpointFormatFailClearly) {
  ScratchDir dir;
  const fs::path path = dir.path() / "ck.safetensors";
  const Metadata valid = {{"checkpoint.version", "1"},
                          {"checkpoint.epoch", "0"},
                          {"checkpoint.step", "0"},
                          {"checkpoint.batch_in_epoch", "0"}};
  auto fails_with =
      [&](const TensorMap& tensors, Metadata metadata, const std::string& needle) {
        save_tensors(tensors, path, metadata);
        return throws_with([&] { load_checkpoint(path); }, needle);
      };
  auto with = [&](const std::string& key, const std::string& value) {
    Metadata metadata = valid;
    metadata[key] = value;
    return metadata;
  };
  EXPECT_TRUE(
      fails_with({},
                 with("checkpoint.version", "2"),
                 "has checkpoint format version 2 but this tandem reads version 1"));
  EXPECT_TRUE(fails_with({},
                         with("checkpoint.epoch", "abc"),
                         "checkpoint.epoch = \"abc\", not a non-negative integer"));
  EXPECT_TRUE(
      fails_with({}, with("checkpoint.step", "-1"), "not a non-negative integer"));
  EXPECT_TRUE(fails_with({}, with("mystery", "x"), "has the metadata entry \"mystery\""));
  EXPECT_TRUE(fails_with({}, {}, "lacks the metadata entry checkpoint.version"));
  EXPECT_TRUE(fails_with({{"weights", zeros({2})}}, valid, "has the tensor \"weights\""));
  EXPECT_TRUE(fails_with(
      {}, with("checkpoint.version", "0"), tandem::detail::str("'", path.string(), "'")));
  // Written without the checksum (as another tool would).
  testing::write_file(path, serialize({}, valid, /*store_checksum=*/false));
  EXPECT_TRUE(throws_with([&] { load_checkpoint(path); }, "has no checksum"));

  Checkpoint negative;
  negative.epoch = -1;
  EXPECT_TRUE(
      throws_with([&] { save_checkpoint(negative, path); }, "must be non-negative"));
}

TEST(Checkpoint, T21_EveryFlippedByteAndTruncationFailsTheLoad) {
  ScratchDir dir;
  const fs::path path = dir.path() / "ck.safetensors";
  manual_seed(3);
  auto model = nn::Sequential(nn::Linear(6, 3));
  optim::Adam adam(model->parameters());
  train_step(model, adam);
  Checkpoint checkpoint = capture(model, adam, 1);
  // Keeps the file small (a generator state is 6 KB of digits, covered by
  // the checksum like any metadata), so that every byte can be tried.
  checkpoint.rng_states = {{"default", "12345 678"}};
  save_checkpoint(checkpoint, path);
  const std::string good = testing::read_file(path);
  // One file changed in place (pwrite, ftruncate): rewriting it whole
  // thousands of times would wait on the disk (ext4 flushes a file that was
  // truncated and rewritten when it is closed).
  const fs::path bad = dir.path() / "bad.safetensors";
  testing::write_file(bad, good);
  const int fd = ::open(bad.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  auto put = [&](size_t offset, char byte) {
    ASSERT_EQ(::pwrite(fd, &byte, 1, offset), 1);
  };
  int loaded_anyway = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (unsigned char mask : {0x01, 0x20, 0x80}) {
      put(i, static_cast<char>(good[i] ^ mask));
      try {
        load_checkpoint(bad);
        if (++loaded_anyway <= 5) {
          ADD_FAILURE() << "byte " << i << " ^ " << int(mask) << " loaded without error";
        }
      } catch (const Error&) {
      }
    }
    put(i, good[i]);
  }
  EXPECT_EQ(loaded_anyway, 0);
  EXPECT_NO_THROW(load_checkpoint(bad));
  for (size_t length = good.size(); length-- > 0;) {
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(length)), 0);
    EXPECT_THROW(load_checkpoint(bad), Error) << "truncated to " << length << " bytes";
  }
  ::close(fd);
  testing::write_file(bad, std::string_view(good).substr(0, good.size() - 1));
  EXPECT_TRUE(throws_with([&] { load_checkpoint(bad); }, "MetadataIncompleteBuffer"));
  // A payload flip passes every structural check; only the checksum sees it.
  std::string payload_flip = good;
  payload_flip.back() ^= 0x01;
  testing::write_file(bad, payload_flip);
  EXPECT_TRUE(throws_with([&] { load_checkpoint(bad); }, "ChecksumMismatch"));
  EXPECT_TRUE(throws_with([&] { load_checkpoint(bad); }, "the file is corrupt"));
}

}  // namespace
}  // namespace tandem::io
