//===- PngPlot.cpp - Line plots written as PNG, no dependencies -----------===//
//
// Each panel: a title (font at 2x), a plot rectangle with a light grid at
// "nice" ticks (1, 2 or 5 times a power of ten; decades on a log axis),
// tick numbers, the axis labels (the y label drawn rotated), the series as
// 2-px polylines clipped to the rectangle with a marker per point, and a
// legend in the upper left. Pixels are hard-edged (no anti-aliasing): the
// plots are for reading numbers off, and it keeps the rasteriser short.
//
//===----------------------------------------------------------------------===//

#include "ingot/PngPlot.h"

#include "PlotFont.h"
#include "PngImage.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ingot::tools {
namespace {

using plot::kGlyphAdvance;
using plot::kGlyphRows;
using plot::kGlyphWidth;

struct Rgb {
  uint8_t r, g, b;
};
constexpr Rgb kWhite{255, 255, 255}, kInk{30, 30, 30}, kGrid{225, 225, 225},
    kFrame{90, 90, 90};
// Distinct hues, in the order series are drawn.
constexpr Rgb kPalette[] = {{31, 119, 180},  {255, 127, 14},  {44, 160, 44},
                            {214, 39, 40},   {148, 103, 189}, {140, 86, 75},
                            {227, 119, 194}, {23, 190, 207}};

struct Rect {
  int left, top, right, bottom; // inclusive
};

class Canvas {
public:
  Canvas(int w, int h) {
    img_.width = w, img_.height = h;
    img_.pixels.assign(size_t(w) * size_t(h) * 3, 255);
  }
  plot::RgbImage &image() { return img_; }
  void clip(const Rect &r) { clip_ = r, clipped_ = true; }
  void unclip() { clipped_ = false; }

  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= img_.width || y >= img_.height)
      return;
    if (clipped_ && (x < clip_.left || x > clip_.right || y < clip_.top ||
                     y > clip_.bottom))
      return;
    uint8_t *p = &img_.pixels[(size_t(y) * img_.width + x) * 3];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  void fill(int x0, int y0, int x1, int y1, Rgb c) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x)
        set(x, y, c);
  }
  /// Bresenham; `thick` > 1 stamps a square of that size at each step.
  void line(int x0, int y0, int x1, int y1, Rgb c, int thick = 1) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
      fill(x0 - (thick - 1) / 2, y0 - (thick - 1) / 2, x0 + thick / 2,
           y0 + thick / 2, c);
      if (x0 == x1 && y0 == y1)
        return;
      const int e2 = 2 * err;
      if (e2 >= dy)
        err += dy, x0 += sx;
      if (e2 <= dx)
        err += dx, y0 += sy;
    }
  }
  /// Text with its top-left corner at (x, y); `vertical` runs bottom-up
  /// from (x, y) = its bottom-left corner (for a y-axis label).
  void text(int x, int y, const std::string &s, Rgb c, int scale = 1,
            bool vertical = false) {
    for (size_t i = 0; i < s.size(); ++i) {
      const uint8_t *rows = plot::glyphRows(s[i]);
      const int pen = int(i) * kGlyphAdvance;
      for (int gy = 0; gy < kGlyphRows; ++gy)
        for (int gx = 0; gx < kGlyphWidth; ++gx) {
          if (!(rows[gy] >> (kGlyphWidth - 1 - gx) & 1))
            continue;
          const int u = (pen + gx) * scale, v = gy * scale;
          if (vertical)
            fill(x + v, y - u - scale + 1, x + v + scale - 1, y - u, c);
          else
            fill(x + u, y + v, x + u + scale - 1, y + v + scale - 1, c);
        }
    }
  }

private:
  plot::RgbImage img_;
  Rect clip_{0, 0, 0, 0};
  bool clipped_ = false;
};

int textWidth(const std::string &s, int scale = 1) {
  return s.empty() ? 0 : (int(s.size()) * kGlyphAdvance - 1) * scale;
}

/// One axis: the data range, mapped to pixels [p0, p1] (p1 may be < p0).
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;     // in log10 units when `log`
  std::vector<double> ticks; // data values
  double step = 1;           // tick spacing, for the label precision
  bool exponent = false;     // labels as 2.5e-04: ticks too large or small

  bool valid(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double toPixel(double v, int p0, int p1) const {
    const double t = ((log ? std::log10(v) : v) - lo) / (hi - lo);
    return p0 + t * (p1 - p0);
  }
};

/// 1, 2 or 5 times a power of ten, near `range / 5`.
double niceStep(double range) {
  const double raw = range / 5;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

Axis makeAxis(const std::vector<double> &values, bool log) {
  Axis a;
  a.log = log;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (a.valid(v)) {
      const double t = log ? std::log10(v) : v;
      lo = std::min(lo, t), hi = std::max(hi, t);
    }
  if (lo > hi) // no data
    lo = 0, hi = 1;
  if (log) {
    // Ends at 1, 2 or 5 times a power of ten around the data; few decades
    // get ticks at 2x and 5x as well.
    const double steps[] = {0, std::log10(2.0), std::log10(5.0), 1};
    const double dlo = std::floor(lo), dhi = std::floor(hi);
    a.lo = dlo, a.hi = dhi + 1;
    for (double s : steps) {
      if (dlo + s <= lo + 1e-9)
        a.lo = dlo + s;
      if (dhi + s >= hi - 1e-9 && dhi + s < a.hi)
        a.hi = dhi + s;
    }
    if (a.hi <= a.lo)
      a.hi = a.lo + std::log10(2.0);
    const bool fine = a.hi - a.lo <= 2.5;
    for (double d = dlo; d <= a.hi + 1e-9; ++d)
      for (double m : {1.0, 2.0, 5.0}) {
        const double t = d + std::log10(m);
        if ((m == 1.0 || fine) && t >= a.lo - 1e-9 && t <= a.hi + 1e-9)
          a.ticks.push_back(m * std::pow(10.0, d));
      }
    a.step = std::pow(10.0, dlo);
    a.exponent = std::pow(10.0, a.hi) >= 1e6 || std::pow(10.0, a.lo) < 1e-3;
    return a;
  }
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi)))
    lo -= std::max(1.0, std::fabs(lo) * 0.1),
        hi += std::max(1.0, std::fabs(hi) * 0.1);
  a.step = niceStep(hi - lo);
  a.lo = std::floor(lo / a.step) * a.step;
  a.hi = std::ceil(hi / a.step) * a.step;
  for (int i = 0; a.lo + i * a.step <= a.hi + a.step * 1e-6; ++i)
    a.ticks.push_back(a.lo + i * a.step);
  const double mag = std::max(std::fabs(a.lo), std::fabs(a.hi));
  a.exponent = mag >= 1e6 || mag < 1e-3;
  return a;
}

std::string formatTick(double v, const Axis &a) {
  char buf[32];
  const double step = a.step;
  if (std::fabs(v) < step * 1e-9) {
    v = 0; // -0 and rounding noise at the origin
  } else if (a.exponent) {
    // Enough mantissa digits to tell neighbouring ticks apart.
    const int digits = int(std::floor(std::log10(std::fabs(v))) -
                           std::floor(std::log10(step)));
    std::snprintf(buf, sizeof buf, "%.*e", std::clamp(digits, 0, 4), v);
    return buf;
  }
  const int decimals = step >= 1 ? 0 : int(std::ceil(-std::log10(step) - 1e-9));
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 6), v);
  return buf;
}

/// Liang-Barsky: clips the segment to `r` (grown by `pad`); false if none
/// of it is inside. Keeps coordinates small before they become ints.
bool clipSegment(double &x0, double &y0, double &x1, double &y1, const Rect &r,
                 double pad) {
  double t0 = 0, t1 = 1;
  const double dx = x1 - x0, dy = y1 - y0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 - (r.left - pad), (r.right + pad) - x0,
                       y0 - (r.top - pad), (r.bottom + pad) - y0};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0)
        return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
  }
  if (t0 > t1)
    return false;
  x1 = x0 + t1 * dx, y1 = y0 + t1 * dy;
  x0 = x0 + t0 * dx, y0 = y0 + t0 * dy;
  return true;
}

void drawMarker(Canvas &c, int x, int y, size_t series, Rgb colour) {
  // Alternate discs and squares so series stay apart in greyscale too.
  for (int dy = -3; dy <= 3; ++dy)
    for (int dx = -3; dx <= 3; ++dx)
      if (series % 2 || dx * dx + dy * dy <= 10)
        c.set(x + dx, y + dy, colour);
}

void drawPanel(Canvas &c, const PlotPanel &panel, int ox, int oy, int w,
               int h) {
  const Rect plotArea{ox + 72, oy + 36, ox + w - 20, oy + h - 46};
  if (plotArea.right - plotArea.left < 20 ||
      plotArea.bottom - plotArea.top < 20)
    return; // too small to draw anything legible
  std::vector<double> xs, ys;
  for (const PlotSeries &s : panel.series) {
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    ys.insert(ys.end(), s.y.begin(), s.y.end());
  }
  const Axis ax = makeAxis(xs, panel.logX), ay = makeAxis(ys, false);
  auto px = [&](double v) {
    return ax.toPixel(v, plotArea.left, plotArea.right);
  };
  auto py = [&](double v) {
    return ay.toPixel(v, plotArea.bottom, plotArea.top);
  };

  c.text(ox + (w - textWidth(panel.title, 2)) / 2, oy + 10, panel.title, kInk,
         2);
  for (double t : ax.ticks) {
    const int x = int(std::lround(px(t)));
    c.line(x, plotArea.top, x, plotArea.bottom, kGrid);
    c.line(x, plotArea.bottom, x, plotArea.bottom + 4, kFrame);
    const std::string label = formatTick(t, ax);
    c.text(x - textWidth(label) / 2, plotArea.bottom + 8, label, kInk);
  }
  for (double t : ay.ticks) {
    const int y = int(std::lround(py(t)));
    c.line(plotArea.left, y, plotArea.right, y, kGrid);
    c.line(plotArea.left - 4, y, plotArea.left, y, kFrame);
    const std::string label = formatTick(t, ay);
    c.text(plotArea.left - 8 - textWidth(label), y - 3, label, kInk);
  }
  c.text((plotArea.left + plotArea.right - textWidth(panel.xLabel)) / 2,
         plotArea.bottom + 24, panel.xLabel, kInk);
  c.text(ox + 10,
         (plotArea.top + plotArea.bottom + textWidth(panel.yLabel)) / 2,
         panel.yLabel, kInk, 1, /*vertical=*/true);

  c.clip(plotArea);
  for (size_t si = 0; si < panel.series.size(); ++si) {
    const PlotSeries &s = panel.series[si];
    const Rgb colour = kPalette[si % std::size(kPalette)];
    const size_t n = std::min(s.x.size(), s.y.size());
    bool havePrev = false;
    double prevX = 0, prevY = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!ax.valid(s.x[i]) || !ay.valid(s.y[i])) {
        havePrev = false; // a gap in the data is a gap in the line
        continue;
      }
      const double x = px(s.x[i]), y = py(s.y[i]);
      double x0 = prevX, y0 = prevY, x1 = x, y1 = y;
      if (havePrev && clipSegment(x0, y0, x1, y1, plotArea, 4))
        c.line(int(std::lround(x0)), int(std::lround(y0)), int(std::lround(x1)),
               int(std::lround(y1)), colour, 2);
      if (x >= plotArea.left - 4 && x <= plotArea.right + 4 &&
          y >= plotArea.top - 4 && y <= plotArea.bottom + 4)
        drawMarker(c, int(std::lround(x)), int(std::lround(y)), si, colour);
      havePrev = true, prevX = x, prevY = y;
    }
  }
  c.unclip();
  // The frame last, over the grid and any line touching the edge.
  c.line(plotArea.left, plotArea.top, plotArea.right, plotArea.top, kFrame);
  c.line(plotArea.left, plotArea.bottom, plotArea.right, plotArea.bottom,
         kFrame);
  c.line(plotArea.left, plotArea.top, plotArea.left, plotArea.bottom, kFrame);
  c.line(plotArea.right, plotArea.top, plotArea.right, plotArea.bottom, kFrame);

  int legendWidth = 0, entries = 0;
  for (const PlotSeries &s : panel.series)
    if (!s.label.empty())
      legendWidth = std::max(legendWidth, textWidth(s.label)), ++entries;
  if (!entries)
    return;
  const int lx = plotArea.left + 8, ly = plotArea.top + 8;
  const int lw = legendWidth + 36, lh = entries * 14 + 6;
  c.fill(lx, ly, lx + lw, ly + lh, kWhite);
  c.line(lx, ly, lx + lw, ly, kFrame),
      c.line(lx, ly + lh, lx + lw, ly + lh, kFrame);
  c.line(lx, ly, lx, ly + lh, kFrame),
      c.line(lx + lw, ly, lx + lw, ly + lh, kFrame);
  int row = 0;
  for (size_t si = 0; si < panel.series.size(); ++si) {
    if (panel.series[si].label.empty())
      continue;
    const Rgb colour = kPalette[si % std::size(kPalette)];
    const int y = ly + 10 + row++ * 14;
    c.line(lx + 6, y, lx + 24, y, colour, 2);
    drawMarker(c, lx + 15, y, si, colour);
    c.text(lx + 30, y - 3, panel.series[si].label, kInk);
  }
}

} // namespace

Status writePlotPng(const std::string &path,
                    const std::vector<PlotPanel> &panels, int panelWidth,
                    int panelHeight) {
  if (panels.empty())
    return Status::error("cannot write the plot " + path + ": no panels");
  if (panelWidth < 64 || panelHeight < 64 || panelWidth > 8192 ||
      panelHeight > 8192)
    return Status::error("cannot write the plot " + path +
                         ": panels must be 64 to 8192 pixels a side, got " +
                         std::to_string(panelWidth) + "x" +
                         std::to_string(panelHeight));
  for (const PlotPanel &p : panels)
    for (const PlotSeries &s : p.series)
      if (s.x.size() != s.y.size())
        return Status::error("cannot write the plot " + path + ": series '" +
                             s.label + "' of panel '" + p.title + "' has " +
                             std::to_string(s.x.size()) + " x values and " +
                             std::to_string(s.y.size()) + " y values");
  const int cols = std::min<int>(2, int(panels.size()));
  const int rows = int((panels.size() + 1) / 2);
  Canvas canvas(cols * panelWidth, rows * panelHeight);
  for (size_t i = 0; i < panels.size(); ++i)
    drawPanel(canvas, panels[i], int(i % 2) * panelWidth,
              int(i / 2) * panelHeight, panelWidth, panelHeight);
  return plot::writePng(path, canvas.image());
}

} // namespace ingot::tools
