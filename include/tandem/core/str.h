// str: anything streamable, concatenated into one std::string, as
// LibTorch's c10::str (torch::str after `using namespace`). Error messages
// are built with it.
//
//   std::string m = tandem::str("expected ", 3, " dims, got ", x.sizes());
//   std::string empty = tandem::str();   // ""
#pragma once

#include <sstream>
#include <string>

namespace tandem {

template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

inline std::string str() { return {}; }

}  // namespace tandem
