#include "distributed/model_check.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "distributed/fnv1a.h"
#include "tandem/distributed/errors.h"
#include "tandem/ops/factory.h"

namespace tandem::distributed::detail {
namespace {

// One parameter or buffer as the ranks compare it.
struct Entry {
  std::string kind;  // "params" or "buffers"
  size_t index = 0;  // among its kind
  std::string name;
  std::string sizes;
  std::string strides;
  std::string dtype;
  std::string device_type;
};

template <typename T>
std::string text(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// A rank's model: its parameters, then its buffers.
struct Model {
  size_t param_count = 0;
  std::vector<Entry> entries;
};

Model describe(const NamedTensors& params, const NamedTensors& buffers) {
  Model model{params.size(), {}};
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& t = params[i].second;
    model.entries.push_back({"params",
                             i,
                             params[i].first,
                             text(t.sizes()),
                             text(t.strides()),
                             text(t.dtype()),
                             text(t.device().type())});
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Tensor& t = buffers[i].second;
    model.entries.push_back(
        {"buffers", i, buffers[i].first, text(t.sizes()), "", text(t.dtype()), ""});
  }
  return model;
}

// Fields separated by \x1f, entries by \x1e: names cannot hold those.
std::string serialize(const Model& model) {
  std::string out = std::to_string(model.param_count);
  for (const Entry& e : model.entries) {
    out += '\x1e';
    for (const std::string* field :
         {&e.kind, &e.name, &e.sizes, &e.strides, &e.dtype, &e.device_type}) {
      out += *field;
      out += '\x1f';
    }
  }
  return out;
}

std::vector<std::string> split(const std::string& s, char separator) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : s) {
    if (c == separator) {
      parts.push_back(std::move(part));
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(std::move(part));
  return parts;
}

Model deserialize(const std::string& s) {
  std::vector<std::string> records = split(s, '\x1e');
  Model model{static_cast<size_t>(std::stoull(records.front())), {}};
  size_t params = 0, buffers = 0;
  for (size_t r = 1; r < records.size(); ++r) {
    std::vector<std::string> f = split(records[r], '\x1f');
    f.resize(6);
    const bool is_param = f[0] == "params";
    model.entries.push_back(
        {f[0], is_param ? params++ : buffers++, f[1], f[2], f[3], f[4], f[5]});
  }
  return model;
}

// How entry `e` of `them` (rank `other`) differs from `mine` (rank `me`);
// empty when equal. Sizes are told the way PyTorch tells them.
std::string difference(const Entry& mine, const Entry& theirs, int me, int other) {
  const std::string what =
      theirs.kind + "[" + std::to_string(theirs.index) + "] ('" + mine.name + "')";
  auto differ = [&](const char* field, const std::string& a, const std::string& b) {
    return what + " in this process (rank " + std::to_string(me) + ") has " + field +
           " " + a + ", while rank " + std::to_string(other) + " has " + b;
  };
  if (mine.kind != theirs.kind) {
    return "the model of rank " + std::to_string(other) + " has " + theirs.kind + " ('" +
           theirs.name + "') where this process (rank " + std::to_string(me) + ") has " +
           mine.kind + " ('" + mine.name + "')";
  }
  if (mine.sizes != theirs.sizes) return differ("sizes", mine.sizes, theirs.sizes);
  if (mine.strides != theirs.strides)
    return differ("strides", mine.strides, theirs.strides);
  if (mine.dtype != theirs.dtype) return differ("dtype", mine.dtype, theirs.dtype);
  if (mine.device_type != theirs.device_type) {
    return differ("device type", mine.device_type, theirs.device_type);
  }
  if (mine.name != theirs.name) {
    return theirs.kind + "[" + std::to_string(theirs.index) + "] is named '" + mine.name +
           "' in this process (rank " + std::to_string(me) + ") but '" + theirs.name +
           "' on rank " + std::to_string(other);
  }
  return "";
}

// The first difference between two models with equal parameter counts.
std::string first_difference(const Model& mine, const Model& theirs, int me, int other) {
  const size_t common = std::min(mine.entries.size(), theirs.entries.size());
  for (size_t i = 0; i < common; ++i) {
    std::string d = difference(mine.entries[i], theirs.entries[i], me, other);
    if (!d.empty()) return d;
  }
  if (mine.entries.size() != theirs.entries.size()) {
    return "this process (rank " + std::to_string(me) + ") has " +
           std::to_string(mine.entries.size() - mine.param_count) +
           " buffers, while rank " + std::to_string(other) + " has " +
           std::to_string(theirs.entries.size() - theirs.param_count);
  }
  return "";
}

// PyTorch's words for a parameter whose sizes or strides differ from rank
// 0's, when that is the first difference; else empty.
std::string pytorch_text(const Model& mine, const Model& reference, int me) {
  const size_t common = std::min(mine.entries.size(), reference.entries.size());
  for (size_t i = 0; i < common; ++i) {
    const Entry& a = mine.entries[i];
    const Entry& b = reference.entries[i];
    if (difference(a, b, me, 0).empty()) continue;
    if (a.kind != "params" || b.kind != "params") return "";
    // As PyTorch: only the sizes text names the rank first.
    std::ostringstream out;
    out << "params[" << a.index << "] in this process with sizes " << a.sizes
        << " appears not to match ";
    const std::string head = out.str();
    if (a.sizes != b.sizes) {
      std::ostringstream rank;
      rank << '[' << me << "]: " << head << "sizes of the same param in process 0.";
      return rank.str();
    }
    if (a.strides != b.strides) return head + "strides of the same param in process 0.";
    return "";
  }
  return "";
}

// Every rank's serialized model.
std::vector<std::string> gather_models(ProcessGroup& group, const std::string& mine) {
  const int64_t world = group.size();
  Tensor length = full({1}, static_cast<int64_t>(mine.size()), kInt64);
  Tensor lengths = empty({world}, kInt64);
  group.allgather_into_tensor(lengths, length).wait();
  const int64_t* l = lengths.data_ptr<int64_t>();
  const int64_t longest = *std::max_element(l, l + world);
  Tensor bytes = zeros({longest}, kInt64);
  for (size_t i = 0; i < mine.size(); ++i) {
    bytes.data_ptr<int64_t>()[i] = static_cast<unsigned char>(mine[i]);
  }
  Tensor all = empty({world * longest}, kInt64);
  group.allgather_into_tensor(all, bytes).wait();
  std::vector<std::string> models;
  for (int64_t r = 0; r < world; ++r) {
    std::string s;
    for (int64_t i = 0; i < l[r]; ++i) {
      s += static_cast<char>(all.data_ptr<int64_t>()[r * longest + i]);
    }
    models.push_back(std::move(s));
  }
  return models;
}

}  // namespace

void verify_same_model(ProcessGroup& group,
                       const NamedTensors& params,
                       const NamedTensors& buffers) {
  const Model model = describe(params, buffers);
  const std::string mine = serialize(model);
  const int world = group.size();
  const int me = group.rank();
  Tensor summary = empty({2}, kInt64);
  summary.data_ptr<int64_t>()[0] = static_cast<int64_t>(model.param_count);
  summary.data_ptr<int64_t>()[1] = static_cast<int64_t>(fnv1a(mine.data(), mine.size()));
  Tensor summaries = empty({2 * world}, kInt64);
  group.allgather_into_tensor(summaries, summary).wait();
  const int64_t* s = summaries.data_ptr<int64_t>();
  bool same = true;
  for (int r = 1; r < world; ++r) same = same && s[2 * r] == s[0] && s[2 * r + 1] == s[1];
  if (same) return;

  // Counts first, as PyTorch: every rank compares its own with the others'.
  for (int r = 0; r < world; ++r) {
    if (s[2 * r] == s[2 * me]) continue;
    throw ModelMismatchError(
        "DDP expects same model across all ranks, but Rank " + std::to_string(me) +
        " has " + std::to_string(s[2 * me]) + " params, while rank " + std::to_string(r) +
        " has inconsistent " + std::to_string(s[2 * r]) + " params.");
  }
  const std::vector<std::string> all = gather_models(group, mine);
  const Model reference = deserialize(all[0]);
  if (me != 0) {
    std::string d = first_difference(model, reference, me, 0);
    if (std::string p = pytorch_text(model, reference, me); !p.empty()) {
      throw ModelMismatchError(p + " (" + d + ")");
    }
    if (!d.empty()) {
      throw ModelMismatchError("DDP expects same model across all ranks, but " + d +
                               " (every rank must wrap the same model)");
    }
  }
  // This rank agrees with rank 0: name the first rank that does not.
  for (int r = 1; r < world; ++r) {
    if (r == me) continue;
    std::string d = first_difference(reference, deserialize(all[r]), 0, r);
    if (d.empty()) continue;
    throw ModelMismatchError("DDP expects same model across all ranks, but rank " +
                             std::to_string(r) + "'s model differs from rank 0's: " + d +
                             " (every rank must wrap the same model)");
  }
  throw ModelMismatchError(
      "DDP expects same model across all ranks, but the ranks' model descriptions "
      "differ in a way this check could not place");
}

}  // namespace tandem::distributed::detail
