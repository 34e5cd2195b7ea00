//===- ManifestEncode.cpp - Manifest -> FlatBuffers (manifest.fbs) --------===//
//
// The output is a deterministic function of the Manifest: tables are built
// in a fixed order by the generated Create* functions, strings are never
// shared, nothing depends on time or addresses. ForceDefaults stays off, so
// a scalar equal to its schema default is not written (the schema defaults
// are the C++ struct's); an empty string or vector, or a string equal to
// the struct's default, is not written either and decodes back to it.
//
//===----------------------------------------------------------------------===//
#include "ManifestSchema.h"

#include "ingot/ArtifactWriter.h"

#include <algorithm>
#include <cmath>

namespace ingot {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

fb::DType toFb(DType t) { return fb::DType(uint8_t(t)); }

/// Absent (null offset) when `s` equals the field's default.
Offset<flatbuffers::String> str(FlatBufferBuilder &b, const std::string &s,
                                const char *def = "") {
  return s == def ? 0 : b.CreateString(s);
}

/// Absent when empty: an absent vector decodes as an empty one.
template <typename T>
Offset<flatbuffers::Vector<T>> vec(FlatBufferBuilder &b,
                                   const std::vector<T> &v) {
  return v.empty() ? 0 : b.CreateVector(v);
}

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>>
strings(FlatBufferBuilder &b, const std::vector<std::string> &v) {
  return v.empty() ? 0 : b.CreateVectorOfStrings(v);
}

/// Vector of tables, each made by `one`; absent when empty.
template <typename T, typename Fn>
auto tables(FlatBufferBuilder &b, const std::vector<T> &v, Fn one)
    -> Offset<flatbuffers::Vector<decltype(one(b, v[0]))>> {
  using Elem = decltype(one(b, v[0]));
  if (v.empty())
    return 0;
  std::vector<Elem> offsets;
  offsets.reserve(v.size());
  for (const T &x : v)
    offsets.push_back(one(b, x));
  return b.CreateVector(offsets);
}

Offset<fb::WeightTransform> transform(FlatBufferBuilder &b,
                                      const WeightTransform &w) {
  auto parts = strings(b, w.parts);
  return fb::CreateWeightTransform(b, parts, w.concatAxis, toFb(w.sourceType));
}

Offset<fb::TensorEntry> tensor(FlatBufferBuilder &b, const TensorEntry &t) {
  auto name = str(b, t.name);
  auto shape = vec(b, t.shape);
  auto layout = str(b, t.layout, "row-major");
  auto external = t.external ? transform(b, t.transform) : 0;
  return fb::CreateTensorEntry(b, name, toFb(t.dtype), shape, layout, t.offset,
                               t.bytes, t.groupSize, external);
}

Offset<fb::SourceTensor> sourceTensor(FlatBufferBuilder &b,
                                      const SourceTensor &t) {
  auto name = str(b, t.name);
  auto dtype = str(b, t.dtype);
  auto shape = vec(b, t.shape);
  return fb::CreateSourceTensor(b, name, t.file, dtype, shape);
}

/// Absent when every weight is in the file.
Offset<fb::ExternalWeights> externalWeights(FlatBufferBuilder &b,
                                            const ExternalWeights &w) {
  if (w.empty())
    return 0;
  auto files = strings(b, w.files);
  auto tensors = tables(b, w.tensors, sourceTensor);
  return fb::CreateExternalWeights(b, files, tensors, w.spaceBytes);
}

Offset<fb::Buffer> buffer(FlatBufferBuilder &b, const Buffer &x) {
  auto shape = vec(b, x.maxShape);
  auto name = str(b, x.name);
  return fb::CreateBuffer(b, x.id, fb::BufferKind(uint8_t(x.kind)),
                          toFb(x.dtype), x.rank, shape, x.maxBytes,
                          x.arenaOffset, x.tensorIndex, x.ioIndex, name);
}

Offset<fb::Attr> attr(FlatBufferBuilder &b, const Attr &a) {
  auto name = str(b, a.name);
  auto ints = vec(b, a.ints);
  auto floats = vec(b, a.floats);
  auto s = str(b, a.s);
  fb::AttrBuilder ab(b);
  ab.add_name(name);
  ab.add_kind(fb::AttrKind(uint8_t(a.kind)));
  ab.add_i(a.i);
  // -0.0 compares equal to the default 0.0 but must keep its sign bit.
  const bool negZero = a.f == 0 && std::signbit(a.f);
  b.ForceDefaults(negZero);
  ab.add_f(a.f);
  b.ForceDefaults(false);
  ab.add_ints(ints);
  ab.add_floats(floats);
  ab.add_s(s);
  return ab.Finish();
}

Offset<fb::Step> step(FlatBufferBuilder &b, const Step &s) {
  auto kernel = str(b, s.kernel);
  auto inputs = vec(b, s.inputs);
  auto outputs = vec(b, s.outputs);
  auto attrs = tables(b, s.attrs, attr);
  auto origin = str(b, s.origin);
  return fb::CreateStep(b, kernel, inputs, outputs, attrs, origin);
}

Offset<fb::Dim> dim(FlatBufferBuilder &b, const Dim &d) {
  auto symbol = str(b, d.symbol);
  return fb::CreateDim(b, d.size, symbol);
}

Offset<fb::IoSpec> io(FlatBufferBuilder &b, const IoSpec &x) {
  auto name = str(b, x.name);
  auto dims = tables(b, x.dims, dim);
  return fb::CreateIoSpec(b, name, toFb(x.dtype), dims, x.buffer);
}

Offset<fb::SymbolBound> symbol(FlatBufferBuilder &b, const SymbolBound &s) {
  auto name = str(b, s.name);
  return fb::CreateSymbolBound(b, name, s.max);
}

Offset<fb::LlmConfig> llm(FlatBufferBuilder &b, const LlmConfig &l) {
  const LlmConfig d;
  auto arch = str(b, l.architecture, d.architecture.c_str());
  auto layout = str(b, l.kvLayout, d.kvLayout.c_str());
  return fb::CreateLlmConfig(
      b, arch, l.numLayers, l.hiddenSize, l.numHeads, l.numKvHeads, l.headDim,
      l.vocabSize, l.maxPositions, l.blockSize, l.maxTokensPerStep, l.maxSeqs,
      l.maxBlocksPerSeq, toFb(l.kvDtype), layout);
}

Offset<fb::AddedToken> addedToken(FlatBufferBuilder &b,
                                  const TokenizerData::AddedToken &a) {
  auto content = str(b, a.content);
  return fb::CreateAddedToken(b, a.id, content, a.special);
}

Offset<fb::TokenizerData> tokenizer(FlatBufferBuilder &b,
                                    const TokenizerData &t) {
  const TokenizerData d;
  auto model = str(b, t.model, d.model.c_str());
  std::vector<uint8_t> text;
  std::vector<uint32_t> ends;
  ends.reserve(t.vocab.size());
  for (const std::string &token : t.vocab) {
    text.insert(text.end(), token.begin(), token.end());
    ends.push_back(uint32_t(text.size()));
  }
  auto vocabText = vec(b, text);
  auto vocabEnds = vec(b, ends);
  Offset<flatbuffers::Vector<const fb::Merge *>> merges = 0;
  Offset<flatbuffers::Vector<uint16_t>> merges16 = 0;
  const bool narrow =
      std::all_of(t.merges.begin(), t.merges.end(), [](auto pair) {
        return uint32_t(pair.first) <= 0xffff &&
               uint32_t(pair.second) <= 0xffff;
      });
  if (narrow && !t.merges.empty()) {
    std::vector<uint16_t> flat;
    flat.reserve(2 * t.merges.size());
    for (auto [left, right] : t.merges) {
      flat.push_back(uint16_t(left));
      flat.push_back(uint16_t(right));
    }
    merges16 = b.CreateVector(flat);
  } else if (!t.merges.empty()) {
    std::vector<fb::Merge> pairs;
    pairs.reserve(t.merges.size());
    for (auto [left, right] : t.merges)
      pairs.emplace_back(left, right);
    merges = b.CreateVectorOfStructs(pairs);
  }
  auto scores = vec(b, t.scores);
  auto added = tables(b, t.addedTokens, addedToken);
  auto pre = str(b, t.pretokenizer, d.pretokenizer.c_str());
  auto decoder = str(b, t.decoder, d.decoder.c_str());
  auto chat = str(b, t.chatTemplate, d.chatTemplate.c_str());
  return fb::CreateTokenizerData(b, model, vocabText, vocabEnds, merges, scores,
                                 t.byteFallback, t.unkId, t.fuseUnk, added, pre,
                                 decoder, t.bosId, t.eosId, t.addBos, chat,
                                 merges16);
}

Offset<fb::GenerationDefaults> generation(FlatBufferBuilder &b,
                                          const GenerationDefaults &g) {
  auto eos = vec(b, g.eosIds);
  return fb::CreateGenerationDefaults(b, g.temperature, g.topK, g.topP, eos,
                                      g.maxNewTokens);
}

Offset<fb::MemorySummary> memory(FlatBufferBuilder &b, const MemorySummary &m) {
  return fb::CreateMemorySummary(b, m.weightsBytes, m.arenaBytes,
                                 m.arenaLowerBoundBytes, m.arenaNaiveBytes,
                                 m.kvCacheBytes, m.overheadBytes);
}

Offset<fb::GpuKernel> gpuKernel(FlatBufferBuilder &b, const GpuKernel &k) {
  auto symbol = str(b, k.symbol);
  std::vector<fb::GpuArg> args;
  args.reserve(k.args.size());
  for (const GpuArg &a : k.args)
    args.emplace_back(uint8_t(a.kind), a.operand, a.axis);
  auto argv = args.empty() ? 0 : b.CreateVectorOfStructs(args);
  std::vector<fb::GpuGridDim> grid;
  for (const GpuGridDim &d : k.grid)
    grid.emplace_back(d.operand, d.extent, d.divisor);
  auto gridv = grid.empty() ? 0 : b.CreateVectorOfStructs(grid);
  return fb::CreateGpuKernel(b, k.step, symbol, k.blockX, k.gridOperand,
                             k.sharedBytes, argv, gridv);
}

Offset<fb::CodeObject> codeObject(FlatBufferBuilder &b, const CodeObject &c) {
  auto arch = str(b, c.arch);
  return fb::CreateCodeObject(b, arch, fb::CodeFormat(uint8_t(c.format)),
                              c.offset, c.bytes);
}

Offset<fb::GpuTarget> gpuTarget(FlatBufferBuilder &b, const GpuTarget &t) {
  auto name = str(b, t.name);
  auto objects = tables(b, t.objects, codeObject);
  auto kernels = tables(b, t.kernels, gpuKernel);
  return fb::CreateGpuTarget(b, name, objects, kernels);
}

} // namespace

std::vector<uint8_t> encodeManifest(const Manifest &m) {
  FlatBufferBuilder b(1024);
  b.ForceDefaults(false);
  auto compiler = str(b, m.compilerVersion);
  auto model = str(b, m.modelName);
  auto targets = strings(b, m.targets);
  auto tensors = tables(b, m.tensors, tensor);
  auto buffers = tables(b, m.buffers, buffer);
  auto steps = tables(b, m.steps, step);
  auto inputs = tables(b, m.inputs, io);
  auto outputs = tables(b, m.outputs, io);
  auto symbols = tables(b, m.symbols, symbol);
  auto mem = memory(b, m.memory);
  // Written whatever hasLlm says, so that decoding gives back exactly what
  // was encoded; with default values each is an empty table of a few bytes.
  auto l = llm(b, m.llm);
  auto t = tokenizer(b, m.tokenizer);
  auto g = generation(b, m.generation);
  auto gpu = tables(b, m.gpuTargets, gpuTarget);
  auto external = externalWeights(b, m.externalWeights);
  b.Finish(fb::CreateManifest(b, m.formatVersion, compiler, model, targets,
                              tensors, buffers, steps, inputs, outputs, symbols,
                              mem, m.hasLlm, l, t, g, gpu, external),
           fb::ManifestIdentifier());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

} // namespace ingot
