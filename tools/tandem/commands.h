// The tandem command's subcommands. Each takes the arguments after its name
// and returns the process exit code; bad usage throws UsageError (exit 2).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tandem::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Args = std::vector<std::string>;

/// Whether the global --threads flag was given (main.cpp).
bool threads_flag_given();

int run_demo(const Args& args);
int run_devices(const Args& args);
int run_tutorial(const Args& args);
int run_train(const Args& args);
int run_eval(const Args& args);
int run_bench(const Args& args);

}  // namespace tandem::cli
