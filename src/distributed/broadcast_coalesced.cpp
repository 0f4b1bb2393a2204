#include "distributed/broadcast_coalesced.h"

#include <map>

#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::distributed::detail {
namespace {

constexpr size_t kBufferBytes = size_t{250} << 20;

ScalarType wire_dtype(ScalarType dtype) {
  return dtype == kFloat32 || dtype == kFloat64 || dtype == kInt64 ? dtype : kFloat64;
}

// One flat buffer: pack, broadcast, unpack.
void broadcast_group(ProcessGroup& group,
                     const std::vector<Tensor>& tensors,
                     ScalarType wire,
                     int root) {
  int64_t numel = 0;
  for (const Tensor& t : tensors) numel += t.numel();
  Tensor flat = empty({numel}, wire);
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    flat.narrow(0, offset, t.numel()).copy_(t.reshape({t.numel()}));
    offset += t.numel();
  }
  group.broadcast(flat, BroadcastOptions().root_rank(root)).wait();
  if (group.rank() == root) return;
  offset = 0;
  for (const Tensor& t : tensors) {
    Tensor(t).copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

}  // namespace

void broadcast_coalesced(ProcessGroup& group,
                         const std::vector<Tensor>& tensors,
                         int root) {
  NoGradGuard no_grad;  // parameters are written in place
  std::map<ScalarType, std::vector<Tensor>> by_dtype;
  for (const Tensor& t : tensors) by_dtype[t.dtype()].push_back(t);
  for (const auto& [dtype, group_tensors] : by_dtype) {
    const ScalarType wire = wire_dtype(dtype);
    std::vector<Tensor> batch;
    size_t bytes = 0;
    for (const Tensor& t : group_tensors) {
      batch.push_back(t);
      bytes += t.nbytes();
      if (bytes >= kBufferBytes) {
        broadcast_group(group, batch, wire, root);
        batch.clear();
        bytes = 0;
      }
    }
    if (!batch.empty()) broadcast_group(group, batch, wire, root);
  }
}

}  // namespace tandem::distributed::detail
