// --balance even|auto|W1,W2,...: how `tandem train` and `tandem bench` cut
// each batch over their devices (tandem/parallel/shares.h): the chunk rule,
// shares that follow the devices' measured speed, or fixed relative
// weights, one per device.
//
//   add_balance_flag(command, flags->balance);
//   const Balancing b = parse_balance(flags->balance, devices.size());
#pragma once

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
  /// Whether the cut is the chunk rule's.
  bool even() const { return balance == parallel::Balance::kEven && !shares; }
};

/// Declares --balance (default "even"); the value's form is checked here,
/// its count against the devices by parse_balance.
CLI::Option* add_balance_flag(CLI::App& command, std::string& value);

/// The --balance value for `devices` devices; a UsageError for weights of
/// the wrong count, a negative one or all zero.
Balancing parse_balance(const std::string& value, size_t devices);

/// "0.67/0.33": shares for people.
std::string shares_text(const std::vector<double>& shares);

}  // namespace tandem::cli
