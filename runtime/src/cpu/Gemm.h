//===- Gemm.h - Blocked, multithreaded f32 matrix multiply ------*- C++ -*-===//
//
// C = alpha * op(A) * op(B) + beta * C for row-major f32 matrices, the core
// of the matmul and gemm kernels. The driver packs B into NR-wide column
// panels and A into MR-tall row panels (cache blocks KC x NC and MC x KC)
// and runs a register-blocked micro-kernel per MR x NR tile; the ISA of the
// micro-kernel is chosen once at run time from CPUID.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ingot {
class ThreadPool;
} // namespace ingot

namespace ingot::cpu {

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  /// A is m x k (k x m when transA), row stride lda.
  const float *a = nullptr;
  int64_t lda = 0;
  bool transA = false;
  /// B is k x n (n x k when transB), row stride ldb.
  const float *b = nullptr;
  int64_t ldb = 0;
  bool transB = false;
  /// C is m x n, row stride ldc; with beta == 0 it is not read.
  float *c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
};

enum class GemmIsa { Generic, Avx2, Avx512 };

/// The fastest micro-kernel this CPU supports.
GemmIsa bestGemmIsa();
const char *gemmIsaName(GemmIsa isa);
bool gemmIsaSupported(GemmIsa isa);

/// op(B) packed once into the NR-wide column panels that the micro-kernel
/// of one ISA reads, for a B that stays the same across calls (a weight):
/// sgemm with it skips packing B, which costs as much as the arithmetic
/// when A has few rows (an encoder's 64 tokens).
class PackedB {
public:
  PackedB() = default;
  /// Packs op(B) of `args` (b, ldb, transB; k x n).
  PackedB(const GemmArgs &args, GemmIsa isa);
  /// Panels for a k x n B that the caller writes in place (panelData): a
  /// convolution unrolls its input straight into them. Only the columns
  /// past n are zeroed: the caller writes the others, and zeroing a conv's
  /// whole column matrix first cost 7% of YOLOv8n's run.
  PackedB(int64_t k, int64_t n, GemmIsa isa);
  float *panelData(int64_t p) { return data_ + p * k_ * nr_; }
  /// Uses the first panels for an n-column B (n at most the columns the
  /// panels were made for); zeroes the last one's columns past n.
  void setColumns(int64_t n);
  GemmIsa isa() const { return isa_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int nr() const { return nr_; }
  size_t bytes() const { return size_ * sizeof(float); }
  /// Panel p: k rows of nr floats (columns past n zero), 64-byte aligned.
  const float *panel(int64_t p) const { return data_ + p * k_ * nr_; }

private:
  GemmIsa isa_ = GemmIsa::Generic;
  int64_t k_ = 0, n_ = 0;
  int nr_ = 0;
  std::unique_ptr<float[]> storage_; // uninitialised: see the constructor
  size_t size_ = 0;
  float *data_ = nullptr;
  /// Zeroes columns [n, the panel's end) of the panel holding column n.
  void zeroTail(int64_t n);
};

/// Runs on `pool` when given (serially inside another parallel region).
void sgemm(const GemmArgs &args, ThreadPool *pool);
/// With op(B) already packed (its ISA's micro-kernel runs); args.b must
/// still point at B, which the few-row path reads unpacked.
void sgemm(const GemmArgs &args, ThreadPool *pool, const PackedB &packedB);
/// Same with a forced micro-kernel ISA (tests, benchmarks); the ISA must be
/// supported by this CPU.
void sgemm(const GemmArgs &args, ThreadPool *pool, GemmIsa isa);

// Micro-kernels, one per ISA (Gemm{Generic,Avx2,Avx512}.cpp). Each computes an
// MR x NR tile from packed panels: Ap holds kc columns of MR values, Bp kc rows
// of NR values. The tile is stored into C (mr x nr valid entries) as alpha *
// acc + beta * C, with C not read when beta == 0.
using MicroKernelFn = void (*)(int64_t kc, const float *ap, const float *bp,
                               float *c, int64_t ldc, int64_t mr, int64_t nr,
                               float alpha, float beta);
/// The small-M path (m <= kSmallM rows, B not transposed, nn <=
/// kSmallMWidth columns): C[r][0..nn) = alpha * sum_k A(r,k) * B[k][0..nn) +
/// beta * C[r][..] (beta 0: C not read), A(r,k) = a[r*aRowStride +
/// k*aColStride]. Streams contiguous rows of B once, accumulating in L1.
using SmallMFn = void (*)(int64_t m, int64_t k, int64_t nn, const float *a,
                          int64_t aRowStride, int64_t aColStride,
                          const float *b, int64_t ldb, float *c, int64_t ldc,
                          float alpha, float beta);
constexpr int64_t kSmallM = 4;
constexpr int64_t kSmallMWidth = 1024;
/// Dot product of two contiguous vectors.
using DotFn = float (*)(int64_t k, const float *x, const float *y);

/// The micro-kernel's tile reading A in place: row r at step kk is
/// a[r * lda + kk] (row-major A); rows past mr are read but never stored.
using MicroRowAFn = void (*)(int64_t kc, const float *a, int64_t lda,
                             const float *bp, float *c, int64_t ldc, int64_t mr,
                             int64_t nr, float alpha, float beta);

struct GemmKernelSet {
  int mr, nr;
  MicroKernelFn micro;
  MicroRowAFn microRowA; // null: A is always packed
  SmallMFn smallM;
  DotFn dot;
};

const GemmKernelSet &genericGemmKernels();
const GemmKernelSet &avx2GemmKernels();
const GemmKernelSet &avx512GemmKernels();
/// The set of `isa` (which must be supported).
const GemmKernelSet &gemmKernels(GemmIsa isa);

/// Packs rows [i0, i0 + mr) x columns [p0, p0 + kc) of op(A) as kc columns
/// of MR floats, zero-padding rows past mr: the A panel `micro` reads.
void packAPanel(const GemmArgs &g, int64_t i0, int64_t mr, int64_t p0,
                int64_t kc, int MR, float *dst);

/// Shared edge handling: merges a full MR x NR accumulator tile (row stride
/// nrFull) into the valid mr x nr corner of C.
void storeTile(const float *acc, int64_t nrFull, float *c, int64_t ldc,
               int64_t mr, int64_t nr, float alpha, float beta);

} // namespace ingot::cpu
