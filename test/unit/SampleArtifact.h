//===- SampleArtifact.h - A small manifest exercising every field -*- C++ -*-//
#pragma once

#include "ingot/Artifact.h"

#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace ingot::testing {

/// Tensors of several dtypes (one empty, one scalar), every buffer kind,
/// steps with every Attr kind and an absent optional input, and model I/O
/// with symbolic dims. The steps name real kernels and match their
/// signatures (operands, dtypes, attribute names), since the loader refuses
/// anything else; the values are not meant to run.
inline Manifest sampleManifest() {
  Manifest m;
  m.compilerVersion = "ingot 0.1.0-test";
  m.modelName = "tiny";
  m.targets = {"cpu"};
  auto tensor = [&](std::string name, DType t, std::vector<int64_t> shape) {
    TensorEntry e;
    e.name = std::move(name), e.dtype = t, e.shape = std::move(shape);
    m.tensors.push_back(e);
  };
  tensor("w", DType::F32, {4, 3});
  tensor("b", DType::F16, {3});
  tensor("idx", DType::I64, {2, 2});
  tensor("mask", DType::Bool, {5});
  tensor("empty", DType::F32, {0, 4});
  tensor("scale", DType::BF16, {});
  m.tensors[2].layout = "nk16";
  m.symbols = {{"batch", 8}, {"tokens", 16}};

  auto buffer = [&](BufferKind k, DType t, std::vector<int64_t> shape,
                    uint64_t bytes, std::string name) -> Buffer & {
    Buffer b;
    b.id = uint32_t(m.buffers.size()), b.kind = k, b.dtype = t;
    b.rank = uint32_t(shape.size()), b.maxShape = std::move(shape);
    b.maxBytes = bytes, b.name = std::move(name);
    m.buffers.push_back(b);
    return m.buffers.back();
  };
  buffer(BufferKind::Input, DType::F32, {8, 4}, 128, "x").ioIndex = 0;
  buffer(BufferKind::Input, DType::I64, {16}, 128, "ids").ioIndex = 1;
  buffer(BufferKind::Param, DType::F32, {4, 3}, 48, "w").tensorIndex = 0;
  buffer(BufferKind::Param, DType::F16, {3}, 6, "b").tensorIndex = 1;
  buffer(BufferKind::Arena, DType::F32, {8, 3}, 96, "h").arenaOffset = 0;
  buffer(BufferKind::Arena, DType::F32, {8, 3}, 96, "y").arenaOffset = 128;
  m.memory.arenaBytes = 256;
  m.memory.arenaLowerBoundBytes = 192;
  m.memory.arenaNaiveBytes = 192;
  m.memory.kvCacheBytes = 4096;
  m.memory.overheadBytes = 1000;

  // Step 0 carries one attribute of every kind, on names resize reads.
  Step rs;
  rs.kernel = "resize", rs.origin = "blk0/Resize";
  rs.inputs = {0, 2}, rs.outputs = {4};
  Attr a;
  a.name = "exclude_outside", a.kind = Attr::Kind::Int, a.i = -7;
  rs.attrs.push_back(a);
  a = {}, a.name = "cubic_coeff_a", a.kind = Attr::Kind::Float, a.f = 0.5;
  rs.attrs.push_back(a);
  a = {}, a.name = "sizes", a.kind = Attr::Kind::Ints, a.ints = {1, 0, -3};
  rs.attrs.push_back(a);
  a = {}, a.name = "scales", a.kind = Attr::Kind::Floats;
  a.floats = {1.5, -0.0, 1e300};
  rs.attrs.push_back(a);
  a = {}, a.name = "mode", a.kind = Attr::Kind::Str, a.s = "fast \"q\"";
  rs.attrs.push_back(a);
  m.steps.push_back(rs);
  Step lin;
  lin.kernel = "linear", lin.origin = "blk0/Linear";
  lin.inputs = {4, 3, kNoBuffer}, lin.outputs = {5};
  m.steps.push_back(lin);

  IoSpec x;
  x.name = "x", x.dtype = DType::F32, x.buffer = 0;
  x.dims = {{-1, "batch"}, {4, ""}};
  IoSpec ids;
  ids.name = "ids", ids.dtype = DType::I64, ids.buffer = 1;
  ids.dims = {{-1, "tokens"}};
  m.inputs = {x, ids};
  IoSpec y;
  y.name = "y", y.dtype = DType::F32, y.buffer = 5;
  y.dims = {{-1, "batch"}, {3, ""}};
  m.outputs = {y};
  return m;
}

/// Deterministic contents for tensor `index` of `bytes` bytes.
inline uint8_t sampleByte(size_t index, uint64_t k) {
  return uint8_t(index * 31 + k * 7 + 1);
}

/// A producer that emits the sample bytes in awkward 7-byte chunks.
inline TensorProducer sampleProducer(size_t index, uint64_t bytes) {
  return [index, bytes](const ByteSink &sink) {
    uint8_t chunk[7];
    for (uint64_t k = 0; k < bytes;) {
      size_t n = 0;
      for (; n < sizeof chunk && k < bytes; ++n, ++k)
        chunk[n] = sampleByte(index, k);
      sink(chunk, n);
    }
    return Status::ok();
  };
}

inline uint64_t numelBytes(const TensorEntry &t) {
  uint64_t n = dtypeSize(t.dtype);
  for (int64_t d : t.shape)
    n *= uint64_t(d);
  return n;
}

inline ArtifactWriter sampleWriter(const Manifest &m) {
  ArtifactWriter w(m);
  for (size_t i = 0; i < m.tensors.size(); ++i)
    w.setTensorProducer(i, sampleProducer(i, numelBytes(m.tensors[i])));
  w.addCodeSection("cpu", {1, 2, 3, 4, 5});
  return w;
}

inline bool sameBits(double a, double b) {
  return !std::memcmp(&a, &b, sizeof a);
}

/// Field-by-field equality, doubles compared bit for bit.
/// Field-by-field equality of the GPU targets' code objects and kernels.
inline void expectSameGpuTargets(const Manifest &a, const Manifest &b) {
  ASSERT_EQ(a.gpuTargets.size(), b.gpuTargets.size());
  for (size_t i = 0; i < a.gpuTargets.size(); ++i) {
    const GpuTarget &x = a.gpuTargets[i], &y = b.gpuTargets[i];
    EXPECT_EQ(x.name, y.name);
    ASSERT_EQ(x.objects.size(), y.objects.size());
    for (size_t k = 0; k < x.objects.size(); ++k) {
      EXPECT_EQ(x.objects[k].arch, y.objects[k].arch);
      EXPECT_EQ(x.objects[k].format, y.objects[k].format);
      EXPECT_EQ(x.objects[k].offset, y.objects[k].offset);
      EXPECT_EQ(x.objects[k].bytes, y.objects[k].bytes);
    }
    ASSERT_EQ(x.kernels.size(), y.kernels.size());
    for (size_t k = 0; k < x.kernels.size(); ++k) {
      const GpuKernel &p = x.kernels[k], &q = y.kernels[k];
      EXPECT_EQ(p.step, q.step);
      EXPECT_EQ(p.symbol, q.symbol);
      EXPECT_EQ(p.blockX, q.blockX);
      EXPECT_EQ(p.gridOperand, q.gridOperand);
      EXPECT_EQ(p.sharedBytes, q.sharedBytes);
      ASSERT_EQ(p.args.size(), q.args.size());
      for (size_t j = 0; j < p.args.size(); ++j) {
        EXPECT_EQ(p.args[j].kind, q.args[j].kind);
        EXPECT_EQ(p.args[j].operand, q.args[j].operand);
        EXPECT_EQ(p.args[j].axis, q.args[j].axis);
      }
      EXPECT_EQ(p.grid, q.grid);
    }
  }
}

inline void expectSameManifest(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.formatVersion, b.formatVersion);
  EXPECT_EQ(a.compilerVersion, b.compilerVersion);
  EXPECT_EQ(a.modelName, b.modelName);
  EXPECT_EQ(a.targets, b.targets);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const TensorEntry &x = a.tensors[i], &y = b.tensors[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.layout, y.layout);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.groupSize, y.groupSize);
    EXPECT_EQ(x.external, y.external);
    EXPECT_EQ(x.transform.parts, y.transform.parts);
    EXPECT_EQ(x.transform.concatAxis, y.transform.concatAxis);
    EXPECT_EQ(x.transform.sourceType, y.transform.sourceType);
  }
  EXPECT_EQ(a.externalWeights.files, b.externalWeights.files);
  EXPECT_EQ(a.externalWeights.spaceBytes, b.externalWeights.spaceBytes);
  ASSERT_EQ(a.externalWeights.tensors.size(), b.externalWeights.tensors.size());
  for (size_t i = 0; i < a.externalWeights.tensors.size(); ++i) {
    const SourceTensor &x = a.externalWeights.tensors[i],
                       &y = b.externalWeights.tensors[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.file, y.file);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.shape, y.shape);
  }
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const Buffer &x = a.buffers[i], &y = b.buffers[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.rank, y.rank);
    EXPECT_EQ(x.maxShape, y.maxShape);
    EXPECT_EQ(x.maxBytes, y.maxBytes);
    EXPECT_EQ(x.arenaOffset, y.arenaOffset);
    EXPECT_EQ(x.tensorIndex, y.tensorIndex);
    EXPECT_EQ(x.ioIndex, y.ioIndex);
    EXPECT_EQ(x.name, y.name);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const Step &x = a.steps[i], &y = b.steps[i];
    EXPECT_EQ(x.kernel, y.kernel);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.origin, y.origin);
    ASSERT_EQ(x.attrs.size(), y.attrs.size());
    for (size_t k = 0; k < x.attrs.size(); ++k) {
      const Attr &p = x.attrs[k], &q = y.attrs[k];
      EXPECT_EQ(p.name, q.name);
      EXPECT_EQ(p.kind, q.kind);
      EXPECT_EQ(p.i, q.i);
      EXPECT_TRUE(sameBits(p.f, q.f));
      EXPECT_EQ(p.ints, q.ints);
      ASSERT_EQ(p.floats.size(), q.floats.size());
      for (size_t j = 0; j < p.floats.size(); ++j)
        EXPECT_TRUE(sameBits(p.floats[j], q.floats[j]));
      EXPECT_EQ(p.s, q.s);
    }
  }
  for (int out = 0; out < 2; ++out) {
    const auto &xs = out ? a.outputs : a.inputs,
               &ys = out ? b.outputs : b.inputs;
    ASSERT_EQ(xs.size(), ys.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(xs[i].name, ys[i].name);
      EXPECT_EQ(xs[i].dtype, ys[i].dtype);
      EXPECT_EQ(xs[i].buffer, ys[i].buffer);
      ASSERT_EQ(xs[i].dims.size(), ys[i].dims.size());
      for (size_t d = 0; d < xs[i].dims.size(); ++d) {
        EXPECT_EQ(xs[i].dims[d].size, ys[i].dims[d].size);
        EXPECT_EQ(xs[i].dims[d].symbol, ys[i].dims[d].symbol);
      }
    }
  }
  ASSERT_EQ(a.symbols.size(), b.symbols.size());
  for (size_t i = 0; i < a.symbols.size(); ++i) {
    EXPECT_EQ(a.symbols[i].name, b.symbols[i].name);
    EXPECT_EQ(a.symbols[i].max, b.symbols[i].max);
  }
  EXPECT_EQ(a.memory.weightsBytes, b.memory.weightsBytes);
  EXPECT_EQ(a.memory.arenaBytes, b.memory.arenaBytes);
  EXPECT_EQ(a.memory.arenaLowerBoundBytes, b.memory.arenaLowerBoundBytes);
  EXPECT_EQ(a.memory.arenaNaiveBytes, b.memory.arenaNaiveBytes);
  EXPECT_EQ(a.memory.kvCacheBytes, b.memory.kvCacheBytes);
  EXPECT_EQ(a.memory.overheadBytes, b.memory.overheadBytes);
  expectSameGpuTargets(a, b);
}

/// Field-by-field equality of the LLM parts (hasLlm, llm, tokenizer,
/// generation), floating point compared bit for bit.
inline void expectSameLlm(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.hasLlm, b.hasLlm);
  const LlmConfig &x = a.llm, &y = b.llm;
  EXPECT_EQ(x.architecture, y.architecture);
  EXPECT_EQ(x.numLayers, y.numLayers);
  EXPECT_EQ(x.hiddenSize, y.hiddenSize);
  EXPECT_EQ(x.numHeads, y.numHeads);
  EXPECT_EQ(x.numKvHeads, y.numKvHeads);
  EXPECT_EQ(x.headDim, y.headDim);
  EXPECT_EQ(x.vocabSize, y.vocabSize);
  EXPECT_EQ(x.maxPositions, y.maxPositions);
  EXPECT_EQ(x.blockSize, y.blockSize);
  EXPECT_EQ(x.maxTokensPerStep, y.maxTokensPerStep);
  EXPECT_EQ(x.maxSeqs, y.maxSeqs);
  EXPECT_EQ(x.maxBlocksPerSeq, y.maxBlocksPerSeq);
  EXPECT_EQ(x.kvDtype, y.kvDtype);
  EXPECT_EQ(x.kvLayout, y.kvLayout);
  const TokenizerData &p = a.tokenizer, &q = b.tokenizer;
  EXPECT_EQ(p.model, q.model);
  EXPECT_EQ(p.vocab, q.vocab);
  EXPECT_EQ(p.merges, q.merges);
  ASSERT_EQ(p.scores.size(), q.scores.size());
  if (!p.scores.empty()) // memcmp's pointers must not be null, even for 0
    EXPECT_EQ(std::memcmp(p.scores.data(), q.scores.data(),
                          p.scores.size() * sizeof(float)),
              0);
  EXPECT_EQ(p.byteFallback, q.byteFallback);
  EXPECT_EQ(p.unkId, q.unkId);
  EXPECT_EQ(p.fuseUnk, q.fuseUnk);
  ASSERT_EQ(p.addedTokens.size(), q.addedTokens.size());
  for (size_t i = 0; i < p.addedTokens.size(); ++i) {
    EXPECT_EQ(p.addedTokens[i].id, q.addedTokens[i].id);
    EXPECT_EQ(p.addedTokens[i].content, q.addedTokens[i].content);
    EXPECT_EQ(p.addedTokens[i].special, q.addedTokens[i].special);
  }
  EXPECT_EQ(p.pretokenizer, q.pretokenizer);
  EXPECT_EQ(p.decoder, q.decoder);
  EXPECT_EQ(p.bosId, q.bosId);
  EXPECT_EQ(p.eosId, q.eosId);
  EXPECT_EQ(p.addBos, q.addBos);
  EXPECT_EQ(p.chatTemplate, q.chatTemplate);
  const GenerationDefaults &g = a.generation, &h = b.generation;
  EXPECT_TRUE(sameBits(g.temperature, h.temperature));
  EXPECT_EQ(g.topK, h.topK);
  EXPECT_TRUE(sameBits(g.topP, h.topP));
  EXPECT_EQ(g.eosIds, h.eosIds);
  EXPECT_EQ(g.maxNewTokens, h.maxNewTokens);
}

} // namespace ingot::testing
