// nn::Join: DistributedDataParallel with uneven inputs, as PyTorch's
// ddp.join() context. Without it, a rank that runs out of batches stops
// calling the collectives the others wait in, and the job fails at the
// deadline. Inside a Join every training forward first counts the ranks
// still active (one small allreduce); a rank that has finished calls
// finish(), which stands in for it in the others' remaining iterations
// (reducing zeros in their buckets, so their averages are unchanged),
// until every rank has called finish(); then the parameters and buffers of
// the last rank to finish (the highest, if several) go to every rank, so
// the replicas end equal.
//
//   nn::Join join(*ddp);                       // every rank
//   for (auto& batch : my_batches) {           // counts may differ by rank
//     opt.zero_grad();
//     loss_of(ddp(batch)).backward();
//     opt.step();
//   }
//   join.finish();                             // every rank, once
//
// Gradients are averaged over the world size (divide_by_initial_world_size,
// the default, as PyTorch) or over the ranks still active. With
// throw_on_early_termination, the first rank to finish raises "Rank r
// exhausted all inputs." from finish() and the others raise "Detected at
// least one rank that exhausted inputs. Throwing across all ranks." from
// their next forward, after the same number of iterations.
//
// Only DistributedDataParallel's collectives are shadowed: inside a Join,
// a rank must make no other collective (its own allreduces, evaluation
// forwards of a module with buffers in training mode). Forwards without
// grad mode communicate nothing inside a Join. A joined rank's .grads are
// not meaningful. A Join destroyed without finish() (an exception left the
// loop) shadows nothing: the other ranks then fail at their deadline.
#pragma once

#include "tandem/distributed/distributed_data_parallel.h"

namespace tandem::nn {

class JoinOptions {
 public:
  /// Average gradients over the world size (true, PyTorch's default) or
  /// over the ranks still active in the iteration (false).
  JoinOptions& divide_by_initial_world_size(bool value) {
    divide_by_initial_world_size_ = value;
    return *this;
  }
  /// Raise on every rank as soon as one rank has finished.
  JoinOptions& throw_on_early_termination(bool value) {
    throw_on_early_termination_ = value;
    return *this;
  }
  bool divide_by_initial_world_size() const { return divide_by_initial_world_size_; }
  bool throw_on_early_termination() const { return throw_on_early_termination_; }

 private:
  bool divide_by_initial_world_size_ = true;
  bool throw_on_early_termination_ = false;
};

class Join {
 public:
  /// Every rank constructs it, before its loop (no collective).
  explicit Join(DistributedDataParallelImpl& ddp, JoinOptions options = {});
  explicit Join(DistributedDataParallel& ddp, JoinOptions options = {})
      : Join(*ddp, options) {}
  ~Join();
  Join(const Join&) = delete;
  Join& operator=(const Join&) = delete;

  /// After this rank's last iteration: shadows the other ranks' remaining
  /// iterations, then makes every replica equal to the authoritative one.
  /// Every rank calls it once.
  void finish();
  /// The rank whose state every rank took (after finish()).
  int authoritative_rank() const { return authoritative_rank_; }
  /// Iterations this rank shadowed in finish().
  int64_t shadowed_iterations() const { return shadowed_; }

 private:
  DistributedDataParallelImpl& ddp_;
  bool finished_ = false;
  int authoritative_rank_ = -1;
  int64_t shadowed_ = 0;
};

}  // namespace tandem::nn
