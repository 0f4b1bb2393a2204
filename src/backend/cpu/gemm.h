// Private: the blocked, parallel GEMM of matmul.cpp over raw matrices, for
// kernels that build their own operands in scratch memory (conv.cpp's
// im2col columns) and cannot hand gemm() tensors.
//
//   // out[i] = w @ cols[i] for i < batch, out contiguous [batch, m, n]
//   blocked_gemm<float>(batch, m, n, k, 1.0f, {w, 0, k, 1}, {cols, k * n, n, 1},
//                       0.0f, out);
#pragma once

#include <cstdint>

namespace tandem::backend::cpu {

/// A batch of matrices: element (i, r, c) at data[i * batch + r * s0 + c * s1],
/// with s0 or s1 equal to 1 (a transposed matrix swaps them). batch may be 0
/// (one matrix shared by every product).
template <typename T>
struct Matrices {
  const T* data;
  int64_t batch, s0, s1;
};

/// c[i] = alpha * a[i] * b[i] + beta * c[i] for every i < batch, with c
/// contiguous [batch, m, n]; a is m x k, b is k x n, and any size may be 0
/// (k == 0 leaves beta * c; beta == 0 overwrites). Cut into blocks that
/// depend on the shape only (Note [GEMM blocks] in matmul.cpp), spread over
/// the calling device's share of the cores, or run one after the other on
/// the calling thread when not `parallel` (for callers that parallelise
/// around the product themselves): the results are the same either way.
/// Defined for float and double.
template <typename T>
void blocked_gemm(int64_t batch,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  T alpha,
                  Matrices<T> a,
                  Matrices<T> b,
                  T beta,
                  T* c,
                  bool parallel = true);

/// The most pieces any parallel kernel cuts its work into: a power of two
/// covering the machine's cores. Kernels that sum partial results cut by
/// this (never by the current thread count) so that their rounding depends
/// on the machine and the shape only.
int64_t max_parallel_blocks();

}  // namespace tandem::backend::cpu
