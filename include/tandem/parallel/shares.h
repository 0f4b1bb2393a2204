// Shares: how a batch is cut into pieces, one per device.
//
// PyTorch cuts every batch evenly (Tensor::chunk's rule), so the slowest
// device sets the pace of the step. tandem keeps that rule by default
// (Balance::kEven) and can cut in proportion to weights instead: fixed ones
// (DataParallelOptions::shares, `tandem train --balance 3,1`) or ones that
// follow the devices' measured speed (Balance::kAuto, share_balancer.h).
// The cut is a plan, not part of the math: the gradient is the whole
// batch's gradient whatever the cut.
//
//   even_cut(10, 3)                 // {4, 4, 2}, as x.chunk(3)
//   cut_by_shares(256, {3.0, 1.0})  // {192, 64}
//   cut_by_shares(10, {1, 1, 1})    // {4, 3, 3}: leftover rows to the earlier
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::parallel {

/// How DataParallel (and DistributedDataParallel, across processes) cuts a
/// batch: evenly, by the chunk rule (the default, PyTorch's), or by shares
/// that follow each device's measured rows per second.
enum class Balance { kEven, kAuto };

/// Tensor::chunk's cut of `rows` into at most `devices` pieces:
/// ceil(rows / devices) rows each, the last piece what is left; trailing
/// zeros when rows is small (10 rows over 8 devices: 2, 2, 2, 2, 2, 0, 0, 0).
std::vector<int64_t> even_cut(int64_t rows, size_t devices);

/// `rows` cut into `parts` consecutive parts whose sizes differ by at most
/// one, the larger first (torch.tensor_split; DataLoaderOptions::shard's
/// split of a batch across processes).
std::vector<int64_t> split_evenly(int64_t rows, size_t parts);

/// `rows` cut in proportion to `weights` (checked by check_shares): device
/// i gets floor(rows * w_i / sum w), and the rows left over go one each to
/// the largest remainders, the earlier device first on a tie. A zero weight
/// gets zero rows.
std::vector<int64_t> cut_by_shares(int64_t rows, const std::vector<double>& weights);

/// Checks shares a user gave: one per device, each finite and >= 0, not all
/// zero. Errors start with `what`, the option or flag that gave them.
void check_shares(const std::vector<double>& weights,
                  size_t devices,
                  const std::string& what);

/// The shares as fractions that sum to 1.
std::vector<double> normalized(const std::vector<double>& weights);

}  // namespace tandem::parallel

namespace tandem::nn {
using parallel::Balance;
}  // namespace tandem::nn
