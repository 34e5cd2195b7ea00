//===- ExecutorErrorsTest.cpp - Executor messages for bad input and plans -===//
//
// Every kind of bad input names the input, what was given and what the
// model expects; plan problems found at run time name the step's node, the
// buffer and the bound.
//
//===----------------------------------------------------------------------===//
#include "ExecutorTestUtil.h"

#include "ingot/ThreadPool.h"

using namespace ingot;
using namespace ingot::executor_test;

namespace {

Status runWith(Executor &exec, std::vector<NamedTensor> inputs) {
  std::vector<NamedTensor> outs;
  return exec.run(inputs, &outs);
}

void expectMessage(const Status &s, std::vector<std::string> parts) {
  ASSERT_FALSE(s.isOk());
  for (const std::string &p : parts)
    EXPECT_NE(s.message().find(p), std::string::npos)
        << "'" << p << "' not in: " << s.message();
}

TEST(Executor, InputValidationMessages) {
  Mlp mlp = buildMlp();
  std::unique_ptr<Artifact> art = writeAndOpen(mlp, "mlp-errors.ingot");
  ASSERT_TRUE(art);
  ThreadPool pool(2);
  Executor exec(*art, pool);
  auto x = [](int64_t b, int64_t c) {
    return f32Tensor({b, c}, std::vector<float>(b * c, 0.5f));
  };
  NamedTensor s2{"s", f32Tensor({2, 1}, {1, 1})};

  expectMessage(runWith(exec, {{"input_ids", x(2, 8)}, s2}),
                {"unknown input 'input_ids'", "x: float32[batch,8]",
                 "s: float32[batch,1]"});
  expectMessage(runWith(exec, {s2}),
                {"missing input 'x'", "x: float32[batch,8]"});
  expectMessage(runWith(exec, {{"x", x(2, 8)}, {"x", x(2, 8)}, s2}),
                {"'x' is given twice"});
  HostTensor ints;
  ints.dtype = DType::I64;
  ints.shape = {2, 8};
  ints.data.resize(128);
  expectMessage(runWith(exec, {{"x", ints}, s2}),
                {"input 'x' has dtype int64", "float32[batch,8]"});
  expectMessage(
      runWith(exec, {{"x", f32Tensor({16}, std::vector<float>(16))}, s2}),
      {"input 'x' has rank 1", "expected rank 2"});
  expectMessage(runWith(exec, {{"x", x(2, 7)}, s2}),
                {"input 'x' dim 1 is 7", "compiled for 8"});
  expectMessage(runWith(exec, {{"x", x(3, 8)}, s2}),
                {"(batch) is", "already set batch = 3"});
  expectMessage(runWith(exec, {{"x", x(17, 8)}, {"s", x(17, 1)}}),
                {"batch = 17", "compiled maximum 16", "--max-dim batch=17"});
  HostTensor shortData = x(2, 8);
  shortData.data.resize(10);
  expectMessage(runWith(exec, {{"x", shortData}, s2}),
                {"needs 64 bytes of data, got 10"});
  // The executor still works after errors.
  EXPECT_TRUE(runWith(exec, {{"x", x(2, 8)}, s2}).isOk());
}

TEST(Executor, PlanProblemsAreReported) {
  {
    // An unknown kernel is refused when the artifact is written (and when
    // it is loaded: ManifestStructureTest.cpp), before any step runs.
    Mlp mlp = buildMlp();
    mlp.manifest.steps[2].kernel = "frobnicate";
    Status st =
        ArtifactWriter(mlp.manifest).write(tempPath("unknown-kernel.ingot"));
    expectMessage(st, {"unknown kernel 'frobnicate'", "mlp/relu2",
                       "newer ingot runtime"});
  }
  {
    // layer_norm is not in-place: writing over its input is a plan bug,
    // which the writer (and the loader, ManifestStructureTest.cpp) refuses.
    Mlp mlp = buildMlp();
    mlp.manifest.buffers[10].arenaOffset = 0;
    Status st = ArtifactWriter(mlp.manifest).write(tempPath("bad-alias.ingot"));
    expectMessage(st, {"layer_norm", "not an in-place kernel"});
  }
  {
    // A slice sized for 4 rows while the symbol allows 16: the kernel
    // reports the node, the buffer, the shape and the bound.
    Mlp mlp = buildMlp();
    Buffer &h3 = mlp.manifest.buffers[10];
    h3.maxShape = {4, kHidden};
    h3.maxBytes = 4 * kHidden * 4;
    auto art = writeAndOpen(mlp, "small-slice.ingot");
    ThreadPool pool(2);
    Executor exec(*art, pool);
    EXPECT_TRUE(runWith(exec, {{"x", f32Tensor({4, 8}, std::vector<float>(32))},
                               {"s", f32Tensor({4, 1}, std::vector<float>(4))}})
                    .isOk());
    expectMessage(
        runWith(exec, {{"x", f32Tensor({6, 8}, std::vector<float>(48))},
                       {"s", f32Tensor({6, 1}, std::vector<float>(6))}}),
        {"node 'mlp/layer_norm3'", "'h3'", "[6,32]", "[4,32]", "--max-dim"});
  }
}

} // namespace
