//===- MatMulIntegerVnni.cpp - 8-bit products with AVX-512 VNNI -----------===//
//
// vpdpbusd multiplies unsigned bytes by signed bytes and adds each group of
// four products into an int32 lane without saturating. Operands are shifted
// into those ranges (int8 A: a + 128; uint8 B: b - 128, both a flip of the
// top bit) and the zero points and shifts are applied once per output:
//   sum_k (a' - A0)(b' - B0[n]) = sum_k a'b' - A0 colsum[n] - B0[n] rowsum[m]
//                                 + k A0 B0[n]
// with A0 = shift + a_zero and B0[n] = b_zero[n] - shift. All in int32 with
// wrap-around, exact whenever the true result fits int32.
//
// Compiled for the baseline ISA with per-function target attributes; only
// called after CPUID reported AVX-512 F/BW and VNNI (qgemmIsaSupported).
//
//===----------------------------------------------------------------------===//

#include "cpu/MatMulInteger.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#define INGOT_VNNI                                                             \
  __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace ingot::cpu {
namespace {

/// A tile: 6 rows x 64 columns, 24 accumulators, 4 B vectors and 6
/// broadcasts of A per 24 vpdpbusd. 8 x 32 took 10 loads per 16: on
/// [128, 384] x [384, 1536] one thread went 0.40-0.50 -> 0.35 ms (min).
constexpr int64_t kRows = 6, kCols = 64;
constexpr int kVecs = int(kCols / 16);

/// One call's operands: B's panels (packed now or kept from an earlier
/// call), A shifted, and the per-column corrections for this A's zero point.
struct Packed {
  int64_t kQuads = 0, panels = 0;
  const QPackedB *b = nullptr;
  /// A as uint8 rows of `lda` bytes, kQuads * 4 of them read: A itself
  /// when it is uint8 of whole quads, else `ownA`, shifted and padded.
  const uint8_t *a = nullptr;
  int64_t lda = 0;
  std::unique_ptr<uint8_t[]> ownA;
  std::vector<int32_t> rowSum;
  std::vector<int32_t> colCorr, b0; // per padded column
  const QGemmArgs *g = nullptr;     // the scale and bias of a float C
};

/// One stored vector of C: int32, or converted, scaled and biased as the
/// cast, mul and add kernels do (a multiply, then an add: not one FMA).
INGOT_VNNI inline void storeResult(const Packed &p, int64_t col, __mmask16 mask,
                                   __m512i res, int32_t *dst) {
  const QGemmArgs &g = *p.g;
  if (!g.scale) {
    _mm512_mask_storeu_epi32(dst, mask, res);
    return;
  }
  const __m512 scale = g.scalePerColumn
                           ? _mm512_maskz_loadu_ps(mask, g.scale + col)
                           : _mm512_set1_ps(*g.scale);
  __m512 f = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xffff, res), scale);
  if (g.bias)
    f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(mask, g.bias + col));
  _mm512_mask_storeu_ps(reinterpret_cast<float *>(dst), mask, f);
}

/// acc += a (unsigned bytes) . b (signed bytes), four products per lane.
/// In asm so that each accumulator stays in one register: through the
/// intrinsic, GCC 12 moved all 16 accumulators between registers (and the
/// stack) on every iteration, three instructions per vpdpbusd.
INGOT_VNNI inline __m512i dpbusd(__m512i acc, __m512i a, __m512i b) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

/// kR x kCols (kR <= kRows): a ragged last row tile runs as a smaller one
/// rather than a full tile whose extra rows are thrown away (BERT's 128
/// rows end in a tile of 2, which cost as much as 6).
template <int kR>
INGOT_VNNI void tile(const uint8_t *const ap[kRows], const int8_t *bp,
                     const Packed &p, int64_t j0, int32_t *c, int64_t ldc,
                     const int32_t *rowSum, int64_t cols) {
  __m512i acc[kR][kVecs];
  for (auto &r : acc)
    for (auto &v : r)
      v = _mm512_setzero_si512();
  for (int64_t q = 0; q < p.kQuads; ++q) {
    __m512i bv[kVecs];
    for (int v = 0; v < kVecs; ++v)
      bv[v] = _mm512_loadu_si512(bp + q * kCols * 4 + 64 * v);
    for (int r = 0; r < kR; ++r) {
      int32_t quad;
      std::memcpy(&quad, ap[r] + q * 4, 4);
      const __m512i a = _mm512_set1_epi32(quad);
      for (int v = 0; v < kVecs; ++v)
        acc[r][v] = dpbusd(acc[r][v], a, bv[v]);
    }
  }
  for (int v = 0; v < kVecs; ++v) {
    const int64_t left = cols - 16 * v;
    if (left <= 0)
      break;
    const __mmask16 mask =
        left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    const __m512i corr = _mm512_loadu_si512(p.colCorr.data() + j0 + 16 * v);
    const __m512i bz = _mm512_loadu_si512(p.b0.data() + j0 + 16 * v);
    for (int r = 0; r < kR; ++r) {
      __m512i res = _mm512_add_epi32(acc[r][v], corr);
      res = _mm512_sub_epi32(
          res, _mm512_mullo_epi32(bz, _mm512_set1_epi32(rowSum[r])));
      storeResult(p, j0 + 16 * v, mask, res, c + r * ldc + 16 * v);
    }
  }
  if (p.g->act != linear::Act::None)
    for (int r = 0; r < kR; ++r)
      linear::activate(p.g->act, reinterpret_cast<float *>(c + r * ldc), cols);
}

/// The tile of `rows` rows (1 to kRows).
static_assert(kRows == 6, "tileOfRows has a case per row count");
void tileOfRows(int64_t rows, const uint8_t *const ap[kRows], const int8_t *bp,
                const Packed &p, int64_t j0, int32_t *c, int64_t ldc,
                const int32_t *rowSum, int64_t cols) {
  switch (rows) {
  case 6:
    return tile<6>(ap, bp, p, j0, c, ldc, rowSum, cols);
  case 5:
    return tile<5>(ap, bp, p, j0, c, ldc, rowSum, cols);
  case 4:
    return tile<4>(ap, bp, p, j0, c, ldc, rowSum, cols);
  case 3:
    return tile<3>(ap, bp, p, j0, c, ldc, rowSum, cols);
  case 2:
    return tile<2>(ap, bp, p, j0, c, ldc, rowSum, cols);
  default:
    return tile<1>(ap, bp, p, j0, c, ldc, rowSum, cols);
  }
}

/// 32 columns of four consecutive rows of B (flipped to int8; rows past k
/// are 0) as 32 quads in column order, and each quad's sum added to `sums`.
template <typename T>
INGOT_VNNI void packQuads(const T *b, const QGemmArgs &g, int64_t kk,
                          int64_t j0, int64_t cols, __m256i flip, int8_t *dst,
                          __m256i sums[4]) {
  const __mmask32 mask =
      cols >= 32 ? __mmask32(0xffffffffu) : __mmask32((1u << cols) - 1);
  __m256i r[4];
  for (int i = 0; i < 4; ++i)
    r[i] =
        kk + i < g.k
            ? _mm256_xor_si256(
                  _mm256_maskz_loadu_epi8(mask, b + (kk + i) * g.n + j0), flip)
            : _mm256_setzero_si256();
  // Byte pairs, then quads: within each 128-bit lane, columns 0-3, 4-7...
  const __m256i t0 = _mm256_unpacklo_epi8(r[0], r[1]);
  const __m256i t1 = _mm256_unpackhi_epi8(r[0], r[1]);
  const __m256i t2 = _mm256_unpacklo_epi8(r[2], r[3]);
  const __m256i t3 = _mm256_unpackhi_epi8(r[2], r[3]);
  const __m256i q0 = _mm256_unpacklo_epi16(t0, t2);
  const __m256i q1 = _mm256_unpackhi_epi16(t0, t2);
  const __m256i q2 = _mm256_unpacklo_epi16(t1, t3);
  const __m256i q3 = _mm256_unpackhi_epi16(t1, t3);
  const __m256i out[4] = {_mm256_permute2x128_si256(q0, q1, 0x20),
                          _mm256_permute2x128_si256(q2, q3, 0x20),
                          _mm256_permute2x128_si256(q0, q1, 0x31),
                          _mm256_permute2x128_si256(q2, q3, 0x31)};
  const __m256i ones = _mm256_set1_epi8(1);
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + 32 * i), out[i]);
    sums[i] = _mm256_dpbusd_epi32(sums[i], ones, out[i]);
  }
}

template <typename T>
INGOT_VNNI void packPanel(const T *b, const QGemmArgs &g, int64_t panel,
                          QPackedB &p) {
  const int64_t j0 = panel * kCols, cols = std::min(kCols, g.n - j0);
  const __m256i flip = _mm256_set1_epi8(g.bUnsigned ? char(0x80) : 0);
  int8_t *dst = p.b.data() + panel * p.kQuads * kCols * 4;
  __m256i sums[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                     _mm256_setzero_si256(), _mm256_setzero_si256()};
  alignas(32) int32_t colSum[kCols];
  for (int64_t h = 0; h < kCols; h += 32) {
    for (auto &v : sums)
      v = _mm256_setzero_si256();
    const int64_t part = std::clamp<int64_t>(cols - h, 0, 32);
    for (int64_t q = 0; q < p.kQuads; ++q)
      if (part > 0)
        packQuads(b, g, 4 * q, j0 + h, part, flip, dst + q * kCols * 4 + 4 * h,
                  sums);
      else
        std::memset(dst + q * kCols * 4 + 4 * h, 0, 128);
    for (int i = 0; i < 4; ++i)
      _mm256_store_si256(reinterpret_cast<__m256i *>(colSum + h + 8 * i),
                         sums[i]);
  }
  std::copy(colSum, colSum + cols, p.colSum.begin() + j0);
}

template <typename T>
void packBPanels(const QGemmArgs &g, QPackedB &p, ThreadPool *pool) {
  const T *b = static_cast<const T *>(g.b);
  qgemmParallel(pool, p.panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t panel = p0; panel < p1; ++panel)
      packPanel(b, g, panel, p);
  });
}

/// Per column: B0[n] = b_zero[n] - shift and the correction
/// k A0 B0[n] - A0 colsum[n] (uint32: wraps).
void columnCorrections(const QGemmArgs &g, int32_t a0, Packed &p) {
  const uint32_t shift = g.bUnsigned ? 128 : 0;
  for (int64_t j = 0; j < g.n; ++j) {
    const uint32_t b0 = uint32_t(bZeroAt(g, j)) - shift;
    p.b0[j] = int32_t(b0);
    p.colCorr[j] = int32_t(uint32_t(g.k) * uint32_t(a0) * b0 -
                           uint32_t(a0) * uint32_t(p.b->colSum[j]));
  }
}

/// The sum of v's eight int64 lanes, through memory: GCC 12's
/// _mm512_reduce_add_epi64 extracts with an undefined vector, which
/// -Wmaybe-uninitialized reports.
INGOT_VNNI inline int64_t addLanes(__m512i v) {
  alignas(64) int64_t lanes[8];
  _mm512_store_si512(lanes, v);
  int64_t sum = 0;
  for (int64_t lane : lanes)
    sum += lane;
  return sum;
}

/// One row of A shifted to uint8 (the top bit flipped for int8), padded
/// with 0 to `width`; returns its sum.
INGOT_VNNI int32_t packRow(const uint8_t *src, int64_t k, int64_t width,
                           uint8_t flip, uint8_t *dst) {
  const __m512i f = _mm512_set1_epi8(char(flip));
  __m512i sum = _mm512_setzero_si512();
  for (int64_t kk = 0; kk < width; kk += 64) {
    const int64_t left = std::min<int64_t>(64, k - kk);
    const __mmask64 mask = left <= 0    ? 0
                           : left >= 64 ? ~__mmask64(0)
                                        : (__mmask64(1) << left) - 1;
    const __m512i v = _mm512_maskz_mov_epi8(
        mask, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, src + kk), f));
    const __mmask64 store =
        width - kk >= 64 ? ~__mmask64(0) : (__mmask64(1) << (width - kk)) - 1;
    _mm512_mask_storeu_epi8(dst + kk, store, v);
    sum = _mm512_add_epi64(sum, _mm512_sad_epu8(v, _mm512_setzero_si512()));
  }
  return int32_t(addLanes(sum));
}

/// The sum of each of `rows` uint8 rows of k bytes (a short last piece of
/// a row read masked).
INGOT_VNNI void rowSums(const uint8_t *a, int64_t rows, int64_t k,
                        int32_t *sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *row = a + r * k;
    __m512i sum = _mm512_setzero_si512();
    for (int64_t kk = 0; kk < k; kk += 64) {
      const int64_t left = k - kk;
      const __mmask64 mask =
          left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
      sum = _mm512_add_epi64(
          sum, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(mask, row + kk),
                               _mm512_setzero_si512()));
    }
    sums[r] = int32_t(addLanes(sum));
  }
}

/// A in the form the tiles read. A uint8 A of whole quads (the output of
/// DynamicQuantizeLinear, as BERT's int8 layers have it) is read in place
/// and only its row sums are taken, on the caller: copying it was a
/// parallel pass and a barrier per product, for nothing.
void prepareA(const QGemmArgs &g, Packed &p, ThreadPool *pool) {
  const auto *a = static_cast<const uint8_t *>(g.a);
  if (g.aUnsigned && g.k % 4 == 0) {
    p.a = a, p.lda = g.k;
    rowSums(a, g.rows, g.k, p.rowSum.data());
    return;
  }
  const uint8_t flip = g.aUnsigned ? 0 : 0x80;
  const int64_t width = p.kQuads * 4;
  p.ownA.reset(new uint8_t[size_t(g.rows * width)]);
  p.a = p.ownA.get(), p.lda = width;
  qgemmParallel(pool, g.rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      p.rowSum[r] =
          packRow(a + r * g.k, g.k, width, flip, p.ownA.get() + r * width);
  });
}

} // namespace

QPackedB qpackBVnni(const QGemmArgs &g, ThreadPool *pool) {
  QPackedB p;
  p.k = g.k, p.n = g.n, p.bUnsigned = g.bUnsigned;
  p.kQuads = (g.k + 3) / 4;
  p.panels = (g.n + kCols - 1) / kCols;
  p.b.resize(size_t(p.panels * p.kQuads * kCols * 4));
  p.colSum.assign(size_t(p.panels * kCols), 0);
  if (g.bUnsigned)
    packBPanels<uint8_t>(g, p, pool);
  else
    packBPanels<int8_t>(g, p, pool);
  return p;
}

void qgemmVnni(const QGemmArgs &g, ThreadPool *pool, const QPackedB *packedB) {
  QPackedB own;
  if (!packedB || packedB->k != g.k || packedB->n != g.n ||
      packedB->bUnsigned != g.bUnsigned) {
    own = qpackBVnni(g, pool);
    packedB = &own;
  }
  Packed p;
  p.g = &g;
  p.b = packedB;
  p.kQuads = packedB->kQuads;
  p.panels = packedB->panels;
  p.rowSum.resize(size_t(g.rows));
  p.colCorr.assign(size_t(p.panels * kCols), 0);
  p.b0.assign(size_t(p.panels * kCols), 0);
  columnCorrections(g, (g.aUnsigned ? 0 : 128) + g.aZero, p);
  prepareA(g, p, pool);
  const int64_t rowTiles = (g.rows + kRows - 1) / kRows;
  qgemmParallel(pool, rowTiles * p.panels, 2, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      // Panel-major: consecutive tiles of a worker share one B panel.
      const int64_t panel = t / rowTiles, r0 = (t % rowTiles) * kRows;
      const int64_t nr = std::min(kRows, g.rows - r0);
      const uint8_t *ap[kRows];
      for (int64_t r = 0; r < nr; ++r)
        ap[r] = p.a + (r0 + r) * p.lda;
      const int64_t j0 = panel * kCols;
      tileOfRows(nr, ap, packedB->b.data() + panel * p.kQuads * kCols * 4, p,
                 j0, g.c + r0 * g.n + j0, g.n, p.rowSum.data() + r0,
                 std::min(kCols, g.n - j0));
    }
  });
}

} // namespace ingot::cpu
