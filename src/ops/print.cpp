// Printing a tensor the way Python PyTorch's repr does (torch/_tensor_str.py
// with its default options): one formatter picks fixed, whole-number or
// scientific notation and a common width for all shown values, long rows
// wrap at 80 columns, tensors over 1000 elements show 3 edge items per dim
// around "...", and suffixes name what differs from the defaults.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/graph/node.h"

namespace tandem {
namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// `v` through a printf format taking a precision ("%.*f", "%.*e").
std::string printf_str(const char* format, int precision, double v) {
  int n = std::snprintf(nullptr, 0, format, precision, v);
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, precision, v);
  out.resize(static_cast<size_t>(n));
  return out;
}

// Python's spelling of non-finite floats (printf may write "-nan").
std::string non_finite_str(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// The values of a tensor as printing reads them: a contiguous CPU copy in
// float64 (floating dtypes) or int64 (the rest).
struct Values {
  Tensor data;
  ScalarType dtype;
  bool floating() const { return is_floating_point(dtype); }
  double real(int64_t i) const { return data.data_ptr<double>()[i]; }
  int64_t integer(int64_t i) const { return data.data_ptr<int64_t>()[i]; }
};

// Calls f(flat index) for each element that printing shows, in order.
template <typename F>
void for_each_shown(const Values& v, bool summarize, int64_t dim, int64_t base, F&& f) {
  if (v.data.dim() == 0) return f(base);
  const int64_t size = v.data.sizes()[dim], stride = v.data.strides()[dim];
  const bool elide = summarize && size > 2 * kEdgeItems;
  for (int64_t i = 0; i < size; ++i) {
    if (elide && i == kEdgeItems) i = size - kEdgeItems;
    if (dim + 1 == v.data.dim()) {
      f(base + i * stride);
    } else {
      for_each_shown(v, summarize, dim + 1, base + i * stride, f);
    }
  }
}

// Chooses one notation and width for every shown value (_Formatter).
class Formatter {
 public:
  Formatter(const Values& v, bool summarize) : values_(v) {
    if (!v.floating()) {
      for_each_shown(v, summarize, 0, 0, [&](int64_t i) { widen(text(i)); });
      return;
    }
    std::vector<double> shown;
    for_each_shown(v, summarize, 0, 0, [&](int64_t i) {
      double x = v.real(i);
      if (std::isfinite(x) && x != 0) shown.push_back(x);
    });
    if (shown.empty()) return;
    double lo = std::abs(shown[0]), hi = lo;
    for (double x : shown) {
      lo = std::min(lo, std::abs(x));
      hi = std::max(hi, std::abs(x));
      int_mode_ = int_mode_ && x == std::ceil(x);
    }
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double x : shown) widen(finite_text(x));
  }

  int64_t width() const { return static_cast<int64_t>(width_); }

  /// The value at flat index `i`, padded on the left to the common width.
  std::string format(int64_t i) const {
    std::string s = text(i);
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

 private:
  void widen(const std::string& s) { width_ = std::max(width_, s.size()); }

  std::string text(int64_t i) const {
    if (values_.dtype == kBool) return values_.integer(i) ? "True" : "False";
    if (!values_.floating()) return std::to_string(values_.integer(i));
    const double x = values_.real(i);
    return std::isfinite(x) ? finite_text(x) : non_finite_str(x);
  }

  std::string finite_text(double x) const {
    if (sci_mode_) return printf_str("%.*e", kPrecision, x);
    // Whole numbers keep a "." so the tensor still reads as floating.
    if (int_mode_) return printf_str("%.*f", 0, x) + ".";
    return printf_str("%.*f", kPrecision, x);
  }

  const Values& values_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// The bracketed text of dims [dim, ndim) at `base` (_tensor_str_with_formatter).
std::string tensor_str(const Values& v,
                       const Formatter& f,
                       bool summarize,
                       int64_t dim,
                       int64_t base,
                       int64_t indent) {
  const int64_t ndim = v.data.dim();
  if (ndim == 0) return f.format(base);
  const int64_t size = v.data.sizes()[dim], stride = v.data.strides()[dim];
  const bool elide = summarize && size > 2 * kEdgeItems;
  std::vector<std::string> parts;
  for (int64_t i = 0; i < size; ++i) {
    if (elide && i == kEdgeItems) {
      parts.emplace_back(dim + 1 == ndim ? " ..." : "...");
      i = size - kEdgeItems;
    }
    parts.push_back(
        dim + 1 == ndim
            ? f.format(base + i * stride)
            : tensor_str(v, f, summarize, dim + 1, base + i * stride, indent + 1));
  }
  if (dim + 1 < ndim) {
    std::string sep =
        "," + std::string(ndim - dim - 1, '\n') + std::string(indent + 1, ' ');
    return "[" + join(parts, sep) + "]";
  }
  // A row wraps after as many elements as fit in the line width.
  const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / (f.width() + 2));
  std::vector<std::string> lines;
  for (size_t i = 0; i < parts.size(); i += per_line) {
    std::vector<std::string> line(parts.begin() + i,
                                  parts.begin() + std::min(parts.size(), i + per_line));
    lines.push_back(join(line, ", "));
  }
  return "[" + join(lines, ",\n" + std::string(indent + 1, ' ')) + "]";
}

// Appends ", suffix" or, past the line width, ",\n<indent>suffix" (_add_suffixes).
std::string add_suffixes(std::string s,
                         const std::vector<std::string>& suffixes,
                         int64_t indent) {
  size_t newline = s.rfind('\n');
  int64_t last_line = static_cast<int64_t>(
      newline == std::string::npos ? s.size() + 2 : s.size() - newline + 1);
  for (const std::string& suffix : suffixes) {
    const int64_t n = static_cast<int64_t>(suffix.size());
    if (last_line + n + 2 > kLineWidth) {
      s += ",\n" + std::string(indent, ' ') + suffix;
      last_line = indent + n;
    } else {
      s += ", " + suffix;
      last_line += n + 2;
    }
  }
  return s + ")";
}

std::string size_tuple(const IntList& sizes) {
  std::string out = "(";
  for (size_t i = 0; i < sizes.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(sizes[i]);
  }
  return out + (sizes.size() == 1 ? ",)" : ")");
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  if (!t.defined()) return out << "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  if (t.device() != Device(kCPU, 0)) {
    suffixes.push_back("device='" + t.device().str() + "'");
  }
  const std::string dtype_suffix = "dtype=" + std::string(dtype_name(t.dtype()));
  std::string body;
  if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back("size=" + size_tuple(t.sizes()));
    if (t.dtype() != kFloat32) suffixes.push_back(dtype_suffix);
    body = "[]";
  } else {
    if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool) {
      suffixes.push_back(dtype_suffix);
    }
    const ScalarType read_as = t.is_floating_point() ? kFloat64 : kInt64;
    Values v{t.detach().to(Device(kCPU), read_as).contiguous(), t.dtype()};
    const bool summarize = t.numel() > kThreshold;
    Formatter f(v, summarize);
    body = tensor_str(v, f, summarize, 0, 0, indent);
  }
  if (t.grad_fn()) {
    suffixes.push_back("grad_fn=<" + t.grad_fn()->name() + ">");
  } else if (t.requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return out << add_suffixes(prefix + body, suffixes, indent);
}

}  // namespace tandem
