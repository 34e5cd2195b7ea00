//===- PlotFont.h - A 5x8 bitmap font for plot labels -----------*- C++ -*-===//
#pragma once

#include <cstdint>

namespace ingot::plot {

constexpr int kGlyphWidth = 5;   // pixels set per row, bit 4 leftmost
constexpr int kGlyphRows = 8;    // 7 above the baseline + 1 descender row
constexpr int kGlyphAdvance = 6; // one blank column between glyphs

/// The 8 rows of `c`'s glyph; characters outside printable ASCII get '?'.
const uint8_t *glyphRows(char c);

} // namespace ingot::plot
