// Loader: the simple, resumable data loader for training programs.
//
//   using namespace tandem::data;
//   datasets::MNIST train(datasets::kFashionMNISTRoot);
//   Tensor images = transforms::Normalize<>(0.2860, 0.3530)(train.images());
//   Loader loader(TensorDataset(images, train.targets()),
//                 LoaderOptions().batch_size(256).shuffle(true).seed(42).workers(2));
//   for (int64_t epoch = first_epoch; epoch < epochs; ++epoch) {
//     int64_t start = epoch == first_epoch ? first_batch : 0;  // resume mid-epoch
//     for (const Batch& batch : loader.epoch(epoch, start)) {
//       step(batch.data, batch.target);   // [256, 1, 28, 28], [256]
//       // a checkpoint saved here resumes at (epoch, batch.index + 1)
//     }
//   }
//
// The batches of an epoch are a pure function of (seed, epoch): the same
// on every run and for any number of workers (Note [Deterministic
// batches]), so (epoch, next batch index) is all a checkpoint needs.
// Over a TensorDataset a batch is one index_select per tensor; any other
// dataset of Example<> or TensorExample is read with get_batch() and
// stacked (its batches then have an undefined target for TensorExample).
// With a sampler of your own (say a samplers::DistributedSampler for one
// replica), the sampler decides the order and `shuffle` must stay false.
//
// Sharding splits every batch between the ranks of a distributed run
// without changing the batches: with shard(rank, world_size) each rank
// loads only its consecutive part of each (same seed, same options) global
// batch, and the parts of ranks 0..world_size-1, in order, are exactly the
// batch an unsharded loader gives (num_batches() is unchanged):
//   Loader loader(dataset, LoaderOptions().batch_size(256).shuffle(true).seed(42)
//                              .shard(rank, world_size));
//   for (const Batch& batch : loader.epoch(epoch)) {
//     // batch.data: this rank's ~256 / world_size rows; batch.global_size: 256
//   }
// Unlike a samplers::DistributedSampler, which gives each replica its own
// batches of batch_size rows, this keeps batch_size the global batch size.
//
// A loader runs one epoch at a time: epoch() ends the one in progress.
// Leaving a loop early, or destroying the loader, stops its workers.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/data/batch_plan.h"
#include "tandem/data/batch_stream.h"
#include "tandem/data/sampler.h"
#include "tandem/data/tensor_dataset.h"

namespace tandem::data {

class LoaderOptions {
 public:
  LoaderOptions& batch_size(int64_t value) {
    batch_size_ = value;
    return *this;
  }
  /// A new permutation in each epoch, from (seed, epoch).
  LoaderOptions& shuffle(bool value) {
    shuffle_ = value;
    return *this;
  }
  /// Leave out the last batch when it is smaller than batch_size.
  LoaderOptions& drop_last(bool value) {
    drop_last_ = value;
    return *this;
  }
  /// Threads making batches; 0 makes them on the calling thread.
  LoaderOptions& workers(int64_t value) {
    workers_ = value;
    return *this;
  }
  LoaderOptions& seed(uint64_t value) {
    seed_ = value;
    return *this;
  }
  /// Batches each worker may make ahead of the consumer.
  LoaderOptions& prefetch(int64_t value) {
    prefetch_ = value;
    return *this;
  }
  /// Load only part `index` of `count` of every batch: the batch's rows (the
  /// same batches as without sharding, same num_batches) split into `count`
  /// consecutive parts whose sizes differ by at most one, the larger ones
  /// first (as torch.tensor_split). Each rank of a distributed run takes its
  /// own part, so the ranks' parts together are the unsharded batch. A batch
  /// of fewer than `count` rows leaves the last shards with 0 rows: their
  /// Batch has data and target of shape [0, ...] (see Batch). The Loader
  /// checks 0 <= index < count.
  LoaderOptions& shard(int64_t index, int64_t count) {
    shard_index_ = index;
    shard_count_ = count;
    return *this;
  }

  /// Batches with data and target in pinned memory, pinned by the workers,
  /// so that copies to a GPU can be non_blocking (as PyTorch's DataLoader).
  /// Without a GPU: a warning when the Loader is made, and ordinary
  /// batches. See tandem/data/pin_memory.h.
  LoaderOptions& pin_memory(bool value) {
    pin_memory_ = value;
    return *this;
  }

  int64_t batch_size() const { return batch_size_; }
  bool shuffle() const { return shuffle_; }
  bool pin_memory() const { return pin_memory_; }
  bool drop_last() const { return drop_last_; }
  int64_t workers() const { return workers_; }
  uint64_t seed() const { return seed_; }
  int64_t prefetch() const { return prefetch_; }
  int64_t shard_index() const { return shard_index_; }
  int64_t shard_count() const { return shard_count_; }

 private:
  int64_t batch_size_ = 1;
  bool shuffle_ = false;
  bool drop_last_ = false;
  int64_t workers_ = 0;
  uint64_t seed_ = 0;
  int64_t prefetch_ = 2;
  int64_t shard_index_ = 0;
  int64_t shard_count_ = 1;
  bool pin_memory_ = false;
};

/// One batch: rows of the dataset's data and targets, and the batch's
/// position in its epoch. With LoaderOptions::shard, data and target hold
/// this shard's rows only, possibly none (shape [0, ...], same dtype and
/// trailing dims; made by reading one example of the batch and keeping none
/// of its rows, since a dataset cannot be asked for 0 examples).
struct Batch {
  Tensor data;
  Tensor target;
  int64_t index = 0;
  /// Rows of the whole (unsharded) batch: data.size(0) when unsharded; the
  /// sum of data.size(0) over all shards when sharded (e.g. for averaging
  /// a loss over the global batch).
  int64_t global_size = 0;
};

namespace detail {
// A dataset's batch as one Example<>; the overload chosen by the batch type.
Example<> collate(Example<> batch);
Example<> collate(TensorExample batch);
Example<> collate(std::vector<Example<>> examples);
Example<> collate(std::vector<TensorExample> examples);
}  // namespace detail

class Loader {
 public:
  using Iterator = detail::BatchStream<Batch>::Iterator;

  /// The batches of one epoch (see Loader::epoch).
  class EpochRange {
   public:
    Iterator begin() { return stream_->begin(); }
    Iterator end() { return stream_->end(); }

   private:
    friend class Loader;
    explicit EpochRange(detail::BatchStream<Batch>* stream) : stream_(stream) {}
    detail::BatchStream<Batch>* stream_;
  };

  template <typename Dataset>
  requires requires(Dataset& d, std::span<const size_t> indices) {
    { d.size() } -> std::convertible_to<std::optional<size_t>>;
    d.get_batch(indices);
  }
  explicit Loader(Dataset dataset,
                  LoaderOptions options = LoaderOptions(),
                  std::shared_ptr<const samplers::Sampler> sampler = nullptr)
      : Loader(make_fetchers(std::move(dataset), options.workers()),
               options,
               std::move(sampler)) {}
  Loader(Loader&&) noexcept;
  Loader& operator=(Loader&&) noexcept;
  ~Loader();

  /// Starts `epoch` at batch `start_batch` (0..num_batches(); to resume
  /// mid-epoch) and returns its batches, ending the epoch in progress.
  EpochRange epoch(int64_t epoch, int64_t start_batch = 0);

  /// Batches per epoch (this replica's, with a distributed sampler); the
  /// same with or without LoaderOptions::shard.
  int64_t num_batches() const;
  /// Examples per epoch, the padding of a distributed sampler included; the
  /// whole (unsharded) batches' examples, also with LoaderOptions::shard.
  int64_t num_examples() const;
  const LoaderOptions& options() const { return options_; }
  const samplers::Sampler& sampler() const { return *sampler_; }

 private:
  // Makes the collated batch at `indices`; one per worker (a dataset copy
  // each), so no two threads share one.
  using Fetch = std::function<Example<>(std::span<const size_t> indices)>;
  struct Fetchers {
    std::vector<Fetch> per_worker;
    size_t dataset_size;
  };
  // The epoch in progress, with its own handle on the fetchers; on the
  // heap, where its workers find it even after the Loader moves.
  struct Pass;

  template <typename Dataset>
  static Fetchers make_fetchers(Dataset dataset, int64_t workers) {
    const std::optional<size_t> size = dataset.size();
    TANDEM_CHECK(size.has_value(), "Loader: the dataset does not know its size");
    Fetchers fetchers{{}, *size};
    const int64_t copies = std::max<int64_t>(workers, 1);
    for (int64_t i = 0; i < copies; ++i) {
      fetchers.per_worker.emplace_back(
          [dataset](std::span<const size_t> indices) mutable -> Example<> {
            if constexpr (std::is_same_v<Dataset, TensorDataset>) {
              return dataset.gather(indices);
            } else {
              return detail::collate(dataset.get_batch(indices));
            }
          });
    }
    return fetchers;
  }

  Loader(Fetchers fetchers,
         LoaderOptions options,
         std::shared_ptr<const samplers::Sampler> sampler);

  std::shared_ptr<const std::vector<Fetch>> fetchers_;
  LoaderOptions options_;
  bool pin_ = false;  // pin_memory asked for and possible
  std::shared_ptr<const samplers::Sampler> sampler_;
  std::unique_ptr<Pass> pass_;
};

}  // namespace tandem::data
