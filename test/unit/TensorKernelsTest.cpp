//===- TensorKernelsTest.cpp - Tensor-family kernels vs naive loops -------===//
//
// Each kernel of TensorKernels.cpp and the files beside it against a direct
// reference written from the ONNX definition with plain index loops.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <algorithm>
#include <numeric>

using namespace ingot;
using namespace ingot::test;

namespace {

Attr str(const std::string &n, const std::string &v) {
  Attr a;
  a.name = n, a.kind = Attr::Kind::Str, a.s = v;
  return a;
}
Attr floats(const std::string &n, std::vector<double> v) {
  Attr a;
  a.name = n, a.kind = Attr::Kind::Floats, a.floats = std::move(v);
  return a;
}

std::vector<double> asDouble(const Tensor &t) {
  std::vector<double> v(count(t.shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = ptr<float>(t)[i];
  return v;
}

TEST(TensorKernels, SliceNegativeStepsAndClamping) {
  Rng rng(1);
  Tensor x = rng.uniform({5, 7, 3});
  Tensor st = i64({3}, {-1, 1, 100}), en = i64({3}, {-100, 6, -100}),
         ax = i64({3}, {0, 1, 2}), sp = i64({3}, {-2, 2, -1});
  Tensor y = runOk(Call("slice", {&x, &st, &en, &ax, &sp}));
  // Rows 4, 2, 0; cols 1, 3, 5; channels 2, 1, 0.
  std::vector<double> ref;
  for (int a : {4, 2, 0})
    for (int b : {1, 3, 5})
      for (int c : {2, 1, 0})
        ref.push_back(ptr<float>(x)[(a * 7 + b) * 3 + c]);
  expectClose(y, {3, 3, 3}, ref, 0);
}

TEST(TensorKernels, SliceDefaultsAxesAndSteps) {
  Tensor x = i64({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor st = i64({1}, {1}), en = i64({1}, {2});
  Tensor y = runOk(Call("slice", {&x, &st, &en}, {}, {DType::I64}));
  ASSERT_EQ(y.shape, (Shape{1, 4}));
  EXPECT_EQ(ptr<int64_t>(y)[0], 4);
  EXPECT_EQ(ptr<int64_t>(y)[3], 7);
}

TEST(TensorKernels, SliceMergesUnitAndWholeDims) {
  Rng rng(3);
  // A crop of an [N, C, H, 1] image (TensorFlow's 1-D conv layout): the
  // copy runs along merged dims; a step on the merged-into dim stops it.
  Tensor x = rng.uniform({2, 6, 5, 1});
  struct C {
    std::vector<int64_t> st, en, ax, sp;
  };
  for (const C &c :
       {C{{1, 1}, {2, 5}, {0, 1}, {1, 1}}, C{{0, 1}, {2, 6}, {0, 1}, {1, 2}},
        C{{1, 4}, {2, 5}, {0, 2}, {1, 1}}, C{{0}, {1}, {3}, {1}}}) {
    const int64_t n = c.st.size();
    Tensor st = i64({n}, c.st), en = i64({n}, c.en), ax = i64({n}, c.ax),
           sp = i64({n}, c.sp);
    int64_t lo[4] = {0, 0, 0, 0}, hi[4] = {2, 6, 5, 1}, step[4] = {1, 1, 1, 1};
    for (int64_t j = 0; j < n; ++j)
      lo[c.ax[j]] = c.st[j], hi[c.ax[j]] = c.en[j], step[c.ax[j]] = c.sp[j];
    std::vector<double> ref;
    Shape out(4);
    for (int d = 0; d < 4; ++d)
      out[d] = (hi[d] - lo[d] + step[d] - 1) / step[d];
    for (int64_t a = lo[0]; a < hi[0]; a += step[0])
      for (int64_t b = lo[1]; b < hi[1]; b += step[1])
        for (int64_t e = lo[2]; e < hi[2]; e += step[2])
          ref.push_back(ptr<float>(x)[(a * 6 + b) * 5 + e]);
    expectClose(runOk(Call("slice", {&x, &st, &en, &ax, &sp})), out, ref, 0);
  }
}

TEST(TensorKernels, PadModes) {
  Rng rng(2);
  Tensor x = rng.uniform({3, 4});
  Tensor pads = i64({4}, {2, 3, 1, 2}), v = f32({}, {9.0f});
  for (const char *mode : {"constant", "edge", "reflect"}) {
    Tensor y = runOk(Call("pad", {&x, &pads, &v}, {str("mode", mode)}));
    std::vector<double> ref;
    for (int64_t i = -2; i < 4; ++i)
      for (int64_t j = -3; j < 6; ++j) {
        auto map = [&](int64_t k, int64_t n) -> int64_t {
          if (k >= 0 && k < n)
            return k;
          if (std::string(mode) == "constant")
            return -1;
          if (std::string(mode) == "edge")
            return std::clamp<int64_t>(k, 0, n - 1);
          return k < 0 ? -k : 2 * (n - 1) - k;
        };
        int64_t a = map(i, 3), b = map(j, 4);
        ref.push_back(a < 0 || b < 0 ? 9.0 : ptr<float>(x)[a * 4 + b]);
      }
    expectClose(y, {6, 9}, ref, 0);
  }
}

/// Where output coordinate o of a dim of `dim` values padded by `begin`
/// reads, per ONNX Pad (non-negative pads), or -1 for the pad value.
int64_t padReference(int64_t o, int64_t begin, int64_t dim, int mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < dim)
    return i;
  if (mode == 0)
    return -1;
  if (mode == 1)
    return i < 0 ? 0 : dim - 1;
  if (mode == 3)
    return ((i % dim) + dim) % dim;
  while (i < 0 || i >= dim) // reflect, edge values not repeated
    i = i < 0 ? -i : 2 * (dim - 1) - i;
  return i;
}

TEST(TensorKernels, PadRowsMergeUnpaddedTrailingDims) {
  // NHWC-style: pads on dims 1 and 2 only, so the kernel copies rows of
  // W·C values; and dims padded last, so rows are one value wide.
  Rng rng(31);
  const Shape shape{2, 3, 4, 5};
  Tensor x = rng.uniform(shape);
  const char *modes[] = {"constant", "edge", "reflect", "wrap"};
  for (const std::vector<int64_t> &pads :
       {std::vector<int64_t>{0, 1, 2, 0, 0, 2, 1, 0},
        std::vector<int64_t>{0, 0, 0, 2, 0, 0, 0, 1},
        std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0}})
    for (int mode = 0; mode < 4; ++mode) {
      Tensor p = i64({8}, pads), v = f32({}, {7.5f});
      Tensor y = runOk(Call("pad", {&x, &p, &v}, {str("mode", modes[mode])}));
      Shape out = shape;
      for (int d = 0; d < 4; ++d)
        out[d] += pads[d] + pads[d + 4];
      ASSERT_EQ(y.shape, out) << modes[mode];
      int64_t at = 0;
      for (int64_t a = 0; a < out[0]; ++a)
        for (int64_t b = 0; b < out[1]; ++b)
          for (int64_t c = 0; c < out[2]; ++c)
            for (int64_t e = 0; e < out[3]; ++e, ++at) {
              const int64_t o[4] = {a, b, c, e};
              int64_t src = 0;
              for (int d = 0; d < 4 && src >= 0; ++d) {
                const int64_t s = padReference(o[d], pads[d], shape[d], mode);
                src = s < 0 ? -1 : src * shape[d] + s;
              }
              const float want = src < 0 ? 7.5f : ptr<float>(x)[src];
              ASSERT_EQ(ptr<float>(y)[at], want)
                  << modes[mode] << " at " << a << "," << b << "," << c << ","
                  << e;
            }
    }
  // Negative pads crop (constant mode): dim 1 loses its first row.
  Tensor p = i64({8}, {0, -1, 1, 0, 0, 0, 1, 0});
  Tensor y = runOk(Call("pad", {&x, &p}, {}));
  ASSERT_EQ(y.shape, (Shape{2, 2, 6, 5}));
  EXPECT_EQ(ptr<float>(y)[5],
            ptr<float>(x)[20]); // (0, 0, 1, 0) <- (0, 1, 0, 0)
  EXPECT_EQ(ptr<float>(y)[0], 0.0f);
}

TEST(TensorKernels, ExpandAndTile) {
  Rng rng(3);
  Tensor x = rng.uniform({3, 1});
  Tensor s = i64({3}, {2, 1, 4});
  Tensor e = runOk(Call("expand", {&x, &s}));
  std::vector<double> ref;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        ref.push_back(ptr<float>(x)[b]);
  expectClose(e, {2, 3, 4}, ref, 0);
  Tensor t = rng.uniform({2, 3});
  Tensor r = i64({2}, {2, 3});
  Tensor y = runOk(Call("tile", {&t, &r}));
  ref.clear();
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 9; ++b)
      ref.push_back(ptr<float>(t)[(a % 2) * 3 + b % 3]);
  expectClose(y, {4, 9}, ref, 0);
}

TEST(TensorKernels, RangeAndFlatten) {
  Tensor a = i64({}, {10}), b = i64({}, {-3}), d = i64({}, {-4});
  Tensor y = runOk(Call("range", {&a, &b, &d}, {}, {DType::I64}));
  ASSERT_EQ(y.shape, (Shape{4}));
  EXPECT_EQ(ptr<int64_t>(y)[3], -2);
  Rng rng(4);
  Tensor x = rng.uniform({2, 3, 4});
  Tensor f = runOk(Call("flatten", {&x}, {intAttr("axis", -1)}));
  EXPECT_EQ(f.shape, (Shape{6, 4}));
}

TEST(TensorKernels, GatherElementsAndScatterND) {
  Rng rng(5);
  Tensor x = rng.uniform({3, 5});
  Tensor idx = rng.ints<int64_t>(DType::I64, {3, 4}, -5, 4);
  Tensor g = runOk(Call("gather_elements", {&x, &idx}, {intAttr("axis", 1)}));
  std::vector<double> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      int64_t k = ptr<int64_t>(idx)[i * 4 + j];
      ref.push_back(ptr<float>(x)[i * 5 + (k < 0 ? k + 5 : k)]);
    }
  expectClose(g, {3, 4}, ref, 0);

  Tensor data = rng.uniform({4, 3}), u = rng.uniform({2, 3});
  Tensor where = i64({2, 1}, {3, 1});
  for (const char *red : {"none", "add", "mul"}) {
    Tensor y =
        runOk(Call("scatter_nd", {&data, &where, &u}, {str("reduction", red)}));
    std::vector<double> r = asDouble(data);
    for (int t = 0; t < 2; ++t)
      for (int c = 0; c < 3; ++c) {
        double &dst = r[ptr<int64_t>(where)[t] * 3 + c];
        double up = ptr<float>(u)[t * 3 + c];
        dst = std::string(red) == "none"  ? up
              : std::string(red) == "add" ? float(dst + up)
                                          : float(dst * up);
      }
    expectClose(y, {4, 3}, r, 1e-7);
  }
}

TEST(TensorKernels, TopKValuesAndIndices) {
  Tensor x = f32({2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
  Tensor k = i64({1}, {3});
  Tensor v = runOk(Call("topk", {&x, &k}, {intAttr("axis", 1)}));
  Tensor i =
      runOk(Call("topk", {&x, &k}, {intAttr("axis", 1), intAttr("select", 1)},
                 {DType::I64}));
  expectClose(v, {2, 3}, {5, 4, 3, 9, 6, 5}, 0);
  std::vector<int64_t> want = {4, 2, 0, 0, 2, 3};
  for (int j = 0; j < 6; ++j)
    EXPECT_EQ(ptr<int64_t>(i)[j], want[j]);
  Tensor s =
      runOk(Call("topk", {&x, &k},
                 {intAttr("largest", 0), intAttr("select", 1)}, {DType::I64}));
  // Ties keep the lower index first: the two 1s at 1 and 3.
  EXPECT_EQ(ptr<int64_t>(s)[0], 1);
  EXPECT_EQ(ptr<int64_t>(s)[1], 3);
}

TEST(TensorKernels, ResizeNearestAndLinear) {
  Rng rng(8);
  Tensor x = rng.uniform({1, 1, 3, 4});
  Tensor n = runOk(Call("resize", {&x},
                        {floats("scales", {1, 1, 2, 2}), str("mode", "nearest"),
                         str("coordinate_transformation_mode", "asymmetric"),
                         str("nearest_mode", "floor")}));
  std::vector<double> ref;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 8; ++j)
      ref.push_back(ptr<float>(x)[(i / 2) * 4 + j / 2]);
  expectClose(n, {1, 1, 6, 8}, ref, 0);
  Tensor l =
      runOk(Call("resize", {&x},
                 {intsAttr("sizes", {1, 1, 5, 7}), str("mode", "linear"),
                  str("coordinate_transformation_mode", "align_corners")}));
  ref.clear();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) {
      double y = i * 2.0 / 4, xx = j * 3.0 / 6;
      int y0 = int(y), x0 = int(xx);
      int y1 = std::min(y0 + 1, 2), x1 = std::min(x0 + 1, 3);
      double wy = y - y0, wx = xx - x0;
      auto at = [&](int a, int b) { return double(ptr<float>(x)[a * 4 + b]); };
      ref.push_back((1 - wy) * ((1 - wx) * at(y0, x0) + wx * at(y0, x1)) +
                    wy * ((1 - wx) * at(y1, x0) + wx * at(y1, x1)));
    }
  expectClose(l, {1, 1, 5, 7}, ref, 1e-6);
}

TEST(TensorKernels, DepthToSpaceOneHotNonZero) {
  Rng rng(9);
  Tensor x = rng.uniform({1, 8, 2, 3});
  for (const char *mode : {"DCR", "CRD"}) {
    Tensor y = runOk(Call("depth_to_space", {&x},
                          {intAttr("blocksize", 2), str("mode", mode)}));
    std::vector<double> ref;
    for (int c = 0; c < 2; ++c)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 6; ++w) {
          int i = h % 2, j = w % 2;
          int sc = std::string(mode) == "DCR" ? (i * 2 + j) * 2 + c
                                              : c * 4 + i * 2 + j;
          ref.push_back(ptr<float>(x)[(sc * 2 + h / 2) * 3 + w / 2]);
        }
    expectClose(y, {1, 2, 4, 6}, ref, 0);
  }
  Tensor idx = i64({4}, {0, -1, 7, 2}), vals = f32({2}, {-1, 3});
  Tensor o = runOk(Call("one_hot", {&idx, &vals},
                        {intAttr("depth", 3), intAttr("axis", 0)}));
  std::vector<double> ref(12, -1.0);
  ref[0 * 4 + 0] = 3, ref[2 * 4 + 1] = 3, ref[2 * 4 + 3] = 3;
  expectClose(o, {3, 4}, ref, 0);
  Tensor z = f32({2, 3}, {0, 1, 0, -0.0f, 2, 3});
  Tensor nz = runOk(Call("non_zero", {&z}, {}, {DType::I64}));
  ASSERT_EQ(nz.shape, (Shape{2, 3}));
  std::vector<int64_t> want = {0, 1, 1, 1, 1, 2};
  for (int j = 0; j < 6; ++j)
    EXPECT_EQ(ptr<int64_t>(nz)[j], want[j]);
}

} // namespace
