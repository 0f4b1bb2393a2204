// What the tandem commands share on top of CLI11: validators whose messages
// read as the rest of tandem's errors (CLI11 puts the flag's name before
// them), the --data and --devices flags of several commands, and the
// refusal of a flag where a value belongs, which CLI11 alone would take as
// the value (`--lr --epochs 3`).
//
//   command.add_option("--epochs", flags->epochs, "passes over the data")
//       ->check(whole_number(1));
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tandem/core/device.h"

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace tandem::cli {

/// The most threads a flag may ask for (--threads, --workers).
constexpr int64_t kMaxThreads = 1024;

/// One of `choices`; "unknown <noun> 'x' (expected a|b)" otherwise.
CLI::Validator one_of(const std::string& noun, std::vector<std::string> choices);

/// A whole number in [min, max], in plain decimal: CLI11 alone would read
/// 010 as octal 8 and 0x10 as 16.
CLI::Validator whole_number(int64_t min,
                            int64_t max = std::numeric_limits<int64_t>::max());

/// A finite number > 0.
CLI::Validator positive_number();
/// A finite number >= 0.
CLI::Validator non_negative_number();

/// A comma-separated device list ("cpu:0,cpu:1"), or "" for the command's
/// default.
CLI::Validator device_list();
/// The devices of a list device_list() accepts; empty for "".
std::vector<Device> parse_device_list(const std::string& list);

/// Declares --data (default: where Debian's dataset-fashion-mnist package
/// puts Fashion-MNIST) and --devices ("": default_devices()).
CLI::Option* add_data_flag(CLI::App& command, std::string& root);
CLI::Option* add_devices_flag(CLI::App& command, std::string& list);

/// Makes every flag of `command` that takes a value refuse one that starts
/// with "--"; called once its flags are declared.
void refuse_flags_as_values(CLI::App& command);

}  // namespace tandem::cli
