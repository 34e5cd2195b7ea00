//===- MemoryFootprintTest.cpp - Footprint and per-token cost model -------===//
//
// A hand-built manifest small enough to work every figure out by hand: an
// embedding table, two linear layers (one with a bias) and a 2-layer KV
// geometry.
//
//===----------------------------------------------------------------------===//
#include "ingot/MemoryFootprint.h"

#include <gtest/gtest.h>

namespace ingot {
namespace {

TensorEntry tensor(std::vector<int64_t> shape) {
  TensorEntry t;
  t.shape = shape;
  t.bytes = 4;
  for (int64_t d : shape)
    t.bytes *= uint64_t(d);
  return t;
}

Buffer buffer(uint32_t id, BufferKind kind, int32_t tensorIndex = -1) {
  Buffer b;
  b.id = id;
  b.kind = kind;
  b.tensorIndex = tensorIndex;
  return b;
}

Step step(const char *kernel, std::vector<uint32_t> inputs) {
  Step s;
  s.kernel = kernel;
  s.inputs = std::move(inputs);
  return s;
}

Manifest tinyLlm() {
  Manifest m;
  // embed 100 x 8 (3200 B), w1 16 x 8 (512 B), b1 16 (64 B), w2 8 x 16.
  m.tensors = {tensor({100, 8}), tensor({16, 8}), tensor({16}),
               tensor({8, 16})};
  m.buffers = {buffer(0, BufferKind::Input),    buffer(1, BufferKind::Param, 0),
               buffer(2, BufferKind::Arena),    buffer(3, BufferKind::Param, 1),
               buffer(4, BufferKind::Param, 2), buffer(5, BufferKind::Arena),
               buffer(6, BufferKind::Param, 3)};
  m.steps = {step("gather", {1, 0}), step("linear", {2, 3, 4}),
             step("rms_norm", {5, 4}), step("linear", {5, 6})};
  m.memory.weightsBytes = 3200 + 512 + 64 + 512;
  m.memory.arenaBytes = 4096;
  m.memory.arenaLowerBoundBytes = 3000;
  m.memory.overheadBytes = 777;
  m.hasLlm = true;
  LlmConfig &c = m.llm;
  c.numLayers = 2, c.numHeads = 4, c.numKvHeads = 2, c.headDim = 2;
  c.vocabSize = 100, c.maxPositions = 16, c.blockSize = 4;
  c.maxTokensPerStep = 8, c.maxSeqs = 2, c.maxBlocksPerSeq = 4;
  return m;
}

TEST(MemoryFootprintTest, StepCostReadsThePlan) {
  StepCost c = stepCost(tinyLlm());
  EXPECT_EQ(c.linearWeightBytes, 512u + 64u + 512u); // the bias is read too
  EXPECT_EQ(c.linearParams, 128u + 128u);            // but is no weight
  EXPECT_EQ(c.embeddingRowBytes, 32u);               // one row of 8 floats
  EXPECT_EQ(c.kvBytesPerContextToken, 2u * 2 * 2 * 2 * 4); // K+V, layers
  EXPECT_DOUBLE_EQ(decodeBytesPerToken(c, 10), 1088 + 32 + 640);
  // 2 × 256 × 3 linear + 4 × layers 2 × heads 4 × dim 2 × (1 + 2 + 3).
  EXPECT_DOUBLE_EQ(prefillFlops(c, 3), 1536 + 384);
  EXPECT_DOUBLE_EQ(prefillFlops(c, 0), 0);
}

TEST(MemoryFootprintTest, PartsAddUp) {
  Manifest m = tinyLlm();
  MemoryFootprint f = computeFootprint(m, 5, 3);
  EXPECT_EQ(f.kvBlocks, 5);
  EXPECT_EQ(f.kvTokens, 20);
  EXPECT_EQ(f.kvBytes, 2u * 2 * 5 * 4 * 2 * 2 * 4); // layers, K+V, slots
  EXPECT_EQ(f.weightsBytes, m.memory.weightsBytes);
  EXPECT_EQ(f.arenaBytes, 4096u);
  EXPECT_EQ(f.arenaLowerBoundBytes, 3000u);
  EXPECT_EQ(f.manifestBytes, 777u);
  // ids + positions (8 × 2 × 8), tables (2 × 4 × 4), lengths, logits.
  EXPECT_EQ(f.stepIoBytes, 128u + 32u + 16u + 800u);
  EXPECT_EQ(f.threads, 3u);
  EXPECT_EQ(f.threadScratchBytes % 3, 0u);
  EXPECT_GT(f.threadScratchBytes, 0u);
  EXPECT_EQ(f.overheadBytes,
            f.manifestBytes + f.stepIoBytes + f.threadScratchBytes);
  EXPECT_EQ(f.totalBytes,
            f.weightsBytes + f.kvBytes + f.arenaBytes + f.overheadBytes);
  // More threads, more scratch; nothing else moves.
  MemoryFootprint g = computeFootprint(m, 5, 6);
  EXPECT_EQ(g.threadScratchBytes, 2 * f.threadScratchBytes);
  EXPECT_EQ(g.kvBytes, f.kvBytes);
}

TEST(MemoryFootprintTest, EngineBudgetRule) {
  Manifest m = tinyLlm();
  int64_t blocks = 0;
  ASSERT_TRUE(engineKvBlocks(m, 7, 0, &blocks));
  EXPECT_EQ(blocks, 7);
  // 1 MiB of 2 × 2 × 4 × 2 × 2 × 4 = 256-byte blocks.
  ASSERT_TRUE(engineKvBlocks(m, 0, 1, &blocks));
  EXPECT_EQ(blocks, 4096);
  // Default: capped at maxSeqs full-context sequences.
  ASSERT_TRUE(engineKvBlocks(m, 0, 0, &blocks));
  EXPECT_EQ(blocks, 2 * 4);
}

TEST(MemoryFootprintTest, NonLlmArtifactHasNoKvCache) {
  Manifest m = tinyLlm();
  m.hasLlm = false;
  MemoryFootprint f = computeFootprint(m, 5, 1);
  EXPECT_EQ(f.kvBytes, 0u);
  EXPECT_EQ(f.stepIoBytes, 0u);
  int64_t blocks = -1;
  ASSERT_TRUE(engineKvBlocks(m, 0, 0, &blocks));
  EXPECT_EQ(blocks, 0);
}

} // namespace
} // namespace ingot
