#include "balance_flag.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>

#include "commands.h"
#include "options.h"
#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

// The weights of "3,1", or nullopt when an item is not a plain number.
std::optional<std::vector<double>> weights_of(const std::string& value) {
  std::vector<double> weights;
  size_t begin = 0;
  for (;;) {
    const size_t end = std::min(value.find(',', begin), value.size());
    double w = 0;
    const char* first = value.data() + begin;
    const char* last = value.data() + end;
    const auto [ptr, ec] = std::from_chars(first, last, w);
    if (first == last || ec != std::errc() || ptr != last) return std::nullopt;
    weights.push_back(w);
    if (end == value.size()) return weights;
    begin = end + 1;
  }
}

}  // namespace

CLI::Option* add_balance_flag(CLI::App& command, std::string& value) {
  const CLI::Validator form(
      [](std::string& v) -> std::string {
        if (v == "even" || v == "auto" || weights_of(v)) return "";
        return "expected even, auto or one weight per device (3,1), got '" + v + "'";
      },
      "even|auto|W1,W2,...");
  return command
      .add_option("--balance",
                  value,
                  "how each batch is cut over the devices: even (the chunk rule), auto "
                  "(by each device's measured speed) or weights, one per device (3,1)")
      ->check(form);
}

Balancing parse_balance(const std::string& value, size_t devices) {
  if (value == "even") return {};
  if (value == "auto") return {parallel::Balance::kAuto, std::nullopt};
  std::optional<std::vector<double>> weights = weights_of(value);
  if (!weights)
    throw UsageError("--balance: expected even, auto or weights, got '" + value + "'");
  try {
    parallel::check_shares(*weights, devices, "--balance " + value);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return {parallel::Balance::kEven, std::move(weights)};
}

void add_invariant_flags(CLI::App& command, InvariantFlags& flags) {
  command.add_flag("--invariant",
                   flags.on,
                   "the same weights, bit for bit, on any --devices list and --balance "
                   "(fixed micro-batches; slower)");
  command
      .add_option("--micro-batch",
                  flags.micro_batch,
                  "rows per micro-batch in invariant mode (default 32; alone it turns "
                  "invariant mode on, 0 off)")
      ->check(whole_number(0));
}

int64_t parse_invariant(const InvariantFlags& flags) {
  const int64_t rows = flags.micro_batch.value_or(flags.on ? 32 : 0);
  if (flags.on && rows == 0) {
    throw UsageError(
        "--invariant: --micro-batch 0 turns invariant mode off; give the rows per "
        "micro-batch (at least 1), or leave --invariant out");
  }
  return rows;
}

std::string shares_text(const std::vector<double>& shares) {
  std::string text;
  for (double s : shares) {
    char item[16];
    std::snprintf(item, sizeof item, "%.2f", s);
    text += (text.empty() ? "" : "/") + std::string(item);
  }
  return text;
}

}  // namespace tandem::cli
