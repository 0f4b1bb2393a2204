// The examples' command lines: "--name value" pairs, each read into a
// setting that keeps its default when the flag is absent. An unknown flag
// or a flag without a value is an error naming it.
//
//   ExampleFlags flags(argc, argv);
//   flags.read("--epochs", settings.epochs);
//   flags.read("--devices", settings.devices);   // cpu:0,cpu:1
//   flags.finish();                              // throws for what is left
#pragma once

#include <tandem/tandem.h>

#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

class ExampleFlags {
 public:
  ExampleFlags(int argc, char** argv) {
    for (int i = 1; i < argc; i += 2) {
      if (i + 1 == argc)
        throw std::invalid_argument(std::string("no value for ") + argv[i]);
      values_[argv[i]] = argv[i + 1];
    }
  }

  void read(const std::string& name, std::string& value) {
    take(name, [&](auto& v) { value = v; });
  }
  void read(const std::string& name, int64_t& value) {
    take(name, [&](auto& v) { value = std::stoll(v); });
  }
  void read(const std::string& name, double& value) {
    take(name, [&](auto& v) { value = std::stod(v); });
  }
  void read(const std::string& name, std::vector<tandem::Device>& value) {
    take(name, [&](auto& v) {
      value.clear();
      std::stringstream list(v);
      for (std::string device; std::getline(list, device, ',');)
        value.emplace_back(device);
    });
  }

  /// Throws for a flag no read() asked for.
  void finish() const {
    if (!values_.empty())
      throw std::invalid_argument("unknown flag " + values_.begin()->first);
  }

 private:
  template <typename Assign>
  void take(const std::string& name, Assign assign) {
    auto found = values_.find(name);
    if (found == values_.end()) return;
    try {
      assign(found->second);
    } catch (const std::logic_error&) {
      throw std::invalid_argument(name + ": not a valid value: '" + found->second + "'");
    }
    values_.erase(found);
  }

  std::map<std::string, std::string> values_;
};
