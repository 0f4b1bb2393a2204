// Private: a short spin before a thread blocks.
//
// Note [Spin before sleeping]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Handing work to a sleeping thread costs a futex wake and a reschedule:
// about 25 us on this project's 2-core VM, which is as long as a large
// elementwise op or half of a small GEMM block. A thread that has just
// finished (a parallel_for helper, an idle device executor, a caller
// waiting for its helpers) usually gets its next work within tens of
// microseconds, so it first watches a flag for up to kSpinBudget and only
// then sleeps. The spin yields the core on every round, so a runnable
// thread (another device's worker, BLAS) is never kept off it; what it
// costs is at most kSpinBudget of an otherwise idle core per wait.
#pragma once

#include <chrono>
#include <thread>

namespace tandem::detail {

inline constexpr std::chrono::microseconds kSpinBudget{100};

/// Returns true as soon as ready() holds, false when kSpinBudget has passed
/// without it (then the caller blocks the usual way).
template <typename Ready>
bool spin_until(Ready&& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinBudget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
    std::this_thread::yield();
  }
}

}  // namespace tandem::detail
