#include "distributed/runtime.h"

#include <pthread.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "distributed/collective_check.h"
#include "distributed/comm_loop.h"
#include "tandem/core/error.h"
#include "tandem/distributed/errors.h"

namespace tandem::distributed::detail {
namespace {

// Open MPI runs non-blocking collectives with libnbc, whose default
// MPI_Iallreduce algorithm for large buffers moves the data several times
// more than needed: 4M floats between 2 ranks took 6.9 ms, 1.8x a blocking
// MPI_Allreduce, and 3.2 ms with its ring algorithm (bandwidth-optimal for
// any number of ranks; tests/distributed/allreduce_timing.cpp measures it).
// So ring is the default here, unless the environment chose (other MPIs
// ignore the variable).
void prefer_ring_allreduce() {
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
}

constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;

std::chrono::milliseconds resolve_timeout(const ProcessGroupOptions& options) {
  if (options.timeout()) {
    TANDEM_CHECK(options.timeout()->count() > 0,
                 "init_process_group: the timeout must be positive, got ",
                 format_duration(*options.timeout()));
    return *options.timeout();
  }
  const char* env = std::getenv("TANDEM_DISTRIBUTED_TIMEOUT");
  if (env == nullptr) return kDefaultTimeout;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(env, &end);
  TANDEM_CHECK(
      end != env && *end == '\0' && errno == 0 && std::isfinite(seconds) && seconds > 0 &&
          seconds <= kMaxTimeoutSeconds && seconds * 1000 >= 1,
      "init_process_group: TANDEM_DISTRIBUTED_TIMEOUT must be a number of seconds "
      "between 0.001 and ",
      kMaxTimeoutSeconds,
      ", got \"",
      env,
      "\"");
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return detail::str("thread level ", level);
  }
}

}  // namespace

Runtime& Runtime::instance() {
  // Never destroyed: the comm thread and Work handles may outlive static
  // destruction, and at_exit() decides how the process ends.
  static Runtime* runtime = new Runtime();
  return *runtime;
}

// ---- start-up ----

std::shared_ptr<GroupState> Runtime::init(const ProcessGroupOptions& options) {
  std::lock_guard<std::mutex> api(api_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    TANDEM_CHECK(state_ != State::kRunning,
                 "init_process_group: the default process group is already initialized "
                 "(destroy_process_group() ends it)");
    TANDEM_CHECK(
        state_ == State::kNone,
        "init_process_group: MPI was finalized by destroy_process_group() and cannot "
        "be initialized again in this process");
  }
  const auto timeout = resolve_timeout(options);
  const bool check_collectives = collective_checks_requested();
  std::unique_lock<std::mutex> lock(mu_);
  state_ = State::kStarting;
  thread_ = std::thread(&Runtime::thread_main, this, timeout, check_collectives);
  started_cv_.wait(lock, [&] { return state_ != State::kStarting; });
  if (state_ != State::kRunning) {
    lock.unlock();
    thread_.join();
    throw DistributedError(start_error_);
  }
  static std::once_flag registered;
  std::call_once(registered, [] { std::atexit(&Runtime::at_exit); });
  return world_;
}

void Runtime::thread_main(std::chrono::milliseconds timeout, bool check_collectives) {
  pthread_setname_np(pthread_self(), "tandem comm");  // as traces and top show it
  auto fail_start = [&](std::string message, State state) {
    std::lock_guard<std::mutex> lock(mu_);
    start_error_ = std::move(message);
    state_ = state;
    started_cv_.notify_all();
  };
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool owns = false;
  if (initialized == 0) {
    // This thread makes every MPI call, so it is MPI's main thread and
    // FUNNELED suffices (Debian's Open MPI 4.1 offers up to MULTIPLE,
    // which would add locking to every call for nothing).
    int provided = MPI_THREAD_SINGLE;
    prefer_ring_allreduce();
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
      return fail_start(
          "init_process_group: MPI_Init_thread failed: " + mpi_error_string(rc),
          State::kNone);
    }
    owns = true;
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      return fail_start("init_process_group: this MPI provides only " +
                            thread_level_name(provided) +
                            "; tandem's communication thread needs MPI_THREAD_FUNNELED",
                        State::kStopped);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  } else {
    int finalized = 0;
    MPI_Finalized(&finalized);
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (finalized != 0 || provided != MPI_THREAD_MULTIPLE) {
      return fail_start(
          finalized != 0
              ? std::string(
                    "init_process_group: the application has finalized MPI already")
              : "init_process_group: the application initialized MPI with " +
                    thread_level_name(provided) +
                    "; tandem's communication thread makes MPI calls besides the "
                    "application's, which needs MPI_THREAD_MULTIPLE",
          State::kNone);
    }
  }

  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm health = MPI_COMM_NULL;
  MPI_Comm check = MPI_COMM_NULL;
  MPI_Comm local = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(MPI_COMM_WORLD, &health);
  if (rc == MPI_SUCCESS && check_collectives) rc = MPI_Comm_dup(MPI_COMM_WORLD, &check);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(health, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS && check_collectives) {
    rc = MPI_Comm_set_errhandler(check, MPI_ERRORS_RETURN);
  }
  if (rc == MPI_SUCCESS) {
    rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  }
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  if (rc == MPI_SUCCESS) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
  }
  if (rc != MPI_SUCCESS) {
    return fail_start("init_process_group: creating the group's communicators failed: " +
                          mpi_error_string(rc),
                      State::kStopped);
  }
  auto group = std::make_shared<GroupState>(rank, size, comm, health, check, timeout);
  {
    std::lock_guard<std::mutex> lock(mu_);
    world_ = group;
    local_rank_ = local_rank;
    local_size_ = local_size;
    owns_mpi_ = owns;
    state_ = State::kRunning;
    started_cv_.notify_all();
  }

  CommLoop loop(*this, group);
  const bool clean = loop.run();
  if (clean) {
    MPI_Comm_free(&comm);
    MPI_Comm_free(&health);
    if (check != MPI_COMM_NULL) MPI_Comm_free(&check);
    if (owns) MPI_Finalize();
  }
}

bool Runtime::is_initialized() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == State::kRunning && !world_->destroyed.load();
}

std::shared_ptr<GroupState> Runtime::world() const {
  std::lock_guard<std::mutex> lock(mu_);
  TANDEM_CHECK(state_ == State::kRunning && !world_->destroyed.load(),
               "the default process group is not initialized: call "
               "tandem::distributed::init_process_group() first");
  return world_;
}

int Runtime::local_rank() const {
  static_cast<void>(world());
  std::lock_guard<std::mutex> lock(mu_);
  return local_rank_;
}

int Runtime::local_size() const {
  static_cast<void>(world());
  std::lock_guard<std::mutex> lock(mu_);
  return local_size_;
}

// ---- the queue ----

Work Runtime::enqueue(const std::shared_ptr<GroupState>& group,
                      std::unique_ptr<CollectiveOp> op,
                      std::string_view name,
                      std::string_view summary,
                      std::optional<std::chrono::milliseconds> timeout) {
  const auto limit = timeout.value_or(group->timeout());
  TANDEM_CHECK(limit.count() > 0,
               name,
               ": the timeout must be positive, got ",
               format_duration(limit));
  std::vector<Tensor> outputs;
  if (!op->unpack_to.empty()) {
    outputs = op->unpack_to;
  } else if (op->recv.defined()) {
    outputs.push_back(op->recv);
  }
  std::shared_ptr<WorkState> work;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (group->destroyed.load() || state_ != State::kRunning) {
      throw DistributedError(detail::str(name, ": the process group was destroyed"));
    }
    if (group->failed()) {
      std::rethrow_exception(group->make_error(detail::str(
          name, ": the process group failed earlier: ", group->failure_message())));
    }
    const uint64_t seq = group->enqueued.load() + 1;
    group->enqueued.store(seq);
    work = std::make_shared<WorkState>(group,
                                       seq,
                                       detail::str(name, " #", seq, summary),
                                       std::move(outputs),
                                       Clock::now(),
                                       limit);
    op->work = work;
    group->recorder.called(seq, work->description, work->enqueued);
    requests_.queue.push_back(std::move(op));
  }
  notify_comm_thread();
  return Work(std::move(work));
}

void Runtime::wake() { notify_comm_thread(); }

void Runtime::notify_comm_thread() {
  cv_.notify_all();
  if (HostWindow::Bell* bell = bell_.load()) HostWindow::ring(*bell);
}

void Runtime::take_requests(Requests& out,
                            std::chrono::microseconds idle,
                            HostWindow::Bell* bell,
                            uint32_t seen) {
  std::unique_lock<std::mutex> lock(mu_);
  if (idle.count() > 0 && requests_.queue.empty() && !requests_.stop &&
      !requests_.abort) {
    if (bell == nullptr) {
      cv_.wait_for(lock, idle);
    } else {
      // Anything queued from now on rings the bell too.
      bell_.store(bell);
      lock.unlock();
      HostWindow::wait(*bell, seen, idle);
      lock.lock();
      bell_.store(nullptr);
    }
  }
  for (auto& op : requests_.queue) out.queue.push_back(std::move(op));
  requests_.queue.clear();
  out.stop = out.stop || requests_.stop;
  out.abort = out.abort || requests_.abort;
  out.abort_code = requests_.abort_code;
}

// ---- the end ----

void Runtime::destroy() {
  std::lock_guard<std::mutex> api(api_mu_);
  std::shared_ptr<GroupState> group;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TANDEM_CHECK(state_ == State::kRunning && !world_->destroyed.load(),
                 "destroy_process_group: no process group is initialized");
    group = world_;
    group->destroyed.store(true);
    // After a failure the comm thread keeps running (it holds collectives
    // MPI will never release) and the process exits with status 1.
    if (group->failed()) return;
    requests_.stop = true;
  }
  notify_comm_thread();
  thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = group->failed() ? State::kFailedStopped : State::kStopped;
  }
  // Leaving failed (a queued collective, or the wait for the other ranks):
  // the process will exit with status 1 (see at_exit()).
  if (group->failed()) std::rethrow_exception(group->error());
}

void Runtime::abort(int exit_code) {
  bool running = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running = state_ == State::kRunning;
    requests_.abort = true;
    requests_.abort_code = exit_code;
  }
  if (running) {
    notify_comm_thread();
    // The comm thread calls MPI_Abort within a poll; if it is stuck, end
    // this process alone and let the launcher end the others.
    std::this_thread::sleep_for(std::chrono::seconds(10));
  }
  std::fflush(nullptr);
  std::_Exit(exit_code);
}

void Runtime::exit_after_failure(const GroupState& group) {
  std::cout.flush();
  // A rank that was leaving already, failed by the others because it left
  // early (Note [Leaving early]): its own program said why it left.
  const bool left_early =
      group.exiting.load() && group.failure_kind() == FailureKind::kPeer;
  // One write, so that mpiexec does not interleave other ranks' output.
  if (!left_early) {
    std::cerr << detail::str(
        "tandem: the process group failed, so this process exits with status "
        "1 without MPI_Finalize (the launcher then ends the other ranks)",
        group.failure_reported.load() ? std::string("; the hang report above says why")
                                      : ": " + group.failure_message(),
        "\n");
  }
  std::fflush(nullptr);
  std::_Exit(1);
}

// Runs at exit (std::atexit, registered by init_process_group). A healthy
// group drains its queue (bounded by the deadlines) and finalizes MPI, which
// waits for the other ranks to finalize too. A failed group cannot: a
// started collective is never freed, and MPI_Finalize could wait on it
// forever. The process then ends at once with status 1.
void Runtime::at_exit() {
  Runtime& rt = instance();
  std::shared_ptr<GroupState> group;
  {
    std::lock_guard<std::mutex> lock(rt.mu_);
    group = rt.world_;
    if (rt.state_ == State::kFailedStopped) exit_after_failure(*group);
    if (rt.state_ != State::kRunning) return;
    if (group->failed()) exit_after_failure(*group);
    if (std::this_thread::get_id() == rt.thread_.get_id()) return;  // exit() inside MPI
    rt.requests_.stop = true;
  }
  rt.notify_comm_thread();
  rt.thread_.join();
  std::lock_guard<std::mutex> lock(rt.mu_);
  rt.state_ = group->failed() ? State::kFailedStopped : State::kStopped;
  if (group->failed()) exit_after_failure(*group);
}

}  // namespace tandem::distributed::detail
