//===- MatMulInteger.cpp - (a - a_zp) x (b - b_zp) in int32 ---------------===//
//
// ONNX MatMulInteger, the product onnxruntime's dynamic quantiser writes for
// every MatMul: uint8/int8 operands with zero points, an exact int32 result.
// The int16 engine here: each operand minus its zero point fits int16
// (|v| <= 255), so pairs of products summed by AVX2's vpmaddwd are exact —
// unlike vpmaddubsw, which saturates u8 x s8 pair sums. B is packed once
// per call into 16-column panels of k-pairs ([panel][k/2][16][2] int16,
// zero point subtracted), A row by row into int16 pairs; a 6 x 16 register
// tile (12 of the 16 ymm registers) accumulates int32. CPUs with AVX-512
// VNNI use MatMulIntegerVnni.cpp instead.
//
//===----------------------------------------------------------------------===//

#include "cpu/MatMulInteger.h"
#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"
#include "cpu/LinearBlocks.h"
#include "cpu/StepCache.h"

#include "ingot/ThreadPool.h"

#include <immintrin.h>

#include <cstring>

#include <string>

#define INGOT_AVX2 __attribute__((target("avx2,fma")))

namespace ingot::cpu {
namespace {

constexpr int64_t kRows = 6, kCols = 16;

struct Packed {
  int64_t kPairs = 0, panels = 0;
  std::vector<int16_t> b; // [panel][kPair][kCols][2]
  std::vector<int32_t> a; // [row][kPair], two int16 per int32
};

/// 6 rows x 16 columns of C from packed pairs; rows past `rows` read row
/// 0 again and are not stored.
INGOT_AVX2 void tileAvx2(const int32_t *const ap[kRows], const int16_t *bp,
                         int64_t kPairs, int32_t *c, int64_t ldc, int64_t rows,
                         int64_t cols) {
  __m256i acc[kRows][2];
  for (auto &r : acc)
    r[0] = r[1] = _mm256_setzero_si256();
  for (int64_t kk = 0; kk < kPairs; ++kk) {
    const __m256i b0 = _mm256_loadu_si256(
        reinterpret_cast<const __m256i *>(bp + kk * 2 * kCols));
    const __m256i b1 = _mm256_loadu_si256(
        reinterpret_cast<const __m256i *>(bp + kk * 2 * kCols + kCols));
    for (int r = 0; r < kRows; ++r) {
      const __m256i a = _mm256_set1_epi32(ap[r][kk]);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, b1));
    }
  }
  alignas(32) int32_t tile[kCols];
  for (int64_t r = 0; r < rows; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i *>(tile), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i *>(tile + 8), acc[r][1]);
    std::copy(tile, tile + cols, c + r * ldc);
  }
}

void tileGeneric(const int32_t *const ap[kRows], const int16_t *bp,
                 int64_t kPairs, int32_t *c, int64_t ldc, int64_t rows,
                 int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      int32_t sum = 0;
      for (int64_t kk = 0; kk < kPairs; ++kk) {
        const auto *pair = reinterpret_cast<const int16_t *>(ap[r] + kk);
        const int16_t *bv = bp + (kk * kCols + j) * 2;
        sum += int32_t(pair[0]) * bv[0] + int32_t(pair[1]) * bv[1];
      }
      c[r * ldc + j] = sum;
    }
}

/// B [k, n] minus its zero point into panels; the padding past n and past
/// an odd k is 0.
template <typename T>
void packB(const QGemmArgs &g, Packed &p, ThreadPool *pool) {
  const T *b = static_cast<const T *>(g.b);
  const int64_t k = g.k, n = g.n;
  qgemmParallel(pool, p.panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t panel = p0; panel < p1; ++panel) {
      const int64_t j0 = panel * kCols, cols = std::min(kCols, n - j0);
      int32_t z[kCols] = {};
      for (int64_t j = 0; j < cols; ++j)
        z[j] = bZeroAt(g, j0 + j);
      int16_t *dst = p.b.data() + panel * p.kPairs * kCols * 2;
      for (int64_t kk = 0; kk < k; ++kk) {
        const T *row = b + kk * n + j0;
        int16_t *out = dst + (kk / 2) * kCols * 2 + kk % 2;
        int64_t j = 0;
        for (; j < cols; ++j)
          out[2 * j] = int16_t(int32_t(row[j]) - z[j]);
        for (; j < kCols; ++j)
          out[2 * j] = 0;
      }
      if (k % 2) // the odd row's partner
        for (int64_t j = 0; j < kCols; ++j)
          dst[((k / 2) * kCols + j) * 2 + 1] = 0;
    }
  });
}

/// A's rows minus its zero point as int16 pairs (odd k padded with 0).
template <typename T>
void packA(const QGemmArgs &g, Packed &p, ThreadPool *pool) {
  const T *a = static_cast<const T *>(g.a);
  qgemmParallel(pool, g.rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      auto *dst = reinterpret_cast<int16_t *>(p.a.data() + r * p.kPairs);
      const T *row = a + r * g.k;
      for (int64_t kk = 0; kk < g.k; ++kk)
        dst[kk] = int16_t(int32_t(row[kk]) - g.aZero);
      if (g.k % 2)
        dst[g.k] = 0;
    }
  });
}

void qgemmInt16(const QGemmArgs &g, ThreadPool *pool, bool avx2) {
  Packed p;
  p.kPairs = (g.k + 1) / 2;
  p.panels = (g.n + kCols - 1) / kCols;
  p.b.resize(size_t(p.panels * p.kPairs * kCols * 2));
  p.a.resize(size_t(g.rows * p.kPairs));
  if (g.bUnsigned)
    packB<uint8_t>(g, p, pool);
  else
    packB<int8_t>(g, p, pool);
  if (g.aUnsigned)
    packA<uint8_t>(g, p, pool);
  else
    packA<int8_t>(g, p, pool);
  auto tile = avx2 ? tileAvx2 : tileGeneric;
  const int64_t rowTiles = (g.rows + kRows - 1) / kRows;
  qgemmParallel(pool, rowTiles * p.panels, 4, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      // Panel-major: consecutive tiles of a worker share one B panel.
      const int64_t panel = t / rowTiles, r0 = (t % rowTiles) * kRows;
      const int64_t nr = std::min(kRows, g.rows - r0);
      const int32_t *ap[kRows];
      for (int64_t r = 0; r < kRows; ++r)
        ap[r] = p.a.data() + (r0 + (r < nr ? r : 0)) * p.kPairs;
      const int64_t j0 = panel * kCols;
      tile(ap, p.b.data() + panel * p.kPairs * kCols * 2, p.kPairs,
           g.c + r0 * g.n + j0, g.n, nr, std::min(kCols, g.n - j0));
    }
  });
}

/// The scale, bias and activation of a matmul_integer with a float result.
Status bindEpilogue(KernelContext &ctx, QGemmArgs &g, linear::Act *act) {
  const bool scaled = ctx.hasInput(4);
  if (Status s = ctx.expectOutputDType(0, {scaled ? DType::F32 : DType::I32});
      !s)
    return s;
  if (!scaled) {
    if (ctx.hasInput(5))
      return ctx.error("a bias needs a scale");
    return Status::ok();
  }
  const KernelInput &scale = ctx.input(4);
  if (Status s = ctx.expectInputDType(4, {DType::F32}); !s)
    return s;
  const int64_t count = scale.numElements();
  if (count != 1 && (scale.shape.size() != 1 || count != g.n))
    return ctx.error(
        "scale '" + scale.name + "' has shape " + shape::toString(scale.shape) +
        "; expected one value or one per column (" + std::to_string(g.n) + ")");
  g.scale = scale.as<float>();
  g.scalePerColumn = count != 1;
  if (ctx.hasInput(5)) {
    const KernelInput &bias = ctx.input(5);
    if (Status s = ctx.expectInputDType(5, {DType::F32}); !s)
      return s;
    if (bias.shape.size() != 1 || bias.shape[0] != g.n)
      return ctx.error("bias '" + bias.name + "' has shape " +
                       shape::toString(bias.shape) + "; expected [" +
                       std::to_string(g.n) + "]");
    g.bias = bias.as<float>();
  }
  return linear::parseActivation(ctx, act);
}

Status matmulIntegerKernel(KernelContext &ctx) {
  if (Status s = expectInteger8Operands(ctx, 2); !s)
    return s;
  const KernelInput &a = ctx.input(0), &b = ctx.input(1);
  if (a.shape.size() < 2 || b.shape.size() != 2)
    return ctx.error("needs a of rank >= 2 and a 2-D b, got " +
                     shape::toString(a.shape) + " and " +
                     shape::toString(b.shape));
  shape::Shape outShape;
  std::string err;
  if (!shape::matmul(a.shape, b.shape, &outShape, &err))
    return ctx.error(err);
  QGemmArgs g;
  g.k = a.shape.back();
  g.n = b.shape[1];
  g.rows = shape::numElements(a.shape) / std::max<int64_t>(g.k, 1);
  if (ctx.hasInput(2)) {
    if (Status s = checkZeroPoint(ctx, 2, a.dtype, 0); !s)
      return s;
    const KernelInput &zp = ctx.input(2);
    g.aZero = a.dtype == DType::U8 ? *zp.as<uint8_t>() : *zp.as<int8_t>();
  }
  if (ctx.hasInput(3)) {
    if (Status s = checkZeroPoint(ctx, 3, b.dtype, g.n); !s)
      return s;
    g.bZero = ctx.input(3).data;
    g.bZeroPerColumn = ctx.input(3).numElements() > 1;
  }
  if (Status s = bindEpilogue(ctx, g, &g.act); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  g.a = a.data;
  g.aUnsigned = a.dtype == DType::U8;
  g.b = b.data;
  g.bUnsigned = b.dtype == DType::U8;
  // A float result takes the int32 products in its own memory first.
  g.c = static_cast<int32_t *>(ctx.output(0).data);
  if (g.rows == 0 || g.n == 0)
    return Status::ok();
  const QGemmIsa isa = bestQGemmIsa();
  if (isa == QGemmIsa::Avx512Vnni && b.constant && ctx.stepCache()) {
    // A weight B: its panels and column sums are packed once per step.
    const uint64_t key = stepCacheKey(
        g.b, {uint64_t(g.k), uint64_t(g.n), uint64_t(g.bUnsigned)});
    std::shared_ptr<const QPackedB> packed = ctx.stepCache()->get<QPackedB>(
        key, [&] { return qpackBVnni(g, ctx.pool()); });
    qgemmVnni(g, ctx.pool(), packed.get());
  } else {
    qgemm(g, ctx.pool(), isa);
  }
  return Status::ok();
}

} // namespace

Status expectInteger8Operands(KernelContext &ctx, size_t extra) {
  if (Status s = ctx.expectArity(2, 4 + extra, 1); !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::U8, DType::I8}); !s)
      return s;
  return Status::ok();
}

void dequantizeRows(const QGemmArgs &g, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    int32_t *row = g.c + r * g.n;
    float *out = reinterpret_cast<float *>(row);
    for (int64_t j = 0; j < g.n; ++j) {
      int32_t v;
      std::memcpy(&v, row + j, sizeof v);
      // Two roundings, as the mul and add kernels: this file is built for
      // the baseline ISA, which has no fused multiply-add to contract to.
      float f = float(v) * g.scale[g.scalePerColumn ? j : 0];
      if (g.bias)
        f = f + g.bias[j];
      std::memcpy(out + j, &f, sizeof f);
    }
    linear::activate(g.act, out, g.n);
  }
}

Status checkZeroPoint(KernelContext &ctx, size_t i, DType want,
                      int64_t perColumn) {
  const KernelInput &zp = ctx.input(i);
  if (zp.dtype != want)
    return ctx.error("zero point #" + std::to_string(i) + " is " +
                     dtypeName(zp.dtype) + ", not " + dtypeName(want));
  int64_t n = zp.numElements();
  if (n != 1 && (perColumn == 0 || n != perColumn || zp.shape.size() != 1))
    return ctx.error("zero point #" + std::to_string(i) + " has shape " +
                     shape::toString(zp.shape) + "; expected one value" +
                     (perColumn ? " or one per column" : ""));
  return Status::ok();
}

void qgemmParallel(ThreadPool *pool, int64_t n, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &fn) {
  if (pool)
    pool->parallelFor(n, grain, fn);
  else if (n > 0)
    fn(0, n);
}

bool qgemmIsaSupported(QGemmIsa isa) {
  switch (isa) {
  case QGemmIsa::Generic:
    return true;
  case QGemmIsa::Avx2:
    return __builtin_cpu_supports("avx2");
  case QGemmIsa::Avx512Vnni:
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vnni");
  }
  return false;
}

QGemmIsa bestQGemmIsa() {
  // Follows sgemm's choice (and its INGOT_GEMM_ISA cap): VNNI where the
  // AVX-512 kernels run and the CPU has it.
  static const QGemmIsa best = [] {
    switch (bestGemmIsa()) {
    case GemmIsa::Avx512:
      return qgemmIsaSupported(QGemmIsa::Avx512Vnni) ? QGemmIsa::Avx512Vnni
                                                     : QGemmIsa::Avx2;
    case GemmIsa::Avx2:
      return QGemmIsa::Avx2;
    default:
      return QGemmIsa::Generic;
    }
  }();
  return best;
}

const char *qgemmIsaName(QGemmIsa isa) {
  switch (isa) {
  case QGemmIsa::Generic:
    return "generic";
  case QGemmIsa::Avx2:
    return "avx2";
  case QGemmIsa::Avx512Vnni:
    return "avx512-vnni";
  }
  return "?";
}

void qgemm(const QGemmArgs &g, ThreadPool *pool, QGemmIsa isa) {
  if (isa == QGemmIsa::Avx512Vnni) {
    qgemmVnni(g, pool);
    return;
  }
  qgemmInt16(g, pool, isa == QGemmIsa::Avx2);
  if (g.scale)
    qgemmParallel(pool, g.rows, 16,
                  [&](int64_t r0, int64_t r1) { dequantizeRows(g, r0, r1); });
}

void addMatMulIntegerKernels(std::vector<KernelImpl> &table) {
  table.push_back({"matmul_integer", matmulIntegerKernel});
}

} // namespace ingot::cpu
