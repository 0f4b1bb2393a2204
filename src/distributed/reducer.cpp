#include "distributed/reducer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <sstream>
#include <utility>

#include "backend/dispatch.h"
#include "distributed/host_allreduce.h"
#include "tandem/autograd/engine.h"
#include "tandem/core/error.h"
#include "tandem/core/profiler.h"
#include "tandem/core/warning.h"
#include "tandem/distributed/bucket_assignment.h"
#include "tandem/distributed/errors.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::distributed::detail {

// Note [DDP buckets]
// ~~~~~~~~~~~~~~~~~~
// The managed parameters' gradients live in a few flat tensors, the
// buckets, each of one dtype and device; every parameter has a view into
// its bucket at its offset. Gradients go in divided by the world size
// (PyTorch's order: scale, then sum), so reducing a bucket is one allreduce
// (SUM) of its flat tensor, in place.
//
// Assignment: at construction the parameters are walked in registration
// order and packed into buckets closing at 1 MiB for the first and 25 MiB
// after (compute_bucket_assignment_by_size); the bucket list is then
// reversed, since gradients arrive roughly in reverse registration order.
// The first synchronized backward records the order gradients really
// arrived in, and the next forward packs them again in that order (rank
// 0's order, broadcast, so all ranks agree), once. PyTorch starts with one
// bucket holding everything, so its first iteration has no overlap; here
// every iteration has.
//
// A pass: prepare_for_backward() arms the hooks. Each parameter's
// post-accumulate hook copies its .grad into its view (or finds .grad is
// the view already: gradient_as_bucket_view points .grad at the view, so
// later passes accumulate in place) and counts down its bucket; a bucket
// whose count reaches zero is launched if every earlier bucket has been,
// so all ranks launch the same collectives in the same order whatever the
// local order of gradients. The first hook queues finish_backward() for
// the end of the backward pass: it puts zeros in the views of parameters
// that got no gradient, launches what is left, waits for every bucket, and
// writes the averages back to the .grads that are not views.
//
// Usage flags: the last bucket has one extra element per parameter, 1 where
// this rank's gradient for it is real and 0 where finish_backward() put
// zeros (not divided). Summed with the gradients, they tell every rank how
// many ranks used each parameter, so a
// parameter some rank did not use is an error on every rank in the same
// pass (without find_unused_parameters), with no extra collective; a
// parameter no rank used keeps its .grad (find_unused_parameters). Zeros
// added to an average are harmless, so the other ranks' gradients still
// average correctly (over all ranks, as in PyTorch).
//
// No rank waits for a bucket that another rank never launches: every rank
// launches every bucket once per synchronized pass, at the latest from
// finish_backward().

Reducer::Reducer(std::vector<Tensor> params,
                 std::vector<std::string> names,
                 std::shared_ptr<ProcessGroup> group,
                 ReducerOptions options)
    : params_(std::move(params)),
      names_(std::move(names)),
      group_(std::move(group)),
      options_(std::move(options)),
      divisor_(group_->size()),
      expected_users_(group_->size()),
      ready_(params_.size(), 0),
      used_(params_.size(), 0) {
  if (options_.ready_order.empty()) {
    std::vector<std::vector<size_t>> assignment = compute_bucket_assignment_by_size(
        params_, {options_.first_bucket_bytes, options_.bucket_bytes});
    std::reverse(assignment.begin(), assignment.end());
    install_buckets(assignment);
  } else {
    TANDEM_CHECK(options_.ready_order.size() == params_.size(),
                 "DistributedDataParallel: grad_ready_order has ",
                 options_.ready_order.size(),
                 " entries for ",
                 params_.size(),
                 " managed parameters");
    ready_order_ = options_.ready_order;
    install_buckets(compute_bucket_assignment_by_size(
        params_, {options_.first_bucket_bytes, options_.bucket_bytes}, ready_order_));
    rebuilt_ = true;
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    hook_ids_.push_back(params_[i].register_post_accumulate_grad_hook(
        [this, i](const Tensor& /*param*/) { on_gradient(i); }));
  }
}

Reducer::~Reducer() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hook_ids_[i]);
  // Buckets still in flight (a pass that failed half way) must not be
  // freed under MPI: wait for them, ignoring their errors.
  for (Bucket& bucket : buckets_) {
    if (!bucket.work.defined()) continue;
    try {
      bucket.work.wait();
    } catch (const Error&) {
    }
  }
}

Tensor& Reducer::view_of(size_t index) {
  const Slot& slot = slots_[index];
  return buckets_[slot.bucket].views[slot.position];
}

void Reducer::install_buckets(const std::vector<std::vector<size_t>>& assignment) {
  NoGradGuard no_grad;
  std::vector<Bucket> fresh(assignment.size());
  std::vector<Slot> slots(params_.size());
  // Where each bucket goes in a window shared by the ranks on this host
  // (Note [Reducing on the host] in host_allreduce.cpp), if they all can.
  std::vector<int64_t> numels(assignment.size());
  std::vector<size_t> offsets(assignment.size());
  size_t window_bytes = 0;
  bool all_cpu = true;
  for (size_t b = 0; b < assignment.size(); ++b) {
    const bool last = b + 1 == assignment.size();
    numels[b] = last ? static_cast<int64_t>(params_.size()) : 0;
    for (size_t index : assignment[b]) numels[b] += params_[index].numel();
    const Tensor& first = params_[assignment[b].front()];
    all_cpu = all_cpu && first.is_cpu();
    offsets[b] = window_bytes;
    window_bytes +=
        (static_cast<size_t>(numels[b]) * first.element_size() + 63) / 64 * 64;
  }
  window_ = HostWindow::create(*group_, window_bytes, assignment.size(), all_cpu);
  for (size_t b = 0; b < assignment.size(); ++b) {
    Bucket& bucket = fresh[b];
    bucket.params = assignment[b];
    const Tensor& first = params_[bucket.params.front()];
    bucket.offset = offsets[b];
    bucket.flat =
        window_ ? window_->tensor(offsets[b], numels[b], first.dtype(), first.device())
                : zeros({numels[b]}, TensorOptions(first.dtype()).device(first.device()));
    int64_t offset = 0;
    for (size_t position = 0; position < bucket.params.size(); ++position) {
      const Tensor& param = params_[bucket.params[position]];
      bucket.views.push_back(
          bucket.flat.narrow(0, offset, param.numel()).view(param.sizes()));
      offset += param.numel();
      slots[bucket.params[position]] = {b, position};
    }
    bucket.pending = bucket.params.size();
  }
  // Gradients that were views into the old buckets move to the new ones.
  if (!buckets_.empty()) {
    for (size_t i = 0; i < params_.size(); ++i) {
      Tensor grad = params_[i].grad();
      if (!grad.defined() || grad.data_ptr() != view_of(i).data_ptr()) continue;
      Tensor& view = fresh[slots[i].bucket].views[slots[i].position];
      view.copy_(grad);
      params_[i].mutable_grad() = view;
    }
  }
  buckets_ = std::move(fresh);
  slots_ = std::move(slots);
}

void Reducer::prepare_for_forward() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (armed_) {
    std::ostringstream message;
    message << "Expected to have finished reduction in the prior iteration before "
               "starting a new one. The previous forward of DistributedDataParallel on "
               "rank "
            << group_->rank()
            << " was to be synchronized, but no backward pass reached its parameters "
               "(was backward skipped, did it fail, or does the loss depend on no "
               "parameter?). Run backward() on a loss computed from every forward "
               "with grad mode on, or run forwards that need no gradients under "
               "NoGradGuard or inside no_sync().";
    throw Error(message.str());
  }
  if (rebuild_due_) rebuild_buckets();
}

void Reducer::rebuild_buckets() {
  const auto count = static_cast<int64_t>(params_.size());
  std::vector<std::vector<size_t>> assignment = compute_bucket_assignment_by_size(
      params_, {options_.first_bucket_bytes, options_.bucket_bytes}, ready_order_);
  // Rank 0's assignment for all: [buckets, their sizes..., indices...].
  Tensor plan = zeros({1 + 2 * count}, kInt64);
  int64_t* p = plan.data_ptr<int64_t>();
  p[0] = static_cast<int64_t>(assignment.size());
  int64_t* indices = p + 1 + count;
  for (size_t b = 0; b < assignment.size(); ++b) {
    p[1 + b] = static_cast<int64_t>(assignment[b].size());
    for (size_t index : assignment[b]) *indices++ = static_cast<int64_t>(index);
  }
  group_->broadcast(plan).wait();
  assignment.assign(static_cast<size_t>(p[0]), {});
  indices = p + 1 + count;
  for (size_t b = 0; b < assignment.size(); ++b) {
    for (int64_t k = 0; k < p[1 + b]; ++k) {
      assignment[b].push_back(static_cast<size_t>(*indices++));
    }
  }
  install_buckets(assignment);
  rebuild_due_ = false;
  rebuilt_ = true;
}

void Reducer::prepare_for_backward() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = true;
}

void Reducer::reset_pass() {
  armed_ = false;
  finish_queued_ = false;
  next_bucket_ = 0;
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(used_.begin(), used_.end(), 0);
  for (Bucket& bucket : buckets_) {
    bucket.pending = bucket.params.size();
    bucket.work = Work();
  }
}

void Reducer::on_gradient(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  used_[index] = 1;
  if (!armed_) return;  // not synchronized: the gradient accumulates locally
  if (ready_[index]) {
    throw Error(
        "Expected to mark a variable ready only once. Parameter " + names_[index] +
        " (params[" + std::to_string(index) +
        "]) got its gradient twice in one synchronized backward pass: it was used "
        "outside the forward of DistributedDataParallel, or in several concurrent "
        "forward/backward passes.");
  }
  if (!finish_queued_) {
    autograd::queue_callback([this] { finish_backward(); });
    finish_queued_ = true;
  }
  if (recording_ready_order()) ready_order_.push_back(index);
  mark_ready(index);
}

void Reducer::mark_ready(size_t index) {
  ready_[index] = 1;
  Tensor& view = view_of(index);
  // Every defined .grad goes in, also one this pass did not add to (it
  // holds gradients of earlier no_sync() passes, or of earlier passes
  // without zero_grad), as in PyTorch; no gradient counts as zeros.
  const Tensor grad = params_[index].grad();
  if (grad.defined()) {
    // view = grad * weight / world size, in one pass (in place when .grad
    // is the view). (A communication hook gets them undivided.)
    const double scale =
        hook_ ? grad_weight_ : grad_weight_ / static_cast<double>(divisor_);
    backend::kernels(view.device())
        .unary(backend::UnaryOp::MulScalar, view, grad, Scalar(scale), {});
    if (options_.gradient_as_bucket_view && grad.data_ptr() != view.data_ptr()) {
      params_[index].mutable_grad() = view;
    }
  } else {
    view.zero_();
  }
  Bucket& bucket = buckets_[slots_[index].bucket];
  if (--bucket.pending == 0 && options_.overlap) launch_ready_buckets();
}

void Reducer::write_usage_flags(const Tensor& flags) const {
  Tensor local = empty({flags.numel()}, kFloat64);
  double* f = local.data_ptr<double>();
  for (size_t i = 0; i < used_.size(); ++i) f[i] = used_[i] ? 1.0 : 0.0;
  Tensor(flags).copy_(local);
}

void Reducer::launch_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    launch_bucket(next_bucket_++);
  }
}

void Reducer::launch_bucket(size_t b) {
  Bucket& bucket = buckets_[b];
  const bool last = b + 1 == buckets_.size();
  const auto count = static_cast<int64_t>(params_.size());
  const int64_t grads = bucket.flat.numel() - (last ? count : 0);
  if (last) write_usage_flags(bucket.flat.narrow(0, grads, count));
  profiler::Span span("ddp", "DDP launch bucket", bucket.flat.device());
  if (span.active()) {
    span.arg("bucket", static_cast<int64_t>(b)).arg("bytes", bucket.flat.nbytes());
    profiler::mark_data(bucket.flat.data_ptr(), span.start_flow());  // to its allreduce
  }
  if (!hook_) {
    const std::string label =
        ::tandem::detail::str("bucket ", b, " of ", buckets_.size());
    bucket.work =
        window_
            ? allreduce_on_host(
                  *group_, window_, b, bucket.offset, bucket.flat, label, adding_part_)
            : group_->allreduce(bucket.flat, AllreduceOptions().label(label));
    return;
  }
  nn::GradBucket view{
      b, buckets_.size(), bucket.flat.narrow(0, 0, grads), bucket.views, {}};
  for (size_t index : bucket.params) view.parameters.push_back(params_[index]);
  bucket.work = hook_(view);
  TANDEM_CHECK(
      bucket.work.defined(),
      "DistributedDataParallel: the communication hook returned an undefined Work "
      "for bucket ",
      b);
  if (last) {
    usage_work_ = group_->allreduce(bucket.flat.narrow(0, grads, count),
                                    AllreduceOptions().label("parameters used"));
  }
}

void Reducer::take_hook_result(size_t b) {
  Bucket& bucket = buckets_[b];
  const auto& result = bucket.work.result();
  if (result.empty()) return;  // reduced in place
  const int64_t grads =
      bucket.flat.numel() -
      (b + 1 == buckets_.size() ? static_cast<int64_t>(params_.size()) : 0);
  const Tensor& out = result.front();
  TANDEM_CHECK(
      out.defined() && out.numel() == grads && out.dtype() == bucket.flat.dtype(),
      "DistributedDataParallel: the communication hook's result for bucket ",
      b,
      " has ",
      out.defined() ? out.numel() : 0,
      " elements of ",
      out.defined() ? out.dtype() : bucket.flat.dtype(),
      ", but the bucket holds ",
      grads,
      " elements of ",
      bucket.flat.dtype());
  Tensor buffer = bucket.flat.narrow(0, 0, grads);
  if (out.data_ptr() != buffer.data_ptr()) buffer.copy_(out.reshape({grads}));
}

void Reducer::register_comm_hook(nn::CommHook hook) {
  std::lock_guard<std::mutex> lock(mutex_);
  TANDEM_CHECK(
      !hook_,
      "register_comm_hook or register_builtin_comm_hook can only be called once.");
  TANDEM_CHECK(
      synchronized_backwards_ == 0 && !armed_,
      "DistributedDataParallel: register_comm_hook must be called before the first "
      "synchronized backward");
  TANDEM_CHECK(hook != nullptr, "Communication hook must be callable.");
  hook_ = std::move(hook);
}

void Reducer::finish_backward() {
  NoGradGuard no_grad;
  std::lock_guard<std::mutex> lock(mutex_);
  backward_end_ = std::chrono::steady_clock::now();
  for (size_t i = 0; i < params_.size(); ++i) {
    if (ready_[i]) continue;
    if (recording_ready_order()) ready_order_.push_back(i);
    mark_ready(i);
  }
  launch_ready_buckets();
  try {
    const std::vector<int64_t> users = wait_for_buckets();
    // The averages go back to the .grads that are not views; a parameter
    // no rank used keeps its .grad as it was (undefined if it was).
    for (size_t i = 0; i < params_.size(); ++i) {
      Tensor grad = params_[i].grad();
      const Tensor& view = view_of(i);
      if (grad.defined() && grad.data_ptr() == view.data_ptr()) continue;
      if (users[i] == 0) continue;
      if (grad.defined()) {
        grad.copy_(view);
      } else {
        params_[i].mutable_grad() =
            options_.gradient_as_bucket_view ? view : view.clone();
      }
    }
    check_usage(users, /*shadowing=*/false);
  } catch (...) {
    end_pass();
    throw;
  }
  end_pass();
}

void Reducer::shadow_backward() {
  NoGradGuard no_grad;
  std::lock_guard<std::mutex> lock(mutex_);
  if (synchronized_backwards_ == 0 && ready_order_.empty()) {
    for (size_t i = params_.size(); i-- > 0;) ready_order_.push_back(i);
  }
  for (Bucket& bucket : buckets_) {
    bucket.flat.zero_();  // gradients and usage flags: nothing from this rank
    bucket.pending = 0;
  }
  try {
    // Zeros, through the same collectives the active ranks make.
    for (next_bucket_ = 0; next_bucket_ < buckets_.size();) launch_bucket(next_bucket_++);
    check_usage(wait_for_buckets(), /*shadowing=*/true);
  } catch (...) {
    end_pass();
    throw;
  }
  end_pass();
}

std::vector<int64_t> Reducer::wait_for_buckets() {
  for (size_t b = 0; b < buckets_.size(); ++b) {
    profiler::Span span("ddp", "DDP wait bucket", buckets_[b].flat.device());
    span.arg("bucket", static_cast<int64_t>(b));
    buckets_[b].work.wait();
    if (hook_) take_hook_result(b);
  }
  if (usage_work_.defined()) usage_work_.wait();
  usage_work_ = Work();
  const Bucket& last = buckets_.back();
  const auto count = static_cast<int64_t>(params_.size());
  const Tensor flags =
      last.flat.narrow(0, last.flat.numel() - count, count).to(kFloat64).cpu();
  const double* f = flags.data_ptr<double>();
  std::vector<int64_t> users(params_.size());
  for (size_t i = 0; i < users.size(); ++i) users[i] = std::llround(f[i]);
  return users;
}

void Reducer::set_divisors(int64_t divisor, int64_t expected_users) {
  std::lock_guard<std::mutex> lock(mutex_);
  divisor_ = divisor;
  expected_users_ = expected_users;
}

void Reducer::set_grad_weight(double weight) {
  std::lock_guard<std::mutex> lock(mutex_);
  grad_weight_ = weight;
}

void Reducer::set_adding_part(int64_t rows, int64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  adding_part_ = {rows, total};
}

std::chrono::steady_clock::time_point Reducer::backward_end() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return backward_end_;
}

void Reducer::end_pass() {
  reset_pass();
  ++synchronized_backwards_;
  if (synchronized_backwards_ == 1 && !options_.find_unused_parameters && !rebuilt_) {
    rebuild_due_ = true;
  }
}

void Reducer::check_usage(const std::vector<int64_t>& users, bool shadowing) {
  const int64_t world = group_->size();
  const bool complete = std::all_of(
      users.begin(), users.end(), [&](int64_t n) { return n == expected_users_; });
  if (options_.find_unused_parameters) {
    static std::atomic<bool> warned{false};  // once per process, as PyTorch
    if (complete && !warned.exchange(true)) {
      warn(
          "DistributedDataParallel: find_unused_parameters(true) was given, but every "
          "parameter got a gradient on every rank in this backward pass; without it "
          "a backward needs no usage check of its own (this warning is shown once)");
    }
    return;
  }
  if (complete) return;
  // Every rank is here: say which rank missed which parameter.
  const auto count = static_cast<int64_t>(params_.size());
  Tensor mine = empty({count}, kFloat32);
  for (int64_t i = 0; i < count; ++i) {
    // A rank shadowing for Join counts as having every gradient: it is
    // not the one to name.
    mine.data_ptr<float>()[i] = shadowing || used_[static_cast<size_t>(i)] ? 1.0f : 0.0f;
  }
  // used_ was reset by nobody yet: finish_backward resets after this.
  Tensor all = empty({world * count}, kFloat32);
  group_->allgather_into_tensor(all, mine).wait();
  const float* a = all.data_ptr<float>();
  std::ostringstream message;
  message << "DistributedDataParallel: parameters got no gradient in this synchronized "
             "backward pass: ";
  bool first_rank = true;
  for (int64_t r = 0; r < world; ++r) {
    std::string missing;
    for (int64_t i = 0; i < count; ++i) {
      if (a[r * count + i] != 0.0f) continue;
      if (!missing.empty()) missing += ", ";
      missing += names_[static_cast<size_t>(i)] + " (params[" + std::to_string(i) + "])";
    }
    if (missing.empty()) continue;
    message << (first_rank ? "" : "; ") << "rank " << r << ": " << missing;
    first_rank = false;
  }
  message << ". This error indicates that your module has parameters that were not "
             "used in producing loss; their gradients would stay unreduced and the "
             "replicas would drift apart. Pass find_unused_parameters(true) in "
             "DistributedDataParallelOptions if they are unused on purpose, and make "
             "sure all forward outputs participate in calculating the loss.";
  throw UnusedParameterError(message.str());
}

int64_t Reducer::synchronized_backwards() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return synchronized_backwards_;
}

nn::DistributedDataParallelStats Reducer::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nn::DistributedDataParallelStats stats;
  for (const Bucket& bucket : buckets_) {
    stats.bucket_indices.push_back(bucket.params);
    int64_t bytes = 0;
    for (size_t index : bucket.params)
      bytes += static_cast<int64_t>(params_[index].nbytes());
    stats.bucket_bytes.push_back(bytes);
  }
  stats.buckets_rebuilt = rebuilt_;
  stats.grad_ready_order = ready_order_;
  stats.synchronized_backwards = synchronized_backwards_;
  stats.reduced_in_shared_memory = window_ != nullptr && !hook_;
  return stats;
}

}  // namespace tandem::distributed::detail
