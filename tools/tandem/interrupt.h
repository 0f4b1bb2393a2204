// Ctrl-C for long commands: the first SIGINT or SIGTERM only raises a flag
// that the training loop reads between steps (it finishes the step, saves
// and exits cleanly); a second one ends the process at once, as usual.
//
//   InterruptScope scope;                  // handlers installed
//   while (work && !scope.requested()) step();
//   if (scope.requested()) ... scope.signal_name() ...
#pragma once

namespace tandem::cli {

class InterruptScope {
 public:
  InterruptScope();   // installs the handlers
  ~InterruptScope();  // restores the previous ones
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  bool requested() const;
  /// The signal that asked to stop ("SIGINT", "SIGTERM"), or "".
  const char* signal_name() const;
  /// The exit code for a stop by that signal: 128 + its number.
  int exit_code() const;
};

}  // namespace tandem::cli
