//===- ConvImplicit.h - conv as a GEMM over shifted input rows --*- C++ -*-===//
//
// A 2-D conv (group 1) without an im2col matrix. The padded input is
// split into stride-phase planes (one plane per channel at stride 1; four
// at stride 2x2), each `wq` columns wide. Every (channel, tap) row of the
// im2col matrix is then one of those planes read from a fixed offset, so
// the GEMM's B rows are pointers into the planes, and the micro-kernel
// computes output position q = o1 * wq + o2: the columns o2 >= the output
// width are garbage, dropped when the result is copied into y with the
// bias and activation. Writing and reading im2col panels was about a fifth
// of YOLOv8n's run (perf). A 1x1, stride-1, unpadded conv needs no planes:
// its B rows point into x itself. A 1-D window computes too (one line), but
// implicitConvFits leaves convs of fewer than 4 output lines to im2col.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/ConvWindow.h"
#include "cpu/Gemm.h"
#include "cpu/LinearBlocks.h"

#include <cstdint>
#include <vector>

namespace ingot::cpu {

/// Rows [r0, r0 + rows) of C, computed by a tile of `height` rows
/// (rows <= height; the packed weights hold `height` values per k step).
struct RowBlock {
  int64_t r0 = 0, rows = 0;
  int height = 0;
};

/// Tiles of `mr` rows and, at the end, of 2/3 or 1/3 of that: 16 rows
/// are 8 + 8, not 12 + 4 (a 4-row tile loads a B vector per 2 FMAs).
std::vector<RowBlock> rowBlocks(int64_t m, int mr);

/// One call of an ISA's block kernel: row blocks [0, numBlocks) of C over
/// columns [q0, q1) (rounded up to whole tiles: C and the planes have
/// room).
struct ImplicitBlock {
  int64_t k = 0;
  const RowBlock *blocks = nullptr;
  int64_t numBlocks = 0;
  /// A packed as the tiles read it: block b's k steps of `height` values
  /// at packedA + b.r0 * k (rows past the block's own zero).
  const float *packedA = nullptr;
  /// k pointers: B row r is rows[r][q].
  const float *const *rows = nullptr;
  int64_t q0 = 0, q1 = 0;
  float *c = nullptr; // C[r][q - q0] at c + (r - blocks[0].r0) * ldc
  int64_t ldc = 0;
};

/// One call of an ISA's channel tiles: T = Bᵀ·Wᵀ for one group of
/// `vectors` (2 to 4) vectors of output channels over the output positions
/// [v0, v1) (flat: v = o1·wo + o2, read at o1·lineStep + o2·colStep of
/// each B row), T[v - v0][c] at t + (v - v0) * ldt + c, rounded up to
/// whole tiles: the positions past v1 read position v0, so no row is read
/// past its last valid column and no tile computes a padding column.
struct ChannelBlock {
  int64_t k = 0;
  int vectors = 0;
  /// The group's weights: k steps of ldw floats (vectors·L used, zeros
  /// past the last channel), 64-byte aligned.
  const float *w = nullptr;
  int64_t ldw = 0;
  const float *const *rows = nullptr;
  int64_t v0 = 0, v1 = 0, wo = 0, lineStep = 0, colStep = 0;
  float *t = nullptr;
  int64_t ldt = 0;
};

struct ImplicitKernels {
  int mr = 0, nr = 0; // tile rows and columns
  void (*block)(const ImplicitBlock &) = nullptr;
  /// Channel tiles, where the ISA has them: `lanes` channels a vector;
  /// a group of 4 vectors takes 6 positions a tile, of 3 vectors 8, of 2 12.
  int lanes = 0;
  void (*channelBlock)(const ChannelBlock &) = nullptr;
  /// Positions [0, n) (n <= lanes) x `channels` channels of T, each
  /// position's lanes channels together (rows lds apart), into y rows ldd
  /// apart, plus bias[c] when given.
  void (*transpose)(const float *t, int64_t lds, int n, int channels,
                    const float *bias, float *y, int64_t ldd) = nullptr;
};

/// The tiles for an ISA; mr == 0 for one without them (generic).
ImplicitKernels implicitKernels(GemmIsa isa);

/// Whether implicitConv computes this conv of c input and m output
/// channels (on the best ISA).
bool implicitConvFits(const Window &w, int64_t c, int64_t m);

/// One image: x [c, in...] convolved with wt [m, c, k...] into y [m, out...],
/// then bias (m values, or null) and the activation. `weightIsConstant`
/// lets the packed weights be kept in the step's cache.
void implicitConv(KernelContext &ctx, const Window &w, const float *x,
                  int64_t c, const float *wt, bool weightIsConstant, int64_t m,
                  const float *bias, const ConvActivation &act, float *y);

/// Same, on the given ISA's tiles (unit tests compare ISAs).
void implicitConvOn(GemmIsa isa, KernelContext &ctx, const Window &w,
                    const float *x, int64_t c, const float *wt,
                    bool weightIsConstant, int64_t m, const float *bias,
                    const ConvActivation &act, float *y);

} // namespace ingot::cpu
