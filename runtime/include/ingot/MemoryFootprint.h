//===- MemoryFootprint.h - What serving an artifact costs -------*- C++ -*-===//
//
// One place that turns a manifest and a KV budget into the memory a server
// must provision (weights, KV cache, activation arena, runtime overhead) and
// into the per-token traffic and work that bound decode and prefill, so
// `ingot inspect --memory` and `ingot bench` report the same numbers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>

namespace ingot {

struct MemoryFootprint {
  int64_t kvBlocks = 0;              // the KV budget the figures are for
  int64_t kvTokens = 0;              // kvBlocks × block size
  uint64_t weightsBytes = 0;         // every tensor of the artifact
  uint64_t kvBytes = 0;              // K and V of kvBlocks blocks, all layers
  uint64_t arenaBytes = 0;           // the planned activation arena
  uint64_t arenaLowerBoundBytes = 0; // its liveness lower bound
  /// Kept beside the weights once the first run made them: results of
  /// steps that read only weights, and matmul/gemm weights packed into
  /// GEMM panels (their size, an upper bound: few-row calls pack none).
  uint64_t weightDerivedBytes = 0;
  // Runtime overhead, three estimates:
  uint64_t manifestBytes = 0;      // decoded manifest and plan tables
  uint64_t stepIoBytes = 0;        // one step's inputs and the logits copy
  uint64_t threadScratchBytes = 0; // per-thread GEMM packing + attention
  unsigned threads = 0;            // threads the scratch estimate is for
  uint64_t overheadBytes = 0;      // the sum of the three
  uint64_t totalBytes = 0;         // weights + derived + KV + arena + overhead
};

/// `threads` 0 = all online CPUs (what the engine uses by default). Works
/// for non-LLM artifacts too (no KV cache, no step I/O beyond the arena).
MemoryFootprint computeFootprint(const Manifest &manifest, int64_t kvBlocks,
                                 unsigned threads);

/// The KV budget in blocks the Engine would allocate for these options
/// (kvBlocks, else kvCacheMb, else its default rule on this machine).
Status engineKvBlocks(const Manifest &manifest, int64_t kvBlocks,
                      int64_t kvCacheMb, int64_t *blocks);

/// What one LLM step reads and computes, per token, from the plan.
struct StepCost {
  uint64_t linearWeightBytes = 0;      // every linear step's parameters, once
  uint64_t linearParams = 0;           // elements of the linear weights
  uint64_t embeddingRowBytes = 0;      // rows gathered from parameter tables
  uint64_t kvBytesPerContextToken = 0; // K + V of one position, all layers
  int64_t numLayers = 0, numHeads = 0, headDim = 0;
};
StepCost stepCost(const Manifest &manifest);

/// Bytes a batch-1 decode step reads: all linear weights, one embedding
/// row, and the K/V of `context` positions.
double decodeBytesPerToken(const StepCost &cost, double context);
/// FLOPs of a causal prefill of `tokens` tokens from an empty cache:
/// 2 × linear params per token plus QK^T and AV over the causal triangle.
double prefillFlops(const StepCost &cost, int64_t tokens);

} // namespace ingot
