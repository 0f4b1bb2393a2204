#include "tandem/core/micro_batch_products.h"

#include <atomic>
#include <utility>

namespace tandem {
namespace {

thread_local const MicroBatchProducts* innermost = nullptr;
std::atomic<uint64_t> steps{0};

}  // namespace

MicroBatchProducts::MicroBatchProducts(uint64_t step,
                                       std::vector<int64_t> leaf_rows) noexcept
    : step_(step), leaf_rows_(std::move(leaf_rows)), previous_(innermost) {
  innermost = this;
}

MicroBatchProducts::~MicroBatchProducts() { innermost = previous_; }

const MicroBatchProducts* MicroBatchProducts::current() noexcept { return innermost; }

uint64_t MicroBatchProducts::next_step() noexcept { return steps.fetch_add(1) + 1; }

}  // namespace tandem
