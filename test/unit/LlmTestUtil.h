//===- LlmTestUtil.h - Shared helpers of the decoder-LLM tests --*- C++ -*-===//
//
// Weights stored as f32/f16/bf16 with their exact values (decoded here, not
// by the runtime's converters), a paged_attention runner that hands the
// kernel a KV cache, and dense attention in double as the reference.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelTestUtil.h"

#include "cpu/KernelUtil.h"
#include "ingot/KvCache.h"

#include <algorithm>

namespace ingot::test {

/// IEEE half decoded independently of the runtime's converter.
inline double halfRef(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0    ? std::ldexp(double(m), -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : std::ldexp(double(1024 + m), e - 25);
  return (h & 0x8000) ? -v : v;
}
inline double bf16Ref(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// A random [rows, cols] weight stored as `dt`, and its exact values.
struct Weight {
  Tensor t;
  std::vector<double> ref;
};

inline Weight makeWeight(Rng &rng, DType dt, Shape s) {
  Tensor f = rng.uniform(s);
  Weight w;
  const int64_t n = count(s);
  w.ref.resize(n);
  if (dt == DType::F32) {
    w.t = f;
    for (int64_t i = 0; i < n; ++i)
      w.ref[i] = ptr<float>(f)[i];
    return w;
  }
  std::vector<uint16_t> bits(n);
  for (int64_t i = 0; i < n; ++i) {
    const float v = ptr<float>(f)[i];
    bits[i] = dt == DType::BF16 ? cpu::floatToBf16(v) : cpu::floatToHalf(v);
    // Every 17th f16 weight a subnormal, to cover that widening path.
    if (dt == DType::F16 && i % 17 == 5)
      bits[i] = uint16_t((rng.gen() & 0x8000) | (1 + rng.gen() % 0x3ff));
    w.ref[i] = dt == DType::BF16 ? bf16Ref(bits[i]) : halfRef(bits[i]);
  }
  w.t = make(dt, std::move(s), bits);
  return w;
}

inline LlmConfig cacheConfig(int64_t layers, int64_t blockSize, int64_t kvHeads,
                             int64_t headDim) {
  LlmConfig c;
  c.numLayers = layers;
  c.blockSize = blockSize;
  c.numKvHeads = kvHeads;
  c.headDim = headDim;
  return c;
}

struct AttnShape {
  int64_t heads, kvHeads, headDim, window;
  bool table64;
  double softcap = 0; // > 0: scores soft-capped to c·tanh(s / c)
};

inline std::vector<Attr> attnAttrs(const AttnShape &a, int64_t layer) {
  return {intAttr("layer", layer),
          intAttr("num_heads", a.heads),
          intAttr("num_kv_heads", a.kvHeads),
          intAttr("head_dim", a.headDim),
          floatAttr("scale", 1.0 / std::sqrt(double(a.headDim))),
          intAttr("sliding_window", a.window),
          floatAttr("softcap", a.softcap)};
}

/// Runs paged_attention with `kv` as the executor's cache.
inline Status runAttention(const std::vector<const Tensor *> &ins,
                           const std::vector<Attr> &attrs,
                           const KvCacheView *kv, Tensor *out) {
  cpu::KernelContext ctx("paged_attention", "test/attn", &attrs, &testPool());
  ctx.setKvCache(kv);
  for (const Tensor *t : ins)
    ctx.inputs.push_back({true, t->data.data(), t->dtype, t->shape, "in"});
  std::vector<uint8_t> storage(1 << 20);
  cpu::KernelOutput o;
  o.data = storage.data();
  o.capacityBytes = storage.size();
  o.maxShape = {int64_t(storage.size() / 4)};
  o.name = "attn";
  ctx.outputs.push_back(o);
  if (Status s = cpu::findKernel("paged_attention")->fn(ctx); !s)
    return s;
  out->dtype = DType::F32;
  out->shape = ctx.outputs[0].shape;
  out->data.assign(storage.begin(), storage.begin() + count(out->shape) * 4);
  return Status::ok();
}

/// Softmax(scale q·Kᵀ)·V for one head over rows [lo, p] of a dense history
/// (rows of kvHeads*headDim floats), in double; `mag` gets sum p_j |v_j|.
inline void denseAttention(const float *q, const std::vector<float> &k,
                           const std::vector<float> &v, int64_t lo, int64_t p,
                           int64_t kvh, const AttnShape &a, double *out,
                           double *mag) {
  const int64_t d = a.headDim, row = a.kvHeads * d;
  std::vector<double> w(p - lo + 1);
  double mx = -1e300, sum = 0;
  for (int64_t j = lo; j <= p; ++j) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i)
      s += double(q[i]) * k[j * row + kvh * d + i];
    w[j - lo] = s / std::sqrt(double(d));
    if (a.softcap > 0)
      w[j - lo] = a.softcap * std::tanh(w[j - lo] / a.softcap);
    mx = std::max(mx, w[j - lo]);
  }
  for (double &x : w)
    sum += (x = std::exp(x - mx));
  for (int64_t i = 0; i < d; ++i) {
    out[i] = mag[i] = 0;
    for (int64_t j = lo; j <= p; ++j) {
      out[i] += w[j - lo] / sum * v[j * row + kvh * d + i];
      mag[i] += w[j - lo] / sum * std::fabs(v[j * row + kvh * d + i]);
    }
  }
}

} // namespace ingot::test
