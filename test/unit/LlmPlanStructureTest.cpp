//===- LlmPlanStructureTest.cpp - LLM plans the runtime must refuse -------===//
//
// A tiny LLM plan (embedding gather, one paged_attention step, the logits
// rows, lm_head) is written and generated from; then edited as a hostile
// user could (ManifestMutation.h) so that an entry point the engine relies
// on (its six inputs, float32 logits of vocab_size columns, attention that
// fits the KV cache) is wrong, which the loader must refuse. KV budgets,
// arenas and thread counts the machine cannot give are errors when the
// generator or engine is created or first runs, never an OOM kill.
//
//===----------------------------------------------------------------------===//
#include "ManifestMutation.h"

#include "ingot/Engine.h"
#include "ingot/Executor.h"
#include "ingot/Generator.h"
#include "ingot/ThreadPool.h"

#include <cstdio>
#include <unistd.h>

using namespace ingot;
using namespace ingot::testing;

namespace {

constexpr int64_t kVocab = 5, kHidden = 8;

PlanBuilder llmPlan() {
  PlanBuilder p;
  Manifest &m = p.m;
  m.hasLlm = true;
  LlmConfig &l = m.llm;
  l.architecture = "TestForCausalLM";
  l.numLayers = 1, l.hiddenSize = kHidden, l.numHeads = 2, l.numKvHeads = 2;
  l.headDim = 4, l.vocabSize = kVocab, l.maxPositions = 64, l.blockSize = 4;
  l.maxTokensPerStep = 8, l.maxSeqs = 2, l.maxBlocksPerSeq = 4;
  m.tokenizer.vocab = {"a", "b", "ab", "c", "d"};
  m.tokenizer.merges = {{0, 1}};
  m.symbols = {{"tokens", 8}, {"seqs", 2}, {"blocks", 4}};
  const Dim tok{-1, "tokens"}, seqs{-1, "seqs"}, blocks{-1, "blocks"};
  p.input("tokens", DType::I64, {8}, {tok});                   // 0
  p.input("positions", DType::I64, {8}, {tok});                // 1
  p.input("slot_mapping", DType::I64, {8}, {tok});             // 2
  p.input("block_tables", DType::I32, {2, 4}, {seqs, blocks}); // 3
  p.input("query_ends", DType::I64, {2}, {seqs});              // 4
  p.input("logits_indices", DType::I64, {2}, {seqs});          // 5
  p.param("embed", {kVocab, kHidden});                         // 6
  p.param("lm_head", {kVocab, kHidden});                       // 7
  p.arena("h", DType::F32, {8, kHidden}, 0);                   // 8
  p.arena("attn", DType::F32, {8, kHidden}, 256);              // 9
  p.arena("rows", DType::F32, {2, kHidden}, 512);              // 10
  p.arena("logits", DType::F32, {2, kVocab}, 576);             // 11
  p.step("gather", {6, 0}, {8}, {makeAttr("axis", int64_t(0))});
  p.step("paged_attention", {8, 8, 8, 1, 2, 3, 4}, {9},
         {makeAttr("layer", int64_t(0)), makeAttr("num_heads", int64_t(2)),
          makeAttr("num_kv_heads", int64_t(2)),
          makeAttr("head_dim", int64_t(4)), makeAttr("scale", 0.5),
          makeAttr("sliding_window", int64_t(0))});
  p.step("gather", {9, 5}, {10}, {makeAttr("axis", int64_t(0))});
  p.step("linear", {10, 7, kNoBuffer}, {11},
         {makeAttr("activation", "none"), makeAttr("w_layout", "nk")});
  p.output("logits", 11, {seqs, {kVocab, ""}});
  return p;
}

class LlmPlanStructure : public ::testing::Test {
protected:
  std::string base_ = tmp("base"), mutant_ = tmp("mutant");

  static std::string tmp(const std::string &what) {
    return ::testing::TempDir() + "llm-structure-" + what + "-" +
           std::to_string(::getpid()) + ".ingot";
  }
  void SetUp() override {
    Status st = llmPlan().write(base_);
    ASSERT_TRUE(st) << st.message();
  }
  void TearDown() override {
    std::remove(base_.c_str());
    std::remove(mutant_.c_str());
  }
  std::unique_ptr<Artifact> open(const std::string &path) {
    std::unique_ptr<Artifact> art;
    Status st = Artifact::open(path, &art);
    EXPECT_TRUE(st) << st.message();
    return art;
  }
  /// Creates a generator and generates two tokens; the first error.
  static Status generate(const Artifact &art, unsigned threads,
                         int64_t kvBlocks) {
    std::unique_ptr<Generator> gen;
    if (Status s = Generator::create(art, threads, kvBlocks, &gen); !s)
      return s;
    GenerateOptions o;
    o.maxNewTokens = 2;
    GenerateResult r;
    return gen->generate({1, 2, 3}, o, &r);
  }
  static void expectError(const Status &st,
                          const std::vector<std::string> &parts) {
    ASSERT_FALSE(st) << "succeeded; expected: " << parts.front();
    for (const std::string &p : parts)
      EXPECT_NE(st.message().find(p), std::string::npos)
          << "'" << p << "' not in: " << st.message();
  }
};

TEST_F(LlmPlanStructure, TheValidPlanGenerates) {
  std::unique_ptr<Artifact> art = open(base_);
  ASSERT_TRUE(art);
  Status st = generate(*art, 2, 0);
  EXPECT_TRUE(st) << st.message();
  EngineOptions o;
  o.threads = 2;
  o.kvBlocks = 8;
  std::unique_ptr<Engine> engine;
  st = Engine::create(*art, o, &engine);
  EXPECT_TRUE(st) << st.message();
}

TEST_F(LlmPlanStructure, EngineInputs) {
  writeMutated(base_, mutant_, [](Manifest &m) {
    m.inputs[0].dtype = m.buffers[0].dtype = DType::I32;
  });
  expectLoadRefused(mutant_, {"LLM input 'tokens' is int32 of rank 1; the "
                              "engine feeds int64 of rank 1"});
  writeMutated(base_, mutant_,
               [](Manifest &m) { m.inputs[4].name = "query_end"; });
  expectLoadRefused(mutant_, {"LLM input 'query_end' is not one the engine "
                              "feeds (tokens, positions, slot_mapping, "
                              "block_tables, query_ends, logits_indices)"});
}

TEST_F(LlmPlanStructure, LogitsBoundToAnInt64Buffer) {
  // The crash: output 0 read as vocab_size floats per row.
  writeMutated(base_, mutant_, [](Manifest &m) {
    m.outputs[0].buffer = 5;
    m.outputs[0].dtype = DType::I64;
    m.outputs[0].dims = {{-1, "seqs"}};
  });
  expectLoadRefused(mutant_, {"LLM output 0 'logits' (the logits) is int64 of "
                              "rank 1; the engine reads float32 [rows, 5]"});
  writeMutated(base_, mutant_,
               [](Manifest &m) { m.outputs[0].dims[1].size = 3; });
  expectLoadRefused(mutant_, {"LLM output 0 'logits'",
                              "the engine reads float32 [rows, 5] "
                              "(vocab_size 5 a fixed dim)"});
}

TEST_F(LlmPlanStructure, AttentionOutsideTheKvCache) {
  writeMutated(base_, mutant_, [](Manifest &m) { m.steps[1].attrs[0].i = 1; });
  expectLoadRefused(mutant_, {"step 1 ('paged_attention' from "
                              "'n1/paged_attention')",
                              "within the KV cache of the LLM config (layer "
                              "0 to 0, 2 KV heads of dim 4)"});
}

TEST_F(LlmPlanStructure, NarrowLogitsAreAnErrorNotAnOverread) {
  // lm_head with 3 rows loads (shapes are the kernels' business), but the
  // logits then have 3 columns, not vocab_size: refused before any read.
  writeMutated(base_, mutant_, [](Manifest &m) {
    m.tensors[1].shape = m.buffers[7].maxShape = {3, kHidden};
    m.tensors[1].bytes = 3 * kHidden * 4;
  });
  std::unique_ptr<Artifact> art = open(mutant_);
  ASSERT_TRUE(art);
  expectError(generate(*art, 1, 0),
              {"model output 'logits' was computed with shape [1,3]"});
}

TEST_F(LlmPlanStructure, KvBudgetBeyondPhysicalMemory) {
  std::unique_ptr<Artifact> art = open(base_);
  ASSERT_TRUE(art);
  expectError(generate(*art, 1, 2147483647),
              {"KV cache of 2147483647 blocks needs", "physical memory"});
  EngineOptions o;
  o.kvBlocks = 2147483647;
  std::unique_ptr<Engine> engine;
  expectError(Engine::create(*art, o, &engine),
              {"the KV cache (2147483647 blocks", "physical memory"});
  o.kvBlocks = 0;
  o.kvCacheMb = int64_t(1) << 50;
  expectError(Engine::create(*art, o, &engine),
              {"a KV budget of 1125899906842624 MiB", "physical memory"});
}

TEST_F(LlmPlanStructure, ArenaBeyondPhysicalMemory) {
  writeMutated(base_, mutant_,
               [](Manifest &m) { m.memory.arenaBytes = uint64_t(1) << 60; });
  std::unique_ptr<Artifact> art = open(mutant_);
  ASSERT_TRUE(art);
  expectError(
      generate(*art, 1, 0),
      {"the activation arena of 1152921504606846976 bytes", "physical memory"});
  EngineOptions o;
  o.kvBlocks = 8;
  std::unique_ptr<Engine> engine;
  expectError(Engine::create(*art, o, &engine),
              {"activation arena", "physical memory"});
}

TEST_F(LlmPlanStructure, ThreadCountsTheSystemCannotGive) {
  const unsigned tooMany = ThreadPool::kMaxThreads + 1;
  ThreadPool pool(tooMany);
  ASSERT_FALSE(pool.status());
  EXPECT_EQ(pool.status().message(),
            "cannot start " + std::to_string(tooMany) + " threads: at most " +
                std::to_string(ThreadPool::kMaxThreads) + " are supported");
  EXPECT_EQ(pool.size(), 1u); // still usable, on the caller
  int64_t sum = 0;
  pool.parallelFor(100, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      sum += i;
  });
  EXPECT_EQ(sum, 4950);
  EXPECT_TRUE(ThreadPool(2).status());

  std::unique_ptr<Artifact> art = open(base_);
  ASSERT_TRUE(art);
  expectError(generate(*art, 100000, 0), {"cannot start 100000 threads"});
  EngineOptions o;
  o.threads = 100000;
  std::unique_ptr<Engine> engine;
  expectError(Engine::create(*art, o, &engine),
              {"cannot start 100000 threads"});
}

} // namespace
