//===- PerplexityScorer.cpp - Sliding windows through an LLM step ---------===//
#include "PerplexityScorer.h"

#include "ingot/Generator.h"

#include <algorithm>
#include <cmath>

namespace ingot::cli {

/// Hugging Face's loop: begin = 0, stride, 2·stride, ... until a window
/// reaches the end; each scores from where the previous one ended, but
/// never its own first token.
std::vector<Window> planWindows(int64_t tokens, int64_t context,
                                int64_t stride) {
  std::vector<Window> windows;
  int64_t prevEnd = 0;
  for (int64_t begin = 0; begin < tokens; begin += stride) {
    Window w;
    w.begin = begin;
    w.end = std::min(begin + context, tokens);
    w.firstScored = std::max(prevEnd, begin + 1);
    if (w.firstScored < w.end)
      windows.push_back(w);
    prevEnd = w.end;
    if (w.end == tokens)
      break;
  }
  return windows;
}

/// -log softmax(logits)[target], in double: log-sum-exp after the max.
double tokenNll(const float *logits, int64_t vocab, int32_t target) {
  double mx = -INFINITY;
  for (int64_t v = 0; v < vocab; ++v)
    mx = std::max(mx, double(logits[v]));
  double sum = 0;
  for (int64_t v = 0; v < vocab; ++v)
    sum += std::exp(double(logits[v]) - mx);
  return mx + std::log(sum) - double(logits[target]);
}

Status WindowScorer::init(int64_t context, const std::string &kvCacheDtype) {
  if (!parseKvCacheDtype(kvCacheDtype, config_.kvDtype, &config_.kvDtype))
    return Status::error("--kv-cache-dtype '" + kvCacheDtype +
                         "' is not one of auto, float32, bfloat16, int8, fp8");
  const int64_t numBlocks =
      (context + config_.blockSize - 1) / config_.blockSize;
  if (Status s = kv_.allocate(config_, numBlocks); !s)
    return s;
  executor_.setKvCache(&kv_.view());
  for (int64_t b = 0; b < numBlocks; ++b)
    blocks_.push_back(int32_t(b));
  return Status::ok();
}

Status WindowScorer::score(const std::vector<int32_t> &ids, const Window &w,
                           double *nllSum) {
  const int32_t *win = ids.data() + w.begin;
  const int64_t fed = w.end - w.begin - 1; // the last token predicts none
  const int64_t firstRow = w.firstScored - w.begin - 1;
  const int64_t maxTokens = std::max<int64_t>(1, config_.maxTokensPerStep);
  const int64_t maxSeqs = std::max<int64_t>(1, config_.maxSeqs);
  for (int64_t pos = 0; pos < fed;) {
    StepBatch batch;
    std::vector<int64_t> rowPositions; // -1: a context row, not scored
    if (pos < firstRow) {
      const int64_t count = std::min(firstRow - pos, maxTokens);
      batch.addSequence(win + pos, count, pos, blocks_, config_.blockSize);
      rowPositions.push_back(-1);
      pos += count;
    }
    while (pos >= firstRow && pos < fed &&
           int64_t(batch.tokens.size()) < maxTokens &&
           int64_t(rowPositions.size()) < maxSeqs) {
      batch.addSequence(win + pos, 1, pos, blocks_, config_.blockSize);
      rowPositions.push_back(pos++);
    }
    std::vector<NamedTensor> outputs;
    if (Status s = executor_.run(batch.toTensors(), &outputs); !s)
      return s;
    const HostTensor &logits = outputs.at(0).tensor;
    const int64_t vocab = logits.shape.at(1);
    const float *rows = reinterpret_cast<const float *>(logits.data.data());
    for (size_t r = 0; r < rowPositions.size(); ++r)
      if (rowPositions[r] >= 0)
        *nllSum +=
            tokenNll(rows + r * vocab, vocab, win[rowPositions[r] + 1]);
  }
  return Status::ok();
}

} // namespace ingot::cli
