#include "interrupt.h"

#include <atomic>
#include <csignal>

namespace tandem::cli {
namespace {

// Only lock-free atomics may be touched from a signal handler.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction g_previous_int;
struct sigaction g_previous_term;

extern "C" void on_stop_signal(int signal) {
  g_signal.store(signal);
  // The default actions again, for both signals: a second one of either
  // ends the process right away (sigaction is async-signal-safe).
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGINT, &fallback, nullptr);
  sigaction(SIGTERM, &fallback, nullptr);
}

}  // namespace

InterruptScope::InterruptScope() {
  g_signal.store(0);
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a write to a slow pipe resumes rather than failing with
  // EINTR (which would leave std::cout in its error state).
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool InterruptScope::requested() const { return g_signal.load() != 0; }

const char* InterruptScope::signal_name() const {
  switch (g_signal.load()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "";
  }
}

int InterruptScope::exit_code() const { return 128 + g_signal.load(); }

}  // namespace tandem::cli
