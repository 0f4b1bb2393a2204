// The tandem command's subcommands. main.cpp adds each to the command line
// (CLI11) and hands it to the subcommand's function here, which declares its
// flags on it and returns what runs it once the whole command line parsed;
// that returns the process exit code, and bad usage throws UsageError
// (exit 2).
#pragma once

#include <functional>
#include <stdexcept>

namespace CLI {
class App;
}  // namespace CLI

namespace tandem::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Action = std::function<int()>;

/// Whether the global --threads flag was given (main.cpp).
bool threads_flag_given();

Action demo_command(CLI::App& command);
Action devices_command(CLI::App& command);
Action tutorial_command(CLI::App& command);
Action train_command(CLI::App& command);
Action eval_command(CLI::App& command);
Action bench_command(CLI::App& command);

}  // namespace tandem::cli
