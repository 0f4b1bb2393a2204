// `tandem train --model dcgan`: a DCGAN on Fashion-MNIST (pytorch/examples'
// cpp/dcgan at half width): a generator of transposed convolutions from 100
// numbers of noise to a 28x28 image (batch norm, ReLU, tanh), a
// discriminator of strided convolutions (LeakyReLU 0.2, batch norm,
// sigmoid), binary cross-entropy with the real labels smoothed to
// U(0.8, 1), and two Adam optimizers (betas 0.5, 0.999; lr 2e-4 by default).
// Both networks run under DataParallel over --devices.
//
// A step trains the discriminator on a batch of real images and one of
// generated ones, then the generator; its loss is the sum of the two
// networks' losses. After every epoch the generator draws a fixed batch of
// noise as a grid of 64 samples, written to --samples DIR as
// dcgan-epoch-N.png, and the scores are the discriminator's mean output on
// 1000 test images (d_real) and on those samples (d_fake), in eval mode.
#pragma once

#include <memory>

#include "training_task.h"

namespace tandem::cli {

std::unique_ptr<TrainingTask> make_gan_task(const TrainConfig& config);

}  // namespace tandem::cli
