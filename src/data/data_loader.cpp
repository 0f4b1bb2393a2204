#include "tandem/data/data_loader.h"

namespace tandem::data::detail {

void check_options(const DataLoaderOptions& options) {
  TANDEM_CHECK(options.batch_size() > 0, "DataLoader: batch_size must be positive");
  TANDEM_CHECK(options.workers() == 0 || options.max_jobs() > 0,
               "DataLoader: max_jobs must be positive when there are workers");
  TANDEM_CHECK(options.shard_count() >= 1,
               "DataLoader: shard count must be >= 1, got ",
               options.shard_count());
  TANDEM_CHECK(options.shard_index() < options.shard_count(),
               "DataLoader: shard index ",
               options.shard_index(),
               " is outside [0, ",
               options.shard_count(),
               ") (the shard count)");
}

void check_sampler_size(size_t sampler_size, std::optional<size_t> dataset_size) {
  TANDEM_CHECK(!dataset_size || *dataset_size == sampler_size,
               "DataLoader: the sampler is made for ",
               sampler_size,
               " examples but the dataset has ",
               *dataset_size);
}

void check_epoch(int64_t epoch, int64_t start_batch, size_t num_batches) {
  TANDEM_CHECK(epoch >= 0, "DataLoader::epoch: epoch must be >= 0, got ", epoch);
  TANDEM_CHECK(start_batch >= 0 && static_cast<size_t>(start_batch) <= num_batches,
               "DataLoader::epoch: start_batch ",
               start_batch,
               " is outside [0, ",
               num_batches,
               "] (the batches of epoch ",
               epoch,
               ")");
}

}  // namespace tandem::data::detail
