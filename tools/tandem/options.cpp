#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>

#include "tandem/core/error.h"
#include "tandem/data/mnist.h"

namespace tandem::cli {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : "|") + name;
  return out;
}

std::string got(const std::string& value) { return ", got '" + value + "'"; }

// A finite number > 0, or >= 0 when `zero_allowed`.
CLI::Validator finite_number(bool zero_allowed) {
  const std::string range = zero_allowed ? ">= 0" : "> 0";
  return CLI::Validator(
      [zero_allowed, range](std::string& value) -> std::string {
        double x = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
        if (ec == std::errc() && end == value.data() + value.size() && std::isfinite(x) &&
            (x > 0 || (zero_allowed && x == 0))) {
          return "";
        }
        return "expects a number " + range + got(value);
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}

}  // namespace

CLI::Validator one_of(const std::string& noun, std::vector<std::string> choices) {
  const std::string expected = joined(choices);
  return CLI::Validator(
      [noun, expected, choices = std::move(choices)](std::string& value) -> std::string {
        if (std::find(choices.begin(), choices.end(), value) != choices.end()) return "";
        return "unknown " + noun + " '" + value + "' (expected " + expected + ")";
      },
      expected);
}

CLI::Validator whole_number(int64_t min, int64_t max) {
  const bool bounded = max != std::numeric_limits<int64_t>::max();
  const std::string range =
      bounded ? "from " + std::to_string(min) + " to " + std::to_string(max)
              : ">= " + std::to_string(min);
  // In help, after CLI11's type: "INT:POSITIVE", as CLI11's own validators.
  const std::string shown =
      bounded    ? "[" + std::to_string(min) + " - " + std::to_string(max) + "]"
      : min == 0 ? "NONNEGATIVE"
      : min == 1 ? "POSITIVE"
                 : range;
  return CLI::Validator(
      [min, max, range](std::string& value) -> std::string {
        int64_t n = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        const bool plain = ec == std::errc() && end == value.data() + value.size() &&
                           std::to_string(n) == value;
        if (plain && n >= min && n <= max) return "";
        return "expects a whole number " + range + got(value);
      },
      shown);
}

CLI::Validator positive_number() { return finite_number(/*zero_allowed=*/false); }

CLI::Validator non_negative_number() { return finite_number(/*zero_allowed=*/true); }

std::vector<Device> parse_device_list(const std::string& list) {
  std::vector<Device> devices;
  for (size_t start = 0; !list.empty();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma == start) {
      throw Error("'" + list +
                  "' has an empty entry (devices are separated by one comma)");
    }
    devices.emplace_back(list.substr(start, comma - start));
    if (comma == list.size()) break;
    start = comma + 1;
  }
  return devices;
}

CLI::Validator device_list() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        try {
          parse_device_list(value);
          return "";
        } catch (const Error& e) {
          return e.what();
        }
      },
      "");
}

CLI::Option* add_data_flag(CLI::App& command, std::string& root) {
  root = data::datasets::kFashionMNISTRoot;
  return command.add_option("--data", root, "folder of the MNIST-format files");
}

CLI::Option* add_devices_flag(CLI::App& command, std::string& list) {
  return command
      .add_option(
          "--devices", list, "devices, comma-separated (default: all GPUs, else cpu)")
      ->check(device_list());
}

void refuse_flags_as_values(CLI::App& command) {
  const CLI::Validator no_flag(
      [](std::string& value) -> std::string {
        if (value.rfind("--", 0) != 0) return "";
        return "needs a value, got the flag " + value.substr(0, value.find('='));
      },
      "");
  // A transform runs before the checks, which would otherwise judge the
  // flag's name as a value ("unknown model '--epochs'").
  for (CLI::Option* flag : command.get_options()) {
    if (flag->get_type_size_max() > 0) flag->transform(no_flag);
  }
}

}  // namespace tandem::cli
