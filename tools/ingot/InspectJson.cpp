//===- InspectJson.cpp - `ingot inspect --json` ---------------------------===//
#include "Inspect.h"
#include "ingot/Quant.h"

#include "JsonText.h"

#include <vector>

namespace ingot::cli {

const char *kindName(BufferKind k) {
  switch (k) {
  case BufferKind::Input:
    return "input";
  case BufferKind::Param:
    return "param";
  case BufferKind::Arena:
    return "arena";
  case BufferKind::Dynamic:
    return "dynamic";
  }
  return "unknown";
}

/// A dynamic dim's name; "?" when the compiler did not name it.
std::string dimSymbol(const Dim &d) {
  return d.symbol.empty() ? std::string("?") : d.symbol;
}

uint64_t totalBytes(const MemorySummary &m) {
  return m.weightsBytes + m.arenaBytes + m.kvCacheBytes + m.overheadBytes;
}

namespace {

//===--- JSON -------------------------------------------------------------===//

OrderedJson jsonIo(const std::vector<IoSpec> &specs) {
  OrderedJson list = OrderedJson::array();
  for (const IoSpec &io : specs) {
    OrderedJson shape = OrderedJson::array();
    for (const Dim &d : io.dims)
      shape.push_back(d.size >= 0 ? OrderedJson(d.size)
                                  : OrderedJson(dimSymbol(d)));
    list.push_back({{"name", io.name},
                    {"dtype", dtypeName(io.dtype)},
                    {"shape", std::move(shape)},
                    {"buffer", io.buffer}});
  }
  return list;
}

OrderedJson jsonAttr(const Attr &a) {
  switch (a.kind) {
  case Attr::Kind::Int:
    return a.i;
  case Attr::Kind::Float:
    return finiteOrNull(a.f);
  case Attr::Kind::Str:
    return a.s;
  case Attr::Kind::Ints:
    return a.ints;
  case Attr::Kind::Floats: {
    OrderedJson list = OrderedJson::array();
    for (double f : a.floats)
      list.push_back(finiteOrNull(f));
    return list;
  }
  }
  return nullptr;
}

OrderedJson jsonIds(const std::vector<uint32_t> &ids) {
  OrderedJson list = OrderedJson::array();
  for (uint32_t id : ids)
    list.push_back(id == kNoBuffer ? OrderedJson(nullptr) : OrderedJson(id));
  return list;
}

OrderedJson jsonTensors(const Manifest &m) {
  OrderedJson list = OrderedJson::array();
  for (const TensorEntry &t : m.tensors) {
    OrderedJson e = {{"name", t.name},     {"dtype", dtypeName(t.dtype)},
                     {"shape", t.shape},   {"bytes", t.bytes},
                     {"offset", t.offset}, {"layout", t.layout}};
    if (t.external)
      e["made_from"] = {{"parts", t.transform.parts},
                        {"concat_axis", t.transform.concatAxis},
                        {"source_dtype", dtypeName(t.transform.sourceType)}};
    if (isQuantDType(t.dtype)) {
      e["group_size"] = t.groupSize;
      e["bits_per_weight"] = finiteOrNull(quantBitsPerWeight(
          t.dtype, t.shape.size() == 2 ? t.shape[1] : 0, t.groupSize));
    }
    list.push_back(std::move(e));
  }
  return list;
}

OrderedJson jsonWeightFormats(const Manifest &m) {
  OrderedJson list = OrderedJson::array();
  for (const WeightFormatTotal &f : weightFormats(m)) {
    OrderedJson e = {{"format", f.format}};
    // One group per row in every tensor: "channel", whatever their K.
    if (f.groupSize != 0 && f.perChannel)
      e["group_size"] = "channel";
    else if (f.groupSize > 0)
      e["group_size"] = f.groupSize;
    else if (f.groupSize < 0)
      e["group_size"] = "mixed";
    e["tensors"] = f.tensors, e["elements"] = f.elements;
    e["bytes"] = f.bytes;
    e["bits_per_weight"] = finiteOrNull(f.bitsPerWeight());
    list.push_back(std::move(e));
  }
  return list;
}

OrderedJson jsonBuffers(const Manifest &m) {
  OrderedJson list = OrderedJson::array();
  for (const Buffer &b : m.buffers) {
    OrderedJson e = {{"id", b.id},
                     {"name", b.name},
                     {"kind", kindName(b.kind)},
                     {"dtype", dtypeName(b.dtype)},
                     {"max_shape", b.maxShape},
                     {"max_bytes", b.maxBytes},
                     {"arena_offset", b.kind == BufferKind::Arena
                                          ? OrderedJson(b.arenaOffset)
                                          : OrderedJson(nullptr)}};
    if (b.kind == BufferKind::Param)
      e["tensor"] = b.tensorIndex;
    if (b.kind == BufferKind::Input)
      e["input"] = b.ioIndex;
    list.push_back(std::move(e));
  }
  return list;
}

OrderedJson jsonSteps(const Manifest &m) {
  OrderedJson list = OrderedJson::array();
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &s = m.steps[i];
    OrderedJson attrs = OrderedJson::object();
    for (const Attr &a : s.attrs)
      attrs[a.name] = jsonAttr(a);
    list.push_back({{"index", i},
                    {"kernel", s.kernel},
                    {"origin", s.origin},
                    {"inputs", jsonIds(s.inputs)},
                    {"outputs", jsonIds(s.outputs)},
                    {"attrs", std::move(attrs)}});
  }
  return list;
}

OrderedJson jsonMemory(const MemorySummary &mem, const MemoryFootprint &fp) {
  return {{"weights_bytes", mem.weightsBytes},
          {"arena_bytes", mem.arenaBytes},
          {"arena_lower_bound_bytes", mem.arenaLowerBoundBytes},
          {"arena_naive_bytes", mem.arenaNaiveBytes},
          {"kv_cache_bytes", mem.kvCacheBytes},
          {"overhead_bytes", mem.overheadBytes},
          {"total_bytes", totalBytes(mem)},
          // What serving takes at the engine's KV budget (MemoryFootprint.h).
          {"kv_blocks", fp.kvBlocks},
          {"kv_tokens", fp.kvTokens},
          {"kv_budget_bytes", fp.kvBytes},
          {"weight_derived_bytes", fp.weightDerivedBytes},
          {"manifest_bytes", fp.manifestBytes},
          {"step_io_bytes", fp.stepIoBytes},
          {"thread_scratch_bytes", fp.threadScratchBytes},
          {"threads", fp.threads},
          {"runtime_overhead_bytes", fp.overheadBytes},
          {"provision_total_bytes", fp.totalBytes}};
}

} // namespace

std::string inspectJson(const Artifact &art, const MemoryFootprint &fp) {
  const Manifest &m = art.manifest();
  OrderedJson o = {{"path", art.path()},
                   {"file_size", art.fileSize()},
                   {"format_version", m.formatVersion},
                   {"compiler_version", m.compilerVersion},
                   {"model", m.modelName},
                   {"targets", m.targets}};
  if (m.hasLlm) { // the KV-cache geometry serving needs
    const LlmConfig &l = m.llm;
    o["llm"] = {{"architecture", l.architecture},
                {"num_layers", l.numLayers},
                {"num_heads", l.numHeads},
                {"num_kv_heads", l.numKvHeads},
                {"head_dim", l.headDim},
                {"block_size", l.blockSize},
                {"kv_dtype", dtypeName(l.kvDtype)},
                {"kv_layout", l.kvLayout}};
  }
  OrderedJson sections = OrderedJson::array();
  for (const Artifact::SectionInfo &s : art.sections())
    sections.push_back(
        {{"name", s.name}, {"offset", s.offset}, {"size", s.size}});
  o["sections"] = std::move(sections);
  o["inputs"] = jsonIo(m.inputs);
  o["outputs"] = jsonIo(m.outputs);
  OrderedJson symbols = OrderedJson::object();
  for (const SymbolBound &s : m.symbols)
    symbols[s.name] = s.max;
  o["symbols"] = std::move(symbols);
  o["tensors"] = jsonTensors(m);
  o["weight_formats"] = jsonWeightFormats(m);
  auto weight = [](const TensorEntry &t) {
    OrderedJson e = {{"tensor", t.name}, {"format", dtypeName(t.dtype)}};
    if (t.groupSize)
      e["group_size"] = t.groupSize;
    return e;
  };
  const TensorEntry *head = lmHeadWeight(m);
  if (head)
    o["lm_head"] = weight(*head);
  if (const TensorEntry *table = embeddingTable(m)) {
    o["embedding"] = weight(*table);
    o["embedding"]["shared_with_lm_head"] = table == head;
  }
  o["buffers"] = jsonBuffers(m);
  o["steps"] = jsonSteps(m);
  o["memory"] = jsonMemory(m.memory, fp);
  o["gpu_targets"] = jsonGpuTargets(art);
  if (!m.externalWeights.empty()) {
    OrderedJson sources = OrderedJson::array();
    for (const SourceTensor &t : m.externalWeights.tensors)
      sources.push_back({{"name", t.name},
                         {"file", m.externalWeights.files[t.file]},
                         {"dtype", t.dtype},
                         {"shape", t.shape}});
    o["external_weights"] = {{"files", m.externalWeights.files},
                             {"source_tensors", std::move(sources)},
                             {"space_bytes", m.externalWeights.spaceBytes}};
  }
  return jsonText(o, 2) + '\n';
}

} // namespace ingot::cli
