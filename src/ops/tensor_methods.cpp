// Tensor's op methods and operators: each forwards to the free function of
// the same name (tandem/ops/*.h), which does the work.
#include "tandem/ops/activation.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/indexing.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem {

Tensor Tensor::view(const IntList& s) const { return tandem::view(*this, s); }
Tensor Tensor::reshape(const IntList& s) const { return tandem::reshape(*this, s); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return tandem::narrow(*this, dim, start, length);
}
Tensor Tensor::select(int64_t dim, int64_t index) const {
  return tandem::select(*this, dim, index);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return tandem::chunk(*this, chunks, dim);
}
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return tandem::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split(const IntList& sizes, int64_t dim) const {
  return tandem::split(*this, sizes, dim);
}
Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  return tandem::transpose(*this, d0, d1);
}
Tensor Tensor::t() const { return tandem::t(*this); }
Tensor Tensor::permute(const IntList& dims) const { return tandem::permute(*this, dims); }
Tensor Tensor::unsqueeze(int64_t dim) const { return tandem::unsqueeze(*this, dim); }
Tensor Tensor::squeeze() const { return tandem::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return tandem::squeeze(*this, dim); }
Tensor Tensor::flatten(int64_t start, int64_t end) const {
  return tandem::flatten(*this, start, end);
}
Tensor Tensor::expand(const IntList& s) const { return tandem::expand(*this, s); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const {
  return tandem::unbind(*this, dim);
}
Tensor Tensor::repeat(const IntList& repeats) const {
  return tandem::repeat(*this, repeats);
}

Tensor Tensor::add(const Tensor& o, Scalar alpha) const {
  return tandem::add(*this, o, alpha);
}
Tensor Tensor::add(Scalar o) const { return tandem::add(*this, o); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const {
  return tandem::sub(*this, o, alpha);
}
Tensor Tensor::sub(Scalar o) const { return tandem::sub(*this, o); }
Tensor Tensor::mul(const Tensor& o) const { return tandem::mul(*this, o); }
Tensor Tensor::mul(Scalar o) const { return tandem::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return tandem::div(*this, o); }
Tensor Tensor::div(Scalar o) const { return tandem::div(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return tandem::pow(*this, e); }
Tensor Tensor::pow(Scalar e) const { return tandem::pow(*this, e); }
Tensor Tensor::neg() const { return tandem::neg(*this); }
Tensor Tensor::exp() const { return tandem::exp(*this); }
Tensor Tensor::log() const { return tandem::log(*this); }
Tensor Tensor::sqrt() const { return tandem::sqrt(*this); }
Tensor Tensor::abs() const { return tandem::abs(*this); }
Tensor Tensor::rsqrt() const { return tandem::rsqrt(*this); }
Tensor Tensor::square() const { return tandem::square(*this); }
Tensor Tensor::reciprocal() const { return tandem::reciprocal(*this); }
Tensor Tensor::sign() const { return tandem::sign(*this); }
Tensor Tensor::maximum(const Tensor& o) const { return tandem::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return tandem::minimum(*this, o); }
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const {
  return tandem::masked_fill(*this, mask, value);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return tandem::masked_fill(*this, mask, value);
}
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, Scalar value) const {
  return tandem::addcmul(*this, t1, t2, value);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, Scalar value) const {
  return tandem::addcdiv(*this, t1, t2, value);
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return tandem::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(Scalar min) const { return tandem::clamp_min(*this, min); }
Tensor Tensor::clamp_max(Scalar max) const { return tandem::clamp_max(*this, max); }
Tensor Tensor::relu() const { return tandem::relu(*this); }
Tensor Tensor::sigmoid() const { return tandem::sigmoid(*this); }
Tensor Tensor::tanh() const { return tandem::tanh(*this); }
Tensor Tensor::eq(const Tensor& o) const { return tandem::eq(*this, o); }
Tensor Tensor::eq(Scalar o) const { return tandem::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return tandem::ne(*this, o); }
Tensor Tensor::ne(Scalar o) const { return tandem::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return tandem::lt(*this, o); }
Tensor Tensor::lt(Scalar o) const { return tandem::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return tandem::le(*this, o); }
Tensor Tensor::le(Scalar o) const { return tandem::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return tandem::gt(*this, o); }
Tensor Tensor::gt(Scalar o) const { return tandem::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return tandem::ge(*this, o); }
Tensor Tensor::ge(Scalar o) const { return tandem::ge(*this, o); }
Tensor Tensor::softmax(int64_t dim) const { return tandem::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return tandem::log_softmax(*this, dim); }
Tensor& Tensor::relu_() { return tandem::relu_(*this); }

Tensor Tensor::sum() const { return tandem::sum(*this); }
Tensor Tensor::sum(int64_t dim, bool keepdim) const {
  return tandem::sum(*this, {dim}, keepdim);
}
Tensor Tensor::sum(const IntList& dims, bool keepdim) const {
  return tandem::sum(*this, dims, keepdim);
}
Tensor Tensor::mean() const { return tandem::mean(*this); }
Tensor Tensor::mean(int64_t dim, bool keepdim) const {
  return tandem::mean(*this, IntList{dim}, keepdim);
}
Tensor Tensor::mean(const IntList& dims, bool keepdim) const {
  return tandem::mean(*this, dims, keepdim);
}
Tensor Tensor::max() const { return tandem::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return tandem::max(*this, dim, keepdim);
}
Tensor Tensor::min() const { return tandem::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return tandem::min(*this, dim, keepdim);
}
Tensor Tensor::argmax() const { return tandem::argmax(*this); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const {
  return tandem::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin() const { return tandem::argmin(*this); }
Tensor Tensor::argmin(int64_t dim, bool keepdim) const {
  return tandem::argmin(*this, dim, keepdim);
}
Tensor Tensor::norm(Scalar p) const { return tandem::norm(*this, p); }
Tensor Tensor::norm(Scalar p, const IntList& dim, bool keepdim) const {
  return tandem::norm(*this, p, dim, keepdim);
}
Tensor Tensor::all() const { return tandem::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const {
  return tandem::all(*this, dim, keepdim);
}
Tensor Tensor::any() const { return tandem::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const {
  return tandem::any(*this, dim, keepdim);
}
Tensor Tensor::var_all(bool unbiased) const {
  return tandem::var(*this, IntList{}, unbiased);
}
Tensor Tensor::var(const IntList& dim, bool unbiased, bool keepdim) const {
  return tandem::var(*this, dim, unbiased, keepdim);
}
Tensor Tensor::std_all(bool unbiased) const {
  return tandem::std(*this, IntList{}, unbiased);
}
Tensor Tensor::std(const IntList& dim, bool unbiased, bool keepdim) const {
  return tandem::std(*this, dim, unbiased, keepdim);
}
Tensor Tensor::logsumexp(const IntList& dim, bool keepdim) const {
  return tandem::logsumexp(*this, dim, keepdim);
}

Tensor Tensor::matmul(const Tensor& o) const { return tandem::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return tandem::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return tandem::bmm(*this, o); }
Tensor Tensor::dot(const Tensor& o) const { return tandem::dot(*this, o); }
Tensor Tensor::mv(const Tensor& v) const { return tandem::mv(*this, v); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return tandem::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return tandem::gather(*this, dim, index);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return tandem::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  return tandem::scatter_add_(*this, dim, index, src);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b) { return add(neg(b), a); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b) { return mul(reciprocal(b), a); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }

}  // namespace tandem
