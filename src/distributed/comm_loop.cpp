// The communication thread's loop: starting, polling and completing collectives
// (MPI, NCCL, shared memory). Deadlines and failing the group are in
// comm_loop_failures.cpp.
#include "distributed/comm_loop.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>
#include <utility>

#include "distributed/collective_check.h"
#include "distributed/host_allreduce.h"
#include "distributed/runtime.h"
#include "tandem/core/error.h"
#include "tandem/core/profiler.h"
#include "tandem/distributed/errors.h"

namespace tandem::distributed::detail {
namespace {

// With nothing in flight the thread sleeps on the queue's condition
// variable, waking this often to answer other ranks' status queries. With
// collectives in flight it polls without sleeping (yielding the core between
// polls), as a blocking MPI call would: Open MPI's non-blocking collectives
// advance only inside MPI calls, and sleeping between polls made a 16 MiB
// allreduce several times slower.
constexpr std::chrono::microseconds kIdleWait{2000};
// With only GPU collectives in flight there is nothing to progress: the GPU
// runs them. The thread checks their events this often.
constexpr std::chrono::microseconds kGpuPoll{100};
// With only shared-memory reductions in flight, none of them done and no
// chunk of theirs free to add, the thread sleeps on its doorbell, which the
// other ranks ring (host_window.h), at most this long: nothing needs its
// polling to progress, and a rank slowed by a CPU quota keeps its time for
// its backward.
constexpr std::chrono::microseconds kHostWait{2000};
// See start_exit_barrier().
constexpr std::chrono::milliseconds kExitMargin{1000};

}  // namespace

// Note [Leaving together]
// ~~~~~~~~~~~~~~~~~~~~~~~
// MPI_Finalize waits for every rank (Open MPI runs a PMIx fence in it), and
// Debian's Open MPI 4.1 mpirun can deadlock in its own shutdown when the job
// is torn down while a rank sits in that fence (seen in about one run in
// six when one rank exit()s mid-job). So a rank that leaves first waits in
// a barrier of its own on the health communicator, with the group's
// timeout as deadline, while its comm thread keeps answering status
// queries ("rank 1 is exiting"); only once every rank is there does it call
// MPI_Finalize, which then returns at once. A rank that does not arrive in
// time (the group's timeout, plus a little) fails the group like any
// collective: leaving is a collective too.

// Note [Leaving early]
// ~~~~~~~~~~~~~~~~~~~~
// A rank that leaves while the others still call collectives (it failed,
// or its program simply ran fewer steps) would leave them waiting in their
// next collective for the whole timeout, and itself in the exit barrier
// just as long: both wait for each other. So a rank that starts its exit
// barrier first tells every other rank which collective was its last (an
// exit notice), and a rank that waits in, or later calls, a collective
// past that number fails at once: "rank 1 is exiting instead (its last
// collective is #2)". Its failure notice then ends the leaving rank's exit
// barrier too, so every rank is gone within moments, not after the timeout.

CommLoop::CommLoop(Runtime& runtime, std::shared_ptr<GroupState> group)
    : runtime_(runtime), group_(std::move(group)), health_(*group_), nccl_(*group_) {}

bool CommLoop::run() {
  health_.open();
  Requests requests;
  for (;;) {
    // The bell first: a ring after this read cuts the wait short.
    HostWindow::Bell* bell = host_bell();
    const uint32_t seen =
        bell != nullptr ? bell->rings.load(std::memory_order_acquire) : 0;
    const std::chrono::microseconds idle = idle_wait();
    runtime_.take_requests(requests, idle, idle == kHostWait ? bell : nullptr, seen);
    if (requests.abort) {
      std::fflush(nullptr);
      MPI_Abort(MPI_COMM_WORLD, requests.abort_code);
      std::_Exit(requests.abort_code);
    }
    while (!requests.queue.empty()) {
      auto op = std::move(requests.queue.front());
      requests.queue.pop_front();
      start(std::move(op));
    }
    const bool progressed = poll();
    check_deadlines();
    // Frees a GPU stuck in a collective (see Note [NCCL collectives]).
    if (group_->failed()) nccl_.abort();
    if (requests.stop && !group_->failed() && active_.empty() && unchecked_.empty() &&
        !exiting_) {
      start_exit_barrier();
      continue;
    }
    if (requests.stop && (group_->failed() || (exiting_ && active_.empty()))) break;
    // (After a wait for requests, the core was given up already.)
    if (!progressed && !active_.empty() && idle.count() == 0) std::this_thread::yield();
  }
  if (group_->failed()) {
    // MPI or a GPU may still write into these tensors: keep them alive for
    // good.
    for (auto& op : active_) static_cast<void>(op.release());
    return false;
  }
  nccl_.destroy();
  return health_.close(std::chrono::milliseconds(1000));
}

std::chrono::microseconds CommLoop::idle_wait() const {
  if (timing_out_ != nullptr) return std::chrono::microseconds(0);
  bool on_gpu = false;
  bool on_host = false;
  for (const auto& op : active_) {
    if (op->request != MPI_REQUEST_NULL) return std::chrono::microseconds(0);
    on_gpu = on_gpu || op->stage == OpStage::kGpu;
    if (op->stage == OpStage::kHost) {
      if (op->host->claimable() || op->host->done()) return std::chrono::microseconds(0);
      on_host = true;
    }
  }
  return on_gpu ? kGpuPoll : on_host ? kHostWait : kIdleWait;
}

void CommLoop::start(std::unique_ptr<CollectiveOp> op) {
  if (group_->failed()) {
    op->work->finish(group_->make_error(failed_earlier(*op)));
    return;
  }
  if (exiting_) {
    op->work->finish(std::make_exception_ptr(DistributedError(
        detail::str(op->work->description, ": the process group is shutting down"))));
    return;
  }
  if (group_->check != MPI_COMM_NULL) {
    unchecked_.push_back(std::move(op));
    check_next();
    return;
  }
  CollectiveOp& ref = *op;
  active_.push_back(std::move(op));
  begin(ref);
}

void CommLoop::begin(CollectiveOp& op) {
  if (profiler::recording()) op.span_start_ns = profiler::now_ns();
  group_->started.store(op.work->seq);
  group_->recorder.started(op.work->seq, Clock::now());
  if (op.nccl) {
    start_on_gpu(op);
    return;
  }
  if (op.host) {
    op.stage = OpStage::kHost;
    op.host->arrive();
    return;
  }
  op.stage = OpStage::kMpi;
  const int rc = start_collective(op, *group_);
  if (rc != MPI_SUCCESS) start_failed(op, "it", rc);
}

void CommLoop::start_failed(CollectiveOp& op, std::string_view what, int rc) {
  op.stage = OpStage::kDone;  // MPI holds nothing of it
  fail_group(FailureKind::kBackend,
             detail::str(op.work->description,
                         " failed on ",
                         group_->where(),
                         ": MPI could not start ",
                         what,
                         ": ",
                         mpi_error_string(rc)),
             &op,
             /*notify=*/true);
}

void CommLoop::check_next() {
  if (checking_ != nullptr || unchecked_.empty()) return;
  CollectiveOp& op = *unchecked_.front();
  active_.push_back(std::move(unchecked_.front()));
  unchecked_.pop_front();
  op.stage = OpStage::kCheck;
  const int rc = start_check(op, *group_);
  if (rc != MPI_SUCCESS) {
    start_failed(op, "its check (TANDEM_DISTRIBUTED_DEBUG=detail)", rc);
    return;
  }
  checking_ = &op;
}

void CommLoop::check_done(CollectiveOp& op) {
  checking_ = nullptr;
  if (auto mismatch = check_mismatch(op, *group_)) {
    // Every rank sees the same signatures and fails alike: no notice.
    op.stage = OpStage::kDone;
    fail_group(FailureKind::kMismatch, *mismatch, &op, /*notify=*/false);
    return;
  }
  begin(op);
  check_next();
}

void CommLoop::check_peer_exits() {
  if (group_->failed() || exiting_) return;
  // The application's oldest collective: active_ holds them in the order
  // they started, unchecked_ those after it. Once it is past a leaver's
  // last one, it, and every later one, can never complete.
  CollectiveOp* oldest = active_.empty() ? nullptr : active_.front().get();
  if (oldest == nullptr && !unchecked_.empty()) oldest = unchecked_.front().get();
  if (oldest == nullptr) return;
  const auto leaver = health_.exited_before(oldest->work->seq);
  if (!leaver) return;
  fail_group(FailureKind::kPeer,
             detail::str(oldest->work->description,
                         " failed on ",
                         group_->where(),
                         ": rank ",
                         leaver->rank,
                         " is exiting instead (its last collective is #",
                         leaver->last,
                         ")"),
             oldest,
             /*notify=*/true);
}

void CommLoop::start_on_gpu(CollectiveOp& op) {
  const int device = op.recv.device().index();
  switch (nccl_.state(device)) {
    case NcclComms::State::kReady:
      launch(op);
      return;
    case NcclComms::State::kStarting:
      op.stage = OpStage::kHeld;
      return;
    case NcclComms::State::kNone:
      op.stage = OpStage::kCommunicator;
      if (std::string error = nccl_.begin(device, &op.request); !error.empty()) {
        complete(op, error);
      }
      return;
  }
}

void CommLoop::communicator_ready(CollectiveOp& op) {
  const int device = op.recv.device().index();
  if (std::string error = nccl_.create(device); !error.empty()) {
    complete(op, error);
    return;
  }
  // In the order they were called: NCCL needs the same order on every rank.
  for (auto& other : active_) {
    const bool waiting = other.get() == &op || other->stage == OpStage::kHeld;
    if (!waiting || other->recv.device().index() != device) continue;
    launch(*other);
    if (group_->failed()) return;
  }
}

void CommLoop::launch(CollectiveOp& op) {
  op.stage = OpStage::kGpu;
  const std::string error = nccl_.launch(op);
  if (error.empty()) return;
  // The GPU may still use the op's tensors: held, it is neither polled nor
  // dropped, and run() keeps it alive for good.
  op.stage = OpStage::kHeld;
  fail_group(
      FailureKind::kBackend,
      detail::str(op.work->description, " failed on ", group_->where(), ": ", error),
      &op,
      /*notify=*/true);
}

// Sequence number 0: it is not one of the application's collectives.
void CommLoop::start_exit_barrier() {
  exiting_ = true;
  group_->exiting.store(true);
  health_.notify_exit(group_->enqueued.load());
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kBarrier;
  // A little longer than the timeout: a rank that leaves while the others
  // wait in a collective for it lets their deadlines fire first, and their
  // message ("rank 1 is exiting instead") is the one that says what
  // happened.
  op->work =
      std::make_shared<WorkState>(group_,
                                  0,
                                  "exit",
                                  std::vector<Tensor>{},
                                  Clock::now(),
                                  group_->timeout() + kStatusQueryBudget + kExitMargin);
  const int rc = MPI_Ibarrier(group_->health, &op->request);
  if (rc != MPI_SUCCESS) {
    fail_group(
        FailureKind::kBackend,
        detail::str("exit on ", group_->where(), " failed: ", mpi_error_string(rc)),
        op.get(),
        /*notify=*/true);
    return;
  }
  active_.push_back(std::move(op));
}

bool CommLoop::poll() {
  bool progressed = health_.poll();
  if (auto notice = health_.take_peer_failure()) {
    fail_group(
        FailureKind::kPeer,
        detail::str(
            "rank ", notice->rank, " of ", group_->size, " reported: ", notice->message),
        nullptr,
        /*notify=*/false,
        /*hang_report=*/notice->kind == FailureKind::kTimeout);
    progressed = true;
  }
  check_peer_exits();
  if (active_.empty()) return progressed;
  progressed = poll_mpi() || progressed;
  progressed = poll_gpu() || progressed;
  progressed = poll_host() || progressed;
  std::erase_if(active_, [](const std::unique_ptr<CollectiveOp>& op) {
    return op->stage == OpStage::kDone;
  });
  return progressed;
}

bool CommLoop::poll_mpi() {
  const int n = static_cast<int>(active_.size());
  requests_.resize(active_.size());
  indices_.resize(active_.size());
  statuses_.resize(active_.size());
  for (size_t i = 0; i < active_.size(); ++i) requests_[i] = active_[i]->request;
  int count = 0;
  const int rc =
      MPI_Testsome(n, requests_.data(), &count, indices_.data(), statuses_.data());
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
    fail_group(
        FailureKind::kBackend,
        detail::str(
            "MPI_Testsome failed on ", group_->where(), ": ", mpi_error_string(rc)),
        nullptr,
        /*notify=*/true);
    return true;
  }
  if (count == MPI_UNDEFINED || count == 0) return false;
  for (int k = 0; k < count; ++k) {
    const auto i = static_cast<size_t>(indices_[static_cast<size_t>(k)]);
    CollectiveOp& op = *active_[i];
    op.request = requests_[i];
    const int error = rc == MPI_ERR_IN_STATUS
                          ? statuses_[static_cast<size_t>(k)].MPI_ERROR
                          : MPI_SUCCESS;
    if (error != MPI_SUCCESS) {
      complete(op, mpi_error_string(error));
    } else if (op.stage == OpStage::kCheck && !group_->failed()) {
      check_done(op);
    } else if (op.stage == OpStage::kCommunicator && !group_->failed()) {
      communicator_ready(op);
    } else {
      complete(op, "");
    }
  }
  return true;
}

bool CommLoop::poll_gpu() {
  bool progressed = false;
  CollectiveOp* oldest = nullptr;  // still running
  for (auto& op : active_) {
    if (op->stage != OpStage::kGpu) continue;
    const NcclComms::Poll status = nccl_.poll(*op);
    if (status.done) {
      complete(*op, status.error);
      progressed = true;
    } else if (oldest == nullptr) {
      oldest = op.get();
    }
  }
  if (group_->failed()) return progressed;
  const std::string error = nccl_.async_error();
  if (error.empty()) return progressed;
  fail_group(
      FailureKind::kBackend,
      oldest != nullptr
          ? detail::str(
                oldest->work->description, " failed on ", group_->where(), ": ", error)
          : detail::str("NCCL failed on ", group_->where(), ": ", error),
      oldest,
      /*notify=*/true);
  return true;
}

HostWindow::Bell* CommLoop::host_bell() const {
  for (const auto& op : active_) {
    if (op->stage == OpStage::kHost) return &op->host->bell();
  }
  return nullptr;
}

bool CommLoop::poll_host() {
  bool progressed = false;
  for (auto& op : active_) {
    if (op->stage != OpStage::kHost) continue;
    progressed = op->host->work() || progressed;
    if (op->host->done()) {
      complete(*op, "");
      progressed = true;
    }
  }
  return progressed;
}

void CommLoop::complete(CollectiveOp& op, const std::string& error) {
  op.stage = OpStage::kDone;
  if (&op == timing_out_) timing_out_ = nullptr;  // it made it after all
  if (&op == checking_) checking_ = nullptr;
  if (op.work->seq != 0)
    group_->recorder.finished(op.work->seq, Clock::now(), !error.empty());
  record_span(op);
  if (!error.empty()) {
    fail_group(
        FailureKind::kBackend,
        detail::str(op.work->description, " failed on ", group_->where(), ": ", error),
        &op,
        /*notify=*/true);
    return;
  }
  uint64_t done = group_->completed.load();
  while (done < op.work->seq &&
         !group_->completed.compare_exchange_weak(done, op.work->seq)) {
  }
  if (op.work->is_completed()) return;  // already failed with the group
  try {
    finish_collective(op, *group_);
  } catch (const std::exception& e) {
    fail_group(
        FailureKind::kBackend,
        detail::str(op.work->description, " failed on ", group_->where(), ": ", e.what()),
        &op,
        /*notify=*/true);
    return;
  }
  op.work->finish(nullptr);
}

void CommLoop::record_span(CollectiveOp& op) {
  if (op.span_start_ns == 0 || !profiler::recording()) return;
  profiler::Event event;
  event.name = op.span_name;
  event.category = "comm";
  if (op.recv.defined()) event.device = op.recv.device();
  event.start_ns = std::exchange(op.span_start_ns, 0);
  event.end_ns = profiler::now_ns();
  const int64_t bytes =
      static_cast<int64_t>(op.count) * static_cast<int64_t>(element_size(op.dtype));
  event.args = {{"bytes", std::to_string(bytes), true},
                {"seq", std::to_string(op.work->seq), true}};
  if (op.recv.defined()) {
    const uint64_t flow = profiler::take_flow(op.recv.data_ptr());  // from its launch
    if (flow != 0) event.flows_in.push_back(flow);
  }
  profiler::record(std::move(event));
}

}  // namespace tandem::distributed::detail
