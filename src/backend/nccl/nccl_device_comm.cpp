// NCCL collectives among the GPUs of this one process, for parallel/comm.cpp
// (declared in backend/nccl_device_comm.h). In the backend, below both
// users of NCCL: parallel/ (these cliques) and distributed/nccl/ (the
// process group's collectives), which share nccl_types.h.
//
// Note [NCCL cliques]
// ~~~~~~~~~~~~~~~~~~~
// Communicators. A clique is an ordered list of distinct GPUs. Its
// communicators (rank r on the r-th GPU) are made together by
// ncclCommInitAll the first time the list is used, and kept for the rest of
// the process in a map keyed by the list, as PyTorch's torch.cuda.nccl does.
//
// Launch. One thread issues a whole collective: ncclGroupStart, one NCCL
// call per GPU on that GPU's stream (cuda_context.h: every op on a GPU is
// queued there), ncclGroupEnd, which launches the kernels. On each GPU the
// collective thus runs after everything queued there before (the ops that
// made the inputs, the packing of the buffer) and before everything queued
// after (whoever reads the result), with no event and no host wait; the
// buffers' memory, freed in stream order, is not reused before it is done.
// NCCL reads and writes a GPU's buffer only from that GPU's kernel (the GPUs
// exchange data through NCCL's own buffers), so that order is all it needs.
//
// Locking. The kernels of one collective wait for one another across GPUs,
// so every GPU must see collectives in the same order: two threads
// launching at once over cliques that share GPUs could queue A before B on
// one GPU and B before A on another, and hang. Nor may a copy between two
// of the GPUs (cuda_copy.cpp) queue its waits between the kernel launches
// of one ncclGroupEnd, which could close a cycle too. So every group
// launch, ncclGroupStart to ncclGroupEnd, holds the backend's
// cross_gpu_mutex(), which such copies take as well (Note [Waits between
// GPUs] in backend/cuda/cuda_context.cpp). The map of communicators has a
// mutex of its own, held while one is found or made (ncclCommInitAll is
// slow and waits for the GPUs), never with the other held.
//
// Current device. NCCL sets the current device while it works; the caller's
// is put back afterwards, so backend::cuda::prepare()'s record of it stays
// true.
//
// Exit. Communicators are never destroyed: the map is leaked on purpose.
// At static destruction the CUDA runtime (linked statically) may be torn
// down already, and ncclCommDestroy then fails or hangs; PyTorch skips it
// in that case too. The driver frees everything when the process ends, and
// nothing of a communicator is left for a user to observe.
#include "backend/nccl_device_comm.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "backend/cuda/cuda_context.h"
#include "backend/nccl/nccl_types.h"
#include "tandem/core/error.h"

namespace tandem::backend::nccl {
namespace {

std::string gpu_list(const std::vector<int>& gpus) {
  std::string out;
  for (int gpu : gpus) out += tandem::detail::str(out.empty() ? "" : ", ", "cuda:", gpu);
  return "[" + out + "]";
}

// "<what>: <doing> failed: <NCCL's error string>: <NCCL's last error>",
// and the way around NCCL (Note [comm over NCCL] in parallel/comm.cpp).
[[noreturn]] void throw_nccl(ncclResult_t result,
                             const char* what,
                             const std::string& doing) {
  std::string message = ncclGetErrorString(result);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') message += tandem::detail::str(": ", last);
  throw Error(tandem::detail::str(what,
                                  ": ",
                                  doing,
                                  " failed: ",
                                  message,
                                  " (TANDEM_COMM_NCCL=0 uses peer copies instead)"));
}

// Puts the calling thread's current device back. See Note [NCCL cliques].
class KeepCurrentDevice {
 public:
  KeepCurrentDevice() { TANDEM_CUDA_CHECK(cudaGetDevice(&device_)); }
  ~KeepCurrentDevice() {
    if (cudaSetDevice(device_) != cudaSuccess) (void)cudaGetLastError();
  }
  KeepCurrentDevice(const KeepCurrentDevice&) = delete;
  KeepCurrentDevice& operator=(const KeepCurrentDevice&) = delete;
  KeepCurrentDevice(KeepCurrentDevice&&) = delete;
  KeepCurrentDevice& operator=(KeepCurrentDevice&&) = delete;

 private:
  int device_ = 0;
};

// The communicators of the clique `gpus`, made on first use. A map's
// entries never move, and are never erased, so the reference stays good.
const std::vector<ncclComm_t>& clique(const std::vector<int>& gpus, const char* what) {
  // Leaked on purpose, as the mutex that guards it: see Note [NCCL cliques].
  static auto* mutex = new std::mutex();
  static auto* cliques = new std::map<std::vector<int>, std::vector<ncclComm_t>>();
  const std::lock_guard<std::mutex> lock(*mutex);
  const auto it = cliques->find(gpus);
  if (it != cliques->end()) return it->second;
  std::vector<ncclComm_t> comms(gpus.size(), nullptr);
  const ncclResult_t result =
      ncclCommInitAll(comms.data(), static_cast<int>(gpus.size()), gpus.data());
  if (result != ncclSuccess) {
    throw_nccl(result, what, "making NCCL communicators for " + gpu_list(gpus));
  }
  return cliques->emplace(gpus, std::move(comms)).first->second;
}

// Issues `call(rank, comm, stream)` for every rank of the clique of the
// buffers' GPUs in one NCCL group (see Note [NCCL cliques]). `name` is the
// NCCL function, for errors.
template <typename Call>
void launch(const std::vector<Tensor>& buffers,
            const char* what,
            const char* name,
            const Call& call) {
  TANDEM_INTERNAL_ASSERT(buffers.size() >= 2, what, ": NCCL over one GPU");
  std::vector<int> gpus;
  std::vector<cudaStream_t> streams;
  for (const Tensor& buffer : buffers) {
    TANDEM_INTERNAL_ASSERT(buffer.is_cuda() && buffer.is_contiguous() &&
                               buffer.nbytes() == buffers[0].nbytes(),
                           what,
                           ": NCCL buffers must be contiguous, alike and on GPUs");
    gpus.push_back(buffer.device().index());
    streams.push_back(backend::cuda::stream_of(buffer.device()));
  }
  // Every rank has the same count: all skip alike.
  if (buffers[0].nbytes() == 0) return;
  const KeepCurrentDevice keep;
  const std::vector<ncclComm_t>& comms = clique(gpus, what);
  const std::lock_guard<std::mutex> lock(backend::cuda::cross_gpu_mutex());
  ncclResult_t result = ncclGroupStart();
  if (result != ncclSuccess) throw_nccl(result, what, "ncclGroupStart");
  size_t rank = 0;
  for (; rank < gpus.size(); ++rank) {
    if (cudaSetDevice(gpus[rank]) != cudaSuccess) {
      (void)cudaGetLastError();
      result = ncclUnhandledCudaError;
    } else {
      result = call(rank, comms[rank], streams[rank]);
    }
    if (result != ncclSuccess) break;
  }
  // Always ended, so that this thread can start another group; after a
  // failed call NCCL launches nothing of it.
  const ncclResult_t ended = ncclGroupEnd();
  if (result != ncclSuccess) {
    throw_nccl(result, what, tandem::detail::str(name, " on cuda:", gpus[rank]));
  }
  if (ended != ncclSuccess) {
    throw_nccl(ended, what, tandem::detail::str(name, " over ", gpu_list(gpus)));
  }
}

}  // namespace

bool nccl_device_comm_built() { return true; }

bool nccl_can_sum(ScalarType dtype) { return nccl_type(dtype).has_value(); }

void nccl_broadcast(const std::vector<Tensor>& buffers, size_t root, const char* what) {
  const size_t nbytes = buffers.at(root).nbytes();
  const int root_rank = static_cast<int>(root);
  launch(buffers,
         what,
         "ncclBroadcast",
         [&](size_t rank, ncclComm_t comm, cudaStream_t stream) {
           // Bytes, so any dtype; in place: the root's buffer is the source.
           void* data = buffers[rank].data_ptr();
           return ncclBroadcast(data, data, nbytes, ncclUint8, root_rank, comm, stream);
         });
}

void nccl_reduce_sum(const std::vector<Tensor>& buffers, size_t root, const char* what) {
  const std::optional<ncclDataType_t> type = nccl_type(buffers.at(root).dtype());
  TANDEM_INTERNAL_ASSERT(
      type.has_value(), what, ": NCCL cannot sum ", buffers[root].dtype());
  const auto count = static_cast<size_t>(buffers[root].numel());
  const int root_rank = static_cast<int>(root);
  launch(buffers,
         what,
         "ncclReduce",
         [&](size_t rank, ncclComm_t comm, cudaStream_t stream) {
           // In place on the root; the others only send.
           void* data = buffers[rank].data_ptr();
           return ncclReduce(data,
                             rank == root ? data : nullptr,
                             count,
                             *type,
                             ncclSum,
                             root_rank,
                             comm,
                             stream);
         });
}

}  // namespace tandem::backend::nccl
