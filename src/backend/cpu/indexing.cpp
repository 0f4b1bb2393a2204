// CPU indexing kernels: gather and scatter_add along one dim, and
// index_select / index_add as their special case of a 1-D index repeated
// across the other dims. Operands may have any strides.
//
// Note [Pinned views]
// ~~~~~~~~~~~~~~~~~~~
// gather reads in[i][index[i][j][k]][k] (for dim 1). The loop runs over the
// index's shape with three operands: out, index, and `in` viewed with the
// index's sizes but stride 0 along `dim` ("pinned"). At each position the
// pinned pointer already sits on the right row except along `dim`, and the
// kernel adds index * in.stride(dim). scatter_add mirrors this with out
// pinned. The generic loop then merges dims and hands over inner runs,
// spread over threads for gather, whose outputs are written once each.
#include <cstring>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "backend/pinned_views.h"

namespace tandem::backend::cpu {
namespace {

template <typename T>
constexpr int64_t kSize = static_cast<int64_t>(sizeof(T));

}  // namespace

void gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index) {
  const Tensor src = pinned(in, index.sizes(), dim);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    const int64_t step = in.stride(dim) * static_cast<int64_t>(sizeof(T));
    for_each_run<3>(
        Order::kAny,
        index.sizes(),
        {&out, &index, &src},
        [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
          if (s[1] == 0) {  // one index for the whole run (index_select)
            const char* from = p[2] + *reinterpret_cast<const int64_t*>(p[1]) * step;
            if (s[0] == kSize<T> && s[2] == kSize<T>) {
              std::memcpy(p[0], from, n * sizeof(T));
              return;
            }
            for (int64_t i = 0; i < n; ++i) {
              *reinterpret_cast<T*>(p[0] + i * s[0]) =
                  *reinterpret_cast<const T*>(from + i * s[2]);
            }
            return;
          }
          for (int64_t i = 0; i < n; ++i) {
            const int64_t idx = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                *reinterpret_cast<const T*>(p[2] + i * s[2] + idx * step);
          }
        });
  });
}

void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const Tensor dst = pinned(out, index.sizes(), dim);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    const int64_t step = out.stride(dim) * static_cast<int64_t>(sizeof(T));
    // In order: several index entries may add into one element.
    for_each_run<3>(
        Order::kSequential,
        index.sizes(),
        {&dst, &index, &src},
        [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
          if (s[1] == 0) {  // one index for the whole run (index_add)
            char* to = p[0] + *reinterpret_cast<const int64_t*>(p[1]) * step;
            if (s[0] == kSize<T> && s[2] == kSize<T>) {  // vectorisable rows
              T* o = reinterpret_cast<T*>(to);
              const T* x = reinterpret_cast<const T*>(p[2]);
              for (int64_t i = 0; i < n; ++i) o[i] += x[i];
              return;
            }
            for (int64_t i = 0; i < n; ++i) {
              *reinterpret_cast<T*>(to + i * s[0]) +=
                  *reinterpret_cast<const T*>(p[2] + i * s[2]);
            }
            return;
          }
          for (int64_t i = 0; i < n; ++i) {
            const int64_t idx = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
            *reinterpret_cast<T*>(p[0] + i * s[0] + idx * step) +=
                *reinterpret_cast<const T*>(p[2] + i * s[2]);
          }
        });
  });
}

void index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index) {
  gather(out, in, dim, repeated_index(index, out.sizes(), dim));
}

void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_add(out, dim, repeated_index(index, src.sizes(), dim), src);
}

}  // namespace tandem::backend::cpu
