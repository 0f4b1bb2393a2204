// More LibTorch programs ported by renaming (torch:: -> tandem::,
// <torch/torch.h> -> "tandem/tandem.h", TORCH_ -> TANDEM_; nothing else
// changed), for the everyday surface of issue 22: pytorch/examples'
// cpp/regression (torch::smooth_l1_loss, sizes as one integer, item() as a
// Scalar), the cpp/dcgan checkpointing of two models and two Adam
// optimizers with torch::save / torch::load, and tensor statistics code.
// Each is checked for the numbers it computes.
#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

// ---- pytorch/examples cpp/regression (verbatim but for the rename) ----

#define POLY_DEGREE 4

// Builds features i.e. a matrix with columns [x, x^2, x^3, x^4].
tandem::Tensor make_features(tandem::Tensor x) {
  x = x.unsqueeze(1);
  std::vector<tandem::Tensor> xs;
  for (int64_t i = 0; i < POLY_DEGREE; ++i) xs.push_back(x.pow(i + 1));
  return tandem::cat(xs, 1);
}

// Approximated function.
tandem::Tensor f(tandem::Tensor x, tandem::Tensor W_target, tandem::Tensor b_target) {
  return x.mm(W_target) + b_target.item();
}

// Creates a string description of a polynomial.
std::string poly_desc(tandem::Tensor W, tandem::Tensor b) {
  auto size = W.size(0);
  std::ostringstream stream;
  stream << "y = ";
  for (int64_t i = 0; i < size; ++i)
    stream << W[i].item<float>() << " x^" << size - i << " ";
  stream << "+ " << b[0].item<float>();
  return stream.str();
}

// Builds a batch i.e. (x, f(x)) pair.
std::pair<tandem::Tensor, tandem::Tensor> get_batch(tandem::Tensor W_target,
                                                    tandem::Tensor b_target,
                                                    int batch_size = 32) {
  auto random = tandem::randn(batch_size);
  auto x = make_features(random);
  auto y = f(x, W_target, b_target);
  return std::make_pair(x, y);
}

TEST(LibTorchPortApi, RegressionLearnsThePolynomial) {
  tandem::manual_seed(3);
  auto W_target = tandem::randn({POLY_DEGREE, 1}) * 5;
  auto b_target = tandem::randn(1) * 5;

  // Define the model and optimizer
  auto fc = tandem::nn::Linear(W_target.size(0), 1);
  tandem::optim::SGD optim(fc->parameters(), .1);

  float loss = 0;
  int64_t batch_idx = 0;

  while (++batch_idx) {
    // Get data
    tandem::Tensor batch_x, batch_y;
    std::tie(batch_x, batch_y) = get_batch(W_target, b_target);

    // Reset gradients
    optim.zero_grad();

    // Forward pass
    auto output = tandem::smooth_l1_loss(fc(batch_x), batch_y);
    loss = output.item<float>();

    // Backward pass
    output.backward();

    // Apply gradients
    optim.step();

    // Stop criterion
    if (loss < 1e-3f) break;
    ASSERT_LT(batch_idx, 20000) << "loss " << loss;
  }

  // The learned polynomial is the target one.
  EXPECT_TRUE(tandem::testing::all_close(fc->weight.view(-1), W_target.view(-1), 0, 0.05))
      << poly_desc(fc->weight.view(-1), fc->bias) << " vs "
      << poly_desc(W_target.view(-1), b_target);
  EXPECT_NEAR(fc->bias.item<float>(), b_target.item<float>(), 0.05);
  EXPECT_NE(poly_desc(W_target.view(-1), b_target).find(" x^4 "), std::string::npos);
}

// ---- cpp/dcgan's checkpointing: two models, two Adam optimizers ----
// (the models shrunk to a 2-D "image" so the test is quick)

struct Models {
  tandem::nn::Sequential generator = tandem::nn::Sequential(
      tandem::nn::Linear(4, 16), tandem::nn::ReLU(), tandem::nn::Linear(16, 2));
  tandem::nn::Sequential discriminator = tandem::nn::Sequential(
      tandem::nn::Linear(2, 16),
      tandem::nn::LeakyReLU(tandem::nn::LeakyReLUOptions().negative_slope(0.2)),
      tandem::nn::Linear(16, 1),
      tandem::nn::Sigmoid());
  tandem::optim::Adam generator_optimizer = tandem::optim::Adam(
      generator->parameters(), tandem::optim::AdamOptions(2e-3).betas({0.5, 0.5}));
  tandem::optim::Adam discriminator_optimizer = tandem::optim::Adam(
      discriminator->parameters(), tandem::optim::AdamOptions(5e-4).betas({0.5, 0.5}));
};

const int64_t kBatchSize = 16;

// One step of the example's loop; the batch is drawn from the step's seed
// (the example's data loader stands in for it) and the losses returned.
std::pair<float, float> gan_step(Models& m, int64_t step) {
  tandem::manual_seed(1000 + step);
  tandem::Tensor real_images = tandem::randn({kBatchSize, 2}) * 0.3 + 2;

  // Train discriminator with real images.
  m.discriminator->zero_grad();
  tandem::Tensor real_labels = tandem::empty(kBatchSize).uniform_(0.8, 1.0);
  tandem::Tensor real_output =
      m.discriminator->forward(real_images).reshape(real_labels.sizes());
  tandem::Tensor d_loss_real = tandem::binary_cross_entropy(real_output, real_labels);
  d_loss_real.backward();

  // Train discriminator with fake images.
  tandem::Tensor noise = tandem::randn({kBatchSize, 4});
  tandem::Tensor fake_images = m.generator->forward(noise);
  tandem::Tensor fake_labels = tandem::zeros(kBatchSize);
  tandem::Tensor fake_output =
      m.discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
  tandem::Tensor d_loss_fake = tandem::binary_cross_entropy(fake_output, fake_labels);
  d_loss_fake.backward();

  tandem::Tensor d_loss = d_loss_real + d_loss_fake;
  m.discriminator_optimizer.step();

  // Train generator.
  m.generator->zero_grad();
  fake_labels.fill_(1);
  fake_output = m.discriminator->forward(fake_images).reshape(fake_labels.sizes());
  tandem::Tensor g_loss = tandem::binary_cross_entropy(fake_output, fake_labels);
  g_loss.backward();
  m.generator_optimizer.step();
  return {d_loss.item<float>(), g_loss.item<float>()};
}

bool same_weights(tandem::nn::Module& a, tandem::nn::Module& b) {
  auto pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!tandem::equal(pa[i], pb[i])) return false;
  }
  return pa.size() == pb.size();
}

TEST(LibTorchPortApi, DcganCheckpointsResumeExactly) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tandem_port_api." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const int64_t kSteps = 30, kCheckpointAt = 12;

  tandem::manual_seed(1);
  Models straight;
  std::vector<tandem::Tensor> straight_losses;
  for (int64_t step = 0; step < kSteps; ++step) {
    auto [d, g] = gan_step(straight, step);
    straight_losses.push_back(tandem::tensor({d, g}));
  }

  tandem::manual_seed(1);
  Models first;
  std::vector<tandem::Tensor> losses;
  for (int64_t step = 0; step < kCheckpointAt; ++step) {
    auto [d, g] = gan_step(first, step);
    losses.push_back(tandem::tensor({d, g}));
  }
  // As the example does every checkpoint_every batches.
  tandem::save(first.generator, (dir / "generator-checkpoint.pt").string());
  tandem::save(first.generator_optimizer,
               (dir / "generator-optimizer-checkpoint.pt").string());
  tandem::save(first.discriminator, (dir / "discriminator-checkpoint.pt").string());
  tandem::save(first.discriminator_optimizer,
               (dir / "discriminator-optimizer-checkpoint.pt").string());
  tandem::save(losses, (dir / "losses.pt").string());

  // kRestoreFromCheckpoint, in a fresh program: other initial weights.
  tandem::manual_seed(99);
  Models resumed;
  ASSERT_FALSE(same_weights(*resumed.generator, *first.generator));
  tandem::load(resumed.generator, (dir / "generator-checkpoint.pt").string());
  tandem::load(resumed.generator_optimizer,
               (dir / "generator-optimizer-checkpoint.pt").string());
  tandem::load(resumed.discriminator, (dir / "discriminator-checkpoint.pt").string());
  tandem::load(resumed.discriminator_optimizer,
               (dir / "discriminator-optimizer-checkpoint.pt").string());
  std::vector<tandem::Tensor> resumed_losses;
  tandem::load(resumed_losses, (dir / "losses.pt").string());
  for (int64_t step = kCheckpointAt; step < kSteps; ++step) {
    auto [d, g] = gan_step(resumed, step);
    resumed_losses.push_back(tandem::tensor({d, g}));
  }
  std::filesystem::remove_all(dir);

  // Bitwise the uninterrupted run: weights, and every loss on the way.
  EXPECT_TRUE(same_weights(*resumed.generator, *straight.generator));
  EXPECT_TRUE(same_weights(*resumed.discriminator, *straight.discriminator));
  ASSERT_EQ(resumed_losses.size(), straight_losses.size());
  EXPECT_TRUE(
      tandem::equal(tandem::stack(resumed_losses), tandem::stack(straight_losses)));
  // And it trained: the discriminator's loss moved from its start.
  EXPECT_NE(straight_losses.front()[0].item<float>(),
            straight_losses.back()[0].item<float>());
}

// ---- statistics code as LibTorch users write it ----

TEST(LibTorchPortApi, StandardizeAndClipByNorm) {
  auto x = tandem::arange(12, tandem::kF64).view({3, 4});
  // Standardize columns.
  auto mean = x.mean(0, /*keepdim=*/true);
  auto stddev = x.std(0, /*unbiased=*/true, /*keepdim=*/true);
  auto z = (x - mean) / stddev;
  EXPECT_TRUE(tandem::testing::all_close(z.select(1, 0),
                                         tandem::tensor({-1.0, 0.0, 1.0}, tandem::kF64)));
  EXPECT_TRUE(tandem::allclose(z.var(0, true), tandem::ones(4, tandem::kF64)));

  // Clip rows to norm 10, masking the short ones.
  auto norms = x.norm(2, 1, /*keepdim=*/true);
  auto scale = (10 / norms).masked_fill(norms < 10, 1.0);
  auto clipped = x * scale;
  EXPECT_TRUE(tandem::testing::all_close(clipped[0], x[0]));
  EXPECT_NEAR(clipped[2].norm().item<double>(), 10, 1e-12);
  EXPECT_TRUE((clipped.norm(2, 1) <= 10 + 1e-9).all().item<bool>());
  EXPECT_FALSE(x.eq(0).all().item<bool>());
  EXPECT_TRUE(x.eq(0).any().item<bool>());
  tandem::optional<tandem::Tensor> weight = tandem::nullopt;
  EXPECT_FALSE(weight.has_value());
  TANDEM_CHECK(x.dim() == 2, "expected a matrix, got ", x.sizes());
}

}  // namespace
