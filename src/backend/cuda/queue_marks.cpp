// The profiler's marks on a GPU's stream (Note [Spans on a device's queue]
// in core/profiler.cpp): CUDA events, put on the host's steady clock.
#include <algorithm>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "backend/cuda/cuda_context.h"
#include "backend/cuda_backend.h"
#include "tandem/core/error.h"
#include "tandem/core/profiler.h"

// Note [Anchoring events to the host clock]
// cudaEventElapsedTime gives the time between two events of one GPU, in
// milliseconds as a float (about half a microsecond of resolution). So
// each GPU keeps an anchor, an event with the steady-clock time the GPU
// reached it: the first is recorded at the GPU's first mark and waited
// for on the host, which then reads the clock (late by the wake-up, a few
// microseconds; once per GPU per process, and it waits for the work queued
// before it). A mark's time is its anchor's plus the elapsed time between
// them. A float of milliseconds loses resolution far from zero, so once a
// mark lies more than a second after the anchor, it becomes the anchor;
// marks are resolved in the order they were recorded, which on the GPU's
// one stream is the order it reached them, so the error grows by about a
// microsecond per second of recording, not with the length of the run.

namespace tandem::backend {
namespace {

constexpr double kReanchorMs = 1000.0;

struct Mark {
  cudaEvent_t event;
  int device;
};

struct Anchor {
  cudaEvent_t event = nullptr;
  int64_t ns = 0;
};

class QueueMarks {
 public:
  uint64_t mark(Device device) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Ids and records in one order: on the GPU's one stream, the order it
    // reaches them.
    cudaStream_t stream = cuda::prepare(device);
    const int index = device.index();
    if (static_cast<size_t>(index) >= anchors_.size()) {
      anchors_.resize(index + 1);
      free_.resize(index + 1);
    }
    if (anchors_[index].event == nullptr) {
      cudaEvent_t anchor = take_event(index);
      TANDEM_CUDA_CHECK(cudaEventRecord(anchor, stream));
      TANDEM_CUDA_CHECK(cudaEventSynchronize(anchor));
      anchors_[index] = {anchor, profiler::now_ns()};
    }
    cudaEvent_t event = take_event(index);
    TANDEM_CUDA_CHECK(cudaEventRecord(event, stream));
    const uint64_t id = next_id_++;
    marks_.emplace(id, Mark{event, index});
    return id;
  }

  void times(const uint64_t* ids, size_t count, int64_t* ns) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<size_t> order(count);
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [ids](size_t a, size_t b) {
      return ids[a] < ids[b];
    });
    for (size_t k : order) {
      auto it = marks_.find(ids[k]);
      TANDEM_INTERNAL_ASSERT(it != marks_.end(), "a queue mark read twice or never made");
      const Mark mark = it->second;
      marks_.erase(it);
      TANDEM_CUDA_CHECK(cudaEventSynchronize(mark.event));
      Anchor& anchor = anchors_[mark.device];
      float ms = 0;
      TANDEM_CUDA_CHECK(cudaEventElapsedTime(&ms, anchor.event, mark.event));
      ns[k] = anchor.ns + static_cast<int64_t>(static_cast<double>(ms) * 1e6);
      if (ms > kReanchorMs) {
        free_[mark.device].push_back(anchor.event);
        anchor = {mark.event, ns[k]};
      } else {
        free_[mark.device].push_back(mark.event);
      }
    }
  }

 private:
  // An event of GPU `index` (the current device) from the pool, or a new one.
  cudaEvent_t take_event(int index) {
    if (!free_[index].empty()) {
      cudaEvent_t event = free_[index].back();
      free_[index].pop_back();
      return event;
    }
    cudaEvent_t event = nullptr;
    TANDEM_CUDA_CHECK(cudaEventCreate(&event));
    return event;
  }

  std::mutex mutex_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Mark> marks_;    // made, not yet read
  std::vector<Anchor> anchors_;                 // per GPU index
  std::vector<std::vector<cudaEvent_t>> free_;  // per GPU index
};

QueueMarks& queue_marks() {
  static auto* marks = new QueueMarks();  // never destroyed: spans may end at exit
  return *marks;
}

}  // namespace

uint64_t cuda_queue_mark(Device device) { return queue_marks().mark(device); }

void cuda_queue_mark_times(const uint64_t* marks, size_t count, int64_t* ns) {
  queue_marks().times(marks, count, ns);
}

}  // namespace tandem::backend
