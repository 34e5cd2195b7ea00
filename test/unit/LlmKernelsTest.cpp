//===- LlmKernelsTest.cpp - linear, rms_norm, activations, rope -----------===//
//
// Each kernel against a naive double-precision loop on fresh random inputs
// (fixed seeds). Weights are stored as f32/f16/bf16 and the reference
// widens them with its own decoder. Sizes are odd so that no vector width,
// block of output features or column chunk divides them; the decode kernels
// of every ISA this CPU supports are also run directly. paged_attention is
// in PagedAttentionTest.cpp, the KV cache and the executor wiring in
// KvCacheTest.cpp, the decode bandwidth measurement in LinearBenchTest.cpp,
// the fused kernels against the kernels they replace in
// FusedLlmKernelsTest.cpp and FusedAttentionTest.cpp.
//
// Tolerances: a dot product of length K accumulated in f32 is within
// ~K·2^-24 of the exact value relative to sum|x||w| (blocked sums do far
// better); 1e-5 of that bound leaves room without hiding a wrong formula.
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"
#include "cpu/Linear.h"

using namespace ingot;
using namespace ingot::test;

namespace {

/// y = x·Wᵀ + b in double; `mag` gets sum |x||w| + |b| per element.
std::vector<double> linearRef(const Tensor &x, const Weight &w, bool nk,
                              int64_t n, const Weight *bias,
                              std::vector<double> *mag) {
  const int64_t k = x.shape.back(),
                m = count(x.shape) / std::max<int64_t>(k, 1);
  std::vector<double> y(m * n);
  mag->assign(m * n, 0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias ? bias->ref[j] : 0,
             a = bias ? std::fabs(bias->ref[j]) : 0;
      for (int64_t q = 0; q < k; ++q) {
        const double xv = ptr<float>(x)[r * k + q];
        const double wv = nk ? w.ref[j * k + q] : w.ref[q * n + j];
        s += xv * wv;
        a += std::fabs(xv * wv);
      }
      y[r * n + j] = s;
      (*mag)[r * n + j] = a;
    }
  return y;
}

const DType kWeightTypes[] = {DType::F32, DType::F16, DType::BF16};

TEST(LlmKernels, LinearAllDtypesLayoutsAndRows) {
  Rng rng(501);
  const std::pair<int64_t, int64_t> nkSizes[] = {
      {37, 67}, {131, 29}, {515, 133}};
  for (DType dt : kWeightTypes)
    for (bool nk : {true, false})
      for (int64_t m : {1, 3, 20, 37})
        for (auto [n, k] : nkSizes)
          for (bool withBias : {false, true}) {
            SCOPED_TRACE(std::string(dtypeName(dt)) + (nk ? " nk" : " kn") +
                         " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                         " k=" + std::to_string(k) + (withBias ? " bias" : ""));
            // Leading dims: 3 rows as [1, 3, k] exercise the [..., K] form.
            Shape xs = m == 3 ? Shape{1, 3, k} : Shape{m, k};
            Tensor x = rng.uniform(xs);
            Weight w = makeWeight(rng, dt, nk ? Shape{n, k} : Shape{k, n});
            Weight b = makeWeight(rng, dt, {n});
            std::vector<double> mag;
            std::vector<double> ref =
                linearRef(x, w, nk, n, withBias ? &b : nullptr, &mag);
            Tensor y = runOk({"linear",
                              {&x, &w.t, withBias ? &b.t : nullptr},
                              {strAttr("w_layout", nk ? "nk" : "kn")}});
            Shape ys = xs;
            ys.back() = n;
            expectClose(y, ys, ref, 1e-5, 1e-30, &mag);
          }
}

TEST(LlmKernels, LinearPrefillSeveralWeightSlices) {
  // K large enough that the widened f16/bf16 weight is processed in three
  // column slices and the GEMM runs several KC steps.
  Rng rng(502);
  const int64_t m = 37, n = 450, k = 4099;
  Tensor x = rng.uniform({m, k});
  for (DType dt : kWeightTypes)
    for (bool nk : {true, false}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + (nk ? " nk" : " kn"));
      Weight w = makeWeight(rng, dt, nk ? Shape{n, k} : Shape{k, n});
      Weight b = makeWeight(rng, DType::F32, {n});
      std::vector<double> mag;
      std::vector<double> ref = linearRef(x, w, nk, n, &b, &mag);
      Tensor y = runOk({"linear",
                        {&x, &w.t, &b.t},
                        {strAttr("w_layout", nk ? "nk" : "kn")}});
      expectClose(y, {m, n}, ref, 1e-5, 1e-30, &mag);
    }
}

/// The ISA kernel sets this CPU can run.
std::vector<std::pair<std::string, const cpu::LinearKernelSet *>> linearSets() {
  std::vector<std::pair<std::string, const cpu::LinearKernelSet *>> sets = {
      {"generic", &cpu::genericLinearKernels()}};
  if (cpu::gemmIsaSupported(cpu::GemmIsa::Avx2) &&
      __builtin_cpu_supports("f16c"))
    sets.push_back({"avx2", &cpu::avx2LinearKernels()});
  if (cpu::gemmIsaSupported(cpu::GemmIsa::Avx512))
    sets.push_back({"avx512", &cpu::avx512LinearKernels()});
  return sets;
}

TEST(LlmKernels, LinearDecodeKernelsOfEveryIsa) {
  Rng rng(503);
  const int64_t n = 203, k = 157; // K tail of 13 (16 lanes), 5 (8 lanes)
  for (auto [name, ks] : linearSets())
    for (DType dt : kWeightTypes)
      for (bool nk : {true, false})
        for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 13, 32}) {
          if (m > (nk ? cpu::kLinearNkMaxRows : cpu::kLinearKnMaxRows))
            continue;
          SCOPED_TRACE(name + " " + dtypeName(dt) + (nk ? " nk" : " kn") +
                       " m=" + std::to_string(m));
          Tensor x = rng.uniform({m, k});
          Weight w = makeWeight(rng, dt, nk ? Shape{n, k} : Shape{k, n});
          Weight b = makeWeight(rng, DType::F32, {n});
          std::vector<double> mag;
          std::vector<double> ref = linearRef(x, w, nk, n, &b, &mag);
          std::vector<float> bias(n);
          for (int64_t j = 0; j < n; ++j)
            bias[j] = float(b.ref[j]);
          Tensor y = f32({m, n}, std::vector<float>(m * n, -7.0f));
          cpu::LinearDecodeArgs a;
          a.m = m;
          a.n = n;
          a.k = k;
          a.x = ptr<float>(x);
          a.w = w.t.data.data();
          a.wType = dt;
          a.bias = bias.data();
          a.y = ptr<float>(y);
          // Uneven ranges, as the thread chunks may split the features.
          const int64_t cuts[] = {0, 5, 21, 100, 101, n};
          for (size_t c = 0; c + 1 < std::size(cuts); ++c)
            (nk ? ks->nk : ks->kn)(a, cuts[c], cuts[c + 1]);
          expectClose(y, {m, n}, ref, 1e-5, 1e-30, &mag);
          // widen is what the prefill path and rms_norm use.
          std::vector<float> wide(n * k);
          ks->widen(dt, w.t.data.data(), n * k, wide.data());
          for (int64_t i = 0; i < n * k; ++i)
            ASSERT_EQ(double(wide[i]), w.ref[i]) << i;
        }
}

TEST(LlmKernels, LinearF16SpecialValuesPropagate) {
  for (auto [name, ks] : linearSets()) {
    SCOPED_TRACE(name);
    const int64_t n = 3, k = 21;
    std::vector<uint16_t> bits(n * k, cpu::floatToHalf(0.5f));
    bits[0 * k + 20] = 0x7c00; // +inf in the K tail
    bits[1 * k + 3] = 0x7e00;  // NaN in the vector part
    std::vector<float> x(k, 1.0f), y(n);
    cpu::LinearDecodeArgs a;
    a.m = 1;
    a.n = n;
    a.k = k;
    a.x = x.data();
    a.w = bits.data();
    a.wType = DType::F16;
    a.y = y.data();
    ks->nk(a, 0, n);
    EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0) << y[0];
    EXPECT_TRUE(std::isnan(y[1])) << y[1];
    EXPECT_FLOAT_EQ(y[2], 0.5f * k);
  }
}

TEST(LlmKernels, LinearErrors) {
  Rng rng(504);
  Tensor x = rng.uniform({2, 8}), w = rng.uniform({5, 7}), b = rng.uniform({4});
  std::vector<Tensor> outs;
  Status s =
      runKernel({"linear", {&x, &w}, {strAttr("w_layout", "nk")}}, &outs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expects 7"), std::string::npos) << s.message();
  Tensor w2 = rng.uniform({8, 5});
  s = runKernel({"linear", {&x, &w2, &b}, {strAttr("w_layout", "kn")}}, &outs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("bias"), std::string::npos) << s.message();
  s = runKernel({"linear", {&x, &w2}, {strAttr("w_layout", "nkk")}}, &outs);
  EXPECT_FALSE(s.isOk());
}

TEST(LlmKernels, RmsNorm) {
  Rng rng(505);
  const Shape shapes[] = {{3, 7, 129}, {1, 4096}, {5, 33}, {17}};
  for (DType dt : kWeightTypes)
    for (const Shape &s : shapes)
      for (int alias : {-1, 0}) {
        SCOPED_TRACE(std::string(dtypeName(dt)) + " " + shape::toString(s));
        Tensor x = rng.uniform(s, -3.0, 3.0);
        const int64_t d = s.back(), rows = count(s) / d;
        Weight w = makeWeight(rng, dt, {d});
        std::vector<double> ref(count(s));
        for (int64_t r = 0; r < rows; ++r) {
          double ss = 0;
          for (int64_t i = 0; i < d; ++i)
            ss += double(ptr<float>(x)[r * d + i]) * ptr<float>(x)[r * d + i];
          const double inv = 1.0 / std::sqrt(ss / d + 1e-5);
          for (int64_t i = 0; i < d; ++i)
            ref[r * d + i] = ptr<float>(x)[r * d + i] * inv * w.ref[i];
        }
        Call c("rms_norm", {&x, &w.t}, {floatAttr("epsilon", 1e-5)});
        c.aliasInput = alias;
        expectClose(runOk(c), s, ref, 1e-6, 1e-30);
      }
}

double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(LlmKernels, SiluMulAndInPlace) {
  Rng rng(506);
  EXPECT_TRUE(cpu::findKernel("silu_mul")->inPlace());
  for (const Shape &s : {Shape{7, 1029}, Shape{3}, Shape{40000}})
    for (int alias : {-1, 0, 1}) {
      Tensor g = rng.uniform(s, -12.0, 12.0), u = rng.uniform(s, -2.0, 2.0);
      std::vector<double> ref(count(s));
      for (int64_t i = 0; i < count(s); ++i) {
        const double gv = ptr<float>(g)[i];
        ref[i] = gv * sigmoidRef(gv) * ptr<float>(u)[i];
      }
      Call c("silu_mul", {&g, &u});
      c.aliasInput = alias;
      SCOPED_TRACE(shape::toString(s) + " alias " + std::to_string(alias));
      expectClose(runOk(c), s, ref, 1e-6, 1e-30);
    }
}

TEST(LlmKernels, GeluBothFormsAndInPlace) {
  Rng rng(507);
  EXPECT_TRUE(cpu::findKernel("gelu")->inPlace());
  for (const std::string form : {"none", "tanh"})
    for (const Shape &s : {Shape{5, 3001}, Shape{1}})
      for (int alias : {-1, 0}) {
        Tensor x = rng.uniform(s, -7.0, 7.0);
        std::vector<double> ref(count(s));
        for (int64_t i = 0; i < count(s); ++i) {
          const double v = ptr<float>(x)[i];
          ref[i] = form == "none"
                       ? 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)))
                       : 0.5 * v *
                             (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                                              (v + 0.044715 * v * v * v)));
        }
        Call c("gelu", {&x}, {strAttr("approximate", form)});
        c.aliasInput = alias;
        SCOPED_TRACE(form + " " + shape::toString(s));
        // The deep negative tail (~1e-11) is relative-accurate only to the
        // rounding of the argument, scaled by the function's steepness.
        expectClose(runOk(c), s, ref, 2e-5, 1e-12);
      }
}

struct RopeCase {
  int64_t heads, headDim, rotaryDim;
  double theta;
  bool llama3;
  int64_t maxPos;
};

/// Rotate-half RoPE in double; `mag` gets |x1| + |x2| (|x| for pass-through
/// dims), which bounds the f32 rounding error of each output.
std::vector<double> ropeRef(const Tensor &x, const std::vector<int64_t> &pos,
                            const RopeCase &c, std::vector<double> *mag,
                            int bands[3]) {
  const int64_t half = c.rotaryDim / 2, d = c.headDim;
  std::vector<double> inv(half);
  for (int64_t i = 0; i < half; ++i) {
    double f = 1.0 / std::pow(c.theta, double(2 * i) / double(c.rotaryDim));
    if (c.llama3) {
      const double factor = 8, low = 1, high = 4, om = 8192;
      const double wavelen = 2 * M_PI / f;
      if (wavelen < om / high) {
        ++bands[0];
      } else if (wavelen > om / low) {
        f = f / factor;
        ++bands[2];
      } else {
        const double smooth = (om / wavelen - low) / (high - low);
        f = (1 - smooth) * f / factor + smooth * f;
        ++bands[1];
      }
    }
    inv[i] = f;
  }
  std::vector<double> y(count(x.shape));
  mag->assign(y.size(), 0);
  const float *xp = ptr<float>(x);
  for (size_t t = 0; t < pos.size(); ++t)
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t base = (int64_t(t) * c.heads + h) * d;
      for (int64_t i = 0; i < half; ++i) {
        const double a = double(pos[t]) * inv[i];
        const double x1 = xp[base + i], x2 = xp[base + i + half];
        y[base + i] = x1 * std::cos(a) - x2 * std::sin(a);
        y[base + i + half] = x2 * std::cos(a) + x1 * std::sin(a);
        (*mag)[base + i] = (*mag)[base + i + half] =
            std::fabs(x1) + std::fabs(x2);
      }
      for (int64_t i = c.rotaryDim; i < d; ++i) {
        y[base + i] = xp[base + i];
        (*mag)[base + i] = std::fabs(xp[base + i]);
      }
    }
  return y;
}

TEST(LlmKernels, RopeRotateHalfLlama3AndInPlace) {
  Rng rng(508);
  EXPECT_TRUE(cpu::findKernel("rope")->inPlace());
  const RopeCase cases[] = {
      {3, 16, 16, 10000.0, false, 8192},
      {2, 24, 8, 10000.0, false, 8192},    // rotary_dim < head_dim
      {2, 64, 64, 500000.0, true, 131072}, // Llama 3.1 scaling
      {4, 64, 32, 1000000.0, false, 32768},
  };
  for (const RopeCase &c : cases)
    for (int alias : {-1, 0}) {
      const int64_t t = 9;
      std::vector<int64_t> pos(t);
      for (int64_t &p : pos)
        p = int64_t(rng.gen() % uint64_t(c.maxPos));
      pos[0] = 0;
      pos[1] = c.maxPos - 1;
      Tensor x = rng.uniform({t, c.heads * c.headDim});
      Tensor p = i64({t}, pos);
      std::vector<double> mag;
      int bands[3] = {0, 0, 0};
      std::vector<double> ref = ropeRef(x, pos, c, &mag, bands);
      if (c.llama3) { // the case must reach all three frequency bands
        EXPECT_TRUE(bands[0] && bands[1] && bands[2]);
      }
      std::vector<Attr> attrs = {
          intAttr("num_heads", c.heads), intAttr("head_dim", c.headDim),
          intAttr("rotary_dim", c.rotaryDim), floatAttr("theta", c.theta),
          strAttr("scaling", c.llama3 ? "llama3" : "none")};
      if (c.llama3)
        for (Attr a : {floatAttr("factor", 8), floatAttr("low_freq_factor", 1),
                       floatAttr("high_freq_factor", 4),
                       intAttr("original_max_positions", 8192)})
          attrs.push_back(a);
      Call call("rope", {&x, &p}, attrs);
      call.aliasInput = alias;
      SCOPED_TRACE("rope d=" + std::to_string(c.headDim) +
                   " rd=" + std::to_string(c.rotaryDim) + " alias " +
                   std::to_string(alias));
      // An f32 angle would be off by ~1e-3 rad at these positions.
      expectClose(runOk(call), x.shape, ref, 4e-7, 1e-30, &mag);
    }
}

TEST(LlmKernels, RopeErrors) {
  Rng rng(509);
  Tensor x = rng.uniform({2, 8}), p = i64({2}, {0, 1}),
         p3 = i64({3}, {0, 1, 2});
  std::vector<Tensor> outs;
  auto attrs = [](int64_t rd) {
    return std::vector<Attr>{intAttr("num_heads", 2), intAttr("head_dim", 4),
                             intAttr("rotary_dim", rd)};
  };
  EXPECT_TRUE(runKernel({"rope", {&x, &p}, attrs(4)}, &outs).isOk());
  EXPECT_FALSE(runKernel({"rope", {&x, &p}, attrs(3)}, &outs).isOk());
  EXPECT_FALSE(runKernel({"rope", {&x, &p}, attrs(6)}, &outs).isOk());
  EXPECT_FALSE(runKernel({"rope", {&x, &p3}, attrs(4)}, &outs).isOk());
}

} // namespace
