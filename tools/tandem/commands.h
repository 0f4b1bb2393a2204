// The tandem command's subcommands. main.cpp adds each to the command line
// (CLI11) and hands it to the subcommand's function here, which declares its
// flags on it and returns what runs it once the whole command line parsed;
// that returns the process exit code, bad usage throws UsageError (exit 2)
// and a failure another process reports throws QuietExit.
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

/// Ends the command with `exit_code`, printing nothing: in a distributed
/// run, another process reports the failure (failing_together.h).
class QuietExit : public std::runtime_error {
 public:
  explicit QuietExit(int exit_code)
      : std::runtime_error("reported by another process"), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
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
Action plot_command(CLI::App& command);

}  // namespace tandem::cli
