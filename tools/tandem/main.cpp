// The tandem command: `tandem <command> [flags]`. Errors print
// "error: <message>" to stderr; exit 2 for bad usage, 1 for failures.
#include <exception>
#include <iostream>
#include <string>

#include "commands.h"
#include "tandem/core/error.h"

namespace {

void print_usage() {
  std::cout << "usage: tandem <command> [flags]\n\n"
               "commands:\n"
               "  demo      train the seed tutorial's Linear(5, 2) for a few steps\n"
               "  version   print the version\n\n"
               "`tandem <command> --help` lists a command's flags.\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tandem::cli;
  const std::string command = argc > 1 ? argv[1] : "";
  const Args args(argv + std::min(argc, 2), argv + argc);
  try {
    if (command.empty() || command == "--help" || command == "-h" || command == "help") {
      print_usage();
      return command.empty() ? 2 : 0;
    }
    if (command == "version" || command == "--version") {
      std::cout << "tandem 0.1.0\n";
      return 0;
    }
    if (command == "demo") return run_demo(args);
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
