//===- ExecutorTestUtil.h - An MLP artifact for executor tests -*- C++ -*-===//
//
// Shared by ExecutorTest.cpp and ExecutorErrorsTest.cpp: an MLP plan (params,
// an input with a symbolic batch dim, arena buffers reused in place) written
// with ArtifactWriter and opened with Artifact::open.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelTestUtil.h"
#include "ingot/Artifact.h"
#include "ingot/Executor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace ingot::executor_test {

constexpr int64_t kIn = 8, kHidden = 32, kOut = 4, kMaxBatch = 16;

inline std::vector<float> randomFloats(size_t n, uint64_t seed) {
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

using test::intAttr; // KernelTestUtil.h

/// y = softmax(layer_norm(relu(x @ w1 + b1), ln) @ w2 + b2) * s, where
/// x: float32[batch,8], s: float32[batch,1]. Outputs: probs, logits, the
/// input x echoed back, and the param b2.
inline Mlp buildMlp() {
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

inline std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("ingot-executor-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

/// Writes and opens an artifact for `mlp`.
inline std::unique_ptr<Artifact> writeAndOpen(const Mlp &mlp,
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

inline HostTensor f32Tensor(std::vector<int64_t> shape,
                            const std::vector<float> &v) {
  HostTensor t;
  t.shape = std::move(shape);
  t.data.resize(v.size() * 4);
  if (!v.empty())
    std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

} // namespace ingot::executor_test
