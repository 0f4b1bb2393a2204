// The tandem command: `tandem <subcommand> [flags]`.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "tandem/tandem.h"

int main(int argc, char** argv) {
  try {
    std::string cmd = argc > 1 ? argv[1] : "--help";
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::cout << "usage: tandem <command>\n\ncommands:\n"
                   "  demo      train the seed's Linear(5, 2) for a few steps\n"
                   "  version   print the version\n";
      return 0;
    }
    if (cmd == "version") {
      std::cout << "tandem 0.1.0\n";
      return 0;
    }
    std::cerr << "error: unknown command '" << cmd << "' (see tandem --help)\n";
    return 2;
  } catch (const tandem::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << "\n";
    return 1;
  }
}
