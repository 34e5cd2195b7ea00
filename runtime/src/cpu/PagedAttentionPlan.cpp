//===- PagedAttentionPlan.cpp - Validation of a paged attention step ------===//
//
// A step first validates everything it will touch (slots, positions, the
// column ranges of q/k/v, the block-table entries every token's window
// needs), so that a bad step fails before it changes the cache and nothing
// is ever read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/PagedAttention.h"

namespace ingot::cpu {
namespace {

/// Input `i` holds `t` rows; its columns [offset, offset + width) are the
/// operand. Returns the row's length (the product of the dims after the
/// first: the last dim of the usual [T, C]) in `stride`.
Status checkColumns(const KernelContext &ctx, size_t i, const char *what,
                    int64_t t, int64_t offset, int64_t width, int64_t *stride) {
  const KernelInput &in = ctx.input(i);
  const std::string name =
      "input " + std::to_string(i) + " '" + in.name + "' (" + what + ")";
  if (in.shape.size() < 2 || in.shape[0] != t)
    return ctx.error(name + " must be [" + std::to_string(t) + ", " +
                     std::to_string(width) + "] or wider, got " +
                     shape::toString(in.shape));
  *stride = dimProduct(in.shape, 1, in.shape.size());
  if (offset < 0 || offset > *stride - width)
    return ctx.error(name + ": columns [" + std::to_string(offset) + ", " +
                     std::to_string(offset + width) + ") (" + what +
                     "_offset " + std::to_string(offset) + " + " +
                     std::to_string(width) + ") are outside its rows of " +
                     std::to_string(*stride) + " values " +
                     shape::toString(in.shape));
  return Status::ok();
}

} // namespace

Status readAttnGeometry(const KernelContext &ctx, AttnGeometry *g) {
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
  if (Status s = ctx.attrFloat("softcap", &g->softcap, 0.0); !s)
    return s;
  if (!(g->softcap >= 0))
    return ctx.error("softcap must be >= 0 (0 = off), got " +
                     std::to_string(g->softcap));
  if (Status s = ctx.attrInt("q_offset", &g->qOffset, int64_t(0)); !s)
    return s;
  if (Status s = ctx.attrInt("k_offset", &g->kOffset, int64_t(0)); !s)
    return s;
  if (Status s = ctx.attrInt("v_offset", &g->vOffset, int64_t(0)); !s)
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

/// Operand shapes, the cache geometry, slots and sequence boundaries.
Status buildAttnPlan(const KernelContext &ctx, const KvCacheView &kv,
                     AttnPlan *pl) {
  const AttnGeometry &g = pl->g;
  const bool f32 = kv.dtype == DType::F32, bf16 = kv.dtype == DType::BF16;
  const size_t arrays =
      f32    ? std::min(kv.keys.size(), kv.values.size())
      : bf16 ? std::min(kv.keys16.size(), kv.values16.size())
             : std::min({kv.keys8.size(), kv.values8.size(),
                         kv.keyScales.size(), kv.valueScales.size()});
  if (g.layer < 0 || g.layer >= kv.numLayers || size_t(g.layer) >= arrays)
    return ctx.error("layer " + std::to_string(g.layer) +
                     " is out of range for a KV cache of " +
                     std::to_string(kv.numLayers) + " layers");
  const bool present = f32    ? kv.keys[g.layer] && kv.values[g.layer]
                       : bf16 ? kv.keys16[g.layer] && kv.values16[g.layer]
                              : kv.keys8[g.layer] && kv.values8[g.layer];
  if (kv.numKvHeads != g.kvHeads || kv.headDim != g.headDim ||
      kv.blockSize <= 0 || !present)
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
  if (Status s =
          checkColumns(ctx, 0, "q", t, g.qOffset, g.heads * d, &pl->qStride);
      !s)
    return s;
  if (Status s =
          checkColumns(ctx, 1, "k", t, g.kOffset, g.kvHeads * d, &pl->kStride);
      !s)
    return s;
  if (Status s =
          checkColumns(ctx, 2, "v", t, g.vOffset, g.kvHeads * d, &pl->vStride);
      !s)
    return s;
  pl->q = ctx.input(0).as<float>() + g.qOffset;
  pl->k = ctx.input(1).as<float>() + g.kOffset;
  pl->v = ctx.input(2).as<float>() + g.vOffset;
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
  pl->blockFloats = kv.blockFloats();
  pl->headStride = kv.headStride();
  pl->rowStride = kv.rowStride();
  pl->kvDtype = kv.dtype;
  if (f32) {
    pl->keys = kv.keys[g.layer];
    pl->values = kv.values[g.layer];
  } else if (bf16) {
    pl->keys16 = kv.keys16[g.layer];
    pl->values16 = kv.values16[g.layer];
  } else {
    pl->keys8 = kv.keys8[g.layer];
    pl->values8 = kv.values8[g.layer];
    pl->keyScales = kv.keyScales[g.layer];
    pl->valueScales = kv.valueScales[g.layer];
  }
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

// Checked over the hull of each sequence's windows, which is exactly their
// union when the sequence's positions are contiguous (always, in practice).
Status checkAttnTables(const KernelContext &ctx, const AttnPlan &pl,
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

} // namespace ingot::cpu
