// Tensor: a cheap, shared handle to an n-dimensional array on one device.
//
// Copying a Tensor copies the handle, not the data (like PyTorch). Views
// (view, narrow, transpose, ...) share storage with their base. Every tensor
// knows its device, and ops refuse to mix devices without an explicit to().
//
//   auto x = tandem::randn({15, 5});
//   auto y = x.narrow(/*dim=*/0, /*start=*/0, /*length=*/5).t();  // a view
//   auto z = (x * 2 + 1).sum();
//   float v = z.item<float>();
//   std::cout << x.sizes();   // [15, 5]
//
// The op methods here are thin forwards to the free functions declared under
// tandem/ops/ (tandem::add, tandem::matmul, ...), which check arguments,
// dispatch to the device's kernels and record autograd history.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/dtype.h"
#include "tandem/core/error.h"
#include "tandem/core/tensor_accessor.h"
#include "tandem/core/tensor_impl.h"
#include "tandem/core/tensor_options.h"

namespace tandem {

using Scalar = double;
class Tensor;
using TensorHook = std::function<Tensor(const Tensor&)>;
/// Called with a leaf after a backward pass has accumulated into its .grad.
using PostAccumulateGradHook = std::function<void(const Tensor&)>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;

  // ---- assignment, as in LibTorch ----
  /// A named tensor rebinds its handle (`a = b` makes a share b's data)...
  Tensor& operator=(const Tensor& other) & = default;
  Tensor& operator=(Tensor&& other) & noexcept = default;
  /// ...while a temporary one writes into the memory it views, so
  /// `x[1] = y` and `x.narrow(0, 0, 2) = y` copy y (broadcast) into that
  /// part of x, and `x[0] = 2.5` fills it: copy_ and fill_, with autograd.
  Tensor& operator=(const Tensor& src) && { return copy_(src); }
  Tensor& operator=(Tensor&& src) && { return copy_(src); }
  Tensor& operator=(Scalar value) && { return fill_(value); }

  // ---- identity and geometry ----
  bool defined() const { return impl_ != nullptr; }
  TensorImpl* unsafe_impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  bool is_same_size(const Tensor& other) const { return sizes() == other.sizes(); }

  const IntList& sizes() const { return impl().sizes(); }
  const IntList& strides() const { return impl().strides(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl().dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl().numel(); }
  int64_t storage_offset() const { return impl().offset(); }
  ScalarType dtype() const { return impl().dtype(); }
  ScalarType scalar_type() const { return dtype(); }
  Device device() const { return impl().device(); }
  TensorOptions options() const;
  bool is_contiguous() const { return impl().is_contiguous(); }
  bool is_floating_point() const { return tandem::is_floating_point(dtype()); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  size_t element_size() const { return tandem::element_size(dtype()); }
  size_t nbytes() const { return numel() * element_size(); }
  /// Version counter of the storage; in-place ops bump it.
  uint32_t _version() const { return impl().storage()->version(); }
  void bump_version() const { impl().storage()->bump_version(); }

  /// Pointer to the first element; T must match the dtype.
  template <typename T>
  T* data_ptr() const;
  void* data_ptr() const { return impl().data(); }
  template <typename T>
  T* mutable_data_ptr() const {
    return data_ptr<T>();
  }
  /// LibTorch's older spelling of data_ptr<T>().
  template <typename T>
  T* data() const {
    return data_ptr<T>();
  }
  /// LibTorch's Tensor::data(): the same values (shared storage) without
  /// autograd history and not requiring grad, as detach().
  Tensor data() const { return detach(); }
  /// Indexed access to a CPU tensor of N dims holding T (see
  /// tensor_accessor.h); not on a temporary, whose memory would go with it.
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() const&;
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;

  /// The value of a one-element tensor, converted to T.
  template <typename T>
  T item() const;
  Scalar item() const { return item<double>(); }

  // ---- conversion and copies ----
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device,
            ScalarType dtype,
            bool non_blocking = false,
            bool copy = false) const;
  Tensor to(const TensorOptions& options,
            bool non_blocking = false,
            bool copy = false) const;
  /// x.to("cpu:1") and x.to(kCPU): these would otherwise match both Device
  /// and TensorOptions.
  Tensor to(const char* device, bool non_blocking = false, bool copy = false) const {
    return to(Device(device), non_blocking, copy);
  }
  Tensor to(DeviceType type, bool non_blocking = false, bool copy = false) const {
    return to(Device(type), non_blocking, copy);
  }
  /// This tensor in other's dtype, on other's device.
  Tensor type_as(const Tensor& other) const { return to(other.device(), other.dtype()); }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda() const { return to(Device(kCUDA)); }
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  /// A contiguous copy of this CPU tensor in page-locked (pinned) host
  /// memory, from which to(gpu, /*non_blocking=*/true) and copy_(src, true)
  /// copy asynchronously; a pinned tensor returns itself (as in PyTorch).
  /// Throws tandem::Error, saying why, without a CUDA device.
  ///   Tensor batch = images.pin_memory();
  ///   Tensor x = batch.to(Device("cuda:0"), /*non_blocking=*/true);
  Tensor pin_memory() const;
  /// Whether this tensor's memory is pinned (made by pin_memory()).
  bool is_pinned() const { return impl().storage()->is_pinned(); }
  /// Makes this tensor (every handle to it) use `data`'s storage, dtype and
  /// shape, keeping its autograd identity (like LibTorch's set_data).
  void set_data(const Tensor& data) const;

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  Tensor& set_requires_grad(bool requires_grad) { return requires_grad_(requires_grad); }
  bool is_leaf() const;
  std::shared_ptr<autograd::Node> grad_fn() const;
  /// The accumulated gradient (undefined until a backward reaches it).
  Tensor grad() const;
  /// Assignable handle to .grad, as in LibTorch: `p.mutable_grad() = Tensor()`.
  Tensor& mutable_grad();
  void set_grad(const Tensor& grad);
  /// Keep .grad for a non-leaf tensor too.
  void retain_grad();
  bool retains_grad() const;
  /// A tensor sharing storage, without history and not requiring grad.
  Tensor detach() const;
  Tensor& detach_();
  /// retain_graph defaults to create_graph; create_graph records the
  /// backward pass so the gradients can be differentiated again.
  void backward(const Tensor& gradient = Tensor(),
                std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  /// Called with the gradient of this tensor during backward; a defined
  /// return value replaces that gradient. Returns a handle for removal.
  size_t register_hook(TensorHook hook) const;
  /// Leaves only: called with this tensor once a backward pass has added
  /// its gradient into .grad (PyTorch's register_post_accumulate_grad_hook;
  /// not called when no gradient reached it). Removed with remove_hook.
  size_t register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;
  void remove_hook(size_t handle) const;

  // ---- views ----
  Tensor view(const IntList& sizes) const;
  Tensor reshape(const IntList& sizes) const;
  /// x.view(-1): see Note [Sizes given as one integer] in ops/factory.h.
  template <std::integral I>
  Tensor view(I size) const {
    return view(IntList{static_cast<int64_t>(size)});
  }
  template <std::integral I>
  Tensor reshape(I size) const {
    return reshape(IntList{static_cast<int64_t>(size)});
  }
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  /// x[i] is x.select(0, i): a view; negative indices count from the end.
  Tensor operator[](int64_t index) const { return select(0, index); }
  /// Whether this tensor views another one's memory (made by a view op
  /// whose base is still alive; see TensorImpl::view_base).
  bool is_view() const;
  /// The tensor this view was made from (the first of a chain of views);
  /// throws for a tensor that is not a view, as LibTorch's _base does.
  Tensor _base() const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(const IntList& split_sizes, int64_t dim = 0) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(const IntList& dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor expand(const IntList& sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  /// The slices along `dim`, each without that dim.
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  /// Tiles the tensor repeats[d] times along each dim (a copy).
  Tensor repeat(const IntList& repeats) const;

  // ---- elementwise ----
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor add(Scalar other) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(Scalar other) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(Scalar other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(Scalar other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Scalar exponent) const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor rsqrt() const;
  Tensor square() const;
  Tensor reciprocal() const;
  Tensor sign() const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  /// Elementwise, as maximum/minimum (LibTorch's overloads of max and min).
  Tensor max(const Tensor& other) const { return maximum(other); }
  Tensor min(const Tensor& other) const { return minimum(other); }
  /// value where mask (bool, broadcast to this shape) is true, else self.
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  /// self + value * tensor1 * tensor2, and self + value * tensor1 / tensor2.
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = {}) const;
  Tensor clamp_min(Scalar min) const;
  Tensor clamp_max(Scalar max) const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(Scalar other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(Scalar other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(Scalar other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(Scalar other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(Scalar other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(Scalar other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  // ---- in place (bump the version counter) ----
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = {});
  Tensor& relu_();
  Tensor& neg_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& abs_();
  Tensor& sigmoid_();
  Tensor& tanh_();
  Tensor& pow_(Scalar exponent);
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1);
  Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1);
  /// Comparisons stored in place: 1 where true, 0 where false, in self's
  /// dtype.
  Tensor& eq_(const Tensor& other);
  Tensor& eq_(Scalar other);
  Tensor& ne_(const Tensor& other);
  Tensor& ne_(Scalar other);
  Tensor& lt_(const Tensor& other);
  Tensor& lt_(Scalar other);
  Tensor& le_(const Tensor& other);
  Tensor& le_(Scalar other);
  Tensor& gt_(const Tensor& other);
  Tensor& gt_(Scalar other);
  Tensor& ge_(const Tensor& other);
  Tensor& ge_(Scalar other);
  Tensor& zero_();
  Tensor& fill_(Scalar value);
  Tensor& uniform_(double from = 0, double to = 1);
  Tensor& normal_(double mean = 0, double std = 1);

  // ---- reductions ----
  Tensor sum() const;
  Tensor sum(int64_t dim, bool keepdim = false) const;
  Tensor sum(const IntList& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(int64_t dim, bool keepdim = false) const;
  Tensor mean(const IntList& dims, bool keepdim = false) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  /// The p-norm over all elements or over `dim` (p may be INFINITY).
  Tensor norm(Scalar p = 2) const;
  Tensor norm(Scalar p, const IntList& dim, bool keepdim = false) const;
  template <std::integral I>
  Tensor norm(Scalar p, I dim, bool keepdim = false) const {
    return norm(p, IntList{static_cast<int64_t>(dim)}, keepdim);
  }
  /// Whether all (any) elements are non-zero: bool (uint8 for uint8 input).
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  /// Variance and standard deviation, unbiased (divided by n - 1) by
  /// default. See Note [var and std overloads] in ops/reduction.h.
  template <std::same_as<bool> Bool>
  Tensor var(Bool unbiased) const {
    return var_all(unbiased);
  }
  Tensor var() const { return var_all(/*unbiased=*/true); }
  Tensor var(const IntList& dim, bool unbiased = true, bool keepdim = false) const;
  template <std::integral I>
  Tensor var(I dim, bool unbiased, bool keepdim = false) const {
    return var(IntList{static_cast<int64_t>(dim)}, unbiased, keepdim);
  }
  template <std::same_as<bool> Bool>
  Tensor std(Bool unbiased) const {
    return std_all(unbiased);
  }
  Tensor std() const { return std_all(/*unbiased=*/true); }
  Tensor std(const IntList& dim, bool unbiased = true, bool keepdim = false) const;
  template <std::integral I>
  Tensor std(I dim, bool unbiased, bool keepdim = false) const {
    return std(IntList{static_cast<int64_t>(dim)}, unbiased, keepdim);
  }
  /// log(sum(exp(x))) over `dim`, without overflow.
  Tensor logsumexp(const IntList& dim, bool keepdim = false) const;
  template <std::integral I>
  Tensor logsumexp(I dim, bool keepdim = false) const {
    return logsumexp(IntList{static_cast<int64_t>(dim)}, keepdim);
  }

  // ---- linear algebra and indexing ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor dot(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);

 private:
  Tensor var_all(bool unbiased) const;
  Tensor std_all(bool unbiased) const;
  TensorImpl& impl() const {
    TANDEM_CHECK(impl_ != nullptr, "tensor: operation on an undefined tensor");
    return *impl_;
  }
  std::shared_ptr<TensorImpl> impl_;
};

// ---- operators (tensor-tensor and tensor-scalar, both sides) ----
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, Scalar b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, Scalar b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, Scalar b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, Scalar b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);

/// Prints values the PyTorch way: tensor([[1.0000, 2.5000]], dtype=float64).
std::ostream& operator<<(std::ostream& out, const Tensor& t);

// ---- autograd state (needs the complete Tensor) ----
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  uint32_t output_nr = 0;
  // Leaves: the node that accumulates into .grad, made on first use and
  // shared by every graph that uses the leaf.
  std::weak_ptr<autograd::Node> grad_accumulator;
  // Leaves only: hooks run on the gradient before it is accumulated
  // (non-leaf hooks live on grad_fn). Each has an id for removal.
  std::vector<std::pair<size_t, TensorHook>> hooks;
  // Leaves only: run after the gradient was accumulated into .grad.
  std::vector<std::pair<size_t, PostAccumulateGradHook>> post_accumulate_hooks;
};

inline bool Tensor::requires_grad() const {
  const AutogradMeta* m = impl().autograd_meta();
  return m != nullptr && m->requires_grad;
}

// ---- template definitions ----
template <typename T>
T* Tensor::data_ptr() const {
  TANDEM_CHECK(dtype() == dtype_of_v<T>,
               "data_ptr: tensor has dtype ",
               dtype(),
               " but ",
               dtype_of_v<T>,
               " was requested");
  return static_cast<T*>(impl().data());
}

template <typename T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  TANDEM_CHECK(dim() == static_cast<int64_t>(N),
               "accessor: expected a tensor of ",
               N,
               " dims, got shape ",
               sizes());
  TANDEM_CHECK(is_cpu(), "accessor: expected a CPU tensor, got one on ", device());
  return TensorAccessor<T, N>(data_ptr<T>(), sizes().data(), strides().data());
}

namespace detail {
double item_as_double(const Tensor& t);
int64_t item_as_int64(const Tensor& t);
}  // namespace detail

template <typename T>
T Tensor::item() const {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(detail::item_as_double(*this));
  } else {
    return static_cast<T>(detail::item_as_int64(*this));
  }
}

}  // namespace tandem
