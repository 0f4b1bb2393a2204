#include "tandem/distributed/distributed_data_parallel.h"

#include <cmath>
#include <set>
#include <sstream>

#include "distributed/broadcast_coalesced.h"
#include "distributed/fnv1a.h"
#include "distributed/gradient_tree_across.h"
#include "distributed/model_check.h"
#include "distributed/nccl_backend.h"
#include "distributed/rank_balance.h"
#include "distributed/reducer.h"
#include "tandem/core/error.h"
#include "tandem/distributed/errors.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::nn {
namespace {

namespace dist = tandem::distributed;

std::string device_types_of(const std::vector<Tensor>& params) {
  std::set<std::string> types;
  for (const Tensor& p : params)
    types.insert(std::string(device_type_name(p.device().type())));
  std::string list = "{";
  for (const std::string& t : types) list += (list.size() > 1 ? ", " : "") + t;
  return list + "}";
}

// Rows along dim 0 of the input's first tensor (0 for none).
int64_t rows_of(const parallel::TensorTree& input) {
  const std::vector<Tensor> tensors = input.tensors();
  return !tensors.empty() && tensors.front().dim() > 0 ? tensors.front().size(0) : 0;
}

std::string device_list(const std::vector<Device>& devices) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < devices.size(); ++i) out << (i ? ", " : "") << devices[i];
  out << "]";
  return out.str();
}

// PyTorch's argument checks, before any collective (so a rank that fails
// here fails alone, at once; the others then fail in the model check's
// collective at its deadline, naming this rank as not arriving).
void check_arguments(const dist::detail::NamedTensors& params,
                     const DistributedDataParallelOptions& options) {
  TANDEM_CHECK(!params.empty(),
               "DistributedDataParallel is not needed when a module doesn't have any "
               "parameter that requires a gradient.");
  std::vector<Tensor> tensors;
  for (const auto& [name, p] : params) tensors.push_back(p);
  const DeviceType type = tensors.front().device().type();
  for (const Tensor& p : tensors) {
    TANDEM_CHECK(p.device().type() == type,
                 "DistributedDataParallel's input module must be on the same type of "
                 "devices, but input module parameters locate in ",
                 device_types_of(tensors),
                 ".");
  }
  if (options.device_ids()) {
    TANDEM_CHECK(options.device_ids()->size() <= 1,
                 "device_ids can only be None or contain a single element.");
    TANDEM_CHECK(
        type == kCUDA,
        "DistributedDataParallel device_ids and output_device arguments only work "
        "with single-device/multiple-device GPU modules or CPU modules, but got "
        "device_ids ",
        device_list(*options.device_ids()),
        ", output_device None, and module parameters ",
        device_types_of(tensors),
        ".");
  }
  if (type == kCUDA) {
    for (const Tensor& p : tensors) {
      TANDEM_CHECK(p.device() == tensors.front().device(),
                   "DistributedDataParallel: the module's parameters are on ",
                   tensors.front().device(),
                   " and ",
                   p.device(),
                   "; each process trains a module on one GPU");
    }
    if (!dist::detail::nccl_built()) {
      throw NotImplementedError(
          "DistributedDataParallel: the module's parameters are on " +
          tensors.front().device().str() +
          ", but this build of tandem has no NCCL, which gradient reduction on GPUs "
          "needs (configure with -DTANDEM_CUDA=ON where NCCL is installed); train on "
          "CPU devices, or use nn::DataParallel over the GPUs of one machine");
    }
  }
  for (const auto& [name, p] : params) {
    TANDEM_CHECK(p.dtype() == kFloat32 || p.dtype() == kFloat64,
                 "DistributedDataParallel: parameter '",
                 name,
                 "' has dtype ",
                 p.dtype(),
                 "; gradients are reduced in float32 or float64 only");
  }
  if (options.invariant()) {
    TANDEM_CHECK(
        options.micro_batch() > 0,
        "DistributedDataParallelOptions::micro_batch: expected a positive number "
        "of rows, got ",
        options.micro_batch());
    for (const auto& [name, p] : params) {
      TANDEM_CHECK(p.dtype() == params.front().second.dtype(),
                   "DistributedDataParallel: invariant mode sums the gradients of one "
                   "dtype in one exchange, but parameter '",
                   params.front().first,
                   "' is ",
                   params.front().second.dtype(),
                   " and '",
                   name,
                   "' is ",
                   p.dtype());
    }
    TANDEM_CHECK(options.check_replicas_every() == 0,
                 "DistributedDataParallel: check_replicas_every is for the buckets' "
                 "average; in invariant mode every rank computes the same tree sum, and "
                 "the check is not offered");
  }
  TANDEM_CHECK(options.check_replicas_every() >= 0,
               "DistributedDataParallel: check_replicas_every must be >= 0, got ",
               options.check_replicas_every());
  if (options.bucket_cap_mb()) {
    const double cap = *options.bucket_cap_mb();
    TANDEM_CHECK(std::isfinite(cap) && cap > 0,
                 "DistributedDataParallel: bucket_cap_mb must be positive, got ",
                 cap);
  }
}

dist::detail::ReducerOptions reducer_options(
    const DistributedDataParallelOptions& options) {
  dist::detail::ReducerOptions r;
  if (options.bucket_cap_mb()) {
    const auto bytes = static_cast<size_t>(*options.bucket_cap_mb() * 1024 * 1024);
    r.first_bucket_bytes = std::max<size_t>(bytes, 1);
    r.bucket_bytes = std::max<size_t>(bytes, 1);
  }
  r.find_unused_parameters = options.find_unused_parameters();
  r.gradient_as_bucket_view = options.gradient_as_bucket_view();
  r.overlap = options.overlap();
  r.ready_order = options.grad_ready_order();
  return r;
}

}  // namespace

NoSyncGuard::NoSyncGuard(DistributedDataParallelImpl& ddp)
    : ddp_(ddp), previous_(ddp.require_backward_grad_sync_) {
  ddp_.require_backward_grad_sync_ = false;
}

NoSyncGuard::~NoSyncGuard() { ddp_.require_backward_grad_sync_ = previous_; }

DistributedDataParallelImpl::DistributedDataParallelImpl(
    std::shared_ptr<Module> module,
    parallel::detail::Forward forward,
    DistributedDataParallelOptions options)
    : module_(std::move(module)),
      forward_(std::move(forward)),
      options_(std::move(options)) {
  register_module("module", module_);
  dist::detail::NamedTensors params;
  std::set<const TensorImpl*> seen;  // a shared parameter is managed once, first name
  for (const auto& item : module_->named_parameters()) {
    const Tensor& p = item.value();
    if (p.requires_grad() && seen.insert(p.unsafe_impl()).second) {
      params.emplace_back(item.key(), p);
    }
  }
  check_arguments(params, options_);
  group_ =
      options_.process_group() ? options_.process_group() : dist::ProcessGroup::world();
  if (options_.device_ids() && !options_.device_ids()->empty()) {
    input_device_ = options_.device_ids()->front();
  }
  dist::detail::NamedTensors buffers;
  for (const auto& item : module_->named_buffers()) {
    buffers.emplace_back(item.key(), item.value());
  }
  dist::detail::verify_same_model(*group_, params, buffers);

  std::vector<Tensor> state;
  std::vector<Tensor> managed;
  std::vector<std::string> names;
  for (const auto& [name, p] : params) {
    state.push_back(p);
    managed.push_back(p);
    names.push_back(name);
  }
  if (options_.broadcast_buffers()) {
    for (const auto& [name, b] : buffers) state.push_back(b);
  }
  dist::detail::broadcast_coalesced(*group_, state, 0);
  reducer_ = std::make_unique<dist::detail::Reducer>(
      std::move(managed), std::move(names), group_, reducer_options(options_));
  if (options_.shares() || options_.balance() == Balance::kAuto || options_.invariant()) {
    rank_balance_ = std::make_unique<dist::detail::RankBalance>(
        *group_,
        options_.balance(),
        options_.shares(),
        options_.invariant() ? options_.micro_batch() : 0);
  }
}

DistributedDataParallelImpl::~DistributedDataParallelImpl() = default;

void DistributedDataParallelImpl::broadcast_buffers() {
  std::vector<Tensor> buffers = module_->buffers();
  if (!buffers.empty()) dist::detail::broadcast_coalesced(*group_, buffers, 0);
}

parallel::TensorTree DistributedDataParallelImpl::forward(
    const parallel::TensorTree& input) {
  const bool grad = GradMode::is_enabled();
  // In training mode also without gradients: the micro-batches' masks and
  // the mask seed drawn are one process's, as DataParallel's.
  if (options_.invariant() && (grad || module_->is_training())) {
    return invariant_forward(input);
  }
  if (grad && join_mode_) join_active_forward();
  if (grad) reducer_->prepare_for_forward();
  if (grad && options_.check_replicas_every() > 0) check_replicas();
  if (grad && rank_balance_ && require_backward_grad_sync_) balance_step(input);
  // Inside a Join only forwards with grad mode on communicate (a joined
  // rank shadows those alone).
  if (require_forward_param_sync_ && options_.broadcast_buffers() &&
      (grad || !join_mode_)) {
    broadcast_buffers();
  }
  if (grad && !rank_balance_) global_batch_rows_ = rows_of(input) * group_->size();
  parallel::TensorTree output = forward_(
      *module_,
      input_device_ ? input.map([&](const Tensor& t) { return t.to(*input_device_); })
                    : input);
  require_forward_param_sync_ = grad && require_backward_grad_sync_;
  if (require_forward_param_sync_) reducer_->prepare_for_backward();
  return output;
}

Tensor DistributedDataParallelImpl::forward(const Tensor& input) {
  const parallel::TensorTree out = forward(parallel::TensorTree(input));
  TANDEM_CHECK(out.is_tensor(),
               "DistributedDataParallel: the module returned a list of ",
               out.size(),
               " items; pass the input as a TensorTree to get it");
  return out.tensor();
}

void DistributedDataParallelImpl::balance_step(const parallel::TensorTree& input) {
  TANDEM_CHECK(!join_mode_,
               "DistributedDataParallel: shares and balance(kAuto) exchange row counts "
               "at every forward, which a joined rank cannot take part in; use the even "
               "cut inside a Join");
  const dist::detail::RankStep step =
      exchange_rows(rows_of(input), reducer_->backward_end(), 0);
  reducer_->set_grad_weight(step.grad_weight);
  // Uneven parts follow the ranks' speeds: so does the adding of the
  // buckets in shared memory (Note [Reducing on the host]; an even part is
  // not capped).
  reducer_->set_adding_part(step.rows[static_cast<size_t>(group_->rank())],
                            global_batch_rows_);
}

dist::detail::RankStep DistributedDataParallelImpl::exchange_rows(
    int64_t rows, std::chrono::steady_clock::time_point computed_until, uint64_t seed) {
  const double previous =
      forward_start_ != decltype(forward_start_){} && computed_until > forward_start_
          ? std::chrono::duration<double>(computed_until - forward_start_).count()
          : 0.0;
  dist::detail::RankStep step = rank_balance_->step(rows, previous, seed);
  global_batch_rows_ = 0;
  for (int64_t r : step.rows) global_batch_rows_ += r;
  // After the exchange, whose wait for the other ranks is not computing.
  forward_start_ = std::chrono::steady_clock::now();
  return step;
}

parallel::TensorTree DistributedDataParallelImpl::invariant_forward(
    const parallel::TensorTree& input) {
  TANDEM_CHECK(!join_mode_,
               "DistributedDataParallel: invariant mode cannot run inside a Join: a "
               "joined rank holds no micro-batch of the gradient tree");
  TANDEM_CHECK(require_backward_grad_sync_ || !GradMode::is_enabled(),
               "DistributedDataParallel: invariant mode cannot run inside no_sync(): its "
               "gradients are summed across the ranks in every backward (accumulate "
               "over a larger batch instead)");
  // Every rank draws, as one process does once per forward; rank 0's wins.
  const dist::detail::RankStep step = exchange_rows(
      rows_of(input), *tree_start_, parallel::detail::draw_mask_seed(*module_));

  // Where each rank's part lies: whole micro-batches, from row 0 on.
  const int64_t micro_batch = options_.micro_batch();
  const auto world = static_cast<size_t>(group_->size());
  std::vector<int64_t> bounds{0};
  int64_t first_row = 0;
  for (size_t r = 0; r < world; ++r) {
    const int64_t part = step.rows[r];
    const bool whole = part % micro_batch == 0 || r + 1 == world;
    if (part == 0 || !whole) {
      std::string cut;
      for (int64_t p : step.rows) cut += (cut.empty() ? "" : ", ") + std::to_string(p);
      throw Error(tandem::detail::str(
          "DistributedDataParallel: invariant mode needs every rank's part of the batch "
          "to be whole micro-batches of ",
          micro_batch,
          " rows (only the last rank's last one may be short), at least one each; rank ",
          r,
          " got ",
          part,
          " rows at row ",
          first_row,
          " of a batch cut as [",
          cut,
          "]: hand each rank the rows cut(rows) gives (DataLoaderOptions::shard_cut), "
          "with at least as many micro-batches as ranks"));
    }
    first_row += part;
    bounds.push_back((first_row + micro_batch - 1) / micro_batch);
  }
  if (require_forward_param_sync_ && options_.broadcast_buffers()) broadcast_buffers();
  require_forward_param_sync_ = true;

  const Device device =
      input_device_ ? *input_device_ : module_->parameters().front().device();
  const auto rank = static_cast<size_t>(group_->rank());
  parallel::detail::GradientSum sum = [group = group_, bounds, tree_start = tree_start_](
                                          std::vector<std::vector<Tensor>>&& per_replica,
                                          Device destination) {
    *tree_start = std::chrono::steady_clock::now();
    return dist::detail::sum_tree_across_ranks(
        *group, bounds, std::move(per_replica), destination);
  };
  return parallel::detail::micro_batch_part_apply(
      module_,
      forward_,
      input.map([&](const Tensor& t) { return t.to(device); }),
      device,
      micro_batch,
      bounds[rank],
      step.seed,
      /*dim=*/0,
      &micro_batch_replicas_,
      std::move(sum));
}

std::vector<int64_t> DistributedDataParallelImpl::cut(int64_t rows) const {
  if (rank_balance_) return rank_balance_->cut(rows);
  return parallel::split_evenly(rows, static_cast<size_t>(group_->size()));
}

std::vector<double> DistributedDataParallelImpl::shares() const {
  if (rank_balance_) return rank_balance_->shares();
  return std::vector<double>(static_cast<size_t>(group_->size()),
                             1.0 / static_cast<double>(group_->size()));
}

void DistributedDataParallelImpl::check_replicas() {
  const int64_t passes = reducer_->synchronized_backwards();
  if (passes == replicas_checked_at_ || passes % options_.check_replicas_every() != 0)
    return;
  replicas_checked_at_ = passes;
  // The parameters' bytes, in registration order.
  uint64_t hash = dist::detail::kFnv1aOffset;
  for (const Tensor& p : module_->parameters()) {
    const Tensor bytes = p.detach().contiguous().cpu();
    hash = dist::detail::fnv1a(bytes.data_ptr(), bytes.nbytes(), hash);
  }
  const int world = group_->size();
  Tensor all = empty({world}, kInt64);
  group_->allgather_into_tensor(all, full({1}, static_cast<int64_t>(hash), kInt64))
      .wait();
  const int64_t* h = all.data_ptr<int64_t>();
  std::string differing;
  for (int r = 1; r < world; ++r) {
    if (h[r] != h[0]) differing += (differing.empty() ? "" : ", ") + std::to_string(r);
  }
  if (differing.empty()) return;
  throw dist::ReplicaMismatchError(
      "DistributedDataParallel: after " + std::to_string(passes) +
      " synchronized backward passes the parameters of rank(s) " + differing +
      " differ from rank 0's (checked every " +
      std::to_string(options_.check_replicas_every()) +
      " passes): the ranks' optimizer steps or parameter updates are not the same "
      "(a rank-dependent learning rate, random number, or a change outside training)");
}

void DistributedDataParallelImpl::register_comm_hook(CommHook hook) {
  TANDEM_CHECK(!options_.invariant(),
               "DistributedDataParallel::register_comm_hook: invariant mode sums the "
               "gradients in its own tree across the ranks, not by buckets; a hook "
               "would have nothing to reduce");
  reducer_->register_comm_hook(std::move(hook));
}

namespace comm_hooks {

CommHook allreduce(std::shared_ptr<dist::ProcessGroup> group) {
  TANDEM_CHECK(group != nullptr, "comm_hooks::allreduce: the process group is null");
  return [group = std::move(group)](GradBucket& bucket) {
    bucket.buffer.mul_(1.0 / static_cast<double>(group->size()));
    return group->allreduce(bucket.buffer);
  };
}

CommHook noop() {
  return [](GradBucket& bucket) { return dist::Work::completed({bucket.buffer}); };
}

}  // namespace comm_hooks

DistributedDataParallelStats DistributedDataParallelImpl::stats() const {
  return reducer_->stats();
}

}  // namespace tandem::nn
