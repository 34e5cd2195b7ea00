//===- ManifestStructureTest.cpp - Plans the loader must refuse -----------===//
//
// A small valid plan (linear, an in-place relu, layer_norm, linear,
// softmax; arena slices reused once their values die) is written, then
// edited the way a hostile user could (decoded, changed consistently,
// resealed with valid checksums: ManifestMutation.h). Each edit breaks one
// rule of the plan and Artifact::open must refuse it, naming the step,
// tensor or buffer and the rule. The unedited plan loads and runs.
//
//===----------------------------------------------------------------------===//
#include "ManifestMutation.h"

#include "ingot/Executor.h"
#include "ingot/ThreadPool.h"

#include <cmath>

using namespace ingot;
using namespace ingot::testing;

namespace {

/// x[batch, 8] -> linear -> relu (in place) -> layer_norm -> linear ->
/// logits[batch, 4] -> softmax -> probs. Buffers 4..8 are h0 @0, h1 @0
/// (relu takes h0's slice), h2 @256, logits @0 (h1 is dead by then),
/// probs @64.
PlanBuilder mlpPlan() {
  PlanBuilder p;
  p.m.symbols = {{"batch", 4}};
  const std::vector<Dim> rows = {{-1, "batch"}, {8, ""}};
  p.input("x", DType::F32, {4, 8}, rows);   // 0
  p.param("w1", {16, 8});                   // 1
  p.param("scale", {16});                   // 2
  p.param("w2", {4, 16});                   // 3
  p.arena("h0", DType::F32, {4, 16}, 0);    // 4
  p.arena("h1", DType::F32, {4, 16}, 0);    // 5
  p.arena("h2", DType::F32, {4, 16}, 256);  // 6
  p.arena("logits", DType::F32, {4, 4}, 0); // 7
  p.arena("probs", DType::F32, {4, 4}, 64); // 8
  const std::vector<Attr> linear = {makeAttr("activation", "none"),
                                    makeAttr("w_layout", "nk")};
  p.step("linear", {0, 1, kNoBuffer}, {4}, linear);
  p.step("relu", {4}, {5});
  p.step("layer_norm", {5, 2, kNoBuffer}, {6},
         {makeAttr("axis", int64_t(-1)), makeAttr("epsilon", 1e-5)});
  p.step("linear", {6, 3, kNoBuffer}, {7}, linear);
  p.step("softmax", {7}, {8}, {makeAttr("axis", int64_t(1))});
  p.output("logits", 7, {{-1, "batch"}, {4, ""}});
  p.output("probs", 8, {{-1, "batch"}, {4, ""}});
  return p;
}

class ManifestStructure : public MutatedPlanTest {
protected:
  PlanBuilder plan() const override { return mlpPlan(); }
  /// Runs the artifact at `path` on a batch of 2.
  Status run(const std::string &path, std::vector<NamedTensor> *out) {
    std::unique_ptr<Artifact> art;
    if (Status s = Artifact::open(path, &art); !s)
      return s;
    ThreadPool pool(2);
    Executor exec(*art, pool);
    NamedTensor x{"x", {DType::F32, {2, 8}, std::vector<uint8_t>(64, 0)}};
    for (size_t i = 0; i < 16; ++i) {
      const float v = float(i) / 8 - 1;
      std::memcpy(x.tensor.data.data() + 4 * i, &v, 4);
    }
    return exec.run({x}, out);
  }
};

TEST_F(ManifestStructure, TheValidPlanLoadsAndRuns) {
  std::vector<NamedTensor> out;
  Status st = run(base_, &out);
  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(out.size(), 2u);
  const float *probs =
      reinterpret_cast<const float *>(out[1].tensor.data.data());
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int c = 0; c < 4; ++c)
      sum += probs[r * 4 + c];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST_F(ManifestStructure, UnknownKernelsAtLoad) {
  // Refused when the artifact opens, not when the step would first run.
  expectRefused([](Manifest &m) { m.steps[4].kernel = "softmax_v2"; },
                {"step 4 ('softmax_v2' from 'n4/softmax')",
                 "unknown kernel 'softmax_v2'", "newer ingot runtime"});
  expectRefused([](Manifest &m) { m.steps[0].kernel = "linear\x01"; },
                {"unknown kernel 'linear\\x01'"});
}

TEST_F(ManifestStructure, TensorsSharingWeightBytes) {
  expectRefused([](Manifest &m) { m.tensors[1].offset = m.tensors[0].offset; },
                {"tensor 1 'scale' [0, +64) overlaps tensor 0 'w1' [0, +512)",
                 "each tensor needs bytes of its own"});
}

TEST_F(ManifestStructure, LiveArenaBuffersSharingBytes) {
  // probs over logits, which the caller still reads at the end.
  expectRefused([](Manifest &m) { m.buffers[8].arenaOffset = 0; },
                {"step 4 ('softmax' from 'n4/softmax')",
                 "buffer 8 'probs' [0, +64) and buffer 7 'logits' [0, +64) "
                 "share arena bytes while both are live",
                 "from step 3 to the end, as a model output"});
  // h2 over h0's slice, which relu handed to h1, still live at step 2.
  expectRefused([](Manifest &m) { m.buffers[6].arenaOffset = 0; },
                {"step 2 ('layer_norm' from 'n2/layer_norm')", "buffer 6 'h2'",
                 "buffer 5 'h1'",
                 "but 'layer_norm' is not an in-place kernel"});
  // A second output of layer_norm (its mean) inside h2.
  expectRefused(
      [](Manifest &m) {
        Buffer mean = m.buffers[6];
        mean.id = 9, mean.name = "mean", mean.rank = 1, mean.maxShape = {4};
        mean.maxBytes = 16;
        m.buffers.push_back(mean);
        m.steps[2].outputs.push_back(9);
      },
      {"step 2", "its outputs buffer 6 'h2' and buffer 9 'mean' share arena "
                 "bytes"});
}

TEST_F(ManifestStructure, InPlaceOutputsTakeTheWholeSlice) {
  // relu is in place, but its output starts inside its input's slice.
  expectRefused([](Manifest &m) { m.buffers[5].arenaOffset = 64; },
                {"step 1 ('relu' from 'n1/relu')",
                 "buffer 5 'h1' [64, +256) and buffer 4 'h0' [0, +256)",
                 "an in-place output must take over its input's slice at the "
                 "same offset and with the same element size"});
}

TEST_F(ManifestStructure, ReadsBeforeWritesAndUnwrittenOutputs) {
  expectRefused([](Manifest &m) { m.steps[1].inputs = {6}; },
                {"step 1 ('relu' from 'n1/relu') reads buffer 6 'h2' before "
                 "any step writes it"});
  expectRefused([](Manifest &m) { m.steps.pop_back(); },
                {"output 1 'probs' is buffer 8 'probs', which no step writes"});
}

TEST_F(ManifestStructure, StepOperandCounts) {
  expectRefused([](Manifest &m) { m.steps[0].inputs = {0}; },
                {"step 0 ('linear' from 'n0/linear')",
                 "'linear' takes 2 to 4 inputs (x, weight, bias?, "
                 "residual?), the step has 1"});
  expectRefused(
      [](Manifest &m) {
        m.steps[1].inputs = {4, 4};
      },
      {"step 1 ('relu' from 'n1/relu')",
       "'relu' takes 1 input (x), the step has 2"});
  expectRefused([](Manifest &m) { m.steps[0].inputs[1] = kNoBuffer; },
                {"step 0", "input 1 'weight' of 'linear' is required, but the "
                           "step leaves it out"});
  expectRefused(
      [](Manifest &m) {
        m.steps[4].outputs = {8, 6};
      },
      {"step 4", "'softmax' writes 1 output (y), the step has 2"});
}

TEST_F(ManifestStructure, StepOutputToAWeight) {
  expectRefused([](Manifest &m) { m.steps[1].outputs = {2}; },
                {"step 1 ('relu' from 'n1/relu'): output 0 writes to a "
                 "read-only parameter (weights are mapped read-only), buffer "
                 "2 'scale'"});
}

TEST_F(ManifestStructure, UnknownAndDuplicatedAttributes) {
  // The case: linear would ignore the typo and drop its relu.
  expectRefused(
      [](Manifest &m) {
        m.steps[0].attrs[0].name = std::string("activati\0n", 10);
      },
      {"step 0 ('linear' from 'n0/linear'): attribute 'activati\\x00n' is not "
       "one 'linear' takes (activation, w_layout)"});
  expectRefused(
      [](Manifest &m) { m.steps[4].attrs[0].name = "axes"; },
      {"step 4", "attribute 'axes' is not one 'softmax' takes (axis)"});
  expectRefused(
      [](Manifest &m) { m.steps[4].attrs.push_back(m.steps[4].attrs[0]); },
      {"step 4", "attribute 'axis' is given twice"});
}

TEST_F(ManifestStructure, OperandDTypes) {
  // int32 has float32's size, so the slice still fits: only the kernel's
  // dtype rule stands in the way.
  expectRefused([](Manifest &m) { m.buffers[4].dtype = DType::I32; },
                {"step 0 ('linear' from 'n0/linear'): output 0 'y' is buffer "
                 "4 'h0' of int32, but 'linear' takes float32 there"});
  expectRefused(
      [](Manifest &m) { m.buffers[0].dtype = m.inputs[0].dtype = DType::I32; },
      {"step 0", "input 0 'x' is buffer 0 'x' of int32, but 'linear' takes "
                 "float32 there"});
}

TEST_F(ManifestStructure, ModelIoMatchesItsBuffers) {
  expectRefused([](Manifest &m) { m.outputs[0].dtype = DType::I64; },
                {"output 0 'logits' is declared int64 but buffer 7 'logits' "
                 "holds float32"});
  expectRefused([](Manifest &m) { m.inputs[0].dims.pop_back(); },
                {"input 0 'x' has 1 dims but buffer 0 'x' has rank 2"});
  expectRefused([](Manifest &m) { m.outputs[1].name = "logits"; },
                {"output 1 'logits': another model output has the same name"});
}

TEST_F(ManifestStructure, ComputedOutputShapesMatchTheirFixedDims) {
  // Loads (the dims only describe the I/O) but the executor refuses to
  // hand out logits of another width than the caller was told.
  writeMutated(base_, mutant_,
               [](Manifest &m) { m.outputs[0].dims[1].size = 5; });
  std::vector<NamedTensor> out;
  Status st = run(mutant_, &out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("model output 'logits' was computed with shape "
                              "[2,4], but the manifest declares "
                              "logits: float32[batch,5]"),
            std::string::npos)
      << st.message();
}

} // namespace

/// A buffer sized at run time (BufferKind::Dynamic) holds what an arena
/// slice held: the plan runs, with the same results, whichever buffers
/// (in-place relu output, an input of the next step, a model output) are
/// moved out of the arena.
TEST_F(ManifestStructure, BuffersSizedAtRunTimeGiveTheSameResults) {
  std::vector<NamedTensor> want;
  ASSERT_TRUE(run(base_, &want));
  for (uint32_t id : {5u, 6u, 8u}) {
    writeMutated(base_, mutant_, [id](Manifest &m) {
      Buffer &b = m.buffers[id];
      b.kind = BufferKind::Dynamic;
      b.maxShape[0] = -1;
      b.maxBytes = 0;
      b.arenaOffset = 0;
    });
    std::vector<NamedTensor> got;
    Status st = run(mutant_, &got);
    ASSERT_TRUE(st) << "buffer " << id << ": " << st.message();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].tensor.shape, want[i].tensor.shape);
      EXPECT_EQ(got[i].tensor.data, want[i].tensor.data) << "buffer " << id;
    }
  }
}

TEST_F(ManifestStructure, BufferSizedAtRunTimeClaimingArenaBytes) {
  expectRefused(
      [](Manifest &m) {
        m.buffers[6].kind = BufferKind::Dynamic;
        m.buffers[6].maxShape[0] = -1;
      },
      {"buffer 6 'h2' is sized at run time but claims 256 bytes at arena "
       "offset 256"});
  expectRefused(
      [](Manifest &m) {
        Buffer &b = m.buffers[6];
        b.kind = BufferKind::Dynamic;
        b.maxShape = {-2, 16};
        b.maxBytes = 0;
        b.arenaOffset = 0;
      },
      {"buffer 6 'h2' has an invalid max_shape [-2, 16]"});
}

namespace {

/// x[1, 16] -> relu -> a[1, 16] @0; x -> exp -> b[1, 16] @64;
/// concat(a, b, x) -> c[1, 48] @0: the planner's concat with a and b
/// written in their slabs of c, x (a model input) copied.
PlanBuilder concatPlan() {
  PlanBuilder p;
  p.input("x", DType::F32, {1, 16}, {{1, ""}, {16, ""}}); // 0
  p.arena("a", DType::F32, {1, 16}, 0);                   // 1
  p.arena("b", DType::F32, {1, 16}, 64);                  // 2
  p.arena("c", DType::F32, {1, 48}, 0);                   // 3
  p.arena("d", DType::F32, {1, 48}, 192);                 // 4
  p.step("relu", {0}, {1});
  p.step("exp", {0}, {2});
  p.step("concat", {1, 2, 0}, {3}, {makeAttr("axis", int64_t(1))});
  p.step("neg", {3}, {4});
  p.output("d", 4, {{1, ""}, {48, ""}});
  return p;
}

class ConcatSlabs : public MutatedPlanTest {
protected:
  PlanBuilder plan() const override { return concatPlan(); }
};

} // namespace

/// The inputs already in place are left as they are and the rest copied:
/// d = -c is -relu(x), -exp(x), -x.
TEST_F(ConcatSlabs, InputsInTheirSlabsLoadAndRun) {
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(base_, &art);
  ASSERT_TRUE(st) << st.message();
  ThreadPool pool(2);
  Executor exec(*art, pool);
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i)
    x[size_t(i)] = float(i) / 4 - 2;
  NamedTensor in{"x", {DType::F32, {1, 16}, std::vector<uint8_t>(64)}};
  std::memcpy(in.tensor.data.data(), x.data(), 64);
  std::vector<NamedTensor> out;
  st = exec.run({in}, &out);
  ASSERT_TRUE(st) << st.message();
  const auto *d = reinterpret_cast<const float *>(out[0].tensor.data.data());
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(d[i], -std::max(x[i], 0.0f)) << i;
    EXPECT_NEAR(d[16 + i], -std::exp(x[i]), 1e-6 * std::exp(x[i])) << i;
    EXPECT_EQ(d[32 + i], -x[i]) << i;
  }
}

TEST_F(ConcatSlabs, AnInputOutsideItsSlabIsRefused) {
  // b one slab too far (where x goes), and a read after c's last reader.
  expectRefused([](Manifest &m) { m.buffers[2].arenaOffset = 128; },
                {"step 2 ('concat'", "buffer 3 'c' [0, +192) and buffer 2 'b' "
                                     "[128, +64) share arena bytes"});
  expectRefused(
      [](Manifest &m) {
        Buffer e = m.buffers[1];
        e.id = 5, e.name = "e", e.arenaOffset = 384;
        m.buffers.push_back(e);
        m.memory.arenaBytes = 448;
        m.steps.push_back(m.steps[0]);
        m.steps[4].inputs = {1}, m.steps[4].outputs = {5};
        m.outputs.push_back({"e", DType::F32, m.outputs[0].dims, 5});
        m.outputs[1].dims[1].size = 16;
      },
      {"step 2 ('concat'", "buffer 3 'c' [0, +192) and buffer 1 'a' [0, +64) "
                           "share arena bytes while both are live"});
}
