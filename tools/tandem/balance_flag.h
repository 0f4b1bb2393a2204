// --balance even|auto|W1,W2,...: how `tandem train` and `tandem bench` cut
// each batch over their devices (tandem/parallel/shares.h): the chunk rule,
// shares that follow the devices' measured speed, or fixed relative
// weights, one per device. --invariant [--micro-batch N]: cut it into fixed
// micro-batches instead, so that the weights do not depend on the devices
// (nn::DataParallelOptions::invariant).
//
//   add_balance_flag(command, flags->balance);
//   add_invariant_flags(command, flags->invariant);
//   Balancing b = parse_balance(flags->balance, devices.size());
//   b.micro_batch = parse_invariant(flags->invariant);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tandem/parallel/shares.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tandem::cli {

struct Balancing {
  parallel::Balance balance = parallel::Balance::kEven;
  std::optional<std::vector<double>> shares;  // fixed weights
  int64_t micro_batch = 0;  // invariant mode's rows per micro-batch; 0: off
  /// Whether the cut is the chunk rule's.
  bool even() const { return balance == parallel::Balance::kEven && !shares; }
};

/// Declares --balance (default "even"); the value's form is checked here,
/// its count against the devices by parse_balance.
CLI::Option* add_balance_flag(CLI::App& command, std::string& value);

/// The --balance value for `devices` devices; a UsageError for weights of
/// the wrong count, a negative one or all zero.
Balancing parse_balance(const std::string& value, size_t devices);

struct InvariantFlags {
  bool on = false;                     // --invariant
  std::optional<int64_t> micro_batch;  // --micro-batch
};

/// Declares --invariant and --micro-batch N (N alone turns invariant mode
/// on with N rows; 0 turns it off, as a checkpoint of a run without it
/// records).
void add_invariant_flags(CLI::App& command, InvariantFlags& flags);

/// Invariant mode's rows per micro-batch (32 unless --micro-batch says),
/// or 0 when it is off; a UsageError for --invariant with --micro-batch 0.
/// In one process DataParallel runs it, under mpirun
/// DistributedDataParallel.
int64_t parse_invariant(const InvariantFlags& flags);

/// "0.67/0.33": shares for people.
std::string shares_text(const std::vector<double>& shares);

}  // namespace tandem::cli
