//===- MatMulInteger.cpp - (a - a_zp) x (b - b_zp) in int32 ---------------===//
//
// ONNX MatMulInteger, the product onnxruntime's dynamic quantiser writes for
// every MatMul: uint8/int8 operands with zero points, an exact int32 result.
// Each operand minus its zero point fits int16 (|v| <= 255), so products
// of pairs summed by AVX2's vpmaddwd are exact — unlike vpmaddubsw, which
// saturates u8 x s8 pair sums. B is packed once per call into 16-column
// panels of k-pairs ([panel][k/2][16][2] int16, zero point subtracted), A
// row by row into int16 pairs; a 6 x 16 register tile (12 of the 16 ymm
// registers) accumulates int32.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"

#include <immintrin.h>

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
    if (cols == kCols) {
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(c + r * ldc), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(c + r * ldc + 8),
                          acc[r][1]);
      continue;
    }
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
        const int16_t *pair = reinterpret_cast<const int16_t *>(ap[r] + kk);
        const int16_t *bv = bp + (kk * kCols + j) * 2;
        sum += int32_t(pair[0]) * bv[0] + int32_t(pair[1]) * bv[1];
      }
      c[r * ldc + j] = sum;
    }
}

/// B [k, n] minus its zero point (scalar or per column) into panels; the
/// padding past n and past an odd k is 0.
template <typename T>
void packBTyped(const T *b, const T *zp, bool perColumn, int64_t k, int64_t n,
                Packed &p, KernelContext &ctx) {
  ctx.parallelFor(p.panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t panel = p0; panel < p1; ++panel) {
      const int64_t j0 = panel * kCols, cols = std::min(kCols, n - j0);
      int32_t z[kCols] = {};
      for (int64_t j = 0; j < cols; ++j)
        z[j] = zp ? int32_t(zp[perColumn ? j0 + j : 0]) : 0;
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

void packB(const KernelInput &b, const KernelInput *zp, int64_t k, int64_t n,
           Packed &p, KernelContext &ctx) {
  p.kPairs = (k + 1) / 2;
  p.panels = (n + kCols - 1) / kCols;
  p.b.resize(size_t(p.panels * p.kPairs * kCols * 2));
  const bool perColumn = zp && zp->numElements() > 1;
  if (b.dtype == DType::U8)
    packBTyped(b.as<uint8_t>(), zp ? zp->as<uint8_t>() : nullptr, perColumn, k,
               n, p, ctx);
  else
    packBTyped(b.as<int8_t>(), zp ? zp->as<int8_t>() : nullptr, perColumn, k, n,
               p, ctx);
}

/// A's rows minus its zero point as int16 pairs (odd k padded with 0).
template <typename T>
void packATyped(const T *a, int32_t z, int64_t rows, int64_t k, Packed &p,
                KernelContext &ctx) {
  ctx.parallelFor(rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      auto *dst = reinterpret_cast<int16_t *>(p.a.data() + r * p.kPairs);
      const T *row = a + r * k;
      for (int64_t kk = 0; kk < k; ++kk)
        dst[kk] = int16_t(int32_t(row[kk]) - z);
      if (k % 2)
        dst[k] = 0;
    }
  });
}

void packA(const KernelInput &a, const KernelInput *zp, int64_t rows, int64_t k,
           Packed &p, KernelContext &ctx) {
  p.a.resize(size_t(rows * p.kPairs));
  if (a.dtype == DType::U8)
    packATyped(a.as<uint8_t>(), zp ? int32_t(*zp->as<uint8_t>()) : 0, rows, k,
               p, ctx);
  else
    packATyped(a.as<int8_t>(), zp ? int32_t(*zp->as<int8_t>()) : 0, rows, k, p,
               ctx);
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

Status matmulIntegerKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 4, 1); !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::U8, DType::I8}); !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {DType::I32}); !s)
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
  const int64_t k = a.shape.back(), n = b.shape[1];
  const int64_t rows = shape::numElements(a.shape) / std::max<int64_t>(k, 1);
  const KernelInput *azp = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  const KernelInput *bzp = ctx.hasInput(3) ? &ctx.input(3) : nullptr;
  if (azp)
    if (Status s = checkZeroPoint(ctx, 2, a.dtype, 0); !s)
      return s;
  if (bzp)
    if (Status s = checkZeroPoint(ctx, 3, b.dtype, n); !s)
      return s;
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  int32_t *c = ctx.output(0).as<int32_t>();
  if (rows == 0 || n == 0)
    return Status::ok();
  Packed p;
  packB(b, bzp, k, n, p, ctx);
  packA(a, azp, rows, k, p, ctx);
  auto tile = gemmIsaSupported(GemmIsa::Avx2) ? tileAvx2 : tileGeneric;
  const int64_t rowTiles = (rows + kRows - 1) / kRows;
  ctx.parallelFor(rowTiles * p.panels, 4, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      // Panel-major: consecutive tiles of a worker share one B panel.
      const int64_t panel = t / rowTiles, r0 = (t % rowTiles) * kRows;
      const int64_t nr = std::min(kRows, rows - r0);
      const int32_t *ap[kRows];
      for (int64_t r = 0; r < kRows; ++r)
        ap[r] = p.a.data() + (r0 + (r < nr ? r : 0)) * p.kPairs;
      const int64_t j0 = panel * kCols;
      tile(ap, p.b.data() + panel * p.kPairs * kCols * 2, p.kPairs,
           c + r0 * n + j0, n, nr, std::min(kCols, n - j0));
    }
  });
  return Status::ok();
}

} // namespace

void addMatMulIntegerKernels(std::vector<KernelImpl> &table) {
  table.push_back({"matmul_integer", matmulIntegerKernel});
}

} // namespace ingot::cpu
