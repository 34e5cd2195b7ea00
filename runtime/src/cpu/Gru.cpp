//===- Gru.cpp - ONNX GRU (layout 0, sigmoid/tanh) ------------------------===//
//
// Per direction: one sgemm computes every step's input projection
// x_t · Wᵀ (+ Wb, and Rb of the z and r gates) up front; each step then
// adds h_{t-1} · R_zrᵀ, and the candidate's recurrent term, in ONNX's z, r,
// h gate order:
//   z, r = σ(·),  ĥ = tanh(x·W_hᵀ + Wb_h + (r ⊙ h)·R_hᵀ + Rb_h)
//   (linear_before_reset: tanh(x·W_hᵀ + Wb_h + r ⊙ (h·R_hᵀ + Rb_h))),
//   h_t = (1 − z) ⊙ ĥ + z ⊙ h_{t-1}.
// The step's `select` picks Y (0) or Y_h (1), or 2 both stacked along dim
// 0 (Y's seq rows, then Y_h), as for lstm.
//
//===----------------------------------------------------------------------===//
#include "cpu/Gemm.h"
#include "cpu/MathF32.h"
#include "cpu/Recurrent.h"
#include "cpu/StepCache.h"
#include "cpu/TensorKernels.h"

#include <algorithm>
#include <cstring>

namespace ingot::cpu {
namespace {

struct GruDims : RecurrentStep {
  bool linearBeforeReset;
};

/// One direction's weights: W [3H, input], R [3H, H], b [6H] or null, and
/// their packed panels (R's z/r rows and h rows apart; null when the batch
/// is a few rows, which sgemm reads in place).
struct GruWeights {
  const float *w, *r, *b;
  const PackedB *packedW, *packedRzr, *packedRh;
};

/// c (m x n) = beta * c + a (m x k) · (rows [0, n) of b, k wide)ᵀ.
void gemmRows(int64_t m, int64_t n, int64_t k, const float *a, const float *b,
              const PackedB *packed, float *c, int64_t ldc, float beta,
              ThreadPool *pool) {
  GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = a, g.lda = k;
  g.b = b, g.ldb = k, g.transB = true;
  g.c = c, g.ldc = ldc, g.beta = beta;
  if (packed)
    sgemm(g, pool, *packed);
  else
    sgemm(g, pool);
}

/// One direction: writes its h for every step into y (row stride
/// dirs · batch · H, nullptr to skip) and leaves the last h.
void runDirection(const GruDims &d, int64_t dir, bool reverse, const float *x,
                  const GruWeights &wt, float *h, float *y, ThreadPool *pool) {
  const int64_t H = d.hidden, G = 3 * H, rows = d.seq * d.batch;
  std::vector<float> xw(size_t(rows * G)), zr(size_t(d.batch * 2 * H));
  std::vector<float> cand(size_t(d.batch * H)), rh(size_t(d.batch * H));
  gemmRows(rows, G, d.input, x, wt.w, wt.packedW, xw.data(), G, 0.0f, pool);
  if (wt.b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < G;
           ++j) // Rb_h stays apart with linear_before_reset
        xw[i * G + j] +=
            wt.b[j] + (j < 2 * H || !d.linearBeforeReset ? wt.b[G + j] : 0.0f);
  const float *rbh = wt.b ? wt.b + G + 2 * H : nullptr;
  for (int64_t s = 0; s < d.seq; ++s) {
    const int64_t t = reverse ? d.seq - 1 - s : s;
    const float *xt = xw.data() + t * d.batch * G;
    for (int64_t bi = 0; bi < d.batch; ++bi)
      std::memcpy(zr.data() + bi * 2 * H, xt + bi * G,
                  size_t(2 * H) * sizeof(float));
    gemmRows(d.batch, 2 * H, H, h, wt.r, wt.packedRzr, zr.data(), 2 * H, 1.0f,
             nullptr);
    sigmoidF32(zr.data(), zr.data(), int64_t(zr.size()));
    const float *hIn = h;
    if (!d.linearBeforeReset) { // (r ⊙ h) · R_hᵀ
      for (int64_t bi = 0; bi < d.batch; ++bi)
        for (int64_t j = 0; j < H; ++j)
          rh[bi * H + j] = zr[bi * 2 * H + H + j] * h[bi * H + j];
      hIn = rh.data();
    }
    gemmRows(d.batch, H, H, hIn, wt.r + 2 * H * H, wt.packedRh, cand.data(), H,
             0.0f, nullptr);
    for (int64_t bi = 0; bi < d.batch; ++bi) {
      float *c = cand.data() + bi * H;
      const float *z = zr.data() + bi * 2 * H, *r = z + H;
      const float *xh = xt + bi * G + 2 * H;
      for (int64_t j = 0; j < H; ++j)
        c[j] = d.linearBeforeReset ? xh[j] + r[j] * (c[j] + (rbh ? rbh[j] : 0))
                                   : xh[j] + c[j];
      tanhF32(c, c, H);
      float *hb = h + bi * H;
      for (int64_t j = 0; j < H; ++j)
        hb[j] = (1.0f - z[j]) * c[j] + z[j] * hb[j];
      if (y)
        std::memcpy(y + ((t * d.dirs + dir) * d.batch + bi) * H, hb,
                    size_t(H) * sizeof(float));
    }
  }
}

/// Each direction's W, R_zr and R_h packed into GEMM panels: once per call,
/// or once per step of the plan when W and R are weights.
struct GruPacks {
  std::vector<PackedB> w, rzr, rh;
};

std::shared_ptr<const GruPacks> packWeights(const KernelContext &ctx,
                                            const GruDims &d) {
  const GemmIsa isa = bestGemmIsa();
  const int64_t H = d.hidden, G = 3 * H;
  auto pack = [&] {
    GruPacks p;
    auto one = [&](const float *b, int64_t n, int64_t k) {
      GemmArgs g;
      g.n = n, g.k = k, g.transB = true, g.b = b, g.ldb = k;
      return PackedB(g, isa);
    };
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      p.w.push_back(
          one(ctx.input(1).as<float>() + dir * G * d.input, G, d.input));
      if (d.batch <= kSmallM)
        continue;
      const float *r = ctx.input(2).as<float>() + dir * G * H;
      p.rzr.push_back(one(r, 2 * H, H));
      p.rh.push_back(one(r + 2 * H * H, H, H));
    }
    return p;
  };
  if (!ctx.input(1).constant || !ctx.input(2).constant || !ctx.stepCache())
    return std::make_shared<const GruPacks>(pack());
  const uint64_t key =
      recurrentPackKey(ctx, d, d.batch > kSmallM, uint64_t(isa));
  return ctx.stepCache()->get<GruPacks>(key, pack);
}

Status gruKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 5, 1); !s)
    return s;
  GruDims d;
  int64_t lbr;
  if (Status s = readRecurrentStep(ctx, 3, &d); !s)
    return s;
  if (Status s = ctx.attrInt("linear_before_reset", &lbr, 0); !s)
    return s;
  d.linearBeforeReset = lbr != 0;
  const int64_t H = d.hidden, G = 3 * H;
  float *out = ctx.output(0).as<float>();
  float *y = d.select != 1 ? out : nullptr;
  float *lastH = d.select == 1   ? out
                 : d.select == 2 ? out + d.seq * d.dirs * d.batch * H
                                 : nullptr;
  std::vector<float> h(size_t(d.batch * H));
  const std::shared_ptr<const GruPacks> packs = packWeights(ctx, d);
  for (int64_t dir = 0; dir < d.dirs; ++dir) {
    const int64_t stateAt = dir * d.batch * H;
    if (ctx.hasInput(4))
      std::memcpy(h.data(), ctx.input(4).as<float>() + stateAt,
                  h.size() * sizeof(float));
    else
      std::fill(h.begin(), h.end(), 0.0f);
    const bool packedR = !packs->rzr.empty();
    GruWeights wt{ctx.input(1).as<float>() + dir * G * d.input,
                  ctx.input(2).as<float>() + dir * G * H,
                  ctx.hasInput(3) ? ctx.input(3).as<float>() + dir * 2 * G
                                  : nullptr,
                  &packs->w[size_t(dir)],
                  packedR ? &packs->rzr[size_t(dir)] : nullptr,
                  packedR ? &packs->rh[size_t(dir)] : nullptr};
    runDirection(d, dir, d.reverse || dir == 1, ctx.input(0).as<float>(), wt,
                 h.data(), y, ctx.pool());
    if (lastH)
      std::memcpy(lastH + stateAt, h.data(), h.size() * sizeof(float));
  }
  return Status::ok();
}

} // namespace

void addGruKernels(std::vector<KernelImpl> &table) {
  table.push_back({"gru", gruKernel});
}

} // namespace ingot::cpu
