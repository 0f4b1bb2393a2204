// The tandem command: `tandem [--threads N] <command> [flags]`, parsed with
// CLI11. Errors print "error: <message>" to stderr; exit 2 for bad usage, 1
// for failures. Under mpirun an error is printed once: a bad command line
// by process 0 (every process reads the same one), a failure by the
// process that met it ("error: rank 2: ..." beyond process 0), while the
// processes that stop because of it print nothing of their own.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "commands.h"
#include "launched_group.h"
#include "options.h"
#include "tandem/core/cpu_budget.h"
#include "tandem/distributed/errors.h"

namespace tandem::cli {
namespace {
bool threads_given = false;
}  // namespace
bool threads_flag_given() { return threads_given; }
}  // namespace tandem::cli

namespace {

using namespace tandem::cli;

struct Command {
  const char* name;
  const char* summary;
  Action (*declare)(CLI::App&);
};

constexpr Command kCommands[] = {
    {"demo", "train the seed tutorial's Linear(5, 2) for a few steps", demo_command},
    {"devices",
     "list the devices (CPU devices of the core budget, GPUs)",
     devices_command},
    {"tutorial",
     "the data-parallel tutorial: DataParallel over --devices",
     tutorial_command},
    {"train",
     "train a model on Fashion-MNIST (progress, checkpoints, resume)",
     train_command},
    {"eval", "test loss and accuracy of a training checkpoint", eval_command},
    {"bench", "time whole training steps on synthetic data (JSON)", bench_command},
    {"plot",
     "draw loss, accuracy and samples/s of tandem train --metrics files (SVG, HTML, PNG)",
     plot_command},
};

constexpr const char* kVersion = "tandem " TANDEM_VERSION;

// CLI11's message in tandem's words: the command first, as the commands'
// own errors have it, a flag left without its value said so, and an
// argument CLI11 could not place named for what it is (CLI11 lists them
// all as "not expected").
std::string usage_message(const CLI::App& app, const CLI::ParseError& error) {
  const auto chosen = app.get_subcommands();
  const std::string command = chosen.empty() ? "" : chosen.front()->get_name();
  const std::string prefix = command.empty() ? "" : command + ": ";
  const std::string message = error.what();
  // "--epochs: 1 required INT:POSITIVE missing"; with MultiOptionPolicy
  // TakeLast, the only ArgumentMismatch of a flag taking one value.
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr &&
      message.ends_with(" missing")) {
    return prefix + message.substr(0, message.find(':')) + ": needs a value";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) return prefix + message;
  const std::vector<std::string> extras = app.remaining(/*recurse=*/true);
  auto flag = std::find_if(extras.begin(), extras.end(), [](const std::string& arg) {
    return arg.size() > 1 && arg[0] == '-';
  });
  if (flag != extras.end()) {
    return prefix + "unknown flag " + flag->substr(0, flag->find('=')) + " (see tandem " +
           (command.empty() ? "" : command + " ") + "--help)";
  }
  if (command.empty())
    return "unknown command '" + extras.front() + "' (see tandem --help)";
  return prefix + "unexpected argument '" + extras.front() + "'";
}

// Declaring the flags throws only on a mistake in them (CLI11's
// ConstructionError), which main() reports as any failure.
int parse_and_run(int argc, char** argv) {
  CLI::App app("Data-parallel training on CPU devices and GPUs.", "tandem");
  app.set_version_flag("--version", kVersion);
  app.footer("`tandem <command> --help` lists a command's flags.");
  app.require_subcommand(0, 1);
  // The last of a repeated flag counts, as in most tools, so that a script
  // can override its own flags.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // The global flags, before or after the command.
  app.fallthrough();
  int64_t threads = 0;
  CLI::Option* threads_flag = app.add_option("--threads",
                                             threads,
                                             "core budget shared by the CPU devices "
                                             "(default: OMP_NUM_THREADS, else the cores "
                                             "this process may run on)")
                                  ->check(whole_number(1, kMaxThreads));
  refuse_flags_as_values(app);
  // The commands' flags show their defaults in --help (--threads has none
  // to show: all cores).
  app.option_defaults()->always_capture_default();

  std::map<const CLI::App*, Action> runs;
  for (const Command& command : kCommands) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    sub->footer("Global flag (see tandem --help): --threads N");
    runs[sub] = command.declare(*sub);
    refuse_flags_as_values(*sub);
  }
  runs[app.add_subcommand("version", "print the version")] = [] {
    std::cout << kVersion << "\n";
    return 0;
  };
  CLI::App* help = app.add_subcommand("help", "print this help");
  // Before parsing: once a command is chosen, help() is that command's.
  const std::string usage = app.help();
  runs[help] = [&usage] {
    std::cout << usage;
    return 0;
  };

  try {
    app.parse(argc, argv);
    threads_given = threads_flag->count() > 0;
    if (threads_given) tandem::set_num_threads(threads);
    const auto chosen = app.get_subcommands();
    if (chosen.empty()) {
      std::cout << usage;
      return 2;
    }
    return runs.at(chosen.front())();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (launched_rank().value_or(0) == 0) {
      std::cerr << "error: " << usage_message(app, e) << "\n";
    }
    return 2;
  }
}

// "error: <message>", naming the process beyond the first of an MPI job.
void report(const std::exception& error) {
  const int rank = launched_rank().value_or(0);
  std::cerr << "error: " << (rank > 0 ? "rank " + std::to_string(rank) + ": " : "")
            << error.what() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return parse_and_run(argc, argv);
  } catch (const QuietExit& e) {
    return e.exit_code();
  } catch (const tandem::distributed::PeerFailureError&) {
    return 1;  // the failing process reports it (and the group says why at exit)
  } catch (const UsageError& e) {
    report(e);
    return 2;
  } catch (const std::exception& e) {
    report(e);
    return 1;
  }
}
