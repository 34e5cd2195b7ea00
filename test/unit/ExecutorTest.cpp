//===- ExecutorTest.cpp - Running a written artifact end to end -----------===//
//
// Builds a small MLP plan (params, an input with a symbolic batch dim, arena
// buffers reused in place), writes it with ArtifactWriter, opens it with
// Artifact::open and checks the outputs against a double-precision
// reference, and that steps reading only weights run once. The messages for
// bad input and plan problems are in ExecutorErrorsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestUtil.h"

#include "ingot/Profiler.h"
#include "ingot/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ingot;
using namespace ingot::executor_test;

namespace {

std::vector<double> reference(const Mlp &mlp, const std::vector<float> &x,
                              const std::vector<float> &s, int64_t batch,
                              std::vector<double> *logits) {
  const auto &w1 = mlp.weights[0], &b1 = mlp.weights[1], &ln = mlp.weights[2];
  const auto &w2 = mlp.weights[3], &b2 = mlp.weights[4];
  std::vector<double> probs(batch * kOut);
  logits->assign(batch * kOut, 0);
  for (int64_t r = 0; r < batch; ++r) {
    double h[kHidden], mean = 0, var = 0;
    for (int64_t j = 0; j < kHidden; ++j) {
      h[j] = b1[j];
      for (int64_t k = 0; k < kIn; ++k)
        h[j] += double(x[r * kIn + k]) * w1[k * kHidden + j];
      h[j] = std::max(h[j], 0.0);
      mean += h[j] / kHidden;
    }
    for (double v : h)
      var += (v - mean) * (v - mean) / kHidden;
    for (double &v : h)
      v = (v - mean) / std::sqrt(var + 1e-5);
    double mx = -1e300, sum = 0;
    for (int64_t o = 0; o < kOut; ++o) {
      double l = b2[o];
      for (int64_t j = 0; j < kHidden; ++j)
        l += h[j] * ln[j] * w2[j * kOut + o];
      (*logits)[r * kOut + o] = l;
      mx = std::max(mx, l);
    }
    for (int64_t o = 0; o < kOut; ++o)
      sum += std::exp((*logits)[r * kOut + o] - mx);
    for (int64_t o = 0; o < kOut; ++o)
      probs[r * kOut + o] = std::exp((*logits)[r * kOut + o] - mx) / sum * s[r];
  }
  return probs;
}

void expectNear(const HostTensor &t, const std::vector<double> &ref) {
  ASSERT_EQ(t.data.size(), ref.size() * 4);
  const float *g = reinterpret_cast<const float *>(t.data.data());
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(g[i], ref[i], 2e-5 * (1 + std::fabs(ref[i]))) << i;
}

TEST(Executor, RunsAnMlpForSeveralBatchSizes) {
  Mlp mlp = buildMlp();
  std::unique_ptr<Artifact> art = writeAndOpen(mlp, "mlp.ingot");
  ASSERT_TRUE(art);
  ThreadPool pool(3);
  Executor exec(*art, pool);
  for (int64_t batch :
       {int64_t(1), int64_t(5), kMaxBatch, int64_t(0), int64_t(3)}) {
    std::vector<float> x = randomFloats(batch * kIn, 100 + batch);
    std::vector<float> s = randomFloats(batch, 200 + batch);
    std::vector<NamedTensor> outs;
    Status st = exec.run(
        {{"s", f32Tensor({batch, 1}, s)}, {"x", f32Tensor({batch, kIn}, x)}},
        &outs);
    ASSERT_TRUE(st.isOk()) << st.message();
    ASSERT_EQ(outs.size(), 4u);
    std::vector<double> logits;
    std::vector<double> probs = reference(mlp, x, s, batch, &logits);
    EXPECT_EQ(outs[0].name, "probs");
    EXPECT_EQ(outs[0].tensor.shape, (std::vector<int64_t>{batch, kOut}));
    expectNear(outs[0].tensor, probs);
    EXPECT_EQ(outs[1].name, "logits/raw");
    expectNear(outs[1].tensor, logits);
    EXPECT_EQ(outs[2].tensor.shape, (std::vector<int64_t>{batch, kIn}));
    EXPECT_EQ(outs[2].tensor.data.size(), x.size() * 4);
    EXPECT_TRUE(x.empty() || !std::memcmp(outs[2].tensor.data.data(), x.data(),
                                          x.size() * 4));
    EXPECT_EQ(outs[3].tensor.shape, std::vector<int64_t>{kOut});
    EXPECT_EQ(
        std::memcmp(outs[3].tensor.data.data(), mlp.weights[4].data(), 16), 0);
  }
}

TEST(Executor, StepsThatReadOnlyWeightsRunOnce) {
  // w1 stored quartered and doubled twice in the plan (as exported graphs
  // cast and scale int8 weights), the results in arena memory that
  // layer_norm's output reuses: kept apart, the last must survive the
  // first run unchanged, and the one in between is freed.
  Mlp mlp = buildMlp();
  Manifest &m = mlp.manifest;
  TensorEntry quarter;
  quarter.name = "w1_quarter";
  quarter.shape = {kIn, kHidden};
  m.tensors.push_back(quarter);
  mlp.weights.push_back(mlp.weights[0]);
  for (float &v : mlp.weights.back())
    v *= 0.25f;
  auto addBuffer = [&](BufferKind kind, const std::string &name) {
    Buffer b;
    b.id = uint32_t(m.buffers.size());
    b.kind = kind;
    b.name = name;
    b.rank = 2;
    b.maxShape = quarter.shape;
    if (kind == BufferKind::Param) {
      b.tensorIndex = int32_t(m.tensors.size() - 1);
    } else {
      b.maxBytes = kIn * kHidden * 4;
      b.arenaOffset = kMaxBatch * kHidden * 4; // h3's memory
    }
    m.buffers.push_back(b);
    return b.id;
  };
  const uint32_t q = addBuffer(BufferKind::Param, "w1_quarter");
  const uint32_t half = addBuffer(BufferKind::Arena, "w1_half");
  const uint32_t full = addBuffer(BufferKind::Arena, "w1_full");
  auto prep = [&](uint32_t in, uint32_t out) {
    Step st;
    st.kernel = "add";
    st.origin = "mlp/prep" + std::to_string(out);
    st.inputs = {in, in};
    st.outputs = {out};
    return st;
  };
  m.steps.insert(m.steps.begin(), {prep(q, half), prep(half, full)});
  m.steps[2].inputs = {0, full};
  std::unique_ptr<Artifact> art = writeAndOpen(mlp, "mlp-prep.ingot");
  ASSERT_TRUE(art);
  ThreadPool pool(2);
  Executor exec(*art, pool);
  StepProfiler profiler;
  exec.setProfiler(&profiler);
  EXPECT_EQ(exec.constantResultBytes(), uint64_t(kIn * kHidden * 4));
  for (int64_t batch : {int64_t(3), kMaxBatch, int64_t(5)}) {
    std::vector<float> x = randomFloats(batch * kIn, 300 + batch);
    std::vector<float> s = randomFloats(batch, 400 + batch);
    std::vector<NamedTensor> outs;
    Status st = exec.run(
        {{"s", f32Tensor({batch, 1}, s)}, {"x", f32Tensor({batch, kIn}, x)}},
        &outs);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::vector<double> logits;
    expectNear(outs[0].tensor, reference(mlp, x, s, batch, &logits));
  }
  std::vector<int> perRun(3, 0);
  for (const KernelEvent &e : profiler.kernels())
    ++perRun[size_t(e.run)];
  EXPECT_EQ(perRun, (std::vector<int>{10, 8, 8})); // the adds run once
}

} // namespace
