// The NCCL side in a build without it (no CUDA backend, or no NCCL found):
// ProcessGroup refuses CUDA tensors on the calling thread (nccl_built() is
// false), so no collective ever reaches the rest.
#include "distributed/nccl_backend.h"
#include "tandem/core/error.h"

namespace tandem::distributed::detail {

struct NcclOp {};

void NcclOpDeleter::operator()(NcclOp* op) const { delete op; }

bool nccl_built() { return false; }

NcclOpPtr nccl_prepare(Device device) {
  TANDEM_INTERNAL_ASSERT(false, "no NCCL in this build, yet a collective on ", device);
  return nullptr;
}

struct NcclComms::Impl {};

NcclComms::NcclComms(const GroupState&) {}

NcclComms::~NcclComms() = default;

NcclComms::State NcclComms::state(int) const { return State::kNone; }

std::string NcclComms::begin(int, MPI_Request*) {
  TANDEM_INTERNAL_ASSERT(false, "no NCCL in this build");
  return "";
}

std::string NcclComms::create(int) {
  TANDEM_INTERNAL_ASSERT(false, "no NCCL in this build");
  return "";
}

std::string NcclComms::launch(CollectiveOp&) {
  TANDEM_INTERNAL_ASSERT(false, "no NCCL in this build");
  return "";
}

NcclComms::Poll NcclComms::poll(const CollectiveOp&) const {
  TANDEM_INTERNAL_ASSERT(false, "no NCCL in this build");
  return {};
}

std::string NcclComms::async_error() const { return ""; }

void NcclComms::abort() {}

void NcclComms::destroy() {}

}  // namespace tandem::distributed::detail
