// The CPU core budget and intra-op parallelism.
//
// tandem uses at most num_threads() busy threads for compute. The default
// is OMP_NUM_THREADS when it is set to a positive number (as in LibTorch;
// any other value is ignored with a warning), else the cores this process
// may run on (its affinity mask: taskset, a cgroup cpuset), and
// set_num_threads (the CLI's --threads) overrides both. Every busy thread
// holds a token of that budget: a device's executor takes one before it
// runs a task (waiting if none is free), and parallel_for's helpers take
// what is free without waiting. While k devices
// are busy or waiting, each one's ops use up to max(1, num_threads() / k)
// threads (GEMMs and any parallel_for), so N replicas never oversubscribe
// the cores, and one device alone gets them all.
//
//   tandem::set_num_threads(2);
//   tandem::parallel_for(0, rows, /*grain=*/64, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) ...;
//   });
#pragma once

#include <cstdint>
#include <functional>

namespace tandem {

/// Sets the core budget (>= 1); the default is above.
void set_num_threads(int64_t n);
int64_t num_threads();
/// LibTorch's name for num_threads().
inline int64_t get_num_threads() { return num_threads(); }
/// The cores this process may run on: its affinity mask (sched_getaffinity),
/// which taskset and cgroup cpusets narrow; at least 1.
int64_t available_cores();

/// How many threads the calling thread's ops may use right now: its
/// device's share of the budget while devices work concurrently.
int64_t intra_op_threads();

/// Splits [begin, end) into at most intra_op_threads() ranges of at least
/// `grain` elements and runs fn(range_begin, range_end) on them in parallel
/// (the calling thread takes the first range). Exceptions propagate (the
/// first one, after all ranges end). Runs inline when one range suffices.
void parallel_for(int64_t begin,
                  int64_t end,
                  int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);

namespace detail {

/// Marks the calling thread as the worker of a busy device for its scope;
/// the budget is shared among the busy devices. Executors hold one while
/// they run a task.
class BusyDeviceScope {
 public:
  BusyDeviceScope();
  ~BusyDeviceScope();
  BusyDeviceScope(const BusyDeviceScope&) = delete;
  BusyDeviceScope& operator=(const BusyDeviceScope&) = delete;
};

/// Whether the calling thread is one of parallel_for's helper threads.
bool in_intra_op_worker();

/// Number of devices currently busy (0 when none is).
int64_t busy_devices();

}  // namespace detail
}  // namespace tandem
