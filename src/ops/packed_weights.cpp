#include "ops/packed_weights.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "tandem/core/micro_batch_products.h"

namespace tandem::detail {
namespace {

// A step's packs outlive it by this many later steps on the thread (two
// models stepping in turn keep theirs).
constexpr uint64_t kStepsKept = 4;
// The most floats a thread keeps packed; a weight beyond it is packed for
// each product alone (as BLAS would), so a large model costs no more memory.
constexpr int64_t kMaxCachedFloats = int64_t{64} << 20;  // 256 MB

struct Entry {
  std::weak_ptr<StorageImpl> storage;
  const void* data = nullptr;
  int64_t k = 0, n = 0, s0 = 0, s1 = 0;
  uint32_t version = 0;
  uint64_t step = 0;
  backend::cpu::PackedPanels panels;
};

thread_local std::vector<Entry> cache;
thread_local backend::cpu::PackedPanels scratch;

// The storage that owns b's memory: replicas on logical CPU devices read
// their weights through aliases of it (alias_storage).
const Storage& memory_of(const Tensor& b) {
  const Storage& storage = b.unsafe_impl()->storage();
  return storage->base() ? storage->base() : storage;
}

// b packed for one product, in this thread's scratch panels.
const backend::cpu::PackedPanels& packed_alone(const Tensor& b) {
  backend::cpu::pack_panels(
      scratch, b.data_ptr<float>(), b.size(0), b.size(1), b.stride(0), b.stride(1));
  return scratch;
}

bool same_storage(const Entry& e, const Tensor& b) {
  const std::shared_ptr<StorageImpl> held = e.storage.lock();
  return held != nullptr && held == memory_of(b);
}

}  // namespace

bool panel_products_for(const Tensor& a, const Tensor& b, int64_t rows) {
  return MicroBatchProducts::current() != nullptr && rows <= kMaxPanelRows &&
         a.is_cpu() && b.is_cpu() && a.dtype() == kFloat32 && b.dtype() == kFloat32 &&
         backend::cpu::panel_gemm_available();
}

const backend::cpu::PackedPanels& packed_for_step(const Tensor& b, uint64_t step) {
  const int64_t k = b.size(0), n = b.size(1), s0 = b.stride(0), s1 = b.stride(1);
  std::erase_if(cache, [&](const Entry& e) { return e.step + kStepsKept < step; });
  auto it = std::find_if(cache.begin(), cache.end(), [&](const Entry& e) {
    return e.data == b.data_ptr() && e.k == k && e.n == n && e.s0 == s0 && e.s1 == s1;
  });
  if (it == cache.end()) {
    int64_t held = 0;
    for (const Entry& e : cache) held += e.panels.capacity;
    if (held + k * n > kMaxCachedFloats) return packed_alone(b);
    it = cache.emplace(cache.end());
  }
  Entry& e = *it;
  if (e.step != step || e.version != b._version() || !same_storage(e, b)) {
    backend::cpu::pack_panels(e.panels, b.data_ptr<float>(), k, n, s0, s1);
    e.storage = memory_of(b);
    e.data = b.data_ptr();
    e.k = k;
    e.n = n;
    e.s0 = s0;
    e.s1 = s1;
    e.version = b._version();
    e.step = step;
  }
  return e.panels;
}

void panel_product(
    const Tensor& out, const Tensor& a, const Tensor& b, uint64_t step, bool accumulate) {
  backend::cpu::panel_gemm(a.size(0),
                           a.data_ptr<float>(),
                           a.stride(0),
                           a.stride(1),
                           step != 0 ? packed_for_step(b, step) : packed_alone(b),
                           accumulate,
                           out.data_ptr<float>(),
                           out.size(1));
}

void panel_tree_product(const Tensor& out,
                        const Tensor& a,
                        const Tensor& b,
                        const std::vector<int64_t>& leaf_rows) {
  backend::cpu::panel_gemm_tree(a.size(0),
                                a.data_ptr<float>(),
                                a.stride(0),
                                a.stride(1),
                                packed_alone(b),
                                leaf_rows,
                                out.data_ptr<float>(),
                                out.size(1));
}

}  // namespace tandem::detail
