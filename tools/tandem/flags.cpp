#include "flags.h"

#include <charconv>
#include <iostream>

#include "tandem/core/error.h"

namespace tandem::cli {

void Flags::add(const std::string& name,
                const std::string& default_value,
                const std::string& help) {
  flags_[name] = Flag{default_value, help, false};
}

bool Flags::parse(const Args& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: tandem " << command_ << " [flags]\n\nflags:\n";
      for (const auto& [name, flag] : flags_) {
        std::cout << "  --" << name << " (default " << flag.value << "): " << flag.help
                  << "\n";
      }
      return false;
    }
    if (arg.rfind("--", 0) != 0) {
      throw UsageError(command_ + ": unexpected argument '" + arg + "'");
    }
    std::string name = arg.substr(2), value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      if (i + 1 >= args.size())
        throw UsageError(command_ + ": --" + name + " needs a value");
      value = args[++i];
    }
    auto it = flags_.find(name);
    if (it == flags_.end()) {
      throw UsageError(command_ + ": unknown flag --" + name + " (see tandem " +
                       command_ + " --help)");
    }
    it->second.value = value;
    it->second.given = true;
  }
  return true;
}

void Flags::set(const std::string& name, const std::string& value) {
  Flag& flag = flags_.at(name);
  flag.value = value;
  flag.given = true;
}

std::string Flags::get(const std::string& name) const { return flags_.at(name).value; }

int64_t Flags::get_int(const std::string& name) const {
  const std::string& v = get(name);
  int64_t out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    throw UsageError(command_ + ": --" + name + " expects an integer, got '" + v + "'");
  }
  return out;
}

double Flags::get_double(const std::string& name) const {
  const std::string& v = get(name);
  try {
    size_t used = 0;
    double out = std::stod(v, &used);
    if (used == v.size()) return out;
  } catch (const std::exception&) {
  }
  throw UsageError(command_ + ": --" + name + " expects a number, got '" + v + "'");
}

std::vector<Device> Flags::get_devices(const std::string& name) const {
  std::vector<Device> devices;
  const std::string list = get(name);
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(start, comma - start);
    try {
      devices.emplace_back(item);
    } catch (const Error& e) {
      throw UsageError(command_ + ": --" + name + ": " + e.what());
    }
    start = comma + 1;
  }
  return devices;
}

}  // namespace tandem::cli
