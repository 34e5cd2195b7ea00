//===- PngPlotTest.cpp - The dependency-free PNG line-plot writer ---------===//
//
// Reads the written file back with a decoder written here from the PNG and
// zlib specs (stored deflate blocks only, which is all the writer emits):
// every chunk CRC, the zlib header and Adler-32, the IHDR fields, then
// checks the pixels: a horizontal series is one long coloured run, a rising
// series rises column by column, a title puts ink above the plot.
//
//===----------------------------------------------------------------------===//

#include "ingot/PngPlot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace ingot;
using ingot::tools::PlotPanel;
using ingot::tools::PlotSeries;

namespace {

struct Decoded {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  const uint8_t *at(int x, int y) const {
    return &rgb[(size_t(y) * width + x) * 3];
  }
  /// A saturated pixel: a series colour, not ink, grid or background.
  bool coloured(int x, int y) const {
    const uint8_t *p = at(x, y);
    return std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]}) > 60;
  }
  bool dark(int x, int y) const {
    const uint8_t *p = at(x, y);
    return p[0] < 100 && p[1] < 100 && p[2] < 100;
  }
};

uint32_t be32(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         p[3];
}

/// Bit-at-a-time CRC-32, independent of the writer's table.
uint32_t slowCrc(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k)
      c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
  }
  return ~c;
}

/// Decodes 8-bit RGB non-interlaced PNGs whose IDAT is stored deflate;
/// fails the test on anything else.
void decode(const std::string &path, Decoded *out) {
  std::ifstream f(path, std::ios::binary);
  const std::vector<uint8_t> b{std::istreambuf_iterator<char>(f), {}};
  ASSERT_GT(b.size(), 8u);
  const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 13, 10, 26, 10};
  ASSERT_EQ(std::memcmp(b.data(), sig, 8), 0);
  std::vector<uint8_t> z;
  size_t at = 8;
  bool ended = false;
  while (at + 12 <= b.size() && !ended) {
    const uint32_t len = be32(&b[at]);
    ASSERT_LE(at + 12 + len, b.size());
    const std::string type(reinterpret_cast<const char *>(&b[at + 4]), 4);
    ASSERT_EQ(be32(&b[at + 8 + len]), slowCrc(&b[at + 4], 4 + len)) << type;
    const uint8_t *d = &b[at + 8];
    if (type == "IHDR") {
      ASSERT_EQ(len, 13u);
      out->width = int(be32(d)), out->height = int(be32(d + 4));
      EXPECT_EQ(d[8], 8);  // bit depth
      EXPECT_EQ(d[9], 2);  // RGB
      EXPECT_EQ(d[12], 0); // not interlaced
    } else if (type == "IDAT") {
      z.insert(z.end(), d, d + len);
    } else if (type == "IEND") {
      ended = true;
    }
    at += 12 + len;
  }
  ASSERT_TRUE(ended);
  EXPECT_EQ(at, b.size()) << "bytes after IEND";
  ASSERT_GE(z.size(), 6u);
  ASSERT_EQ((z[0] & 15), 8);
  ASSERT_EQ((z[0] << 8 | z[1]) % 31, 0);
  std::vector<uint8_t> raw;
  size_t p = 2;
  for (bool last = false; !last;) {
    ASSERT_LE(p + 5, z.size());
    last = z[p] & 1;
    ASSERT_EQ((z[p] >> 1) & 3, 0) << "only stored blocks expected";
    const uint16_t len = uint16_t(z[p + 1] | z[p + 2] << 8);
    const uint16_t nlen = uint16_t(z[p + 3] | z[p + 4] << 8);
    ASSERT_EQ(uint16_t(~len), nlen);
    ASSERT_LE(p + 5 + len, z.size());
    raw.insert(raw.end(), &z[p + 5], &z[p + 5] + len);
    p += 5 + len;
  }
  ASSERT_EQ(p + 4, z.size());
  uint32_t a = 1, s2 = 0;
  for (uint8_t v : raw)
    a = (a + v) % 65521, s2 = (s2 + a) % 65521;
  ASSERT_EQ(be32(&z[p]), s2 << 16 | a);
  const size_t stride = size_t(out->width) * 3 + 1;
  ASSERT_EQ(raw.size(), stride * size_t(out->height));
  for (int y = 0; y < out->height; ++y) {
    ASSERT_EQ(raw[y * stride], 0) << "filter type of row " << y;
    out->rgb.insert(out->rgb.end(), &raw[y * stride + 1],
                    &raw[y * stride + 1] + stride - 1);
  }
}

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("ingot-png-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

PlotPanel linePanel(std::string title, PlotSeries s) {
  PlotPanel p;
  p.title = std::move(title);
  p.xLabel = "concurrency";
  p.yLabel = "tokens/s";
  p.series.push_back(std::move(s));
  return p;
}

TEST(PngPlot, HorizontalSeriesIsOneLongRun) {
  // Two series so the flat one sits inside the y range, not on the frame.
  PlotPanel p = linePanel("", {"", {0, 10}, {5, 5}});
  p.series.push_back({"", {0, 10}, {0, 10}});
  const std::string path = tempPath("flat.png");
  ASSERT_TRUE(tools::writePlotPng(path, {p}, 400, 300).isOk());
  Decoded d;
  ASSERT_NO_FATAL_FAILURE(decode(path, &d));
  EXPECT_EQ(d.width, 400);
  EXPECT_EQ(d.height, 300);
  int best = 0;
  for (int y = 0; y < d.height; ++y) {
    int run = 0;
    for (int x = 0; x < d.width; ++x) {
      run = d.coloured(x, y) ? run + 1 : 0;
      best = std::max(best, run);
    }
  }
  // The plot area spans 400 - 92 px; the line covers all of it.
  EXPECT_GE(best, 300);
  std::filesystem::remove(path);
}

TEST(PngPlot, RisingSeriesRisesAndTitleIsInked) {
  const std::string path = tempPath("rise.png");
  PlotSeries s{"measured", {1, 2, 4, 8, 16, 32}, {}};
  for (double x : s.x)
    s.y.push_back(std::log2(x) * 100);
  PlotPanel logged = linePanel("Throughput", s);
  logged.logX = true;
  // Three panels: two per row, so 2 x 2 panels of 320 x 240.
  ASSERT_TRUE(
      tools::writePlotPng(path, {logged, linePanel("", s), logged}, 320, 240)
          .isOk());
  Decoded d;
  ASSERT_NO_FATAL_FAILURE(decode(path, &d));
  ASSERT_EQ(d.width, 640);
  ASSERT_EQ(d.height, 480);
  // Log x: log2(x) is a straight rising line. In the middle of the plot
  // each column has a coloured pixel no lower than the one to its left.
  int last = d.height, columns = 0;
  for (int x = 120; x < 280; ++x) {
    int top = -1;
    for (int y = 36; y < 240 - 46 && top < 0; ++y)
      if (d.coloured(x, y))
        top = y;
    if (top < 0 || top < 36 + 14 * 2) // skip the legend's rows
      continue;
    EXPECT_LE(top, last + 2) << "column " << x; // markers: a bump
    last = top, ++columns;
  }
  EXPECT_GT(columns, 60);
  auto inkAbovePlot = [&](int ox) {
    int ink = 0;
    for (int y = 0; y < 30; ++y) // above the top tick label
      for (int x = ox; x < ox + 320; ++x)
        ink += d.dark(x, y);
    return ink;
  };
  EXPECT_GT(inkAbovePlot(0), 50) << "the title";
  EXPECT_EQ(inkAbovePlot(320), 0) << "no title, no ink";
  std::filesystem::remove(path);
}

TEST(PngPlot, OddDataAndBadArgumentsAreHandled) {
  const std::string path = tempPath("odd.png");
  PlotPanel p =
      linePanel("gaps", {"nan", {0, 1, NAN, 3, INFINITY}, {1, 2, 3, NAN, 5}});
  p.series.push_back({"empty", {}, {}});
  p.series.push_back({"huge", {0, 1}, {1e300, -1e300}});
  PlotPanel nothing;
  PlotPanel zeroesOnLog = linePanel("log", {"z", {0, -1}, {1, 2}});
  zeroesOnLog.logX = true;
  EXPECT_TRUE(tools::writePlotPng(path, {p, nothing, zeroesOnLog}).isOk());
  Decoded d;
  ASSERT_NO_FATAL_FAILURE(decode(path, &d));
  EXPECT_EQ(d.width, 1280);

  Status s =
      tools::writePlotPng(path, {{"t", "x", "y", {{"bad", {1, 2}, {1}}}}});
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("'bad'"), std::string::npos) << s.message();
  s = tools::writePlotPng("/nonexistent-dir/plot.png", {p});
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("/nonexistent-dir/plot.png"), std::string::npos);
  EXPECT_FALSE(tools::writePlotPng(path, {}).isOk());
  std::filesystem::remove(path);
}

} // namespace
