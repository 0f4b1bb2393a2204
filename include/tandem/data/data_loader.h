// The data loader, with LibTorch's shape, so LibTorch programs port by
// renaming torch:: to tandem::, and with what training programs need:
// epochs by number, resumable mid-epoch, and global batches split between
// the ranks of a distributed run.
//
//   auto dataset = tandem::data::datasets::MNIST(root)
//                      .map(tandem::data::transforms::Normalize<>(0.1307, 0.3081))
//                      .map(tandem::data::transforms::Stack<>());
//   auto loader =
//   tandem::data::make_data_loader<tandem::data::samplers::SequentialSampler>(
//       std::move(dataset), tandem::data::DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) train_step(batch.data, batch.target);
//
//   using namespace tandem::data;
//   auto train = make_data_loader(TensorDataset(images, labels),
//                                 samplers::RandomSampler(images.size(0), /*seed=*/42),
//                                 DataLoaderOptions().batch_size(256).workers(2)
//                                     .shard(rank, world_size));
//   for (int64_t epoch = first_epoch; epoch < epochs; ++epoch) {
//     const int64_t start = epoch == first_epoch ? first_batch : 0;  // resume
//     for (const Batch& batch : train->epoch(epoch, start)) {
//       step(batch.data, batch.target);  // this rank's part of 256 rows
//       // a checkpoint saved here resumes at (epoch, batch.index + 1)
//     }
//   }
//
// epoch(e, start_batch) runs epoch e of the sampler (a RandomSampler
// shuffles by (seed, e)) from batch start_batch; a `for` over the loader
// itself runs the sampler's next epoch (0, 1, ...; set_epoch picks one),
// as in LibTorch. The batches of an epoch are a pure function of the
// sampler and the epoch: the same on every run and for any number of
// workers (Note [Deterministic batches]), so (epoch, next batch index) is
// all a checkpoint needs. A batch is what the dataset's get_batch gives,
// except that a TensorDataset is gathered in one index_select per tensor,
// and a batch that is one Example<> comes as a Batch (batch.h), which also
// knows its index and global size. With workers > 0, batches are made on
// that many threads (each with its own copy of the dataset), at most
// max_jobs ahead; with pin_memory(true) the workers pin them
// (pin_memory.h). A batch that fails throws in the loop, naming the batch.
// One epoch runs at a time: starting one ends the one in progress, and
// leaving a loop early, or destroying the loader, stops the workers.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "tandem/core/error.h"
#include "tandem/data/batch.h"
#include "tandem/data/batch_plan.h"
#include "tandem/data/batch_stream.h"
#include "tandem/data/pin_memory.h"
#include "tandem/data/sampler.h"

namespace tandem::data {

class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size)  // implicit, as LibTorch's
      : batch_size_(batch_size) {}

  DataLoaderOptions& batch_size(size_t value) {
    batch_size_ = value;
    return *this;
  }
  /// Threads making batches; 0 makes them on the calling thread.
  DataLoaderOptions& workers(size_t value) {
    workers_ = value;
    return *this;
  }
  /// Batches made ahead of the consumer at most (default 2 * workers).
  DataLoaderOptions& max_jobs(size_t value) {
    max_jobs_ = value;
    return *this;
  }
  /// Leave out the last batch when it is smaller than batch_size.
  DataLoaderOptions& drop_last(bool value) {
    drop_last_ = value;
    return *this;
  }
  /// Load only part `index` of `count` of every batch: the batch's rows (the
  /// same batches as without sharding, same num_batches) split into `count`
  /// consecutive parts whose sizes differ by at most one, the larger ones
  /// first (as torch.tensor_split). Each rank of a distributed run takes its
  /// own part, so the ranks' parts together are the unsharded batch, and a
  /// rank reads only its own examples. A batch of fewer than `count` rows
  /// leaves the last shards with 0 rows: data and target of shape [0, ...]
  /// (read from one example of the batch, since a dataset cannot be asked
  /// for 0 rows). Unlike a samplers::DistributedSampler, which gives each
  /// replica its own batches of batch_size rows, this keeps batch_size the
  /// global batch size.
  DataLoaderOptions& shard(size_t index, size_t count) {
    shard_index_ = index;
    shard_count_ = count;
    return *this;
  }

  /// Batches with their tensors in pinned memory, pinned by the workers, so
  /// that copies to a GPU can be non_blocking (PyTorch's DataLoader option;
  /// LibTorch's has none). Without a GPU: a warning, and ordinary batches.
  /// See tandem/data/pin_memory.h.
  DataLoaderOptions& pin_memory(bool value) {
    pin_memory_ = value;
    return *this;
  }

  size_t batch_size() const { return batch_size_; }
  size_t workers() const { return workers_; }
  size_t max_jobs() const { return max_jobs_.value_or(2 * workers_); }
  bool drop_last() const { return drop_last_; }
  /// With shard(): cut(rows) gives the shards' part sizes of a batch of
  /// `rows` rows (one per shard, in order, summing to rows) instead of the
  /// even split: DistributedDataParallel::cut, say, under shares by device
  /// speed. It is called when a batch is made, which with workers is ahead
  /// of the consumer: it must give every shard the same parts of the same
  /// batch, so a cut that changes between steps needs workers(0).
  DataLoaderOptions& shard_cut(std::function<std::vector<int64_t>(int64_t rows)> cut) {
    shard_cut_ = std::move(cut);
    return *this;
  }

  size_t shard_index() const { return shard_index_; }
  const std::function<std::vector<int64_t>(int64_t)>& shard_cut() const {
    return shard_cut_;
  }
  size_t shard_count() const { return shard_count_; }
  bool pin_memory() const { return pin_memory_; }

 private:
  size_t batch_size_ = 1;
  size_t workers_ = 0;
  std::optional<size_t> max_jobs_;
  bool drop_last_ = false;
  size_t shard_index_ = 0;
  size_t shard_count_ = 1;
  std::function<std::vector<int64_t>(int64_t)> shard_cut_;
  bool pin_memory_ = false;
};

namespace detail {

/// Refuse options no loader can run with, naming the option.
void check_options(const DataLoaderOptions& options);
/// Refuse a sampler made for another size than the dataset's.
void check_sampler_size(size_t sampler_size, std::optional<size_t> dataset_size);
/// Refuse an epoch below 0 or a start outside [0, num_batches].
void check_epoch(int64_t epoch, int64_t start_batch, size_t num_batches);

/// The examples at `indices`: a dataset that can gather them in one go
/// (TensorDataset::gather, one index_select per tensor) does; any other
/// answers get_batch.
template <typename Dataset>
auto read_batch(Dataset& dataset, std::span<const size_t> indices) {
  if constexpr (requires { dataset.gather(indices); }) {
    return dataset.gather(indices);
  } else {
    return dataset.get_batch(indices);
  }
}

/// The examples of `part`, a shard of batch `whole`. A batch of rows of no
/// examples has no shape (a stacked batch of none), so an empty part reads
/// the batch's first example and keeps none of its rows.
template <typename Dataset>
auto read_part(Dataset& dataset,
               std::span<const size_t> whole,
               std::span<const size_t> part) {
  if constexpr (kHasRows<decltype(read_batch(dataset, part))>) {
    if (part.empty()) return without_rows(read_batch(dataset, whole.first(1)));
  }
  return read_batch(dataset, part);
}

}  // namespace detail

template <typename Dataset, typename Sampler>
class DataLoader {
 public:
  using BatchType = decltype(detail::to_loader_batch(
      detail::read_batch(std::declval<Dataset&>(), std::span<const size_t>()), 0, 0));
  using Iterator = typename detail::BatchStream<BatchType>::Iterator;

  /// The batches of one epoch (see DataLoader::epoch).
  class EpochRange {
   public:
    Iterator begin() { return stream_->begin(); }
    Iterator end() { return stream_->end(); }

   private:
    friend class DataLoader;
    explicit EpochRange(detail::BatchStream<BatchType>* stream) : stream_(stream) {}
    detail::BatchStream<BatchType>* stream_;
  };

  DataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : sampler_(std::move(sampler)), options_(options) {
    detail::check_options(options_);
    detail::check_sampler_size(sampler_.dataset_size(), dataset.size());
    pin_ = options_.pin_memory() && detail::pin_memory_usable("DataLoader");
    // One copy per worker, so no two threads call get() on one object.
    datasets_ = std::make_shared<std::vector<Dataset>>(
        std::max<size_t>(options_.workers(), 1) - 1, dataset);
    datasets_->push_back(std::move(dataset));
  }
  DataLoader(DataLoader&&) noexcept = default;
  DataLoader& operator=(DataLoader&&) noexcept = default;
  ~DataLoader() = default;

  /// Starts epoch `epoch` of the sampler at batch `start_batch`
  /// (0..num_batches(); to resume mid-epoch) and returns its batches,
  /// ending the epoch in progress. The sampler's own epoch stays as it is.
  EpochRange epoch(int64_t epoch, int64_t start_batch = 0) {
    detail::check_epoch(epoch, start_batch, static_cast<size_t>(num_batches()));
    start(sampler_.indices(static_cast<size_t>(epoch)), static_cast<size_t>(start_batch));
    return EpochRange(&pass_->stream);
  }

  /// Starts the sampler's next epoch (LibTorch's pass over the loader) and
  /// points at its first batch, ending the epoch in progress.
  Iterator begin() {
    sampler_.reset();
    start(
        sampler_.next(std::numeric_limits<size_t>::max()).value_or(std::vector<size_t>{}),
        0);
    return pass_->stream.begin();
  }
  Iterator end() { return Iterator(); }

  /// Ends the epoch in progress, if any: stops and joins the workers.
  void join() { pass_.reset(); }

  /// Batches per epoch (this replica's, with a distributed sampler); the
  /// same with or without DataLoaderOptions::shard.
  int64_t num_batches() const {
    return static_cast<int64_t>(detail::BatchPlan::count(
        sampler_.num_samples(), options_.batch_size(), options_.drop_last()));
  }
  /// Examples per epoch, the padding of a distributed sampler included; the
  /// whole (unsharded) batches' examples, also with DataLoaderOptions::shard.
  int64_t num_examples() const { return static_cast<int64_t>(sampler_.num_samples()); }
  const DataLoaderOptions& options() const { return options_; }
  const Sampler& sampler() const { return sampler_; }

 private:
  // The epoch in progress, with its own handle on the datasets; on the
  // heap, where its workers find it even after the loader moves.
  struct Pass {
    Pass(std::shared_ptr<std::vector<Dataset>> datasets_in,
         detail::BatchPlan plan_in,
         const DataLoaderOptions& options,
         bool pin_in,
         size_t first_batch)
        : datasets(std::move(datasets_in)),
          plan(std::move(plan_in)),
          shard_index(options.shard_index()),
          shard_count(options.shard_count()),
          shard_cut(options.shard_cut()),
          pin(pin_in),
          stream(first_batch,
                 plan.num_batches(),
                 options.workers(),
                 options.max_jobs(),
                 [this](size_t worker, size_t batch) { return make(worker, batch); }) {}

    // Batch `batch`, this shard's rows only: its indices are split before
    // anything is read, so a shard reads just its own examples.
    BatchType make(size_t worker, size_t batch) {
      const std::span<const size_t> whole = plan.batch(batch);
      const std::span<const size_t> part =
          shard_cut
              ? detail::BatchPlan::split(
                    whole, shard_index, shard_cut(static_cast<int64_t>(whole.size())))
              : detail::BatchPlan::split(whole, shard_index, shard_count);
      BatchType made = detail::to_loader_batch(
          detail::read_part((*datasets)[worker], whole, part), batch, whole.size());
      if (pin) detail::pin_batch(made);
      return made;
    }

    std::shared_ptr<std::vector<Dataset>> datasets;
    detail::BatchPlan plan;
    size_t shard_index;
    size_t shard_count;
    std::function<std::vector<int64_t>(int64_t)> shard_cut;
    bool pin;
    detail::BatchStream<BatchType> stream;  // last: its workers stop first
  };

  void start(std::vector<size_t> order, size_t first_batch) {
    pass_.reset();  // ends the epoch in progress: its workers stop here
    pass_ = std::make_unique<Pass>(
        datasets_,
        detail::BatchPlan(std::move(order), options_.batch_size(), options_.drop_last()),
        options_,
        pin_,
        first_batch);
  }

  std::shared_ptr<std::vector<Dataset>> datasets_;
  Sampler sampler_;
  DataLoaderOptions options_;
  bool pin_ = false;  // pin_memory asked for and possible
  std::unique_ptr<Pass> pass_;
};

/// LibTorch's name for the loader make_data_loader makes.
template <typename Dataset, typename Sampler>
using StatelessDataLoader = DataLoader<Dataset, Sampler>;

/// A loader over `dataset` with a `Sampler` made for its size.
template <typename Sampler = samplers::RandomSampler, typename Dataset>
std::unique_ptr<DataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  TANDEM_CHECK(size.has_value(),
               "make_data_loader: the dataset does not know its size, so no sampler "
               "can be made for it; pass one");
  Sampler sampler(*size);
  return std::make_unique<DataLoader<Dataset, Sampler>>(
      std::move(dataset), std::move(sampler), options);
}

/// A loader over `dataset` in the order `sampler` gives.
template <typename Dataset, typename Sampler>
requires std::derived_from<Sampler, samplers::Sampler>
    std::unique_ptr<DataLoader<Dataset, Sampler>> make_data_loader(
        Dataset dataset,
        Sampler sampler,
        DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<DataLoader<Dataset, Sampler>>(
      std::move(dataset), std::move(sampler), options);
}

}  // namespace tandem::data
