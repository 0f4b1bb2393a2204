#include "tandem/data/loader.h"

#include "tandem/data/pin_memory.h"
#include "tandem/data/transforms.h"

namespace tandem::data {

namespace {

// `example` with none of its rows: shape [0, ...], same dtype and device.
// A tensor without rows (undefined, 0-dim) stays as it is.
Example<> without_rows(Example<> example) {
  const auto none = [](Tensor t) {
    return t.defined() && t.dim() >= 1 ? t.narrow(0, 0, 0) : t;
  };
  return {none(std::move(example.data)), none(std::move(example.target))};
}

}  // namespace

struct Loader::Pass {
  Pass(std::shared_ptr<const std::vector<Fetch>> fetchers_in,
       detail::BatchPlan plan_in,
       size_t shard_index_in,
       size_t shard_count_in,
       bool pin_in,
       size_t first_batch,
       size_t workers,
       size_t capacity)
      : fetchers(std::move(fetchers_in)),
        plan(std::move(plan_in)),
        shard_index(shard_index_in),
        shard_count(shard_count_in),
        pin(pin_in),
        stream(first_batch,
               plan.num_batches(),
               workers,
               capacity,
               [this](size_t worker, size_t batch) { return make(worker, batch); }) {}

  // Batch `batch`, this shard's rows only: its indices are split before
  // anything is read, so a shard reads just its own examples.
  Batch make(size_t worker, size_t batch) const {
    const Fetch& fetch = (*fetchers)[worker];
    const std::span<const size_t> whole = plan.batch(batch);
    const std::span<const size_t> part =
        detail::BatchPlan::split(whole, shard_index, shard_count);
    // A dataset cannot be asked for 0 examples (a stacked batch of none has
    // no shape), so an empty part reads the batch's first example and keeps
    // no rows of it.
    Example<> example = part.empty() ? without_rows(fetch(whole.first(1))) : fetch(part);
    Batch made{std::move(example.data),
               std::move(example.target),
               static_cast<int64_t>(batch),
               static_cast<int64_t>(whole.size())};
    if (pin) detail::pin_batch(made);
    return made;
  }

  std::shared_ptr<const std::vector<Fetch>> fetchers;
  detail::BatchPlan plan;
  size_t shard_index;
  size_t shard_count;
  bool pin;
  detail::BatchStream<Batch> stream;  // last: its workers stop first
};

Loader::Loader(Fetchers fetchers,
               LoaderOptions options,
               std::shared_ptr<const samplers::Sampler> sampler)
    : fetchers_(
          std::make_shared<const std::vector<Fetch>>(std::move(fetchers.per_worker))),
      options_(options),
      sampler_(std::move(sampler)) {
  TANDEM_CHECK(options_.batch_size() > 0,
               "Loader: batch_size must be positive, got ",
               options_.batch_size());
  TANDEM_CHECK(
      options_.workers() >= 0, "Loader: workers must be >= 0, got ", options_.workers());
  TANDEM_CHECK(options_.prefetch() > 0,
               "Loader: prefetch must be positive, got ",
               options_.prefetch());
  TANDEM_CHECK(options_.shard_count() >= 1,
               "Loader: shard count must be >= 1, got ",
               options_.shard_count());
  TANDEM_CHECK(
      options_.shard_index() >= 0 && options_.shard_index() < options_.shard_count(),
      "Loader: shard index ",
      options_.shard_index(),
      " is outside [0, ",
      options_.shard_count(),
      ") (the shard count)");
  pin_ = options_.pin_memory() && detail::pin_memory_usable("Loader");
  if (sampler_ != nullptr) {
    TANDEM_CHECK(!options_.shuffle(),
                 "Loader: shuffle must be false with a sampler of your own (the sampler "
                 "sets the order)");
    TANDEM_CHECK(sampler_->dataset_size() == fetchers.dataset_size,
                 "Loader: the sampler is made for ",
                 sampler_->dataset_size(),
                 " examples but the dataset has ",
                 fetchers.dataset_size);
  } else if (options_.shuffle()) {
    sampler_ =
        std::make_shared<samplers::RandomSampler>(fetchers.dataset_size, options_.seed());
  } else {
    sampler_ = std::make_shared<samplers::SequentialSampler>(fetchers.dataset_size);
  }
}

Loader::Loader(Loader&&) noexcept = default;
Loader& Loader::operator=(Loader&&) noexcept = default;
Loader::~Loader() = default;

Loader::EpochRange Loader::epoch(int64_t epoch, int64_t start_batch) {
  TANDEM_CHECK(epoch >= 0, "Loader::epoch: epoch must be >= 0, got ", epoch);
  pass_.reset();  // ends the epoch in progress: its workers stop here
  detail::BatchPlan plan(sampler_->indices(static_cast<size_t>(epoch)),
                         static_cast<size_t>(options_.batch_size()),
                         options_.drop_last());
  const auto num_batches = static_cast<int64_t>(plan.num_batches());
  TANDEM_CHECK(start_batch >= 0 && start_batch <= num_batches,
               "Loader::epoch: start_batch ",
               start_batch,
               " is outside [0, ",
               num_batches,
               "] (the batches of epoch ",
               epoch,
               ")");
  const auto workers = static_cast<size_t>(options_.workers());
  pass_ = std::make_unique<Pass>(fetchers_,
                                 std::move(plan),
                                 static_cast<size_t>(options_.shard_index()),
                                 static_cast<size_t>(options_.shard_count()),
                                 pin_,
                                 static_cast<size_t>(start_batch),
                                 workers,
                                 workers * static_cast<size_t>(options_.prefetch()));
  return EpochRange(&pass_->stream);
}

int64_t Loader::num_batches() const {
  return static_cast<int64_t>(
      detail::BatchPlan::count(sampler_->num_samples(),
                               static_cast<size_t>(options_.batch_size()),
                               options_.drop_last()));
}

int64_t Loader::num_examples() const {
  return static_cast<int64_t>(sampler_->num_samples());
}

namespace detail {

Example<> collate(Example<> batch) { return batch; }

Example<> collate(TensorExample batch) { return {std::move(batch.data), Tensor()}; }

Example<> collate(std::vector<Example<>> examples) {
  return transforms::Stack<>().apply_batch(std::move(examples));
}

Example<> collate(std::vector<TensorExample> examples) {
  return {transforms::Stack<TensorExample>().apply_batch(std::move(examples)).data,
          Tensor()};
}

}  // namespace detail
}  // namespace tandem::data
