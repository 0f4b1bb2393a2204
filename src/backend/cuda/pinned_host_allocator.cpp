// Page-locked host memory for tensors (Tensor::pin_memory): blocks from
// cudaHostAlloc, cached by size and reused, like PyTorch's
// CachingHostAllocator, and kept from reuse while a copy reads them.
#include "backend/cuda/pinned_host_allocator.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_context.h"
#include "backend/cuda_backend.h"
#include "tandem/core/allocator.h"
#include "tandem/core/error.h"

namespace tandem::backend {
namespace cuda {
namespace {

// Note [Pinned blocks and pending copies]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Page-locking is expensive: cudaHostAlloc maps and locks every page, and
// cudaFreeHost waits for the device. So a freed block is kept and given to
// the next request of its size class (the CPU allocator's classes,
// detail::cpu_block_size): a data loader that pins a batch of the same
// shape every step page-locks memory only in its first steps. Blocks are
// never split, merged or given back to CUDA.
//
// A copy to a GPU with non_blocking=true from a pinned block is still
// queued when the copy call returns, and the tensor that owned the block
// may be gone before the copy runs. So each such copy records an event on
// its stream right after the copy (record_pinned_use), and the block keeps
// its events. A freed block whose events have not all completed waits in
// `pending_`; allocate() first queries the pending events (never waits for
// them) and moves the blocks that are done to the free lists. A block is
// thus written by its next owner only after every copy that read it has
// finished. Recording a new event also drops the block's completed ones,
// so a pinned tensor copied every step keeps a short list.
//
// One mutex guards the blocks. It is held for map lookups and event
// queries, never across cudaHostAlloc (slow, and a loader's workers pin
// batches at the same time). Events are made on the device of the stream
// they are recorded on (CUDA requires it) and reused per device.

struct Use {
  cudaEvent_t event;
  int device;
};

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  std::vector<Use> uses;  // events after copies that may still be running
};

class PinnedHostAllocator {
 public:
  DataPtr allocate(size_t nbytes);
  void deallocate(void* ptr) noexcept;
  bool contains(const void* ptr);
  void record_use(const void* ptr, cudaStream_t stream, int device);
  ::tandem::cuda::HostMemoryStats stats();

 private:
  // All below: with mutex_ held.
  DataPtr hand_out(Block& block);
  Block* find(const void* ptr);
  std::vector<cudaEvent_t>& spare_events(int device);
  bool drop_finished_uses(Block& block);
  void reclaim_finished();
  Block* take_free(size_t size);

  std::mutex mutex_;
  std::map<uintptr_t, std::unique_ptr<Block>> blocks_;  // every block, by address
  std::map<size_t, std::vector<Block*>> free_;          // by size
  std::vector<Block*> pending_;  // freed, but a copy may still read them
  std::vector<std::vector<cudaEvent_t>> spare_events_;  // by device
  ::tandem::cuda::HostMemoryStats stats_;  // bytes_cached is computed in stats()
};

PinnedHostAllocator& allocator() {
  static auto* a = new PinnedHostAllocator();  // never destroyed: used until exit
  return *a;
}

DataPtr PinnedHostAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return DataPtr(nullptr, [](void*) {});
  const size_t size = tandem::detail::cpu_block_size(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.allocations;
    reclaim_finished();
    if (Block* block = take_free(size)) {
      ++stats_.cache_hits;
      return hand_out(*block);
    }
  }
  void* p = nullptr;
  const cudaError_t status = cudaHostAlloc(&p, size, cudaHostAllocPortable);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    const ::tandem::cuda::HostMemoryStats s = stats();
    throw OutOfMemoryError(detail::str("pin_memory: out of page-locked host memory: ",
                                       "tried to pin ",
                                       size,
                                       " bytes; ",
                                       s.bytes_in_use,
                                       " bytes are pinned in tensors and ",
                                       s.bytes_cached,
                                       " cached by tandem"));
  }
  TANDEM_CUDA_CHECK(status);
  auto block = std::make_unique<Block>();
  block->ptr = static_cast<char*>(p);
  block->size = size;
  std::lock_guard<std::mutex> lock(mutex_);
  Block& b = *block;
  blocks_.emplace(reinterpret_cast<uintptr_t>(p), std::move(block));
  stats_.bytes_allocated += static_cast<int64_t>(size);
  return hand_out(b);
}

DataPtr PinnedHostAllocator::hand_out(Block& block) {
  stats_.bytes_in_use += static_cast<int64_t>(block.size);
  return DataPtr(block.ptr, [](void* ptr) { allocator().deallocate(ptr); });
}

void PinnedHostAllocator::deallocate(void* ptr) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  Block* block = find(ptr);
  if (block == nullptr) return;
  stats_.bytes_in_use -= static_cast<int64_t>(block->size);
  try {
    if (block->uses.empty()) {
      free_[block->size].push_back(block);
    } else {
      pending_.push_back(block);
    }
  } catch (...) {
    // Out of memory for the list: the block is never reused (a leak, not
    // a hazard).
  }
}

bool PinnedHostAllocator::contains(const void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  return find(ptr) != nullptr;
}

void PinnedHostAllocator::record_use(const void* ptr, cudaStream_t stream, int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  Block* block = find(ptr);
  if (block == nullptr) return;
  cudaEvent_t event = nullptr;
  try {
    drop_finished_uses(*block);
    block->uses.reserve(block->uses.size() + 1);  // no allocation once recorded
    std::vector<cudaEvent_t>& spare = spare_events(device);
    if (spare.empty()) {
      TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    } else {
      event = spare.back();
      spare.pop_back();
    }
    TANDEM_CUDA_CHECK(cudaEventRecord(event, stream));
  } catch (...) {
    // Without its event the block could be reused under the copy: wait for
    // the copy instead, then report.
    (void)cudaStreamSynchronize(stream);
    if (event != nullptr) (void)cudaEventDestroy(event);
    throw;
  }
  block->uses.push_back({event, device});
}

::tandem::cuda::HostMemoryStats PinnedHostAllocator::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  ::tandem::cuda::HostMemoryStats s = stats_;
  s.bytes_cached = s.bytes_allocated - s.bytes_in_use;
  return s;
}

Block* PinnedHostAllocator::find(const void* ptr) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(address);  // the first block past `ptr`
  if (it == blocks_.begin()) return nullptr;
  --it;
  return address < it->first + it->second->size ? it->second.get() : nullptr;
}

std::vector<cudaEvent_t>& PinnedHostAllocator::spare_events(int device) {
  const auto index = static_cast<size_t>(device);
  if (spare_events_.size() <= index) spare_events_.resize(index + 1);
  return spare_events_[index];
}

// Returns whether no use is left. A failed query (a device fault) throws,
// leaving every use not found finished in place.
bool PinnedHostAllocator::drop_finished_uses(Block& block) {
  std::vector<Use>& uses = block.uses;
  size_t i = 0;
  while (i < uses.size()) {
    const cudaError_t status = cudaEventQuery(uses[i].event);
    if (status == cudaErrorNotReady) {
      (void)cudaGetLastError();  // not an error: the copy is still running
      ++i;
      continue;
    }
    TANDEM_CUDA_CHECK(status);
    spare_events(uses[i].device).push_back(uses[i].event);
    uses[i] = uses.back();
    uses.pop_back();
  }
  return uses.empty();
}

void PinnedHostAllocator::reclaim_finished() {
  size_t i = 0;
  while (i < pending_.size()) {
    Block* block = pending_[i];
    if (!drop_finished_uses(*block)) {
      ++i;
      continue;
    }
    free_[block->size].push_back(block);
    pending_[i] = pending_.back();
    pending_.pop_back();
  }
}

Block* PinnedHostAllocator::take_free(size_t size) {
  auto it = free_.find(size);
  if (it == free_.end() || it->second.empty()) return nullptr;
  Block* block = it->second.back();
  it->second.pop_back();
  return block;
}

}  // namespace

bool is_pinned_host_memory(const void* ptr) { return allocator().contains(ptr); }

void record_pinned_use(const void* ptr, cudaStream_t stream, int device) {
  allocator().record_use(ptr, stream, device);
}

}  // namespace cuda

DataPtr cuda_pinned_allocate(size_t nbytes) {
  if (cuda_device_count() == 0) {
    throw Error(
        "pin_memory: cannot page-lock host memory because no CUDA device is available "
        "(no GPU, or no driver that can run this CUDA build); pinned memory only "
        "speeds up copies to a GPU, so use the tensor as it is");
  }
  return cuda::allocator().allocate(nbytes);
}

::tandem::cuda::HostMemoryStats cuda_pinned_memory_stats() {
  return cuda::allocator().stats();
}

}  // namespace tandem::backend
