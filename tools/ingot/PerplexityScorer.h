//===- PerplexityScorer.h - Sliding windows through an LLM step -*- C++ -*-===//
//
// All-position logits from a step that returns the rows at logits_indices
// only ([seqs], at most the compiled max-seqs): each position whose logits
// are needed is fed as a one-token "sequence" whose block table is the
// window's, at its own position; the context before the first scored
// position goes in as one ordinary multi-token sequence. This is exactly a
// causal forward of the window because paged attention (cpu/PagedAttention
// .cpp) writes the K/V of every token of the step into the cache before any
// token attends, and a token attends to the window positions [0, its own]
// of its sequence's blocks: which "sequence" a token belongs to only picks
// the block table, and all of them name the same blocks. Every other op of
// the step is row-wise. test/e2e/test_perplexity.py checks the result
// against a float64 reference.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/KvCache.h"
#include "ingot/Status.h"
#include "ingot/ThreadPool.h"

#include <cstdint>
#include <vector>

namespace ingot::cli {

/// Text tokens [begin, end) are run from position 0; [firstScored, end)
/// are scored, each from the logits of the token before it.
struct Window {
  int64_t begin = 0, end = 0, firstScored = 0;
};

/// Hugging Face's loop: begin = 0, stride, 2·stride, ... until a window
/// reaches the end; each scores from where the previous one ended, but
/// never its own first token.
std::vector<Window> planWindows(int64_t tokens, int64_t context,
                                int64_t stride);

/// -log softmax(logits)[target], in double: log-sum-exp after the max.
double tokenNll(const float *logits, int64_t vocab, int32_t target);

/// Runs windows through the artifact's step and sums their tokens' NLL.
/// Every window reuses the same cache blocks from position 0: a position is
/// written before any token of the window reads it.
class WindowScorer {
public:
  WindowScorer(const Artifact &artifact, unsigned threads)
      : config_(artifact.manifest().llm), pool_(threads),
        executor_(artifact, pool_) {}

  /// Cache blocks for windows of up to `context` tokens, of
  /// `kvCacheDtype` (EngineOptions::kvCacheDtype).
  Status init(int64_t context, const std::string &kvCacheDtype = "auto");
  /// Adds the NLL of the window's scored tokens to `*nllSum`.
  Status score(const std::vector<int32_t> &ids, const Window &w,
               double *nllSum);

private:
  LlmConfig config_;
  ThreadPool pool_;
  Executor executor_;
  KvCacheStorage kv_;
  std::vector<int32_t> blocks_;
};

} // namespace ingot::cli
