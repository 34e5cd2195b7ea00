//===- PagedAttentionTiles.cpp - Attention of runs of consecutive tokens --===//
//
// In a prefill, the tokens of one sequence sit at consecutive positions,
// and their windows share almost every K/V row. Taking up to kRunRows
// query rows (tokens x the query heads of one KV head) together, each K
// and V row of a chunk is read once for all of them, from L1, and the
// vector loops of AttentionOps run on full tiles of rows.
//
// The bits stay those of each token alone (PagedAttention.cpp's
// attendChunk): chunks are cut at the same absolute positions; a score
// depends only on its q and k rows (AScoreDoesNotDependOnItsRun); each
// row's softmax runs over its own window only; and the weighted sums go
// run by run (one cache block's rows), each row over its own part of the
// run, with the same chains whatever rows share a call
// (AWeightedSumDoesNotDependOnItsHeads). Scores past a row's window (the
// diagonal of the last tokens) are computed and not read.
//
//===----------------------------------------------------------------------===//

#include "cpu/AttentionOps.h"
#include "cpu/KernelUtil.h"
#include "cpu/KvQuant.h"
#include "cpu/MathF32.h"
#include "cpu/PagedAttention.h"
#include "cpu/RopeMath.h"

#include <algorithm>
#include <cmath>

namespace ingot::cpu {
namespace {

/// Query rows taken together: the tokens of a run times the query heads of
/// a KV head.
constexpr int64_t kRunRows = 24;

struct RunScratch {
  std::vector<float> q, scores, acc, partials, rows;
};
thread_local RunScratch tlsRun;

/// Tokens [t0, t1) of one sequence at consecutive positions.
struct TokenRun {
  int64_t t0 = 0, t1 = 0;
};

std::vector<TokenRun> tokenRuns(const AttnPlan &pl, int64_t maxTokens) {
  std::vector<TokenRun> runs;
  for (int64_t t = 0; t < pl.tokens;) {
    int64_t e = t + 1;
    while (e < pl.tokens && e - t < maxTokens && pl.seqOf[e] == pl.seqOf[t] &&
           pl.positions[e] == pl.positions[e - 1] + 1)
      ++e;
    runs.push_back({t, e});
    t = e;
  }
  return runs;
}

/// One chunk (absolute index `chunk`) of the tokens [a, b) of `run` that
/// reach it, for KV head `kvh`, the run's queries in sc.q: token t's
/// partial result goes to partials + (t - run.t0)·perToken, slot chunk -
/// firstChunk(t) of partialFloats each.
void attendRunChunk(const AttnPlan &pl, const AttentionOps &ops,
                    const TokenRun &run, int64_t a, int64_t b, int64_t kvh,
                    int64_t chunk, RunScratch &sc, float *partials,
                    int64_t perToken) {
  const int64_t d = pl.g.headDim, ng = pl.g.heads / pl.g.kvHeads;
  const int64_t s = pl.seqOf[a], bs = pl.blockSize, stride = pl.rowStride;
  const int64_t pf = partialFloats(pl.g), rows = (b - a) * ng;
  const int64_t cs = chunk * kAttnChunk;
  auto first = [&](int64_t t) {
    return std::max(pl.windowStart(pl.positions[t]), cs);
  };
  auto last = [&](int64_t t) {
    return std::min(pl.positions[t], cs + kAttnChunk - 1);
  };
  // Positions only grow along the run, so do both ends of the windows.
  const int64_t lo = first(a), hi = last(b - 1), ld = hi - lo + 1;
  sc.scores.resize(size_t(rows * ld));
  sc.acc.assign(size_t(rows * d), 0.0f);
  const float *q = sc.q.data() + (a - run.t0) * ng * d;
  const bool f32 = pl.kvDtype == DType::F32;
  const bool bf16 = pl.kvDtype == DType::BF16;
  const KvDequantFn dequant = bestKvDequant();
  if (!f32)
    sc.rows.resize(size_t(bs * d));
  const size_t elemBytes = f32 ? sizeof(float) : bf16 ? sizeof(uint16_t) : 1;
  // Visits the cache blocks of [lo, hi] as runs of rows (widened into
  // scratch for a bfloat16 or 8-bit cache), as attendChunk cuts them.
  auto forEachBlock = [&](const float *cache, const void *codes,
                          const float *scales, auto &&fn) {
    const void *base = f32 ? static_cast<const void *>(cache) : codes;
    for (int64_t j = lo; j <= hi;) {
      const int64_t blk = j / bs, stop = std::min(hi + 1, (blk + 1) * bs);
      const int64_t at = pl.headBase(pl.entry(s, blk), kvh) + j % bs * stride;
      if (stop <= hi)
        prefetchRun(pl, base, elemBytes, pl.headBase(pl.entry(s, blk + 1), kvh),
                    std::min(hi + 1 - stop, bs));
      if (f32) {
        fn(j, stop, cache + at, stride);
      } else {
        dequant(pl.kvDtype, static_cast<const uint8_t *>(codes), scales, at,
                stop - j, stride, d, sc.rows.data());
        fn(j, stop, sc.rows.data(), d);
      }
      j = stop;
    }
  };
  forEachBlock(pl.keys, bf16 ? static_cast<const void *>(pl.keys16) : pl.keys8,
               pl.keyScales,
               [&](int64_t j, int64_t stop, const float *k, int64_t rs) {
                 ops.scores(rows, d, q, k, stop - j, rs, float(pl.g.scale),
                            sc.scores.data() + (j - lo), ld);
               });
  for (int64_t t = a; t < b; ++t) {
    const int64_t off = first(t) - lo, len = last(t) - first(t) + 1;
    float *part =
        partials + (t - run.t0) * perToken + (chunk - firstChunk(pl, t)) * pf;
    for (int64_t h = 0; h < ng; ++h) {
      float *row = sc.scores.data() + ((t - a) * ng + h) * ld + off;
      if (pl.g.softcap > 0) {
        const float cap = float(pl.g.softcap), inv = 1.0f / cap;
        for (int64_t i = 0; i < len; ++i)
          row[i] = cap * std::tanh(row[i] * inv);
      }
      const float mx = maxF32(row, len);
      expF32(row, mx, row, len);
      part[h] = mx;
      part[ng + h] = float(sumF32(row, len));
    }
  }
  // Per block, the tokens whose part of it is the same run of rows go in
  // one call: all of them but the last few, whose windows end inside it.
  forEachBlock(
      pl.values, bf16 ? static_cast<const void *>(pl.values16) : pl.values8,
      pl.valueScales, [&](int64_t j, int64_t stop, const float *v, int64_t rs) {
        for (int64_t t = a; t < b;) {
          const int64_t r0 = std::max(j, first(t));
          const int64_t r1 = std::min(stop - 1, last(t));
          int64_t e = t + 1;
          while (e < b && std::max(j, first(e)) == r0 &&
                 std::min(stop - 1, last(e)) == r1)
            ++e;
          if (r0 <= r1)
            ops.accumulate((e - t) * ng, d,
                           sc.scores.data() + (t - a) * ng * ld + (r0 - lo), ld,
                           v + (r0 - j) * rs, r1 - r0 + 1, rs,
                           sc.acc.data() + (t - a) * ng * d);
          t = e;
        }
      });
  for (int64_t t = a; t < b; ++t) {
    float *part =
        partials + (t - run.t0) * perToken + (chunk - firstChunk(pl, t)) * pf;
    std::copy_n(sc.acc.data() + (t - a) * ng * d, ng * d, part + 2 * ng);
  }
}

/// The run's query heads of KV head `kvh` into sc.q, rotated when
/// rope_paged_attention asks, in rows of d: token-major, as the scores'
/// rows.
void loadQueries(const AttnPlan &pl, const TokenRun &run, int64_t kvh,
                 RunScratch &sc) {
  const int64_t d = pl.g.headDim, ng = pl.g.heads / pl.g.kvHeads;
  sc.q.resize(size_t((run.t1 - run.t0) * ng * d));
  for (int64_t t = run.t0; t < run.t1; ++t) {
    const float *src = pl.q + t * pl.qStride + kvh * ng * d;
    float *dst = sc.q.data() + (t - run.t0) * ng * d;
    if (!pl.rotaryDim) {
      std::copy_n(src, ng * d, dst);
      continue;
    }
    const int64_t half = pl.rotaryDim / 2;
    for (int64_t h = 0; h < ng; ++h)
      ropeRotateHead(src + h * d, dst + h * d, pl.ropeCos.data() + t * half,
                     pl.ropeSin.data() + t * half, pl.rotaryDim, d);
  }
}

/// Every chunk of `run`'s windows for KV head `kvh`, then each token's
/// merge into the output.
void attendRun(const AttnPlan &pl, const AttentionOps &ops, const TokenRun &run,
               int64_t kvh, RunScratch &sc) {
  loadQueries(pl, run, kvh, sc);
  int64_t c0 = firstChunk(pl, run.t0), c1 = 0, maxChunks = 0;
  for (int64_t t = run.t0; t < run.t1; ++t) {
    c0 = std::min(c0, firstChunk(pl, t));
    c1 = std::max(c1, pl.positions[t] / kAttnChunk);
    maxChunks = std::max(maxChunks, chunkCount(pl, t));
  }
  const int64_t perToken = maxChunks * partialFloats(pl.g);
  sc.partials.resize(size_t((run.t1 - run.t0) * perToken));
  for (int64_t chunk = c0; chunk <= c1; ++chunk) {
    // The tokens that reach this chunk: a contiguous part of the run.
    int64_t a = run.t0, b = run.t1;
    while (a < b && pl.positions[a] / kAttnChunk < chunk)
      ++a;
    while (b > a && firstChunk(pl, b - 1) > chunk)
      --b;
    if (a < b)
      attendRunChunk(pl, ops, run, a, b, kvh, chunk, sc, sc.partials.data(),
                     perToken);
  }
  for (int64_t t = run.t0; t < run.t1; ++t)
    combineChunks(pl, t, kvh, sc.partials.data() + (t - run.t0) * perToken,
                  chunkCount(pl, t));
}

} // namespace

void attendTokenChunk(const AttnPlan &pl, const AttentionOps &ops, int64_t tok,
                      int64_t kvh, int64_t c, float *partials) {
  const TokenRun run{tok, tok + 1};
  loadQueries(pl, run, kvh, tlsRun);
  attendRunChunk(pl, ops, run, tok, tok + 1, kvh, firstChunk(pl, tok) + c,
                 tlsRun, partials, 0);
}

void attendTokenRuns(const KernelContext &ctx, const AttnPlan &pl,
                     const AttentionOps &ops) {
  const int64_t ng = pl.g.heads / pl.g.kvHeads;
  const std::vector<TokenRun> runs =
      tokenRuns(pl, std::max<int64_t>(1, kRunRows / ng));
  const int64_t items = int64_t(runs.size()) * pl.g.kvHeads;
  // Last runs first: in a prefill their windows are the longest, and the
  // pool hands out chunks of items in order, so a thread that drew the
  // heaviest chunk last finished long after the others.
  ctx.parallelFor(items, 1, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t i = items - 1 - item;
      attendRun(pl, ops, runs[size_t(i / pl.g.kvHeads)], i % pl.g.kvHeads,
                tlsRun);
    }
  });
}

} // namespace ingot::cpu
