//===- PagedAttention.cpp - Attention over the paged KV cache -------------===//
//
// A step first validates everything it will touch (slots, positions, the
// block-table entries every token's window needs), so that a bad step fails
// before it changes the cache and nothing is ever read out of bounds. Then
// it writes the K/V rows of all its tokens into the cache, serially (two
// tokens may name the same slot; the later one wins), and attends.
//
// Batch invariance: a token's output must be bitwise the same whatever
// else is in the step and however many threads run. So its window is
// always cut at the same places, multiples of kChunk absolute positions,
// and each chunk's partial softmax (max score, sum of exps, unnormalised
// weighted V sum) is merged in chunk order by combineChunks; only which
// thread computes which chunk varies. Work items are (token, KV head) -
// the query heads sharing a KV head read each K/V row once between them -
// whose chunks run in order on one thread, or, when there are few items
// (decode), (token, KV head, chunk) so that all threads stream the cache.
// Per chunk: scores = scale·q·Kᵀ, a max-subtracted softmax, a weighted sum
// of V rows, all in f32 (the softmax sum in double). Scores and partials
// live in grown-only per-thread scratch.
//
//===----------------------------------------------------------------------===//

#include "cpu/AttentionOps.h"
#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"

#include "ingot/KvCache.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ingot::cpu {
namespace {

struct Geometry {
  int64_t layer = 0, heads = 0, kvHeads = 0, headDim = 0, window = 0;
  double scale = 1.0;
};

/// Everything the attention loops read, validated.
struct Plan {
  Geometry g;
  int64_t tokens = 0, seqs = 0, tableWidth = 0, blockSize = 0;
  const float *q = nullptr;
  float *out = nullptr;
  const float *keys = nullptr, *values = nullptr; // this layer's cache
  const void *table = nullptr;
  bool table64 = false;
  std::vector<int64_t> positions, slots, queryEnds, seqOf;

  int64_t entry(int64_t s, int64_t b) const {
    const int64_t i = s * tableWidth + b;
    return table64 ? static_cast<const int64_t *>(table)[i]
                   : int64_t(static_cast<const int32_t *>(table)[i]);
  }
  int64_t windowStart(int64_t p) const {
    return g.window > 0 ? std::max<int64_t>(0, p - g.window + 1) : 0;
  }
};

struct Scratch {
  std::vector<float> scores, partials;
  std::vector<double> sums; // per head: max score, then sum of exps
};
thread_local Scratch tlsScratch;

Status readGeometry(const KernelContext &ctx, Geometry *g) {
  if (Status s = ctx.attrInt("layer", &g->layer); !s)
    return s;
  if (Status s = ctx.attrInt("num_heads", &g->heads); !s)
    return s;
  if (Status s = ctx.attrInt("num_kv_heads", &g->kvHeads); !s)
    return s;
  if (Status s = ctx.attrInt("head_dim", &g->headDim); !s)
    return s;
  if (Status s = ctx.attrFloat("scale", &g->scale); !s)
    return s;
  if (Status s = ctx.attrInt("sliding_window", &g->window, int64_t(0)); !s)
    return s;
  if (g->heads <= 0 || g->kvHeads <= 0 || g->headDim <= 0 ||
      g->heads % g->kvHeads || g->window < 0)
    return ctx.error(
        "needs num_heads, num_kv_heads, head_dim > 0 with "
        "num_heads a multiple of num_kv_heads and sliding_window "
        ">= 0; got " +
        std::to_string(g->heads) + ", " + std::to_string(g->kvHeads) + ", " +
        std::to_string(g->headDim) + ", " + std::to_string(g->window));
  return Status::ok();
}

Status checkRows(const KernelContext &ctx, size_t i, int64_t t, int64_t width) {
  const KernelInput &in = ctx.input(i);
  if (in.shape.empty() || in.shape[0] != t || in.numElements() != t * width)
    return ctx.error("input " + std::to_string(i) + " '" + in.name +
                     "' must be [" + std::to_string(t) + ", " +
                     std::to_string(width) + "], got " +
                     shape::toString(in.shape));
  return Status::ok();
}

/// Operand shapes, the cache geometry, slots and sequence boundaries.
Status buildPlan(KernelContext &ctx, const KvCacheView &kv, Plan *pl) {
  Geometry &g = pl->g;
  if (g.layer < 0 || g.layer >= kv.numLayers ||
      size_t(g.layer) >= kv.keys.size() || size_t(g.layer) >= kv.values.size())
    return ctx.error("layer " + std::to_string(g.layer) +
                     " is out of range for a KV cache of " +
                     std::to_string(kv.numLayers) + " layers");
  if (kv.numKvHeads != g.kvHeads || kv.headDim != g.headDim ||
      kv.blockSize <= 0 || !kv.keys[g.layer] || !kv.values[g.layer])
    return ctx.error("the KV cache holds " + std::to_string(kv.numKvHeads) +
                     " KV heads of dim " + std::to_string(kv.headDim) +
                     " but the step has " + std::to_string(g.kvHeads) +
                     " of dim " + std::to_string(g.headDim));
  if (Status s = readIndexVector(ctx, 3, &pl->positions); !s)
    return s;
  if (Status s = readIndexVector(ctx, 4, &pl->slots); !s)
    return s;
  if (Status s = readIndexVector(ctx, 6, &pl->queryEnds); !s)
    return s;
  const int64_t t = int64_t(pl->positions.size());
  const int64_t d = g.headDim;
  if (Status s = checkRows(ctx, 0, t, g.heads * d); !s)
    return s;
  for (size_t i : {size_t(1), size_t(2)})
    if (Status s = checkRows(ctx, i, t, g.kvHeads * d); !s)
      return s;
  if (int64_t(pl->slots.size()) != t)
    return ctx.error("slot_mapping has " + std::to_string(pl->slots.size()) +
                     " entries for " + std::to_string(t) + " tokens");
  const KernelInput &bt = ctx.input(5);
  if (bt.dtype != DType::I32 && bt.dtype != DType::I64)
    return ctx.error("block_tables must be int32 or int64, got " +
                     std::string(dtypeName(bt.dtype)));
  if (bt.shape.size() != 2 || bt.shape[0] != int64_t(pl->queryEnds.size()))
    return ctx.error("block_tables " + shape::toString(bt.shape) +
                     " must be [seqs, blocks] with seqs = " +
                     std::to_string(pl->queryEnds.size()) +
                     " (the length of query_ends)");
  pl->tokens = t;
  pl->seqs = bt.shape[0];
  pl->tableWidth = bt.shape[1];
  pl->table = bt.data;
  pl->table64 = bt.dtype == DType::I64;
  pl->blockSize = kv.blockSize;
  pl->keys = kv.keys[g.layer];
  pl->values = kv.values[g.layer];
  for (int64_t tok = 0; tok < t; ++tok)
    if (pl->slots[tok] < 0 || pl->slots[tok] >= kv.numSlots())
      return ctx.error("token " + std::to_string(tok) + ": slot " +
                       std::to_string(pl->slots[tok]) +
                       " is outside the KV cache of " +
                       std::to_string(kv.numSlots()) + " slots");
  pl->seqOf.assign(t, 0);
  int64_t begin = 0;
  for (int64_t s = 0; s < pl->seqs; ++s) {
    const int64_t end = pl->queryEnds[s];
    if (end < begin || end > t)
      return ctx.error("query_ends must be non-decreasing within [0, " +
                       std::to_string(t) + "]; entry " + std::to_string(s) +
                       " is " + std::to_string(end));
    std::fill(pl->seqOf.begin() + begin, pl->seqOf.begin() + end, s);
    begin = end;
  }
  if (begin != t)
    return ctx.error("query_ends ends at " + std::to_string(begin) +
                     " but the step has " + std::to_string(t) + " tokens");
  return Status::ok();
}

/// Every block-table entry a token's window reads must name a real block.
/// Checked over the hull of each sequence's windows, which is exactly their
/// union when the sequence's positions are contiguous (always, in practice).
Status checkTables(const KernelContext &ctx, const Plan &pl,
                   int64_t numBlocks) {
  int64_t begin = 0;
  for (int64_t s = 0; s < pl.seqs; ++s) {
    const int64_t end = pl.queryEnds[s];
    int64_t lo = INT64_MAX, hi = -1;
    for (int64_t tok = begin; tok < end; ++tok) {
      const int64_t p = pl.positions[tok];
      if (p < 0)
        return ctx.error("token " + std::to_string(tok) +
                         " has a negative position " + std::to_string(p));
      lo = std::min(lo, pl.windowStart(p));
      hi = std::max(hi, p);
    }
    begin = end;
    if (hi < 0)
      continue;
    if (hi / pl.blockSize >= pl.tableWidth)
      return ctx.error("sequence " + std::to_string(s) + ": position " +
                       std::to_string(hi) + " needs block-table entry " +
                       std::to_string(hi / pl.blockSize) +
                       " but block_tables has " +
                       std::to_string(pl.tableWidth) + " per sequence");
    for (int64_t b = lo / pl.blockSize; b <= hi / pl.blockSize; ++b) {
      const int64_t e = pl.entry(s, b);
      if (e < 0 || e >= numBlocks)
        return ctx.error("sequence " + std::to_string(s) +
                         ": block-table entry " + std::to_string(b) + " is " +
                         std::to_string(e) + ", outside the " +
                         std::to_string(numBlocks) + " cache blocks");
    }
  }
  return Status::ok();
}

/// Window positions per chunk. Chunks start at multiples of this absolute
/// position (or at the window start), so where a window is cut depends only
/// on the token's own position and the sliding window.
constexpr int64_t kChunk = 256;

int64_t firstChunk(const Plan &pl, int64_t tok) {
  return pl.windowStart(pl.positions[tok]) / kChunk;
}
int64_t chunkCount(const Plan &pl, int64_t tok) {
  return pl.positions[tok] / kChunk - firstChunk(pl, tok) + 1;
}

/// Floats of one chunk's partial result: [G] maxes, [G] sums, [G, d] sums.
int64_t partialFloats(const Geometry &g) {
  return g.heads / g.kvHeads * (g.headDim + 2);
}

/// Chunk `c` (counted from the token's first) of the window of token `tok`,
/// for the query heads of KV head `kvh`: the per-head max score, sum of
/// exp(score - max) and unnormalised weighted V sum go to `partial`.
void attendChunk(const Plan &pl, const AttentionOps &ops, int64_t tok,
                 int64_t kvh, int64_t c, Scratch &sc, float *partial) {
  const int64_t d = pl.g.headDim, slotFloats = pl.g.kvHeads * d;
  const int64_t ng = pl.g.heads / pl.g.kvHeads, h0 = kvh * ng;
  const int64_t p = pl.positions[tok], cs = (firstChunk(pl, tok) + c) * kChunk;
  const int64_t j0 = std::max(pl.windowStart(p), cs);
  const int64_t j1 = std::min(p, cs + kChunk - 1);
  const int64_t s = pl.seqOf[tok], len = j1 - j0 + 1;
  const float scale = float(pl.g.scale);
  if (sc.scores.size() < size_t(ng * len))
    sc.scores.resize(size_t(ng * len));
  float *scores = sc.scores.data();
  float *acc = partial + 2 * ng;
  const float *q = pl.q + (tok * pl.g.heads + h0) * d;
  const int64_t bs = pl.blockSize;
  // Visits positions [j0, j1] as runs of consecutive rows within one block.
  auto forEachRun = [&](const float *cache, auto &&fn) {
    for (int64_t j = j0; j <= j1;) {
      const int64_t b = j / bs, stop = std::min(j1 + 1, (b + 1) * bs);
      fn(j - j0, cache + (pl.entry(s, b) * bs + j % bs) * slotFloats + kvh * d,
         stop - j);
      j = stop;
    }
  };
  forEachRun(pl.keys, [&](int64_t i, const float *rows, int64_t count) {
    ops.scores(ng, d, q, rows, count, slotFloats, scale, scores + i, len);
  });
  sc.sums.resize(size_t(2 * ng));
  for (int64_t h = 0; h < ng; ++h) {
    float *row = scores + h * len;
    const float mx = maxF32(row, len);
    expF32(row, mx, row, len);
    sc.sums[h] = mx;
    sc.sums[ng + h] = sumF32(row, len);
  }
  std::fill(acc, acc + ng * d, 0.0f);
  forEachRun(pl.values, [&](int64_t i, const float *rows, int64_t count) {
    ops.accumulate(ng, d, scores + i, len, rows, count, slotFloats, acc);
  });
  for (int64_t h = 0; h < 2 * ng; ++h)
    partial[h] = float(sc.sums[h]);
}

/// Merges the `chunks` partial results of one (token, KV head) window in
/// chunk order into the output: each chunk's sums are rescaled by
/// exp(its max - the overall max).
void combineChunks(const Plan &pl, int64_t tok, int64_t kvh,
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

Status pagedAttentionKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(7, 7, 1); !s)
    return s;
  for (size_t i = 0; i < 3; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  Plan pl;
  if (Status s = readGeometry(ctx, &pl.g); !s)
    return s;
  const KvCacheView *kv = ctx.kvCache();
  if (!kv)
    return ctx.error("needs a KV cache, but none was given to the executor "
                     "(Executor::setKvCache)");
  if (Status s = buildPlan(ctx, *kv, &pl); !s)
    return s;
  if (Status s = checkTables(ctx, pl, kv->numBlocks); !s)
    return s;
  const Geometry &g = pl.g;
  const int64_t t = pl.tokens, d = g.headDim;
  if (Status s = ctx.setOutputShape(0, {t, g.heads * d}); !s)
    return s;
  if (t == 0)
    return Status::ok();
  pl.q = ctx.input(0).as<float>();
  pl.out = ctx.output(0).as<float>();

  // The step's own K/V first: its tokens attend to each other.
  const int64_t slotFloats = g.kvHeads * d;
  const float *k = ctx.input(1).as<float>(), *v = ctx.input(2).as<float>();
  float *keys = kv->keys[g.layer], *values = kv->values[g.layer];
  for (int64_t tok = 0; tok < t; ++tok) {
    std::copy(k + tok * slotFloats, k + (tok + 1) * slotFloats,
              keys + pl.slots[tok] * slotFloats);
    std::copy(v + tok * slotFloats, v + (tok + 1) * slotFloats,
              values + pl.slots[tok] * slotFloats);
  }

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
          attendChunk(pl, ops, tok, pair % g.kvHeads, c, tlsScratch,
                      partials.data() + item * pf);
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
  ctx.parallelFor(pairs, 1, [&](int64_t b, int64_t e) {
    Scratch &sc = tlsScratch;
    for (int64_t pair = b; pair < e; ++pair) {
      const int64_t tok = pair / g.kvHeads, n = chunkCount(pl, tok);
      if (sc.partials.size() < size_t(n * pf))
        sc.partials.resize(size_t(n * pf));
      for (int64_t c = 0; c < n; ++c)
        attendChunk(pl, ops, tok, pair % g.kvHeads, c, sc,
                    sc.partials.data() + c * pf);
      combineChunks(pl, tok, pair % g.kvHeads, sc.partials.data(), n);
    }
  });
  return Status::ok();
}

} // namespace

void addPagedAttentionKernels(std::vector<KernelInfo> &table) {
  table.push_back({"paged_attention", pagedAttentionKernel, false});
}

} // namespace ingot::cpu
