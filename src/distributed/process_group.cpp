// ProcessGroup's public calls: check the arguments on the calling thread
// (nothing is queued, and no sequence number taken, for a rejected call),
// describe the collective, and queue it for the communication thread. On a
// GPU the call also queues its own preparation (packing, a buffer) on the
// GPU's stream and marks where the collective starts (nccl_backend.h).
#include "tandem/distributed/process_group.h"

#include <climits>
#include <cstdlib>
#include <string>
#include <utility>

#include "backend/dispatch.h"
#include "distributed/nccl_backend.h"
#include "distributed/runtime.h"
#include "distributed/state.h"
#include "tandem/core/error.h"
#include "tandem/ops/factory.h"

namespace tandem::distributed {
namespace {

using detail::CollectiveKind;
using detail::CollectiveOp;

void check_tensor(std::string_view op, std::string_view what, const Tensor& t) {
  TANDEM_CHECK(t.defined(), op, ": ", what, " is an undefined tensor");
  TANDEM_CHECK(t.is_cpu() || detail::nccl_built(),
               op,
               ": ",
               what,
               " is on ",
               t.device(),
               ", but this build of tandem has no NCCL, which collectives on CUDA "
               "tensors need (configure with -DTANDEM_CUDA=ON where NCCL is installed)");
  TANDEM_CHECK(t.dtype() == kFloat32 || t.dtype() == kFloat64 || t.dtype() == kInt64,
               op,
               ": expected ",
               what,
               " of dtype float32, float64 or int64, got ",
               t.dtype());
  TANDEM_CHECK(t.is_contiguous(),
               op,
               ": expected a contiguous ",
               what,
               ", got shape ",
               t.sizes(),
               " with strides ",
               t.strides(),
               " (call .contiguous() first)");
  TANDEM_CHECK(t.numel() <= INT_MAX,
               op,
               ": ",
               what,
               " has ",
               t.numel(),
               " elements; counts (an int, for MPI) stop at ",
               INT_MAX,
               " (split it)");
}

// A collective runs on the CPU (MPI) or on one GPU (NCCL).
void check_device(std::string_view op,
                  std::string_view what,
                  const Tensor& t,
                  std::string_view reference_name,
                  const Tensor& reference) {
  TANDEM_CHECK(t.device() == reference.device() || (t.is_cpu() && reference.is_cpu()),
               op,
               ": ",
               what,
               " is on ",
               t.device(),
               " but ",
               reference_name,
               " is on ",
               reference.device(),
               "; a collective takes CPU tensors (MPI) or tensors on one GPU (NCCL)");
}

void check_reduce_op(std::string_view op, ReduceOp reduce_op, const Tensor& t) {
  TANDEM_CHECK(reduce_op != ReduceOp::AVG || t.is_floating_point(),
               op,
               ": ReduceOp::AVG needs a floating-point tensor, got ",
               t.dtype(),
               " (use SUM and divide)");
}

void check_same(std::string_view op,
                std::string_view what,
                const Tensor& t,
                std::string_view reference_name,
                const Tensor& reference) {
  TANDEM_CHECK(t.dtype() == reference.dtype() && t.sizes() == reference.sizes(),
               op,
               ": ",
               what,
               " has shape ",
               t.sizes(),
               " and dtype ",
               t.dtype(),
               ", expected ",
               reference_name,
               "'s shape ",
               reference.sizes(),
               " and dtype ",
               reference.dtype());
}

bool overlap(const Tensor& a, const Tensor& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  const auto* pa = static_cast<const char*>(a.data_ptr());
  const auto* pb = static_cast<const char*>(b.data_ptr());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

// "12 float32 elements per rank", plus " on cuda:0" for a GPU.
std::string elements(const Tensor& t, int64_t n, std::string_view suffix = "") {
  return detail::str(n,
                     " ",
                     t.dtype(),
                     n == 1 ? " element" : " elements",
                     suffix,
                     t.is_cuda() ? detail::str(" on ", t.device()) : std::string());
}

// On a GPU, the copies are queued on its stream, before the collective.
void copy_into(const Tensor& flat, int64_t block, const std::vector<Tensor>& parts) {
  const size_t bytes = static_cast<size_t>(block) * flat.element_size();
  auto* out = static_cast<char*>(flat.data_ptr());
  for (size_t r = 0; r < parts.size(); ++r) {
    if (bytes == 0) continue;
    backend::kernels(flat.device())
        .services.copy_bytes(out + r * bytes,
                             flat.device(),
                             parts[r].data_ptr(),
                             parts[r].device(),
                             bytes,
                             /*non_blocking=*/false);
  }
}

// Queues `op`, after marking where on its GPU (if any) it starts.
Work enqueue(const std::shared_ptr<detail::GroupState>& group,
             std::unique_ptr<CollectiveOp> op,
             std::string_view name,
             std::string_view summary,
             std::optional<std::chrono::milliseconds> timeout) {
  if (op->recv.defined() && op->recv.is_cuda()) {
    op->nccl = detail::nccl_prepare(op->recv.device());
  }
  if (op->span_name.empty()) op->span_name = name;
  return detail::Runtime::instance().enqueue(
      group, std::move(op), name, summary, timeout);
}

}  // namespace

const std::shared_ptr<detail::GroupState>& detail::group_state(
    const ProcessGroup& group) {
  return group.state_;
}

ProcessGroup::ProcessGroup(std::shared_ptr<detail::GroupState> state)
    : state_(std::move(state)) {}

std::shared_ptr<ProcessGroup> ProcessGroup::world() {
  return std::make_shared<ProcessGroup>(detail::Runtime::instance().world());
}

int ProcessGroup::rank() const { return state_->rank; }
int ProcessGroup::size() const { return state_->size; }

std::chrono::milliseconds ProcessGroup::timeout() const { return state_->timeout(); }

void ProcessGroup::set_timeout(std::chrono::milliseconds timeout) {
  TANDEM_CHECK(timeout.count() > 0,
               "set_timeout: the timeout must be positive, got ",
               detail::format_duration(timeout));
  state_->set_timeout(timeout);
}

Work ProcessGroup::allreduce(const Tensor& tensor, const AllreduceOptions& options) {
  check_tensor("allreduce", "tensor", tensor);
  check_reduce_op("allreduce", options.reduce_op(), tensor);
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kAllreduce;
  op->reduce_op = options.reduce_op();
  op->dtype = tensor.dtype();
  op->count = static_cast<int>(tensor.numel());
  op->recv = tensor;
  op->span_name =
      options.label().empty() ? "allreduce" : detail::str("allreduce ", options.label());
  tensor.bump_version();
  return enqueue(state_,
                 std::move(op),
                 "allreduce",
                 detail::str(" (",
                             options.reduce_op(),
                             ", ",
                             elements(tensor, tensor.numel()),
                             options.label().empty() ? "" : ", ",
                             options.label(),
                             ")"),
                 options.timeout());
}

Work ProcessGroup::broadcast(const Tensor& tensor, const BroadcastOptions& options) {
  check_tensor("broadcast", "tensor", tensor);
  TANDEM_CHECK(options.root_rank() >= 0 && options.root_rank() < size(),
               "broadcast: root_rank ",
               options.root_rank(),
               " is out of range for a group of size ",
               size());
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kBroadcast;
  op->root = options.root_rank();
  op->dtype = tensor.dtype();
  op->count = static_cast<int>(tensor.numel());
  op->recv = tensor;
  tensor.bump_version();
  return enqueue(
      state_,
      std::move(op),
      "broadcast",
      detail::str(
          " (root ", options.root_rank(), ", ", elements(tensor, tensor.numel()), ")"),
      options.timeout());
}

Work ProcessGroup::allgather(const std::vector<Tensor>& outputs,
                             const Tensor& input,
                             const AllgatherOptions& options) {
  check_tensor("allgather", "input", input);
  TANDEM_CHECK(outputs.size() == static_cast<size_t>(size()),
               "allgather: expected ",
               size(),
               " output tensors (one per rank), got ",
               outputs.size());
  for (size_t r = 0; r < outputs.size(); ++r) {
    const std::string name = detail::str("outputs[", r, "]");
    check_tensor("allgather", name, outputs[r]);
    check_device("allgather", name, outputs[r], "input", input);
    check_same("allgather", name, outputs[r], "input", input);
  }
  TANDEM_CHECK(input.numel() * size() <= INT_MAX,
               "allgather: ",
               size(),
               " x ",
               input.numel(),
               " elements exceed the count limit (an int, for MPI) ",
               INT_MAX);
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kAllgather;
  op->dtype = input.dtype();
  op->count = static_cast<int>(input.numel());
  op->send = input;
  op->recv = tandem::empty({input.numel() * size()},
                           TensorOptions().dtype(input.dtype()).device(input.device()));
  op->unpack_to = outputs;
  for (const auto& t : outputs) t.bump_version();
  return enqueue(state_,
                 std::move(op),
                 "allgather",
                 detail::str(" (", elements(input, input.numel(), " per rank"), ")"),
                 options.timeout());
}

Work ProcessGroup::allgather_into_tensor(const Tensor& output,
                                         const Tensor& input,
                                         const AllgatherOptions& options) {
  check_tensor("allgather_into_tensor", "input", input);
  check_tensor("allgather_into_tensor", "output", output);
  check_device("allgather_into_tensor", "output", output, "input", input);
  TANDEM_CHECK(output.dtype() == input.dtype(),
               "allgather_into_tensor: output has dtype ",
               output.dtype(),
               " but input has dtype ",
               input.dtype());
  TANDEM_CHECK(output.numel() == input.numel() * size(),
               "allgather_into_tensor: output has ",
               output.numel(),
               " elements, expected size * input.numel() = ",
               size(),
               " * ",
               input.numel(),
               " = ",
               input.numel() * size());
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kAllgather;
  op->dtype = input.dtype();
  op->count = static_cast<int>(input.numel());
  op->recv = output;
  if (overlap(input, output)) {
    const auto* own = static_cast<const char*>(output.data_ptr()) +
                      static_cast<size_t>(rank()) * input.nbytes();
    TANDEM_CHECK(
        input.data_ptr() == own,
        "allgather_into_tensor: input overlaps output other than as output's slice "
        "for this rank");
  } else {
    op->send = input;  // else MPI_IN_PLACE: the input is already in place
  }
  output.bump_version();
  return enqueue(state_,
                 std::move(op),
                 "allgather",
                 detail::str(" (", elements(input, input.numel(), " per rank"), ")"),
                 options.timeout());
}

Work ProcessGroup::reduce_scatter(const Tensor& output,
                                  const std::vector<Tensor>& inputs,
                                  const ReduceScatterOptions& options) {
  check_tensor("reduce_scatter", "output", output);
  check_reduce_op("reduce_scatter", options.reduce_op(), output);
  TANDEM_CHECK(inputs.size() == static_cast<size_t>(size()),
               "reduce_scatter: expected ",
               size(),
               " input tensors (one per rank), got ",
               inputs.size());
  for (size_t r = 0; r < inputs.size(); ++r) {
    const std::string name = detail::str("inputs[", r, "]");
    check_tensor("reduce_scatter", name, inputs[r]);
    check_device("reduce_scatter", name, inputs[r], "output", output);
    check_same("reduce_scatter", name, inputs[r], "output", output);
  }
  TANDEM_CHECK(output.numel() * size() <= INT_MAX,
               "reduce_scatter: ",
               size(),
               " x ",
               output.numel(),
               " elements exceed the count limit (an int, for MPI) ",
               INT_MAX);
  // Packed now, on the calling thread: the inputs are free again at return.
  Tensor flat =
      tandem::empty({output.numel() * size()},
                    TensorOptions().dtype(output.dtype()).device(output.device()));
  copy_into(flat, output.numel(), inputs);
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kReduceScatter;
  op->reduce_op = options.reduce_op();
  op->dtype = output.dtype();
  op->count = static_cast<int>(output.numel());
  op->send = flat;
  op->recv = output;
  output.bump_version();
  return enqueue(state_,
                 std::move(op),
                 "reduce_scatter",
                 detail::str(" (",
                             options.reduce_op(),
                             ", ",
                             elements(output, output.numel(), " per rank"),
                             ")"),
                 options.timeout());
}

Work ProcessGroup::reduce_scatter_tensor(const Tensor& output,
                                         const Tensor& input,
                                         const ReduceScatterOptions& options) {
  check_tensor("reduce_scatter_tensor", "input", input);
  check_tensor("reduce_scatter_tensor", "output", output);
  check_device("reduce_scatter_tensor", "output", output, "input", input);
  check_reduce_op("reduce_scatter_tensor", options.reduce_op(), output);
  TANDEM_CHECK(output.dtype() == input.dtype(),
               "reduce_scatter_tensor: output has dtype ",
               output.dtype(),
               " but input has dtype ",
               input.dtype());
  TANDEM_CHECK(input.numel() == output.numel() * size(),
               "reduce_scatter_tensor: input has ",
               input.numel(),
               " elements, expected size * output.numel() = ",
               size(),
               " * ",
               output.numel(),
               " = ",
               output.numel() * size());
  TANDEM_CHECK(!overlap(input, output),
               "reduce_scatter_tensor: output overlaps input; use separate tensors");
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kReduceScatter;
  op->reduce_op = options.reduce_op();
  op->dtype = output.dtype();
  op->count = static_cast<int>(output.numel());
  op->send = input;
  op->recv = output;
  output.bump_version();
  return enqueue(state_,
                 std::move(op),
                 "reduce_scatter",
                 detail::str(" (",
                             options.reduce_op(),
                             ", ",
                             elements(output, output.numel(), " per rank"),
                             ")"),
                 options.timeout());
}

Work ProcessGroup::barrier(const BarrierOptions& options) {
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kBarrier;
  return enqueue(state_, std::move(op), "barrier", "", options.timeout());
}

uint64_t ProcessGroup::sequence_number() const { return state_->enqueued.load(); }

std::exception_ptr ProcessGroup::error() const { return state_->error(); }

void ProcessGroup::abort(int exit_code) { detail::Runtime::instance().abort(exit_code); }

// ---- the default group ----

std::shared_ptr<ProcessGroup> init_process_group(const ProcessGroupOptions& options) {
  return std::make_shared<ProcessGroup>(detail::Runtime::instance().init(options));
}

bool is_initialized() { return detail::Runtime::instance().is_initialized(); }

void destroy_process_group() { detail::Runtime::instance().destroy(); }

int get_rank() { return detail::Runtime::instance().world()->rank; }
int get_world_size() { return detail::Runtime::instance().world()->size; }
bool is_nccl_available() { return detail::nccl_built(); }

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

int get_local_rank() { return detail::Runtime::instance().local_rank(); }
int get_local_world_size() { return detail::Runtime::instance().local_size(); }

}  // namespace tandem::distributed
