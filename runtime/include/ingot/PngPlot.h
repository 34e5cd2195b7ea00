//===- PngPlot.h - Line plots written as PNG, no dependencies ---*- C++ -*-===//
//
// `ingot bench --plot FILE.png` draws latency CDFs and throughput against
// concurrency. The runtime's tools must not depend on a plotting stack, so
// this rasterises lines, axes, ticks and labels (a built-in bitmap font)
// itself and writes an uncompressed-deflate PNG. It lives in the runtime
// library (still in namespace ingot::tools) so that unit tests, which link
// only ingot_runtime, can exercise it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <string>
#include <vector>

namespace ingot::tools {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y; // same length; drawn as a polyline with markers
};

struct PlotPanel {
  std::string title, xLabel, yLabel;
  std::vector<PlotSeries> series;
  bool logX = false;
};

/// Panels laid out in a grid (2 per row), each panelWidth x panelHeight px.
/// Written to a temp file and renamed. Points with a non-finite coordinate
/// (or x <= 0 on a log axis) are skipped and break the series' line.
Status writePlotPng(const std::string &path,
                    const std::vector<PlotPanel> &panels, int panelWidth = 640,
                    int panelHeight = 420);

} // namespace ingot::tools
