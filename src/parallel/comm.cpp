#include "tandem/parallel/comm.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "backend/nccl_device_comm.h"
#include "core/memory_ownership.h"
#include "parallel/parallel_utils.h"
#include "tandem/core/executor.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"
#include "tandem/parallel/gradient_tree.h"
#include "tandem/parallel/replicate.h"

namespace tandem::parallel {
namespace {

// Note [Coalesced buffers]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A bucket of tensors lives in one buffer per device, but each tensor handed
// out is a piece with its own storage object over that buffer (which the
// piece keeps alive). Version counters belong to storage objects, so an
// in-place change of one piece (a replica updating a buffer in forward)
// does not look like a change of its neighbours to autograd, which saved
// them for backward.

// Positions of `tensors` grouped into buckets of one dtype and at most
// `limit` bytes each, in input order.
std::vector<std::vector<size_t>> make_buckets(const std::vector<Tensor>& tensors,
                                              size_t limit) {
  std::vector<std::vector<size_t>> buckets;
  std::map<ScalarType, std::pair<size_t, size_t>> open;  // bucket index, bytes
  for (size_t i = 0; i < tensors.size(); ++i) {
    const size_t nbytes = tensors[i].nbytes();
    auto it = open.find(tensors[i].dtype());
    if (it == open.end() || it->second.second + nbytes > limit) {
      buckets.emplace_back();
      it = open.insert_or_assign(tensors[i].dtype(),
                                 std::pair<size_t, size_t>(buckets.size() - 1, 0))
               .first;
    }
    buckets[it->second.first].push_back(i);
    it->second.second += nbytes;
  }
  return buckets;
}

// One bucket's buffer on one device, and the pieces handed out over it.
struct Coalesced {
  Tensor flat;                 // the buffer: one dimension, the bucket's dtype
  std::vector<Tensor> pieces;  // one per tensor of the bucket, shaped like it
};

// One buffer on `device` for the tensors of `bucket`, handed out as one
// contiguous piece per tensor, shaped like it. See Note [Coalesced buffers].
Coalesced allocate_pieces(const std::vector<Tensor>& like,
                          const std::vector<size_t>& bucket,
                          Device device) {
  const ScalarType dtype = like[bucket.front()].dtype();
  const TensorOptions options = TensorOptions(dtype).device(device);
  int64_t total = 0;
  for (size_t i : bucket) total += like[i].numel();
  const Tensor buffer = empty({total}, options);
  char* base = static_cast<char*>(buffer.data_ptr());
  std::vector<Tensor> pieces;
  pieces.reserve(bucket.size());
  int64_t offset = 0;
  for (size_t i : bucket) {
    void* data = base == nullptr ? nullptr : base + offset * element_size(dtype);
    pieces.push_back(from_blob(
        data, like[i].sizes(), [buffer](void*) {}, options));
    offset += like[i].numel();
  }
  return {buffer, std::move(pieces)};
}

// Note [Blocked sums]
// ~~~~~~~~~~~~~~~~~~~
// Summing n tensors into a piece as copy_ then add_ over whole tensors
// streams the piece through memory n times. Doing it block by block keeps
// each block of the piece in cache across the n passes. The blocks of all
// the sums of one call are spread over the threads that take part: the
// calling device's share of the cores (parallel_for) and, for a reduction
// over logical CPU devices, the executors of the devices the inputs come
// from, which are idle when it runs at the end of backward (see Note [Work
// shared with other devices] in executor.cpp). A block goes to one thread,
// so the sum of each element is still s0 + s1 + ... in order, whoever
// computes it.
constexpr int64_t kBlock = 1 << 15;

// Sums out = sources[0] + sources[1] + ..., left to right or (given each
// source's span of leaves) in the pairwise tree of
// detail::sum_subtrees_in_pairwise_tree, collected and then run together,
// block by block.
class BlockedSums {
 public:
  // `out` is contiguous and either fresh or sources[0] itself (then only
  // the others are added); one fresh source makes a copy.
  void add(const Tensor& out,
           const std::vector<Tensor>& sources,
           std::vector<TreeNode> tree_spans = {}) {
    Sum sum;
    sum.spans = std::move(tree_spans);
    sum.out_is_first = sum.spans.empty() && sources[0].unsafe_impl() == out.unsafe_impl();
    sum.out = out.view({-1});
    for (const Tensor& s : sources) {
      sum.sources.push_back(detail::readable_on(s, out.device()).detach().reshape({-1}));
    }
    // On a GPU each op is one kernel over the whole tensor: blocks would
    // only add launches.
    const int64_t n = sum.out.numel();
    const int64_t block = out.is_cuda() ? std::max<int64_t>(n, 1) : kBlock;
    for (int64_t start = 0; start < n; start += block) {
      blocks_.push_back({sums_.size(), start, std::min(block, n - start)});
    }
    on_gpu_ = on_gpu_ || out.is_cuda();
    sums_.push_back(std::move(sum));
  }

  // Runs every sum, with the executors of `helpers` taking blocks too.
  void run(const std::vector<Device>& helpers) const {
    const auto run_blocks = [this](int64_t begin, int64_t end) {
      NoGradGuard no_grad;
      for (int64_t b = begin; b < end; ++b) run_block(blocks_[static_cast<size_t>(b)]);
    };
    const auto count = static_cast<int64_t>(blocks_.size());
    // GPU kernels are queued from the device's own thread, in order.
    if (on_gpu_) return run_blocks(0, count);
    parallel_for_on_devices(0, count, helpers, run_blocks);
  }

 private:
  struct Sum {
    Tensor out;                   // flat
    std::vector<Tensor> sources;  // flat, readable on out's device
    bool out_is_first = false;
    std::vector<TreeNode> spans;  // each source's leaves in the tree; none: in order
  };
  struct Block {
    size_t sum;
    int64_t start;
    int64_t length;
  };

  void run_block(const Block& b) const {
    const Sum& sum = sums_[b.sum];
    Tensor out = sum.out.narrow(0, b.start, b.length);
    if (!sum.spans.empty())
      return tree_block(sum, b, sum.spans.front().lo, sum.spans.back().hi, out);
    if (!sum.out_is_first) out.copy_(sum.sources[0].narrow(0, b.start, b.length));
    for (size_t j = 1; j < sum.sources.size(); ++j) {
      out.add_(sum.sources[j].narrow(0, b.start, b.length));
    }
  }

  // out = the tree's sum of leaves [lo, hi) over block b, from the sources
  // whose spans make them up.
  void tree_block(
      const Sum& sum, const Block& b, int64_t lo, int64_t hi, Tensor& out) const {
    const auto source = [&](int64_t first, int64_t end) -> const Tensor* {
      for (size_t j = 0; j < sum.spans.size(); ++j) {
        if (sum.spans[j] == TreeNode{first, end}) return &sum.sources[j];
      }
      return nullptr;
    };
    if (const Tensor* whole = source(lo, hi)) {
      const Tensor part = whole->narrow(0, b.start, b.length);
      // The leftmost source may be the output itself (it is summed in place).
      if (part.data_ptr() != out.data_ptr()) out.copy_(part);
      return;
    }
    const int64_t mid = tree_split(lo, hi);
    tree_block(sum, b, lo, mid, out);
    if (const Tensor* right = source(mid, hi)) {
      out.add_(right->narrow(0, b.start, b.length));
      return;
    }
    Tensor right = empty_like(out);
    tree_block(sum, b, mid, hi, right);
    out.add_(right);
  }

  std::vector<Sum> sums_;
  std::vector<Block> blocks_;
  bool on_gpu_ = false;
};

// Writes sources[0] + sources[1] + ... into `out` (see BlockedSums::add)
// with the calling device's share of the cores.
void sum_into(const Tensor& out, const std::vector<Tensor>& sources) {
  BlockedSums sums;
  sums.add(out, sources);
  sums.run({});
}

// Note [comm over NCCL]
// ~~~~~~~~~~~~~~~~~~~~~
// When the build has NCCL and a call's devices are at least two distinct
// GPUs, each bucket travels in one NCCL collective over them, as in
// torch.cuda.comm, wherever that gives the same values as the peer copies
// (below). broadcast_coalesced packs the bucket into one buffer on the
// source and ncclBroadcasts it into one buffer per other GPU, whose pieces
// are the copies (no unpacking). reduce_add_coalesced packs each input's
// tensors of the bucket into one buffer on its GPU, the destination's
// being the result's own, and ncclReduces (ncclSum) them into it, whose
// pieces are the sums. The GPUs' order in the call (`devices`, or the
// inputs' order) gives the ranks, so [cuda:0, cuda:1] and [cuda:1, cuda:0]
// are two cliques (see Note [NCCL cliques] in
// backend/nccl/nccl_device_comm.cpp for communicators and streams).
//
// Values. comm.h promises sums in replica order, ((g0 + g1) + g2) + ...,
// bit for bit, which makes a data-parallel run reproducible (spec: data
// parallelism, "Deterministic reduction"). A broadcast moves bytes, so it
// is exact on either path. NCCL sums in its own order (a ring or a tree
// over the GPUs, chunk by chunk), so a reduction goes through it only where
// every order gives the same bits: over exactly two GPUs (one addition per
// element, and a + b == b + a) or for an integer dtype (exact sums,
// wrapping alike). A floating-point bucket over three or more GPUs takes
// the peer copies and ordered adds, unlike PyTorch, whose NCCL sum may
// differ there in the last bits.
//
// Otherwise too the peer copies and add kernels above do the work: a CPU
// device in the call, one GPU only (nothing to communicate), the same GPU
// twice (NCCL puts one rank on a GPU), a source or destination that is not
// one of the GPUs, an input list spread over several devices, a bucket
// whose dtype NCCL cannot sum (bool; a broadcast takes any dtype), a build
// without NCCL, or TANDEM_COMM_NCCL=0 in the environment (read at every
// call; for debugging and for comparing the two paths). The sums that the
// consuming reduction (BroadcastBackward) leaves to NCCL go to fresh
// buffers, never into replica 0's gradients; the others are added into
// them where they may be.

bool nccl_wanted() {
  if (!backend::nccl::nccl_device_comm_built()) return false;
  const char* setting = std::getenv("TANDEM_COMM_NCCL");
  return setting == nullptr || std::string_view(setting) != "0";
}

// The position of `root` in `devices` when a call over `devices` goes
// through NCCL (see Note [comm over NCCL]): at least two distinct GPUs,
// `root` among them.
std::optional<size_t> nccl_root(const std::vector<Device>& devices, Device root) {
  if (devices.size() < 2 || !nccl_wanted()) return std::nullopt;
  std::optional<size_t> found;
  for (size_t j = 0; j < devices.size(); ++j) {
    if (!devices[j].is_cuda()) return std::nullopt;
    if (std::find(devices.begin(), devices.begin() + j, devices[j]) !=
        devices.begin() + j) {
      return std::nullopt;
    }
    if (devices[j] == root) found = j;
  }
  return found;
}

// Whether a reduction of `dtype` over `ranks` GPUs goes through NCCL, given
// that its devices allow it: where NCCL can sum `dtype` and its sum is the
// replica-order one bit for bit (see Note [comm over NCCL]).
bool nccl_sums_in_order(ScalarType dtype, size_t ranks) {
  return backend::nccl::nccl_can_sum(dtype) && (ranks == 2 || !is_floating_point(dtype));
}

}  // namespace

std::vector<std::vector<Tensor>> broadcast_coalesced(const std::vector<Tensor>& tensors,
                                                     const std::vector<Device>& devices,
                                                     size_t buffer_size) {
  TANDEM_CHECK(!devices.empty(), "broadcast_coalesced: expected at least one device");
  for (size_t i = 0; i < tensors.size(); ++i) {
    TANDEM_CHECK(
        tensors[i].defined(), "broadcast_coalesced: tensor ", i, " is undefined");
    TANDEM_CHECK(tensors[i].device() == tensors[0].device(),
                 "broadcast_coalesced: all tensors must be on one device, but tensor 0 "
                 "is on ",
                 tensors[0].device(),
                 " and tensor ",
                 i,
                 " on ",
                 tensors[i].device());
  }
  std::vector<std::vector<Tensor>> result(devices.size());
  if (tensors.empty()) return result;
  const Device source = tensors[0].device();
  // result[0] is `tensors` themselves (comm.h).
  const bool inputs_first = devices[0] == source;
  const std::optional<size_t> root = nccl_root(devices, source);
  NoGradGuard no_grad;
  for (auto& copies : result) copies.resize(tensors.size());
  if (inputs_first) result[0] = tensors;
  for (const auto& bucket : make_buckets(tensors, buffer_size)) {
    std::vector<Tensor> buffers;  // one per device, for NCCL
    for (size_t j = 0; j < devices.size(); ++j) {
      const bool is_input = j == 0 && inputs_first;
      // With NCCL, the source still needs the bucket packed into one buffer.
      if (is_input && !root) continue;
      Coalesced copy = allocate_pieces(tensors, bucket, devices[j]);
      if (!root || j == *root) {
        for (size_t k = 0; k < bucket.size(); ++k) {
          sum_into(copy.pieces[k], {tensors[bucket[k]]});
        }
      }
      if (!is_input) {
        for (size_t k = 0; k < bucket.size(); ++k) {
          result[j][bucket[k]] = std::move(copy.pieces[k]);
        }
      }
      if (root) buffers.push_back(std::move(copy.flat));
    }
    if (root) backend::nccl::nccl_broadcast(buffers, *root, "broadcast_coalesced");
  }
  return result;
}

namespace {

void check_reduce_inputs(const std::vector<std::vector<Tensor>>& inputs) {
  TANDEM_CHECK(!inputs.empty(),
               "reduce_add_coalesced: expected tensors from at least one device");
  const std::vector<Tensor>& first = inputs[0];
  for (size_t j = 0; j < inputs.size(); ++j) {
    TANDEM_CHECK(inputs[j].size() == first.size(),
                 "reduce_add_coalesced: input ",
                 j,
                 " has ",
                 inputs[j].size(),
                 " tensors, but input 0 has ",
                 first.size());
    for (size_t i = 0; i < first.size(); ++i) {
      const Tensor& t = inputs[j][i];
      TANDEM_CHECK(t.defined() && first[i].defined(),
                   "reduce_add_coalesced: tensor ",
                   i,
                   " of input ",
                   j,
                   " is undefined");
      TANDEM_CHECK(t.sizes() == first[i].sizes() && t.dtype() == first[i].dtype(),
                   "reduce_add_coalesced: input ",
                   j,
                   " has invalid size: got ",
                   t.sizes(),
                   " (",
                   t.dtype(),
                   "), but expected ",
                   first[i].sizes(),
                   " (",
                   first[i].dtype(),
                   ") for tensor ",
                   i);
    }
  }
}

// The position of `destination` among the inputs' devices when a reduction
// goes through NCCL (see Note [comm over NCCL]); each input must be on one
// device.
std::optional<size_t> nccl_reduce_root(const std::vector<std::vector<Tensor>>& inputs,
                                       Device destination) {
  std::vector<Device> devices;
  for (const auto& input : inputs) {
    if (input.empty()) return std::nullopt;
    for (const Tensor& t : input) {
      if (t.device() != input[0].device()) return std::nullopt;
    }
    devices.push_back(input[0].device());
  }
  return nccl_root(devices, destination);
}

// Sums tensors `which[bucket[..]]` of the inputs into `sum` (on inputs[root]'s
// device) through NCCL: each input's tensors packed into one buffer on its
// GPU, `sum` being the root's.
void nccl_reduce_bucket(const std::vector<std::vector<Tensor>>& inputs,
                        const std::vector<size_t>& which,
                        const std::vector<Tensor>& like,
                        const std::vector<size_t>& bucket,
                        size_t root,
                        const Coalesced& sum) {
  std::vector<Tensor> buffers;
  for (size_t j = 0; j < inputs.size(); ++j) {
    const Coalesced packed =
        j == root ? sum : allocate_pieces(like, bucket, inputs[j][0].device());
    for (size_t k = 0; k < bucket.size(); ++k) {
      sum_into(packed.pieces[k], {inputs[j][which[bucket[k]]]});
    }
    buffers.push_back(packed.flat);
  }
  backend::nccl::nccl_reduce_sum(buffers, root, "reduce_add_coalesced");
}

// Sums tensors `which` of the inputs into fresh coalesced pieces on
// `destination`, stored at result[which[..]]: through NCCL when `root` is
// set (the destination's position among the inputs) and
// nccl_sums_in_order, else added to `sums`.
void reduce_into_fresh(const std::vector<std::vector<Tensor>>& inputs,
                       const std::vector<size_t>& which,
                       Device destination,
                       std::optional<size_t> root,
                       size_t buffer_size,
                       std::vector<Tensor>& result,
                       BlockedSums& sums) {
  std::vector<Tensor> like;
  for (size_t i : which) like.push_back(inputs[0][i]);
  for (const auto& bucket : make_buckets(like, buffer_size)) {
    Coalesced sum = allocate_pieces(like, bucket, destination);
    if (root && nccl_sums_in_order(sum.flat.dtype(), inputs.size())) {
      nccl_reduce_bucket(inputs, which, like, bucket, *root, sum);
    } else {
      for (size_t k = 0; k < bucket.size(); ++k) {
        std::vector<Tensor> replicas;  // summed in replica order: ((g0 + g1) + g2) + ...
        for (const auto& input : inputs) replicas.push_back(input[which[bucket[k]]]);
        sums.add(sum.pieces[k], replicas);
      }
    }
    for (size_t k = 0; k < bucket.size(); ++k) {
      result[which[bucket[k]]] = std::move(sum.pieces[k]);
    }
  }
}

// The devices whose executors share a reduction onto `destination`: the
// logical CPU devices it sums from (their cores are the ones that made the
// inputs), the destination first.
std::vector<Device> reduction_helpers(const std::vector<std::vector<Tensor>>& inputs,
                                      Device destination) {
  if (!destination.is_cpu()) return {};
  std::vector<Device> devices = {destination};
  for (const auto& input : inputs) {
    for (const Tensor& t : input) {
      if (t.is_cpu() &&
          std::find(devices.begin(), devices.end(), t.device()) == devices.end()) {
        devices.push_back(t.device());
      }
    }
  }
  return devices;
}

}  // namespace

std::vector<Tensor> reduce_add_coalesced(const std::vector<std::vector<Tensor>>& inputs,
                                         Device destination,
                                         size_t buffer_size) {
  check_reduce_inputs(inputs);
  std::vector<size_t> all(inputs[0].size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<Tensor> result(all.size());
  NoGradGuard no_grad;
  BlockedSums sums;
  reduce_into_fresh(inputs,
                    all,
                    destination,
                    nccl_reduce_root(inputs, destination),
                    buffer_size,
                    result,
                    sums);
  sums.run(reduction_helpers(inputs, destination));
  return result;
}

namespace detail {

std::vector<Tensor> sum_in_pairwise_tree(std::vector<std::vector<Tensor>>&& inputs,
                                         Device destination) {
  std::vector<TreeNode> leaves;
  for (size_t j = 0; j < inputs.size(); ++j) {
    leaves.push_back({static_cast<int64_t>(j), static_cast<int64_t>(j) + 1});
  }
  return sum_subtrees_in_pairwise_tree(std::move(inputs), leaves, destination);
}

std::vector<Tensor> sum_subtrees_in_pairwise_tree(
    std::vector<std::vector<Tensor>>&& inputs,
    const std::vector<TreeNode>& subtrees,
    Device destination) {
  check_reduce_inputs(inputs);
  TANDEM_INTERNAL_ASSERT(subtrees.size() == inputs.size(),
                         "sum_subtrees_in_pairwise_tree: ",
                         subtrees.size(),
                         " subtrees for ",
                         inputs.size(),
                         " replicas");
  std::vector<Tensor> result;
  if (GradMode::is_enabled()) {
    // create_graph: recorded copies and adds, so the sum can be
    // differentiated again; the same tree, the same values.
    for (size_t i = 0; i < inputs[0].size(); ++i) {
      const std::function<Tensor(int64_t, int64_t)> sum = [&](int64_t lo, int64_t hi) {
        for (size_t j = 0; j < subtrees.size(); ++j) {
          if (subtrees[j] == TreeNode{lo, hi}) return inputs[j][i].to(destination);
        }
        const int64_t mid = tree_split(lo, hi);
        return sum(lo, mid) + sum(mid, hi);
      };
      result.push_back(sum(subtrees.front().lo, subtrees.back().hi));
    }
    return result;
  }
  {
    BlockedSums sums;
    for (size_t i = 0; i < inputs[0].size(); ++i) {
      // The sum goes into the leftmost replica's gradient when nothing else
      // reaches its memory and it is on the destination, whole.
      const Tensor& first = inputs[0][i];
      const bool in_place = first.device() == destination && first.is_contiguous() &&
                            tandem::detail::holds_memory_alone(first);
      result.push_back(
          in_place
              ? first
              : empty(first.sizes(), TensorOptions(first.dtype()).device(destination)));
      std::vector<Tensor> replicas;
      for (const auto& input : inputs) replicas.push_back(input[i]);
      sums.add(result.back(), replicas, subtrees);
    }
    sums.run(reduction_helpers(inputs, destination));
  }
  return result;
}

std::vector<Tensor> reduce_add_consuming(std::vector<std::vector<Tensor>>&& inputs,
                                         Device destination) {
  check_reduce_inputs(inputs);
  std::vector<Tensor> result(inputs[0].size());
  std::vector<size_t> in_place;
  const std::optional<size_t> root = nccl_reduce_root(inputs, destination);
  NoGradGuard no_grad;
  {
    // Dropped before returning: its views of the results would otherwise
    // keep AccumulateGrad from taking them as they are.
    BlockedSums sums;
    std::vector<size_t> fresh;
    for (size_t i = 0; i < result.size(); ++i) {
      // The sum goes into replica 0's tensor when it is on the destination
      // and nothing else reaches its memory; NCCL sums into fresh buffers
      // (see Note [comm over NCCL]).
      const Tensor& first = inputs[0][i];
      if (first.device() != destination || !tandem::detail::holds_memory_alone(first) ||
          (root && nccl_sums_in_order(first.dtype(), inputs.size()))) {
        fresh.push_back(i);
        continue;
      }
      std::vector<Tensor> replicas;  // ((g0 + g1) + g2) + ..., as reduce_add_coalesced
      for (const auto& input : inputs) replicas.push_back(input[i]);
      sums.add(first, replicas);
      in_place.push_back(i);
    }
    reduce_into_fresh(inputs, fresh, destination, root, kDefaultBufferSize, result, sums);
    sums.run(reduction_helpers(inputs, destination));
  }
  for (size_t i : in_place) result[i] = std::move(inputs[0][i]);
  return result;
}

}  // namespace detail

}  // namespace tandem::parallel
