#include "distributed/collective_check.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <vector>

#include "tandem/core/error.h"

namespace tandem::distributed::detail {
namespace {

// Note [Checking collectives]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// MPI matches collectives by their order alone. When the ranks' programs
// disagree (rank 0 reduces bucket 3 while rank 1 broadcasts, or the
// buckets differ in size), MPI reports at best a truncation and at worst
// sums unrelated buffers. With TANDEM_DISTRIBUTED_DEBUG=detail, each
// collective is preceded by an allgather of its signature on a
// communicator of its own (so the checks keep one order among themselves
// whatever the collectives do), and runs only once every rank has called
// the same thing. The checks are serialized: collective k+1's check starts
// once collective k has been started, so the collectives still start in
// the order the application called them. That costs one small allgather's
// latency per collective, hence off by default (as PyTorch's DETAIL level).
// A rank that never calls the collective leaves the check waiting, which
// the collective's deadline and the status query then explain as usual.

constexpr size_t kWords = 6;  // kind, reduce op, root, dtype, count, on a GPU

std::array<int64_t, kWords> signature(const CollectiveOp& op) {
  const bool reduces =
      op.kind == CollectiveKind::kAllreduce || op.kind == CollectiveKind::kReduceScatter;
  return {static_cast<int64_t>(op.kind),
          reduces ? static_cast<int64_t>(op.reduce_op) : -1,
          op.kind == CollectiveKind::kBroadcast ? op.root : -1,
          static_cast<int64_t>(op.dtype),
          op.count,
          op.nccl ? 1 : 0};
}

std::string kind_name(int64_t kind) {
  switch (static_cast<CollectiveKind>(kind)) {
    case CollectiveKind::kAllreduce:
      return "allreduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllgather:
      return "allgather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kBarrier:
      return "barrier";
  }
  return str("collective kind ", kind);
}

// "allreduce (sum, 10 float32 elements)", "broadcast (root 1, ...)".
std::string describe(const int64_t* s) {
  if (static_cast<CollectiveKind>(s[0]) == CollectiveKind::kBarrier) return "barrier";
  std::string out = kind_name(s[0]) + " (";
  if (s[1] >= 0) out += str(static_cast<ReduceOp>(s[1]), ", ");
  if (s[2] >= 0) out += str("root ", s[2], ", ");
  out +=
      str(s[4], " ", static_cast<ScalarType>(s[3]), s[4] == 1 ? " element" : " elements");
  if (s[5] != 0) out += " on a GPU";
  return out + ")";
}

}  // namespace

bool collective_checks_requested() {
  const char* env = std::getenv("TANDEM_DISTRIBUTED_DEBUG");
  if (env == nullptr) return false;
  std::string value(env);
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  TANDEM_CHECK(
      value == "off" || value == "detail",
      "init_process_group: TANDEM_DISTRIBUTED_DEBUG must be \"off\" or \"detail\" "
      "(check every collective across the ranks before running it), got \"",
      env,
      "\"");
  return value == "detail";
}

int start_check(CollectiveOp& op, const GroupState& group) {
  op.signatures.assign(static_cast<size_t>(group.size) * kWords, 0);
  const auto mine = signature(op);
  std::copy(mine.begin(), mine.end(), op.signatures.begin() + group.rank * kWords);
  return MPI_Iallgather(MPI_IN_PLACE,
                        0,
                        MPI_DATATYPE_NULL,
                        op.signatures.data(),
                        static_cast<int>(kWords),
                        MPI_INT64_T,
                        group.check,
                        &op.request);
}

std::optional<std::string> check_mismatch(const CollectiveOp& op,
                                          const GroupState& group) {
  const int64_t* all = op.signatures.data();
  bool same = true;
  for (int r = 1; r < group.size; ++r) {
    same = same && std::equal(all, all + kWords, all + r * kWords);
  }
  if (same) return std::nullopt;
  // Ranks grouped by what they call, in the order of their lowest rank.
  std::map<std::vector<int64_t>, std::vector<int>> callers;
  std::vector<std::vector<int64_t>> order;
  for (int r = 0; r < group.size; ++r) {
    std::vector<int64_t> s(all + r * kWords, all + (r + 1) * kWords);
    if (callers[s].empty()) order.push_back(s);
    callers[s].push_back(r);
  }
  std::string message = str(op.work->description,
                            " on ",
                            group.where(),
                            ": the ranks call different collectives as #",
                            op.work->seq,
                            " (found by TANDEM_DISTRIBUTED_DEBUG=detail): ");
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& ranks = callers[order[i]];
    message += i > 0 ? "; " : "";
    message += ranks.size() == 1 ? "rank " : "ranks ";
    for (size_t k = 0; k < ranks.size(); ++k) message += str(k > 0 ? ", " : "", ranks[k]);
    message +=
        " call" + std::string(ranks.size() == 1 ? "s " : " ") + describe(order[i].data());
  }
  return message;
}

}  // namespace tandem::distributed::detail
