#include "tandem/core/warning.h"

#include <iostream>
#include <mutex>
#include <utility>

namespace tandem {
namespace {

void to_stderr(const std::string& message) {
  std::cerr << "tandem warning: " << message << std::endl;
}

struct Handler {
  std::mutex mutex;  // held while the handler runs: one warning at a time
  WarningHandler handler = to_stderr;
};

Handler& current() {
  static Handler h;
  return h;
}

}  // namespace

void warn(const std::string& message) {
  Handler& h = current();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.handler(message);
}

WarningHandler set_warning_handler(WarningHandler handler) {
  Handler& h = current();
  std::lock_guard<std::mutex> lock(h.mutex);
  WarningHandler previous = std::move(h.handler);
  h.handler = handler ? std::move(handler) : WarningHandler(to_stderr);
  return previous;
}

}  // namespace tandem
