//===- ConvImplicitParts.h - pieces shared by the implicit conv -*- C++ -*-===//
//
// Private to ConvImplicit.cpp (the row tiles), ConvImplicitChannels.cpp
// (the channel tiles) and ConvImplicitInput.cpp (the input's planes or
// in-place rows): those rows, scratch buffers and the split of the output
// into tasks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/ConvImplicit.h"

#include <cstdint>
#include <vector>

namespace ingot::cpu::implicit {

/// Per-thread buffers that keep their pages between calls, so a conv does
/// not allocate, fault in and zero its planes on every run. The calling
/// thread's planes are shared with the pool for the duration of one call
/// (it waits for every task); the tile buffers are each worker's own.
/// Past kKeptScratchFloats (16 MiB) a buffer lives for the call only
/// (`oneOff`), so a large image does not pin its planes for the process's
/// life.
enum ScratchUse { kPlanesScratch, kTileScratch };
constexpr size_t kKeptScratchFloats = size_t(1) << 22;

float *scratch(ScratchUse use, size_t floats, std::vector<float> &oneOff);

/// The stride-phase planes of one image: plane (c, ph, pw) holds the
/// padded input's rows ph, ph + sh, ... and columns pw, pw + sw, ..., so a
/// tap (b, e) reads plane (c, b·dh mod sh, e·dw mod sw) from row b·dh / sh,
/// column e·dw / sw, for every output position at once.
struct Planes {
  int64_t sh, sw, hq, wq;
  int64_t size; // floats per plane, slack included
  int64_t count() const { return sh * sw; }

  explicit Planes(const Window &w, int nr)
      : sh(w.stride[1]), sw(w.stride[2]),
        hq((w.pad[1] + w.in[1] + w.padEnd[1] + sh - 1) / sh),
        wq((w.pad[2] + w.in[2] + w.padEnd[2] + sw - 1) / sw),
        // Garbage columns of the last line read up to one row past the
        // plane, and the last tile up to nr columns past the output.
        size((hq + 1) * wq + nr) {}

  /// Plane (c, ph, pw) of x [c, h, w], zeros outside the input
  /// (ConvImplicitInput.cpp).
  void fill(const Window &w, const float *xc, int64_t ph, int64_t pw,
            float *plane) const;
};

/// How the output is split among tasks: runs of `lines` output lines,
/// each run's row blocks in `mGroups` groups of `blocksPerGroup`.
struct Split {
  int64_t lines, chunks, mGroups, blocksPerGroup;
};

/// The split with the shortest critical path (ConvImplicit.cpp).
Split splitWork(const Window &w, const Planes &p,
                const std::vector<RowBlock> &blocks, int nr, unsigned threads,
                bool fewerWeightsFirst);

/// The B rows the tiles read, k pointers. Through the stride-phase planes
/// in general; a 1x1, stride-1, unpadded conv reads x in place (its
/// planes would be x itself: q is the flat output position, no garbage
/// columns), but a row tile there reads up to nr columns past its last
/// one, past the end of x on the last channel. So the row tile that holds
/// the last column reads `tailRows` instead: each channel's columns from
/// `tailStart` on, copied and zero-padded (addTail). Channel tiles read
/// each position on its own, valid ones only (`validOnly`), and need no
/// tail: any unpadded window reads x in place there, at any stride.
struct InputRows {
  std::vector<const float *> rows, tailRows;
  std::vector<float> planesOneOff, tail, lastChannels;
  int64_t tailStart = -1; // in place: the first column of the tail tile

  InputRows(KernelContext &ctx, const Window &w, const Planes &p,
            const float *x, int64_t c, int nr, bool validOnly);
};

/// Whether the conv reads x in place (1x1, stride 1, no pads).
bool readsInPlace(const Window &w);

/// In place: the tail of the chunk starting at column `lastQ0` (the last
/// one) past its whole multiples of `step` columns, when there is one;
/// a tail tile reads at most nr columns.
void addTail(InputRows &in, const Window &w, const float *x, int64_t c,
             int64_t lastQ0, int64_t step, int nr);

/// The conv on the ISA's channel tiles (ConvImplicitChannels.cpp): m a
/// multiple of a vector, 2 to 4 of them in the last group of
/// kChannelGroup. `in` holds the rows of
/// `unit`, the planes at stride 1 (the tiles apply the stride when they
/// read); `p`, the planes at the conv's stride, sizes the tasks.
constexpr int64_t kChannelGroup = 64;
void channelConv(KernelContext &ctx, const ImplicitKernels &kernels,
                 const Window &w, const Planes &p, const Planes &unit,
                 const InputRows &in, const float *wt, bool constant, int64_t m,
                 const float *bias, const ConvActivation &act, float *y);

} // namespace ingot::cpu::implicit
