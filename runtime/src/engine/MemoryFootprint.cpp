//===- MemoryFootprint.cpp - What serving an artifact costs ---------------===//
#include "ingot/MemoryFootprint.h"

#include "engine/EngineSupport.h"
#include "exec/ConstantSteps.h"
#include "ingot/KvCache.h"

#include <unistd.h>

#include <algorithm>

namespace ingot {
namespace {

// The GEMM's per-thread packing buffers (cpu/Gemm.cpp): an A block of
// 144 × 256 floats and a B slice of 256 × 2048 floats.
constexpr uint64_t kGemmPackBytes = (144 * 256 + 256 * 2048) * sizeof(float);

bool isParam(const Manifest &m, uint32_t id) {
  return id < m.buffers.size() && m.buffers[id].kind == BufferKind::Param &&
         m.buffers[id].tensorIndex >= 0 &&
         size_t(m.buffers[id].tensorIndex) < m.tensors.size();
}

const TensorEntry &tensorOf(const Manifest &m, uint32_t id) {
  return m.tensors[size_t(m.buffers[id].tensorIndex)];
}

/// What the executor derives from weights on the first run and keeps
/// (Executor.cpp, cpu/MatMul.cpp).
uint64_t weightDerivedBytes(const Manifest &m) {
  const ConstantSteps constants = findConstantSteps(m);
  uint64_t bytes = constants.bytes;
  for (size_t s = 0; s < m.steps.size(); ++s) {
    const Step &step = m.steps[s];
    if (constants.step[s] || step.inputs.size() < 2 ||
        (step.kernel != "matmul" && step.kernel != "gemm"))
      continue;
    const uint32_t b = step.inputs[1];
    if (b >= m.buffers.size() || !constants.buffer[b])
      continue;
    bytes += isParam(m, b) ? tensorOf(m, b).bytes : m.buffers[b].maxBytes;
  }
  return bytes;
}

} // namespace

MemoryFootprint computeFootprint(const Manifest &m, int64_t kvBlocks,
                                 unsigned threads) {
  if (threads == 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    threads = online > 0 ? unsigned(online) : 1;
  }
  MemoryFootprint f;
  f.threads = threads;
  f.weightsBytes = m.memory.weightsBytes;
  f.arenaBytes = m.memory.arenaBytes;
  f.arenaLowerBoundBytes = m.memory.arenaLowerBoundBytes;
  f.weightDerivedBytes = weightDerivedBytes(m);
  f.manifestBytes = m.memory.overheadBytes;
  uint64_t scratch = kGemmPackBytes;
  if (m.hasLlm) {
    const LlmConfig &c = m.llm;
    f.kvBlocks = std::max<int64_t>(kvBlocks, 0);
    f.kvTokens = f.kvBlocks * c.blockSize;
    f.kvBytes = KvCacheStorage::bytesFor(c, f.kvBlocks);
    // Step inputs (token ids and positions as int64, the block tables as
    // int32, lengths) and the logits the engine copies out of the arena.
    uint64_t tokens = uint64_t(c.maxTokensPerStep), seqs = uint64_t(c.maxSeqs);
    f.stepIoBytes = tokens * 2 * 8 + seqs * uint64_t(c.maxBlocksPerSeq) * 4 +
                    seqs * 8 + seqs * uint64_t(c.vocabSize) * 4;
    // Attention keeps one row of scores per head over the whole context.
    scratch += uint64_t(c.numHeads) * uint64_t(c.contextLength()) * 4;
  }
  f.threadScratchBytes = uint64_t(threads) * scratch;
  f.overheadBytes = f.manifestBytes + f.stepIoBytes + f.threadScratchBytes;
  f.totalBytes = f.weightsBytes + f.weightDerivedBytes + f.kvBytes +
                 f.arenaBytes + f.overheadBytes;
  return f;
}

Status engineKvBlocks(const Manifest &m, int64_t kvBlocks, int64_t kvCacheMb,
                      int64_t *blocks) {
  if (!m.hasLlm) {
    *blocks = 0;
    return Status::ok();
  }
  EngineOptions options;
  options.kvBlocks = kvBlocks;
  options.kvCacheMb = kvCacheMb;
  engine::StepLimits limits;
  if (Status s = engine::resolveLimits(m.llm, options, &limits); !s)
    return s;
  *blocks = limits.kvBlocks;
  return Status::ok();
}

StepCost stepCost(const Manifest &m) {
  StepCost c;
  for (const Step &s : m.steps) {
    if (s.kernel == "linear") {
      bool weight = true; // the first parameter is the weight, then a bias
      for (uint32_t id : s.inputs) {
        if (!isParam(m, id))
          continue;
        const TensorEntry &t = tensorOf(m, id);
        c.linearWeightBytes += t.bytes;
        if (weight) {
          uint64_t n = 1;
          for (int64_t d : t.shape)
            n *= uint64_t(std::max<int64_t>(d, 0));
          c.linearParams += n;
          weight = false;
        }
      }
    } else if (s.kernel == "gather" && !s.inputs.empty() &&
               isParam(m, s.inputs[0])) {
      const TensorEntry &t = tensorOf(m, s.inputs[0]);
      if (!t.shape.empty() && t.shape[0] > 0)
        c.embeddingRowBytes += t.bytes / uint64_t(t.shape[0]);
    }
  }
  if (m.hasLlm) {
    const LlmConfig &l = m.llm;
    c.numLayers = l.numLayers;
    c.numHeads = l.numHeads;
    c.headDim = l.headDim;
    c.kvBytesPerContextToken = 2 * uint64_t(l.numLayers) *
                               uint64_t(l.numKvHeads) *
                               kvRowBytes(l.kvDtype, l.headDim);
  }
  return c;
}

double decodeBytesPerToken(const StepCost &c, double context) {
  return double(c.linearWeightBytes) + double(c.embeddingRowBytes) +
         double(c.kvBytesPerContextToken) * std::max(context, 0.0);
}

double prefillFlops(const StepCost &c, int64_t tokens) {
  double n = double(std::max<int64_t>(tokens, 0));
  double linear = 2.0 * double(c.linearParams) * n;
  // Token i attends to i + 1 positions: 2 FLOPs per multiply-add for the
  // scores and again for the weighted sum of V, over every query head.
  double positions = n * (n + 1) / 2;
  double attention = 4.0 * double(c.numLayers) * double(c.numHeads) *
                     double(c.headDim) * positions;
  return linear + attention;
}

} // namespace ingot
