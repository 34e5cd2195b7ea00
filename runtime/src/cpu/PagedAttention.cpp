//===- PagedAttention.cpp - Attention over the paged KV cache -------------===//
//
// A step first validates everything it will touch (PagedAttentionPlan.cpp),
// so that a bad step fails before it changes the cache. Then it writes the
// K/V rows of all its tokens into the cache, serially (two tokens may name
// the same slot; the later one wins), and attends. q/k/v are column ranges
// of their inputs (one merged qkv projection, typically).
//
// rope_paged_attention rotates k (RopeMath.h) as it is written to the cache
// and each (token, KV head)'s query heads into per-thread scratch as they
// are read, from per-token cos/sin tables computed once per step: the same
// functions and f32 operations as `rope`, so the result is bitwise that of
// `rope` then `paged_attention`, without the rotated tensors in memory.
//
// Batch invariance: a token's output must be bitwise the same whatever
// else is in the step and however many threads run. So its window is
// always cut at the same places, multiples of kAttnChunk absolute positions,
// and each chunk's partial softmax (max score, sum of exps, unnormalised
// weighted V sum) is merged in chunk order by combineChunks; only which
// thread computes which chunk varies. Work items are (run of tokens, KV
// head) - the query heads sharing a KV head, and a prefill's consecutive
// tokens, read each K/V row once between them (PagedAttentionTiles.cpp) -
// whose chunks run in order on one thread, or, when there are few items
// (decode), (token, KV head, chunk) so that all threads stream the cache.
// Per chunk: scores = scale·q·Kᵀ, a max-subtracted softmax, a weighted sum
// of V rows, all in f32 (the softmax sum in double). Scores and partials
// live in grown-only per-thread scratch.
//
// The cache layout (KvCache.h) only changes where a block's run of rows for
// one KV head sits and the stride between its rows (a contiguous stream in
// "block,head,token,dim"); runs, chunks and every summation order are the
// same, so both layouts give bitwise the same outputs.
//
//===----------------------------------------------------------------------===//

#include "cpu/PagedAttention.h"
#include "cpu/AttentionOps.h"
#include "cpu/KvQuant.h"
#include "cpu/RopeMath.h"

#include "ingot/KvCache.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ingot::cpu {
namespace {

using Plan = AttnPlan;

/// Stores row `tok` of k and v at the token's slot, k rotated when asked;
/// head by head, as the heads of a slot are apart in some layouts. A
/// bfloat16 cache gets each row rounded, an 8-bit one each row quantised
/// with its scale (after the rotation, done in `rotated`; an f32 cache is
/// rotated into directly).
void writeKv(const Plan &pl, int64_t tok, std::vector<float> &rotated) {
  const int64_t d = pl.g.headDim, bs = pl.blockSize, slot = pl.slots[tok];
  const float *k = pl.k + tok * pl.kStride, *v = pl.v + tok * pl.vStride;
  const int64_t half = pl.rotaryDim / 2;
  const bool f32 = pl.kvDtype == DType::F32;
  if (!f32)
    rotated.resize(size_t(d));
  for (int64_t h = 0; h < pl.g.kvHeads; ++h) {
    const int64_t at = pl.headBase(slot / bs, h) + slot % bs * pl.rowStride;
    const float *kRow = k + h * d, *vRow = v + h * d;
    if (pl.rotaryDim) {
      float *dst = f32 ? pl.keys + at : rotated.data();
      ropeRotateHead(kRow, dst, pl.ropeCos.data() + tok * half,
                     pl.ropeSin.data() + tok * half, pl.rotaryDim, d);
      kRow = dst;
    }
    if (f32) {
      if (!pl.rotaryDim)
        std::copy(kRow, kRow + d, pl.keys + at);
      std::copy(vRow, vRow + d, pl.values + at);
      continue;
    }
    if (pl.kvDtype == DType::BF16) {
      storeBf16Row(kRow, d, pl.keys16 + at);
      storeBf16Row(vRow, d, pl.values16 + at);
      continue;
    }
    pl.keyScales[at / d] = quantizeKvRow(pl.kvDtype, kRow, d, pl.keys8 + at);
    pl.valueScales[at / d] =
        quantizeKvRow(pl.kvDtype, vRow, d, pl.values8 + at);
  }
}

/// paged_attention, and rope_paged_attention when `rope`.
Status attentionKernel(KernelContext &ctx, bool rope) {
  if (Status s = ctx.expectArity(7, 7, 1); !s)
    return s;
  for (size_t i = 0; i < 3; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  Plan pl;
  if (Status s = readAttnGeometry(ctx, &pl.g); !s)
    return s;
  RopeParams rp;
  if (rope)
    if (Status s = readRopeParams(ctx, &rp); !s)
      return s;
  const KvCacheView *kv = ctx.kvCache();
  if (!kv)
    return ctx.error("needs a KV cache, but none was given to the executor "
                     "(Executor::setKvCache)");
  if (Status s = buildAttnPlan(ctx, *kv, &pl); !s)
    return s;
  if (Status s = checkAttnTables(ctx, pl, kv->numBlocks); !s)
    return s;
  const AttnGeometry &g = pl.g;
  const int64_t t = pl.tokens, d = g.headDim;
  if (Status s = ctx.setOutputShape(0, {t, g.heads * d}); !s)
    return s;
  if (t == 0)
    return Status::ok();
  pl.out = ctx.output(0).as<float>();
  if (rope) { // each token's angles, shared by its k and q heads
    const std::vector<double> inv = ropeInverseFrequencies(rp);
    const int64_t half = rp.rotaryDim / 2;
    pl.rotaryDim = rp.rotaryDim;
    pl.ropeCos.resize(size_t(t * half));
    pl.ropeSin.resize(size_t(t * half));
    ctx.parallelFor(t, std::max<int64_t>(1, 256 / half),
                    [&](int64_t b, int64_t e) {
                      for (int64_t tok = b; tok < e; ++tok)
                        ropeAngles(pl.positions[tok], inv.data(), half,
                                   pl.ropeCos.data() + tok * half,
                                   pl.ropeSin.data() + tok * half);
                    });
  }

  // The step's own K/V first: its tokens attend to each other.
  std::vector<float> rotated;
  for (int64_t tok = 0; tok < t; ++tok)
    writeKv(pl, tok, rotated);

  // Few (token, KV head) pairs (decode): one item per chunk, so a long
  // window is spread over all threads; the merge runs after. Otherwise
  // one item per pair. Both give the same bits (same chunks, same merge).
  const int64_t threads = ctx.pool() ? ctx.pool()->size() : 1;
  const int64_t pairs = t * g.kvHeads, pf = partialFloats(g);
  int64_t maxChunks = 1;
  for (int64_t tok = 0; tok < t; ++tok)
    maxChunks = std::max(maxChunks, chunkCount(pl, tok));
  const AttentionOps &ops = bestAttentionOps();
  if (pairs < 2 * threads && maxChunks > 1) {
    std::vector<float> partials(size_t(pairs * maxChunks * pf));
    ctx.parallelFor(pairs * maxChunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t pair = item / maxChunks, c = item % maxChunks;
        const int64_t tok = pair / g.kvHeads;
        if (c < chunkCount(pl, tok))
          attendTokenChunk(pl, ops, tok, pair % g.kvHeads, c,
                           partials.data() + pair * maxChunks * pf);
      }
    });
    ctx.parallelFor(pairs, 1, [&](int64_t b, int64_t e) {
      for (int64_t pair = b; pair < e; ++pair) {
        const int64_t tok = pair / g.kvHeads;
        combineChunks(pl, tok, pair % g.kvHeads,
                      partials.data() + pair * maxChunks * pf,
                      chunkCount(pl, tok));
      }
    });
    return Status::ok();
  }
  attendTokenRuns(ctx, pl, ops);
  return Status::ok();
}

} // namespace

/// Each chunk's sums are rescaled by exp(its max - the overall max).
void combineChunks(const AttnPlan &pl, int64_t tok, int64_t kvh,
                   const float *partials, int64_t chunks) {
  const int64_t d = pl.g.headDim, ng = pl.g.heads / pl.g.kvHeads;
  const int64_t stride = partialFloats(pl.g);
  float *out = pl.out + (tok * pl.g.heads + kvh * ng) * d;
  for (int64_t h = 0; h < ng; ++h) {
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < chunks; ++c)
      mx = std::max(mx, partials[c * stride + h]);
    double total = 0;
    std::fill(out + h * d, out + (h + 1) * d, 0.0f);
    for (int64_t c = 0; c < chunks; ++c) {
      const float *part = partials + c * stride;
      const double w = std::exp(double(part[h]) - mx);
      total += w * part[ng + h];
      for (int64_t i = 0; i < d; ++i)
        out[h * d + i] += float(w) * part[2 * ng + h * d + i];
    }
    const float r = float(1.0 / total);
    for (int64_t i = 0; i < d; ++i)
      out[h * d + i] *= r;
  }
}

void addPagedAttentionKernels(std::vector<KernelImpl> &table) {
  table.push_back({"paged_attention", [](KernelContext &ctx) {
                     return attentionKernel(ctx, false);
                   }});
  table.push_back({"rope_paged_attention", [](KernelContext &ctx) {
                     return attentionKernel(ctx, true);
                   }});
}

} // namespace ingot::cpu
