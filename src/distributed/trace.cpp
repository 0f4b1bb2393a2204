#include "tandem/distributed/trace.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "tandem/core/error.h"
#include "tandem/ops/factory.h"

// Note [Merged traces]
// Clocks: after a barrier every rank reads its steady clock at once, up to
// the barrier's exit skew (microseconds on one machine, tens of them over
// a network); the median over kRounds barriers of (a rank's reading - rank
// 0's) is its offset. On one machine every process reads the same
// CLOCK_MONOTONIC, and the offsets come out within that skew of zero.
// Events: each rank packs its events into bytes (lengths, then fields),
// the sizes are allgathered, then the packs padded to the largest (as
// int64 words, which the collectives move); rank 0
// unpacks them all. A trace is megabytes, gathered once at the end of a
// run, so allgather's copies to every rank cost nothing that matters.

namespace tandem::distributed {
namespace {

constexpr int kRounds = 9;

class Packer {
 public:
  void number(int64_t v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof v);
  }
  void text(const std::string& s) {
    number(static_cast<int64_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

class Unpacker {
 public:
  Unpacker(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  int64_t number() {
    int64_t v = 0;
    TANDEM_INTERNAL_ASSERT(at_ + sizeof v <= size_, "trace pack ends early");
    std::memcpy(&v, data_ + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string text() {
    const auto n = static_cast<size_t>(number());
    TANDEM_INTERNAL_ASSERT(at_ + n <= size_, "trace pack ends early");
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

void pack(Packer& p, const profiler::Event& e) {
  p.text(e.name);
  p.text(e.category);
  p.text(e.device.str());
  p.number(e.start_ns);
  p.number(e.end_ns);
  p.number(static_cast<int64_t>(e.thread));
  p.text(e.thread_name);
  p.number(static_cast<int64_t>(e.args.size()));
  for (const profiler::Arg& a : e.args) {
    p.text(a.key);
    p.text(a.value);
    p.number(a.is_number ? 1 : 0);
  }
  p.number(static_cast<int64_t>(e.flow_out));
  p.number(static_cast<int64_t>(e.flows_in.size()));
  for (uint64_t f : e.flows_in) p.number(static_cast<int64_t>(f));
}

profiler::Event unpack(Unpacker& u) {
  profiler::Event e;
  e.name = u.text();
  e.category = u.text();
  e.device = Device(u.text());
  e.start_ns = u.number();
  e.end_ns = u.number();
  e.thread = static_cast<uint64_t>(u.number());
  e.thread_name = u.text();
  for (int64_t i = u.number(); i > 0; --i) {
    profiler::Arg a;
    a.key = u.text();
    a.value = u.text();
    a.is_number = u.number() != 0;
    e.args.push_back(std::move(a));
  }
  e.flow_out = static_cast<uint64_t>(u.number());
  for (int64_t i = u.number(); i > 0; --i)
    e.flows_in.push_back(static_cast<uint64_t>(u.number()));
  return e;
}

// Every rank's `mine`, rank by rank.
Tensor allgather_int64(ProcessGroup& group, const Tensor& mine) {
  Tensor all = empty({group.size() * mine.numel()}, kInt64);
  group.allgather_into_tensor(all, mine).wait();
  return all;
}

}  // namespace

std::vector<int64_t> clock_offsets(ProcessGroup& group) {
  const int ranks = group.size();
  std::vector<std::vector<int64_t>> diffs(static_cast<size_t>(ranks));
  for (int round = 0; round < kRounds; ++round) {
    group.barrier().wait();
    Tensor now = empty({1}, kInt64);
    now.data_ptr<int64_t>()[0] = profiler::now_ns();
    const Tensor all = allgather_int64(group, now);
    const int64_t* t = all.data_ptr<int64_t>();
    for (int r = 0; r < ranks; ++r) diffs[static_cast<size_t>(r)].push_back(t[r] - t[0]);
  }
  std::vector<int64_t> offsets;
  for (std::vector<int64_t>& d : diffs) {
    std::nth_element(d.begin(), d.begin() + kRounds / 2, d.end());
    offsets.push_back(d[kRounds / 2]);
  }
  return offsets;
}

std::vector<profiler::Event> gather_trace(ProcessGroup& group,
                                          const std::vector<profiler::Event>& events) {
  const std::vector<int64_t> offsets = clock_offsets(group);
  Packer packer;
  for (const profiler::Event& e : events) pack(packer, e);
  std::vector<uint8_t>& bytes = packer.bytes();
  Tensor size = empty({1}, kInt64);
  size.data_ptr<int64_t>()[0] = static_cast<int64_t>(bytes.size());
  const Tensor sizes = allgather_int64(group, size);
  const int64_t* n = sizes.data_ptr<int64_t>();
  const int64_t largest = *std::max_element(n, n + group.size());
  // In int64 words: the collectives move float and int64 tensors.
  const int64_t words = std::max<int64_t>((largest + 7) / 8, 1);
  Tensor mine = zeros({words}, kInt64);
  if (!bytes.empty()) std::memcpy(mine.data_ptr<int64_t>(), bytes.data(), bytes.size());
  const Tensor all = allgather_int64(group, mine);
  if (group.rank() != 0) return {};
  std::vector<profiler::Event> merged;
  for (int r = 0; r < group.size(); ++r) {
    Unpacker u(reinterpret_cast<const uint8_t*>(all.data_ptr<int64_t>() + r * words),
               static_cast<size_t>(n[r]));
    while (!u.done()) {
      profiler::Event e = unpack(u);
      e.rank = r;
      e.start_ns -= offsets[static_cast<size_t>(r)];
      e.end_ns -= offsets[static_cast<size_t>(r)];
      merged.push_back(std::move(e));
    }
  }
  return merged;
}

}  // namespace tandem::distributed
