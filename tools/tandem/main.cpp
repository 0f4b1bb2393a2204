// The tandem command: `tandem [--threads N] <command> [flags]`. Errors print
// "error: <message>" to stderr; exit 2 for bad usage, 1 for failures.
#include <charconv>
#include <exception>
#include <iostream>
#include <string>

#include "commands.h"
#include "tandem/core/cpu_budget.h"
#include "tandem/core/error.h"

namespace {

using tandem::cli::Args;
using tandem::cli::UsageError;

void print_usage() {
  std::cout << "usage: tandem [--threads N] <command> [flags]\n\n"
               "commands:\n"
               "  demo      train the seed tutorial's Linear(5, 2) for a few steps\n"
               "  devices   list the devices (CPU devices of the core budget, GPUs)\n"
               "  tutorial  the data-parallel tutorial: DataParallel over --devices\n"
               "  train     train a model on Fashion-MNIST (progress, checkpoints, "
               "resume)\n"
               "  eval      test loss and accuracy of a training checkpoint\n"
               "  bench     time whole training steps on synthetic data (JSON)\n"
               "  version   print the version\n\n"
               "global flags (before or after the command):\n"
               "  --threads N   core budget shared by the CPU devices (default: all "
               "cores)\n\n"
               "`tandem <command> --help` lists a command's flags.\n";
}

int64_t parse_threads(const std::string& value) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 1) {
    throw UsageError("--threads expects a whole number >= 1, got '" + value + "'");
  }
  return n;
}

bool threads_given = false;

// Applies the global flags wherever they stand and returns the other
// arguments, so every command accepts them without declaring them.
Args apply_global_flags(const Args& args) {
  Args rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--threads") {
      if (i + 1 >= args.size()) throw UsageError("--threads needs a value");
      tandem::set_num_threads(parse_threads(args[++i]));
      threads_given = true;
    } else if (arg.rfind("--threads=", 0) == 0) {
      tandem::set_num_threads(parse_threads(arg.substr(arg.find('=') + 1)));
      threads_given = true;
    } else {
      rest.push_back(arg);
    }
  }
  return rest;
}

}  // namespace

namespace tandem::cli {
bool threads_flag_given() { return threads_given; }
}  // namespace tandem::cli

int main(int argc, char** argv) {
  using namespace tandem::cli;
  try {
    const Args all = apply_global_flags(Args(argv + std::min(argc, 1), argv + argc));
    const std::string command = all.empty() ? "" : all.front();
    const Args args(all.begin() + std::min<size_t>(all.size(), 1), all.end());
    if (command.empty() || command == "--help" || command == "-h" || command == "help") {
      print_usage();
      return command.empty() ? 2 : 0;
    }
    if (command == "version" || command == "--version") {
      std::cout << "tandem 0.1.0\n";
      return 0;
    }
    if (command == "demo") return run_demo(args);
    if (command == "devices") return run_devices(args);
    if (command == "tutorial") return run_tutorial(args);
    if (command == "train") return run_train(args);
    if (command == "eval") return run_eval(args);
    if (command == "bench") return run_bench(args);
    throw UsageError("unknown command '" + command + "' (see tandem --help)");
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const tandem::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
