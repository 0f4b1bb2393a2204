#include "distributed/host_window.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>

#include "tandem/core/error.h"
#include "tandem/ops/factory.h"

namespace tandem::distributed::detail {
namespace {

constexpr size_t kPage = 4096;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t header_bytes(size_t channels, int ranks) {
  return round_up(channels * sizeof(HostWindow::Channel) +
                      static_cast<size_t>(ranks) * sizeof(HostWindow::Bell),
                  kPage);
}

std::string segment_name(uint64_t nonce) {
  static const char* hex = "0123456789abcdef";
  std::string name = "/tandem-ddp-";
  for (int shift = 60; shift >= 0; shift -= 4) name += hex[(nonce >> shift) & 0xf];
  return name;
}

bool disabled_here() {
  const char* env = std::getenv("TANDEM_SHARED_MEMORY");
  return env != nullptr && std::strcmp(env, "0") == 0;
}

// Maps the segment `name` of `bytes` (creating it on rank 0); null when
// this rank cannot.
void* map_segment(const std::string& name, size_t bytes, bool create) {
  const int fd = create ? shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)
                        : shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return nullptr;
  bool ok = true;
  if (create) {
    // Reserves the pages now: a full /dev/shm is a "no" here, not a SIGBUS
    // at the first write into a page it could not back.
    ok = ftruncate(fd, static_cast<off_t>(bytes)) == 0 &&
         posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0;
  } else {
    struct stat st {};
    ok = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes;
  }
  void* base =
      ok ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  // A segment this rank made and cannot use goes at once (no other rank
  // will open it: rank 0 says it could not).
  if (base == MAP_FAILED && create) shm_unlink(name.c_str());
  return base == MAP_FAILED ? nullptr : base;
}

}  // namespace

std::shared_ptr<HostWindow> HostWindow::create(ProcessGroup& group,
                                               size_t region_bytes,
                                               size_t channels,
                                               bool wanted) {
  wanted = wanted && !disabled_here();
  const int ranks = group.size();
  if (ranks < 2) return nullptr;
  region_bytes = round_up(std::max<size_t>(region_bytes, 1), kPage);
  const size_t bytes =
      header_bytes(channels, ranks) + region_bytes * static_cast<size_t>(ranks);

  // Rank 0 makes the segment under a name no other job picks, and
  // broadcasts the name's nonce and whether it could.
  Tensor made = zeros({2}, kInt64);
  void* base = nullptr;
  std::string name;
  if (group.rank() == 0) {
    const uint64_t nonce = (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                           std::random_device{}() ^ static_cast<uint64_t>(getpid());
    name = segment_name(nonce);
    if (wanted) base = map_segment(name, bytes, /*create=*/true);
    // The counters and bells start at zero, before any other rank maps
    // them.
    auto* at = static_cast<std::byte*>(base);
    for (size_t c = 0; base != nullptr && c < channels; ++c) {
      new (at + c * sizeof(Channel)) Channel();
    }
    for (int r = 0; base != nullptr && r < ranks; ++r) {
      new (at + channels * sizeof(Channel) + static_cast<size_t>(r) * sizeof(Bell))
          Bell();
    }
    made.data_ptr<int64_t>()[0] = static_cast<int64_t>(nonce);
    made.data_ptr<int64_t>()[1] = base != nullptr ? 1 : 0;
  }
  group.broadcast(made).wait();
  if (group.rank() != 0 && made.data_ptr<int64_t>()[1] == 1 && wanted) {
    name = segment_name(static_cast<uint64_t>(made.data_ptr<int64_t>()[0]));
    base = map_segment(name, bytes, /*create=*/false);
  }
  // Every rank says whether it mapped it; after this nobody opens it again.
  Tensor mapped = full({1}, base != nullptr ? 1.0 : 0.0, kInt64);
  group.allreduce(mapped).wait();
  if (group.rank() == 0 && made.data_ptr<int64_t>()[1] == 1) shm_unlink(name.c_str());
  if (mapped.data_ptr<int64_t>()[0] != ranks) {
    if (base != nullptr) munmap(base, bytes);
    return nullptr;
  }
  std::shared_ptr<HostWindow> window(
      new HostWindow(group.rank(), ranks, region_bytes, channels, base, bytes));
  window->self_ = window;
  return window;
}

HostWindow::HostWindow(
    int rank, int ranks, size_t region_bytes, size_t channels, void* base, size_t bytes)
    : rank_(rank),
      ranks_(ranks),
      region_bytes_(region_bytes),
      channels_(channels),
      header_(header_bytes(channels, ranks)),
      base_(static_cast<std::byte*>(base)),
      bytes_(bytes),
      passes_(channels, 0) {}

HostWindow::~HostWindow() { munmap(base_, bytes_); }

std::byte* HostWindow::region(int r) const {
  return base_ + header_ + region_bytes_ * static_cast<size_t>(r);
}

HostWindow::Channel& HostWindow::channel(size_t c) const {
  TANDEM_INTERNAL_ASSERT(c < channels_, "host window channel ", c, " of ", channels_);
  return *std::launder(reinterpret_cast<Channel*>(base_ + c * sizeof(Channel)));
}

HostWindow::Bell& HostWindow::bell(int r) const {
  TANDEM_INTERNAL_ASSERT(r >= 0 && r < ranks_, "host window bell ", r, " of ", ranks_);
  return *std::launder(reinterpret_cast<Bell*>(base_ + channels_ * sizeof(Channel) +
                                               static_cast<size_t>(r) * sizeof(Bell)));
}

void HostWindow::ring_others() const {
  for (int r = 0; r < ranks_; ++r) {
    if (r != rank_) ring(bell(r));
  }
}

// Futexes on shared memory (not FUTEX_PRIVATE_FLAG): the sleeper and the
// ringer may be different processes.
void HostWindow::ring(Bell& bell) {
  bell.rings.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex,
          reinterpret_cast<uint32_t*>(&bell.rings),
          FUTEX_WAKE,
          INT32_MAX,
          nullptr,
          nullptr,
          0);
}

void HostWindow::wait(Bell& bell, uint32_t seen, std::chrono::microseconds timeout) {
  timespec limit{};
  limit.tv_sec = static_cast<time_t>(timeout.count() / 1000000);
  limit.tv_nsec = static_cast<long>(timeout.count() % 1000000) * 1000;
  syscall(SYS_futex,
          reinterpret_cast<uint32_t*>(&bell.rings),
          FUTEX_WAIT,
          seen,
          &limit,
          nullptr,
          0);
}

Tensor HostWindow::tensor(size_t offset, int64_t numel, ScalarType dtype, Device device) {
  const size_t bytes = static_cast<size_t>(numel) * element_size(dtype);
  TANDEM_INTERNAL_ASSERT(
      offset % element_size(dtype) == 0 && offset + bytes <= region_bytes_,
      "host window tensor at ",
      offset,
      " of ",
      bytes,
      " bytes");
  std::shared_ptr<HostWindow> keep = self_.lock();
  return from_blob(
      region(rank_) + offset,
      {numel},
      [keep](void*) {},
      TensorOptions(dtype).device(device));
}

}  // namespace tandem::distributed::detail
