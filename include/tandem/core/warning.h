// Warnings: things that are legal but almost certainly not what the caller
// meant. They go to one process-wide handler (default: a line on stderr,
// "tandem warning: <message>"), which an application or a test can replace.
//
//   tandem::warn("Calling .zero_grad() from a module created with ...");
//   auto previous = tandem::set_warning_handler(
//       [&](const std::string& message) { log.push_back(message); });
//   ...
//   tandem::set_warning_handler(previous);
//   TANDEM_WARN("lr ", lr, " is unusually large");   // LibTorch's TORCH_WARN
#pragma once

#include <functional>
#include <string>

#include "tandem/core/str.h"

namespace tandem {

using WarningHandler = std::function<void(const std::string& message)>;

/// Hands `message` to the current handler. Safe from any thread; handlers
/// are called one at a time.
void warn(const std::string& message);

/// Installs `handler` for the whole process and returns the one it
/// replaces; an empty handler restores the default (stderr).
WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace tandem

/// TORCH_WARN under the name renaming gives: warn() with its arguments
/// concatenated by tandem::str.
#define TANDEM_WARN(...) ::tandem::warn(::tandem::str(__VA_ARGS__))
