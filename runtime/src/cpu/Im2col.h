//===- Im2col.h - Receptive fields unrolled for conv's GEMM ------*- C++
//-*-===//
//
// conv (ConvKernels.cpp) multiplies its weights by the matrix of every
// output position's receptive field: rows are (channel, tap) pairs, columns
// output positions, zeros where a window hangs over the padding. These
// write ranges of that matrix's columns as a plain matrix or straight into
// the GEMM's packed panels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/ConvWindow.h"
#include "cpu/Gemm.h"

#include <cstdint>

namespace ingot::cpu {

/// Where im2col writes column j (counted from the range's first) of row r:
/// rows `ld` floats apart inside panels of `width` columns, the panels
/// `panelStride` floats apart. A plain matrix is one panel of all columns;
/// the GEMM's packed B is panels of NR columns over every row.
struct ColLayout {
  int64_t ld, width, panelStride;
};

/// Columns [p0, p1) of im2col's matrix (output positions, row-major over
/// the output dims) into `col` laid out as `l` says.
void im2colRange(const float *x, int64_t channels, const Window &w, int64_t p0,
                 int64_t p1, float *col, const ColLayout &l);

/// The plain column matrix of columns [p0, p1).
ColLayout plainLayout(int64_t p0, int64_t p1);

/// Panels of `nr` columns that `columns` columns fill.
int64_t panelCount(int64_t columns, int64_t nr);

/// Columns [p0, p1) of im2col's matrix unrolled straight into `packed`'s
/// panels q0..q1 (k rows of NR positions each), the layout the GEMM
/// micro-kernel reads.
void im2colPanels(const float *x, int64_t channels, const Window &w, int64_t p0,
                  int64_t p1, PackedB &packed, int64_t q0, int64_t q1);

} // namespace ingot::cpu
