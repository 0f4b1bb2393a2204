// Warnings: things that are legal but almost certainly not what the caller
// meant. They go to one process-wide handler (default: a line on stderr,
// "tandem warning: <message>"), which an application or a test can replace.
//
//   tandem::warn("Calling .zero_grad() from a module created with ...");
//   auto previous = tandem::set_warning_handler(
//       [&](const std::string& message) { log.push_back(message); });
//   ...
//   tandem::set_warning_handler(previous);
#pragma once

#include <functional>
#include <string>

namespace tandem {

using WarningHandler = std::function<void(const std::string& message)>;

/// Hands `message` to the current handler. Safe from any thread; handlers
/// are called one at a time.
void warn(const std::string& message);

/// Installs `handler` for the whole process and returns the one it
/// replaces; an empty handler restores the default (stderr).
WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace tandem
