//===- ExecutorTest.cpp - Running a written artifact end to end -----------===//
//
// Builds a small MLP plan (params, an input with a symbolic batch dim, arena
// buffers reused in place), writes it with ArtifactWriter, opens it with
// Artifact::open and checks the outputs against a double-precision
// reference; then checks the messages for every kind of bad input and for
// plan problems found at run time.
//
//===----------------------------------------------------------------------===//

#include "ingot/Executor.h"
#include "ingot/Artifact.h"
#include "ingot/Profiler.h"
#include "ingot/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

using namespace ingot;

namespace {

constexpr int64_t kIn = 8, kHidden = 32, kOut = 4, kMaxBatch = 16;

std::vector<float> randomFloats(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> d{-1.0f, 1.0f};
  std::vector<float> v(n);
  for (float &x : v)
    x = d(gen);
  return v;
}

struct Mlp {
  Manifest manifest;
  std::vector<std::vector<float>> weights; // per tensor
};

Attr intAttr(const std::string &name, int64_t v) {
  Attr a;
  a.name = name;
  a.kind = Attr::Kind::Int;
  a.i = v;
  return a;
}

/// y = softmax(layer_norm(relu(x @ w1 + b1), ln) @ w2 + b2) * s, where
/// x: float32[batch,8], s: float32[batch,1]. Outputs: probs, logits, the
/// input x echoed back, and the param b2.
Mlp buildMlp() {
  Mlp mlp;
  Manifest &m = mlp.manifest;
  m.modelName = "mlp";
  m.compilerVersion = "test";
  m.targets = {"cpu"};
  m.symbols = {{"batch", kMaxBatch}};
  auto tensor = [&](const std::string &name, std::vector<int64_t> shape,
                    uint64_t seed) {
    TensorEntry t;
    t.name = name;
    t.shape = shape;
    m.tensors.push_back(t);
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    mlp.weights.push_back(randomFloats(n, seed));
  };
  tensor("w1", {kIn, kHidden}, 11);
  tensor("b1", {kHidden}, 12);
  tensor("ln", {kHidden}, 13);
  tensor("w2", {kHidden, kOut}, 14);
  tensor("b2", {kOut}, 15);
  auto buffer = [&](BufferKind kind, std::string name,
                    std::vector<int64_t> maxShape) -> Buffer & {
    Buffer b;
    b.id = uint32_t(m.buffers.size());
    b.kind = kind;
    b.name = std::move(name);
    b.rank = uint32_t(maxShape.size());
    b.maxShape = std::move(maxShape);
    m.buffers.push_back(b);
    return m.buffers.back();
  };
  buffer(BufferKind::Input, "x", {kMaxBatch, kIn}).ioIndex = 0; // 0
  buffer(BufferKind::Input, "s", {kMaxBatch, 1}).ioIndex = 1;   // 1
  for (int i = 0; i < 5; ++i)                                   // 2..6
    buffer(BufferKind::Param, m.tensors[i].name, m.tensors[i].shape)
        .tensorIndex = i;
  auto arena = [&](const std::string &name, int64_t cols, uint64_t offset) {
    Buffer &b = buffer(BufferKind::Arena, name, {kMaxBatch, cols});
    b.maxBytes = kMaxBatch * cols * 4;
    b.arenaOffset = offset;
  };
  const uint64_t hBytes = kMaxBatch * kHidden * 4; // 2048, 64-B multiple
  arena("h0", kHidden, 0);                         // 7  matmul
  arena("h1", kHidden, 0);                         // 8  add, in place over h0
  arena("h2", kHidden, 0);                         // 9  relu, in place
  arena("h3", kHidden, hBytes);                    // 10 layer_norm
  arena("logits", kOut, 0);     // 11 matmul (h2 is dead by now)
  arena("logits_b", kOut, 256); // 12 add
  arena("probs", kOut, 512);    // 13 softmax
  arena("scaled", kOut, 768);   // 14 mul
  m.memory.arenaBytes = 2 * hBytes;

  auto step = [&](std::string kernel, std::vector<uint32_t> in, uint32_t out,
                  std::vector<Attr> attrs = {}) {
    Step s;
    s.kernel = std::move(kernel);
    s.origin = "mlp/" + s.kernel + std::to_string(m.steps.size());
    s.inputs = std::move(in);
    s.outputs = {out};
    s.attrs = std::move(attrs);
    m.steps.push_back(s);
  };
  step("matmul", {0, 2}, 7);
  step("add", {7, 3}, 8);
  step("relu", {8}, 9);
  step("layer_norm", {9, 4, kNoBuffer}, 10, {intAttr("axis", -1)});
  step("matmul", {10, 5}, 11);
  step("add", {11, 6}, 12);
  step("softmax", {12}, 13, {intAttr("axis", 1)});
  step("mul", {13, 1}, 14);

  IoSpec x{"x", DType::F32, {{-1, "batch"}, {kIn, ""}}, 0};
  IoSpec s{"s", DType::F32, {{-1, "batch"}, {1, ""}}, 1};
  m.inputs = {x, s};
  m.outputs = {{"probs", DType::F32, {{-1, "batch"}, {kOut, ""}}, 14},
               {"logits/raw", DType::F32, {{-1, "batch"}, {kOut, ""}}, 12},
               {"x_echo", DType::F32, {{-1, "batch"}, {kIn, ""}}, 0},
               {"b2", DType::F32, {{kOut, ""}}, 6}};
  return mlp;
}

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("ingot-executor-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

/// Writes and opens an artifact for `mlp`.
std::unique_ptr<Artifact> writeAndOpen(const Mlp &mlp,
                                       const std::string &name) {
  ArtifactWriter w(mlp.manifest);
  for (size_t i = 0; i < mlp.weights.size(); ++i) {
    const std::vector<float> &v = mlp.weights[i];
    w.setTensorProducer(i, [&v](const ByteSink &sink) {
      sink(v.data(), v.size() * sizeof(float));
      return Status::ok();
    });
  }
  std::string path = tempPath(name);
  Status s = w.write(path);
  EXPECT_TRUE(s.isOk()) << s.message();
  std::unique_ptr<Artifact> art;
  s = Artifact::open(path, &art);
  EXPECT_TRUE(s.isOk()) << s.message();
  std::filesystem::remove(path); // the mapping stays valid
  return art;
}

HostTensor f32Tensor(std::vector<int64_t> shape, const std::vector<float> &v) {
  HostTensor t;
  t.shape = std::move(shape);
  t.data.resize(v.size() * 4);
  if (!v.empty())
    std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

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
    Mlp mlp = buildMlp();
    mlp.manifest.steps[2].kernel = "frobnicate";
    auto art = writeAndOpen(mlp, "unknown-kernel.ingot");
    ThreadPool pool(1);
    Executor exec(*art, pool);
    expectMessage(
        runWith(exec, {{"x", f32Tensor({1, 8}, std::vector<float>(8))},
                       {"s", f32Tensor({1, 1}, {1})}}),
        {"unknown kernel 'frobnicate'", "mlp/relu2", "matmul"});
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
