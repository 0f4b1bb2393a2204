// A small flag parser for the tandem command: `--name value` and
// `--name=value`, every flag declared up front with a default and a help
// line, unknown flags and bad values rejected with a UsageError.
//
//   Flags flags("demo");
//   flags.add("steps", "20", "training steps");
//   flags.parse(args);
//   int steps = flags.get_int("steps");
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tandem/core/device.h"

#include "commands.h"

namespace tandem::cli {

class Flags {
 public:
  explicit Flags(std::string command) : command_(std::move(command)) {}
  void add(const std::string& name,
           const std::string& default_value,
           const std::string& help);
  /// Parses args; returns false when --help was asked for (help printed).
  bool parse(const Args& args);
  std::string get(const std::string& name) const;
  /// Replaces a flag's value as if given on the command line.
  void set(const std::string& name, const std::string& value);
  /// Whether the command line set the flag (rather than its default).
  bool given(const std::string& name) const { return flags_.at(name).given; }
  int64_t get_int(const std::string& name) const;
  double get_double(const std::string& name) const;
  /// A comma-separated device list ("cpu:0,cpu:1"); empty for "".
  std::vector<Device> get_devices(const std::string& name) const;

 private:
  struct Flag {
    std::string value;
    std::string help;
    bool given = false;
  };
  std::string command_;
  std::map<std::string, Flag> flags_;
};

}  // namespace tandem::cli
