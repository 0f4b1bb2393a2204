#include "tandem/distributed/join.h"

#include <string>

#include "distributed/broadcast_coalesced.h"
#include "distributed/reducer.h"
#include "tandem/core/error.h"
#include "tandem/core/warning.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::nn {
namespace {

// Note [Join protocol]
// ~~~~~~~~~~~~~~~~~~~~
// Inside a Join, every forward with grad mode on starts with one blocking
// allreduce (SUM) of a header [active, synchronizes, joined]: an active rank
// sends [1, 1 unless in no_sync(), 0], a rank in finish() sends [0, 0, 1].
// Then both kinds of rank make the same collectives, the joined one with
// nothing of its own: the one-time bucket rebuild (rank 0's plan), the
// buffer broadcast (from rank 0, active or not; PyTorch picks the highest
// active rank), and, when the forward synchronizes, every bucket in order,
// zeros from the joined rank, whose usage flags are zeros too: a
// parameter counts as used when every *active* rank used it. A header with
// no active rank ends the shadowing; every rank then agrees on the
// authoritative rank, the highest of those that found nobody active when
// they entered finish(), and takes its parameters and buffers.
struct Header {
  int64_t active = 0;
  int64_t synchronizing = 0;
  int64_t joined = 0;
};

Header exchange(distributed::ProcessGroup& group, const Header& mine) {
  Tensor t = empty({3}, kInt64);
  int64_t* p = t.data_ptr<int64_t>();
  p[0] = mine.active;
  p[1] = mine.synchronizing;
  p[2] = mine.joined;
  group.allreduce(t).wait();
  return {p[0], p[1], p[2]};
}

constexpr int64_t kSkewWarning = 1000;

}  // namespace

void DistributedDataParallelImpl::join_active_forward() {
  const Header all = exchange(*group_, {1, require_backward_grad_sync_ ? 1 : 0, 0});
  if (all.joined > 0 && join_mode_->throw_on_early_termination) {
    throw Error(
        "Detected at least one rank that exhausted inputs. Throwing across all ranks.");
  }
  TANDEM_CHECK(all.synchronizing == 0 || all.synchronizing == all.active,
               "Join: ",
               all.synchronizing,
               " of the ",
               all.active,
               " active ranks synchronize this forward's gradients; no_sync() must be "
               "used on every rank alike");
  reducer_->set_divisors(
      join_mode_->divide_by_initial_world_size ? group_->size() : all.active, all.active);
}

bool DistributedDataParallelImpl::join_shadow_iteration() {
  const Header all = exchange(*group_, {0, 0, 1});
  if (all.active == 0) return false;
  reducer_->set_divisors(
      join_mode_->divide_by_initial_world_size ? group_->size() : all.active, all.active);
  reducer_->prepare_for_forward();
  if (require_forward_param_sync_ && options_.broadcast_buffers()) broadcast_buffers();
  if (all.synchronizing > 0) reducer_->shadow_backward();
  require_forward_param_sync_ = all.synchronizing > 0;
  return true;
}

Join::Join(DistributedDataParallelImpl& ddp, JoinOptions options) : ddp_(ddp) {
  TANDEM_CHECK(!ddp_.join_mode_,
               "Join: this DistributedDataParallel is in a Join already");
  TANDEM_CHECK(!ddp_.options_.invariant(),
               "Join: DistributedDataParallel in invariant mode sums a tree over every "
               "rank's micro-batches, which a joined rank cannot hold; give every rank "
               "its part of every batch (DataLoaderOptions::shard_cut) instead");
  ddp_.join_mode_ = DistributedDataParallelImpl::JoinMode{
      options.divide_by_initial_world_size(), options.throw_on_early_termination()};
}

Join::~Join() {
  if (finished_) return;
  ddp_.join_mode_.reset();
  ddp_.reducer_->set_divisors(ddp_.group_->size(), ddp_.group_->size());
}

void Join::finish() {
  TANDEM_CHECK(!finished_, "Join: finish() was called already");
  finished_ = true;
  auto& group = *ddp_.group_;
  const bool throw_early = ddp_.join_mode_->throw_on_early_termination;
  // Whatever happens below, the Join is over when finish() returns.
  struct Leave {
    DistributedDataParallelImpl& ddp;
    ~Leave() {
      ddp.join_mode_.reset();
      ddp.reducer_->set_divisors(ddp.group_->size(), ddp.group_->size());
    }
  } leave{ddp_};

  NoGradGuard no_grad;
  bool last_to_join = false;
  if (throw_early) {
    const Header all = exchange(group, {0, 0, 1});
    if (all.active > 0) {
      throw Error("Rank " + std::to_string(group.rank()) + " exhausted all inputs.");
    }
    last_to_join = true;
  } else {
    for (bool first = true;; first = false) {
      const bool others_active = ddp_.join_shadow_iteration();
      if (first) last_to_join = !others_active;
      if (!others_active) break;
      if (++shadowed_ == kSkewWarning) {
        warn("Detected uneven input skew of greater than " +
             std::to_string(kSkewWarning) + ". This means that rank " +
             std::to_string(group.rank()) + " has at least " +
             std::to_string(kSkewWarning) +
             " fewer inputs than other currently-active ranks. This level of skew could "
             "lead to performance degradation during training.");
      }
    }
  }
  Tensor candidate =
      full({1}, static_cast<int64_t>(last_to_join ? group.rank() : -1), kInt64);
  group
      .allreduce(candidate,
                 distributed::AllreduceOptions().reduce_op(distributed::ReduceOp::MAX))
      .wait();
  authoritative_rank_ = static_cast<int>(candidate.item<int64_t>());
  std::vector<Tensor> state = ddp_.module_->parameters();
  if (ddp_.options_.broadcast_buffers()) {
    for (const Tensor& b : ddp_.module_->buffers()) state.push_back(b);
  }
  distributed::detail::broadcast_coalesced(group, state, authoritative_rank_);
}

}  // namespace tandem::nn
