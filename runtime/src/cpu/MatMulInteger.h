//===- MatMulInteger.h - Exact 8-bit matrix products ------------*- C++ -*-===//
//
// C = (A - a_zero) x (B - b_zero) in int32 for uint8/int8 A [rows, k] and B
// [k, n] (row-major), the core of the matmul_integer kernel. Two engines:
// int16 pairs summed by vpmaddwd (AVX2, and a portable loop), and AVX-512
// VNNI's vpdpbusd on shifted bytes with the zero points applied afterwards
// from row and column sums. Both are exact: no intermediate saturates.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelRegistry.h"
#include "cpu/LinearBlocks.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ingot {
class ThreadPool;
} // namespace ingot

namespace ingot::cpu {

struct QGemmArgs {
  int64_t rows = 0, k = 0, n = 0;
  const void *a = nullptr;
  bool aUnsigned = true;
  int32_t aZero = 0;
  const void *b = nullptr;
  bool bUnsigned = false;
  /// One value, or one per column when bZeroPerColumn; null means 0.
  const void *bZero = nullptr;
  bool bZeroPerColumn = false;
  int32_t *c = nullptr;
  /// With a scale, C holds floats: product · scale (one value, or one per
  /// column when scalePerColumn) + bias (per column; null: none), as the
  /// cast, mul and add kernels compute them (no fused multiply-add). The
  /// VNNI tiles convert in registers, the other engines in place after.
  const float *scale = nullptr;
  bool scalePerColumn = false;
  const float *bias = nullptr;
  /// Then an activation on a float C, applied to each tile (VNNI) or row
  /// range while it is in cache.
  linear::Act act = linear::Act::None;
};

enum class QGemmIsa { Generic, Avx2, Avx512Vnni };

bool qgemmIsaSupported(QGemmIsa isa);
/// The fastest engine this CPU supports.
QGemmIsa bestQGemmIsa();
const char *qgemmIsaName(QGemmIsa isa);

/// Runs on `pool` when given; `isa` must be supported.
void qgemm(const QGemmArgs &args, ThreadPool *pool, QGemmIsa isa);

/// What the VNNI engine derives from B alone (flipped to int8 in panels of
/// k-quads, and its column sums), kept across calls when B is a weight;
/// the zero points are applied per call.
struct QPackedB {
  int64_t k = 0, n = 0, kQuads = 0, panels = 0;
  bool bUnsigned = false;
  std::vector<int8_t> b;       // [panel][kQuad][64][4]
  std::vector<int32_t> colSum; // per padded column
};
QPackedB qpackBVnni(const QGemmArgs &args, ThreadPool *pool);

/// The VNNI engine (MatMulIntegerVnni.cpp); packs B itself unless given
/// one packed from the same B.
void qgemmVnni(const QGemmArgs &args, ThreadPool *pool,
               const QPackedB *packedB = nullptr);

/// fn(begin, end) over [0, n) on `pool`, or inline without one.
void qgemmParallel(ThreadPool *pool, int64_t n, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &fn);

/// Two u8/i8 operands, up to two zero points (and, for matmul_integer,
/// `extra` more inputs), one i32 result: what matmul_integer and
/// conv_integer share.
Status expectInteger8Operands(KernelContext &ctx, size_t extra = 0);
/// Rows [r0, r1) of C from int32 to g's scaled floats and their
/// activation, in place.
void dequantizeRows(const QGemmArgs &g, int64_t r0, int64_t r1);
/// Zero point input i: of dtype `want`, one value or (when perColumn is
/// not 0) a 1-D one per column.
Status checkZeroPoint(KernelContext &ctx, size_t i, DType want,
                      int64_t perColumn);

/// B's zero point for column j.
inline int32_t bZeroAt(const QGemmArgs &g, int64_t j) {
  if (!g.bZero)
    return 0;
  const int64_t i = g.bZeroPerColumn ? j : 0;
  return g.bUnsigned ? static_cast<const uint8_t *>(g.bZero)[i]
                     : static_cast<const int8_t *>(g.bZero)[i];
}

} // namespace ingot::cpu
