//===- DenseAttention.cpp - The attention kernel of encoder graphs --------===//
//
// softmax(q·kᵀ·scale + mask)·v per (batch, head) on [B, S, H, D] tensors,
// the op ingot-fuse-attention makes from an export's matmul / softmax
// chain. A task is a head's query rows (a head is split only to give every
// thread two tasks). It packs the head's K (transposed) and V into the
// GEMM micro-kernel's B panels once; then per tile of MR query rows the
// micro-kernel computes the scores straight from q's rows (H·D floats
// apart), the mask is added, each row goes through softmax as the
// `softmax` kernel computes it (exp of x - max, then times 1 / its sum in
// double), and the micro-kernel writes p·v into y's rows. A tile's scores
// (MR × Sk floats) stay in L1/L2; [B, H, S, S] never exists in memory.
// On one BERT-L3 layer ([1, 128, 12, 32], 2 threads, `ingot run
// --profile`) the steps it replaces (transposes, two matmuls, the mask
// add, softmax) took 780-820 us a run, attention and its reshapes 430-460.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"
#include "cpu/KernelRegistry.h"
#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"

#include "ingot/ThreadPool.h"

#include <algorithm>
#include <array>
#include <immintrin.h>
#include <limits>
#include <vector>

#define INGOT_AVX512 __attribute__((target("avx512f")))

namespace ingot::cpu {
namespace {

/// Elements of a mask broadcast to [B, H, Sq, Sk]: per-dim strides, 0
/// where the mask has 1 (or lacks the dim).
struct MaskView {
  const float *data = nullptr;
  std::array<int64_t, 4> stride{};
  const float *row(int64_t b, int64_t h, int64_t i) const {
    return data + b * stride[0] + h * stride[1] + i * stride[2];
  }
};

Status maskView(KernelContext &ctx, const std::array<int64_t, 4> &scores,
                MaskView *view) {
  const KernelInput &m = ctx.input(3);
  if (m.shape.size() > 4)
    return ctx.error("mask " + shape::toString(m.shape) + " has rank above 4");
  const size_t pad = 4 - m.shape.size();
  int64_t step = 1;
  for (size_t d = 4; d-- > 0;) {
    const int64_t n = d < pad ? 1 : m.shape[d - pad];
    if (n != 1 && n != scores[d])
      return ctx.error(
          "mask " + shape::toString(m.shape) +
          " does not broadcast to the scores [" + std::to_string(scores[0]) +
          "," + std::to_string(scores[1]) + "," + std::to_string(scores[2]) +
          "," + std::to_string(scores[3]) + "]");
    view->stride[d] = n == 1 ? 0 : step;
    step *= n;
  }
  view->data = m.as<float>();
  return Status::ok();
}

struct Dims {
  int64_t b, sq, sk, h, d, dv;
};

/// Checks q [B, Sq, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv].
Status attentionDims(KernelContext &ctx, Dims *dims) {
  const shape::Shape &q = ctx.input(0).shape, &k = ctx.input(1).shape,
                     &v = ctx.input(2).shape;
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return ctx.error("query " + shape::toString(q) + ", key " +
                     shape::toString(k) + " and value " + shape::toString(v) +
                     " must be [batch, seq, heads, dim]");
  if (k[0] != q[0] || v[0] != q[0] || k[2] != q[2] || v[2] != q[2] ||
      k[3] != q[3] || v[1] != k[1])
    return ctx.error("query " + shape::toString(q) + ", key " +
                     shape::toString(k) + " and value " + shape::toString(v) +
                     " disagree on batch, heads, key length or head dim");
  *dims = {q[0], q[1], k[1], q[2], q[3], v[3]};
  return Status::ok();
}

/// s[j] += mask[j · step] (mask may be null) and the row's max.
INGOT_AVX512 float addMaskMaxAvx512(float *s, int64_t n, const float *mask,
                                    int64_t step) {
  __m512 mx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 lanes =
        n - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - j)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(lanes, s + j);
    if (mask && step == 1)
      v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, mask + j));
    else if (mask && step == 0)
      v = _mm512_add_ps(v, _mm512_set1_ps(mask[0]));
    _mm512_mask_storeu_ps(s + j, lanes, v);
    mx = _mm512_mask_max_ps(mx, lanes, mx, v);
  }
  // Spelled out: GCC 12's _mm512_reduce_max_ps trips -Wuninitialized.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, mx);
  return *std::max_element(lanes, lanes + 16);
}

float addMaskMax(float *s, int64_t n, const float *mask, int64_t step) {
  if ((!mask || step <= 1) && bestGemmIsa() == GemmIsa::Avx512)
    return addMaskMaxAvx512(s, n, mask, step);
  if (mask)
    for (int64_t j = 0; j < n; ++j)
      s[j] += mask[j * step];
  return maxF32(s, n);
}

/// One row of scores in place: + mask, then softmax as the `softmax`
/// kernel computes it (exp of x - max, times 1 / the sum in double).
void softmaxRow(float *s, int64_t n, const float *mask, int64_t step) {
  expF32(s, addMaskMax(s, n, mask, step), s, n);
  const float inv = float(1.0 / sumF32(s, n));
  for (int64_t j = 0; j < n; ++j)
    s[j] *= inv;
}

/// Query rows [i0, i1) of (b, h): K (as kᵀ) and V of the head packed into
/// the GEMM micro-kernel's B panels once, then per tile of MR rows the
/// scores (q·kᵀ·scale), the mask, each row's softmax and p·v straight into
/// y. `scratch` holds a tile's scores and, without microRowA, its A panel.
void attendRows(const Dims &n, const float *q, const float *k, const float *v,
                const MaskView *mask, float scale, int64_t b, int64_t h,
                int64_t i0, int64_t i1, float *y, std::vector<float> &scratch) {
  const GemmIsa isa = bestGemmIsa();
  const GemmKernelSet &ks = gemmKernels(isa);
  const int mr = ks.mr, nr = ks.nr;
  const int64_t qkStride = n.h * n.d, vStride = n.h * n.dv;
  GemmArgs kt; // kᵀ: [D, Sk], the head's K rows read transposed
  kt.k = n.d, kt.n = n.sk, kt.transB = true;
  kt.b = k + (b * n.sk * n.h + h) * n.d, kt.ldb = qkStride;
  GemmArgs vh; // V: [Sk, Dv]
  vh.k = n.sk, vh.n = n.dv;
  vh.b = v + (b * n.sk * n.h + h) * n.dv, vh.ldb = vStride;
  const PackedB kPanels(kt, isa), vPanels(vh, isa);
  const int64_t skPad = (n.sk + nr - 1) / nr * nr;
  scratch.resize(size_t(mr * skPad + std::max(n.d, n.sk) * mr));
  float *s = scratch.data(), *ap = s + mr * skPad;
  for (int64_t r0 = i0; r0 < i1; r0 += mr) {
    const int64_t rows = std::min<int64_t>(mr, i1 - r0);
    GemmArgs qa; // this tile's q rows, then its probabilities
    qa.a = q + ((b * n.sq + r0) * n.h + h) * n.d, qa.lda = qkStride;
    if (!ks.microRowA)
      packAPanel(qa, 0, rows, 0, n.d, mr, ap);
    for (int64_t p = 0; p * nr < n.sk; ++p) {
      const int64_t cols = std::min<int64_t>(nr, n.sk - p * nr);
      if (ks.microRowA)
        ks.microRowA(n.d, qa.a, qkStride, kPanels.panel(p), s + p * nr, skPad,
                     rows, cols, scale, 0.0f);
      else
        ks.micro(n.d, ap, kPanels.panel(p), s + p * nr, skPad, rows, cols,
                 scale, 0.0f);
    }
    for (int64_t r = 0; r < rows; ++r)
      softmaxRow(s + r * skPad, n.sk, mask ? mask->row(b, h, r0 + r) : nullptr,
                 mask ? mask->stride[3] : 0);
    qa.a = s, qa.lda = skPad;
    if (!ks.microRowA)
      packAPanel(qa, 0, rows, 0, n.sk, mr, ap);
    float *yr = y + ((b * n.sq + r0) * n.h + h) * n.dv;
    for (int64_t p = 0; p * nr < n.dv; ++p) {
      const int64_t cols = std::min<int64_t>(nr, n.dv - p * nr);
      if (ks.microRowA)
        ks.microRowA(n.sk, s, skPad, vPanels.panel(p), yr + p * nr, vStride,
                     rows, cols, 1.0f, 0.0f);
      else
        ks.micro(n.sk, ap, vPanels.panel(p), yr + p * nr, vStride, rows, cols,
                 1.0f, 0.0f);
    }
  }
}

Status attentionKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 4, 1); !s)
    return s;
  if (Status s = ctx.expectInputsDType({DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  double scale = 1.0;
  if (Status s = ctx.attrFloat("scale", &scale); !s)
    return s;
  Dims n;
  if (Status s = attentionDims(ctx, &n); !s)
    return s;
  MaskView mask;
  if (ctx.hasInput(3))
    if (Status s = maskView(ctx, {n.b, n.h, n.sq, n.sk}, &mask); !s)
      return s;
  if (Status s = ctx.setOutputShape(0, {n.b, n.sq, n.h, n.dv}); !s)
    return s;
  float *y = ctx.output(0).as<float>();
  if (n.sk == 0) { // an empty weighted sum (the chain's matmul over 0)
    std::fill_n(y, n.b * n.sq * n.h * n.dv, 0.0f);
    return Status::ok();
  }
  const float *q = ctx.input(0).as<float>(), *k = ctx.input(1).as<float>(),
              *v = ctx.input(2).as<float>();
  // Tasks of a head's query rows; a head is split only to give every
  // thread two tasks, since each task packs the head's K and V.
  const int64_t threads = ctx.pool() ? int64_t(ctx.pool()->size()) : 1;
  const int64_t heads = n.b * n.h;
  const int64_t split =
      std::min(std::max<int64_t>(1, n.sq), (2 * threads + heads - 1) / heads);
  const int64_t rowsPerTask = (n.sq + split - 1) / split;
  ctx.parallelFor(heads * split, 1, [&](int64_t t0, int64_t t1) {
    std::vector<float> scratch;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bh = t / split, i0 = (t % split) * rowsPerTask;
      if (i0 < n.sq)
        attendRows(n, q, k, v, ctx.hasInput(3) ? &mask : nullptr, float(scale),
                   bh / n.h, bh % n.h, i0, std::min(n.sq, i0 + rowsPerTask), y,
                   scratch);
    }
  });
  return Status::ok();
}

} // namespace

void addDenseAttentionKernels(std::vector<KernelImpl> &table) {
  table.push_back({"attention", attentionKernel});
}

} // namespace ingot::cpu
