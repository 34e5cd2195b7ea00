//===- Lstm.cpp - ONNX LSTM (layout 0, sigmoid/tanh/tanh) -----------------===//
//
// Per direction: one sgemm computes every step's input projection
// x_t · Wᵀ (+ both biases) up front; each step then adds h_{t-1} · Rᵀ
// and applies the gates in ONNX's i, o, f, c order:
//   c_t = f ⊙ c_{t-1} + i ⊙ tanh(ĉ),  h_t = o ⊙ tanh(c_t),
// with i, o, f sigmoids. The step's `select` attribute picks the output
// (0 Y, 1 Y_h, 2 Y_c), or 3 all of them stacked along dim 0 (Y's seq rows,
// then Y_h, then Y_c), which the compiler uses when a model reads more than
// one: the recurrence then runs once instead of once per output.
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

/// One direction: writes its h for every step into y (row stride
/// dirs · batch · H, nullptr to skip) and leaves the last h and c.
void runDirection(const RecurrentStep &d, int64_t dir, bool reverse,
                  const float *x, const float *w, const float *r,
                  const PackedB &packedW, const PackedB *packedR,
                  const float *b, float *h, float *c, float *y,
                  ThreadPool *pool) {
  const int64_t H = d.hidden, G = 4 * H, rows = d.seq * d.batch;
  std::vector<float> xw(size_t(rows * G)), gates(size_t(d.batch * G));
  std::vector<float> tanhC(static_cast<size_t>(H));
  GemmArgs proj; // every step's x_t · Wᵀ at once
  proj.m = rows, proj.n = G, proj.k = d.input;
  proj.a = x, proj.lda = d.input;
  proj.b = w, proj.ldb = d.input, proj.transB = true;
  proj.c = xw.data(), proj.ldc = G;
  sgemm(proj, pool, packedW);
  if (b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < G; ++j)
        xw[i * G + j] += b[j] + b[G + j];
  GemmArgs rec; // + h_{t-1} · Rᵀ, every step
  rec.m = d.batch, rec.n = G, rec.k = H;
  rec.a = h, rec.lda = H;
  rec.b = r, rec.ldb = H, rec.transB = true;
  rec.c = gates.data(), rec.ldc = G, rec.beta = 1.0f;
  for (int64_t s = 0; s < d.seq; ++s) {
    const int64_t t = reverse ? d.seq - 1 - s : s;
    std::memcpy(gates.data(), xw.data() + t * d.batch * G,
                gates.size() * sizeof(float));
    if (packedR)
      sgemm(rec, nullptr, *packedR);
    else
      sgemm(rec, nullptr);
    for (int64_t bi = 0; bi < d.batch; ++bi) {
      float *g = gates.data() + bi * G;
      sigmoidF32(g, g, 3 * H); // i, o, f
      tanhF32(g + 3 * H, g + 3 * H, H);
      float *hb = h + bi * H, *cb = c + bi * H;
      for (int64_t j = 0; j < H; ++j)
        cb[j] = g[2 * H + j] * cb[j] + g[j] * g[3 * H + j];
      tanhF32(cb, tanhC.data(), H);
      for (int64_t j = 0; j < H; ++j)
        hb[j] = g[H + j] * tanhC[j];
      if (y)
        std::memcpy(y + ((t * d.dirs + dir) * d.batch + bi) * H, hb,
                    size_t(H) * sizeof(float));
    }
  }
}

/// Each direction's W (for the projection of every step's x) and R (for
/// the per-step h · Rᵀ) packed into GEMM panels: once per call, or once
/// per step of the plan when they are weights. R is left unpacked for a
/// few rows (sgemm reads it in place then).
struct LstmPacks {
  std::vector<PackedB> w, r;
};

std::shared_ptr<const LstmPacks> packWeights(const KernelContext &ctx,
                                             const RecurrentStep &d) {
  const GemmIsa isa = bestGemmIsa();
  const int64_t G = 4 * d.hidden;
  auto pack = [&] {
    LstmPacks p;
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      GemmArgs g;
      g.m = d.seq * d.batch, g.n = G, g.k = d.input, g.transB = true;
      g.b = ctx.input(1).as<float>() + dir * G * d.input, g.ldb = d.input;
      p.w.emplace_back(g, isa);
      if (d.batch <= kSmallM)
        continue;
      g.k = d.hidden, g.ldb = d.hidden;
      g.b = ctx.input(2).as<float>() + dir * G * d.hidden;
      p.r.emplace_back(g, isa);
    }
    return p;
  };
  if (!ctx.input(1).constant || !ctx.input(2).constant || !ctx.stepCache())
    return std::make_shared<const LstmPacks>(pack());
  const uint64_t key =
      recurrentPackKey(ctx, d, d.batch > kSmallM, uint64_t(isa));
  return ctx.stepCache()->get<LstmPacks>(key, pack);
}

Status lstmKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 6, 1); !s)
    return s;
  RecurrentStep d;
  if (Status s = readRecurrentStep(ctx, 4, &d); !s)
    return s;
  const int64_t H = d.hidden, G = 4 * H, select = d.select;
  float *out = ctx.output(0).as<float>();
  // Stacked (select 3): Y's rows, then the last h and c, each a
  // [dirs, batch, H] row.
  const int64_t row = d.dirs * d.batch * H;
  float *y = select == 0 || select == 3 ? out : nullptr;
  float *lastH = select == 1 ? out : select == 3 ? out + d.seq * row : nullptr;
  float *lastC = select == 2   ? out
                 : select == 3 ? out + (d.seq + 1) * row
                               : nullptr;
  std::vector<float> h(size_t(d.batch * H)), c(size_t(d.batch * H));
  const std::shared_ptr<const LstmPacks> packs = packWeights(ctx, d);
  for (int64_t dir = 0; dir < d.dirs; ++dir) {
    const int64_t stateAt = dir * d.batch * H;
    auto init = [&](size_t i, std::vector<float> &v) {
      if (ctx.hasInput(i))
        std::memcpy(v.data(), ctx.input(i).as<float>() + stateAt,
                    v.size() * sizeof(float));
      else
        std::fill(v.begin(), v.end(), 0.0f);
    };
    init(4, h);
    init(5, c);
    runDirection(d, dir, d.reverse || dir == 1, ctx.input(0).as<float>(),
                 ctx.input(1).as<float>() + dir * G * d.input,
                 ctx.input(2).as<float>() + dir * G * H, packs->w[size_t(dir)],
                 packs->r.empty() ? nullptr : &packs->r[size_t(dir)],
                 ctx.hasInput(3) ? ctx.input(3).as<float>() + dir * 2 * G
                                 : nullptr,
                 h.data(), c.data(), y, ctx.pool());
    if (lastH)
      std::memcpy(lastH + stateAt, h.data(), h.size() * sizeof(float));
    if (lastC)
      std::memcpy(lastC + stateAt, c.data(), c.size() * sizeof(float));
  }
  return Status::ok();
}

} // namespace

void addLstmKernels(std::vector<KernelImpl> &table) {
  table.push_back({"lstm", lstmKernel});
}

} // namespace ingot::cpu
