#include "grad_ready_order.h"

#include <charconv>

#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

constexpr const char* kKey = "grad_ready_order";

}  // namespace

void record_grad_ready_order(const std::vector<size_t>& order,
                             io::Checkpoint& checkpoint) {
  if (order.empty()) return;
  std::string text;
  for (size_t index : order) text += (text.empty() ? "" : ",") + std::to_string(index);
  checkpoint.extra[kKey] = text;
}

std::vector<size_t> recorded_grad_ready_order(const io::Checkpoint& checkpoint,
                                              const std::string& path) {
  auto it = checkpoint.extra.find(kKey);
  if (it == checkpoint.extra.end()) return {};
  const std::string& text = it->second;
  std::vector<size_t> order;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    size_t index = 0;
    auto [next, ec] = std::from_chars(p, end, index);
    const bool separated = next == end || (*next == ',' && next + 1 < end);
    if (ec != std::errc() || !separated) {
      throw Error("resume: " + path + " records " + kKey + " = \"" + text +
                  "\", not a list of parameter indices such as 5,4,3,2,1,0 (the file is "
                  "damaged or was not written by tandem train)");
    }
    order.push_back(index);
    p = next == end ? end : next + 1;
  }
  return order;
}

}  // namespace tandem::cli
