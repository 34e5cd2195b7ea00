//===- InspectJson.cpp - `ingot inspect --json` ---------------------------===//
#include "Inspect.h"
#include "ingot/Quant.h"

#include "JsonWriter.h" // runtime-private helper

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

void jsonShape(json::Writer &w, const std::vector<int64_t> &shape) {
  w.beginArray(/*inlineItems=*/true);
  for (int64_t d : shape)
    w.value(d);
  w.endArray();
}

void jsonIo(json::Writer &w, const std::vector<IoSpec> &specs) {
  w.beginArray();
  for (const IoSpec &io : specs) {
    w.beginObject();
    w.field("name", io.name);
    w.field("dtype", dtypeName(io.dtype));
    w.key("shape");
    w.beginArray(true);
    for (const Dim &d : io.dims)
      d.size >= 0 ? w.value(d.size) : w.value(dimSymbol(d));
    w.endArray();
    w.field("buffer", io.buffer);
    w.endObject();
  }
  w.endArray();
}

void jsonAttr(json::Writer &w, const Attr &a) {
  w.key(a.name);
  switch (a.kind) {
  case Attr::Kind::Int:
    w.value(a.i);
    break;
  case Attr::Kind::Float:
    w.value(a.f);
    break;
  case Attr::Kind::Str:
    w.value(a.s);
    break;
  case Attr::Kind::Ints:
    jsonShape(w, a.ints);
    break;
  case Attr::Kind::Floats:
    w.beginArray(true);
    for (double f : a.floats)
      w.value(f);
    w.endArray();
    break;
  }
}

void jsonIds(json::Writer &w, const std::vector<uint32_t> &ids) {
  w.beginArray(true);
  for (uint32_t id : ids)
    id == kNoBuffer ? w.null() : w.value(id);
  w.endArray();
}

} // namespace

std::string inspectJson(const Artifact &art, const MemoryFootprint &fp) {
  const Manifest &m = art.manifest();
  std::string out;
  json::Writer w(&out);
  w.beginObject();
  w.field("path", art.path());
  w.field("file_size", art.fileSize());
  w.field("format_version", m.formatVersion);
  w.field("compiler_version", m.compilerVersion);
  w.field("model", m.modelName);
  w.key("targets");
  w.beginArray(true);
  for (const std::string &t : m.targets)
    w.value(t);
  w.endArray();
  if (m.hasLlm) { // the KV-cache geometry serving needs
    const LlmConfig &l = m.llm;
    w.key("llm");
    w.beginObject();
    w.field("architecture", l.architecture);
    w.field("num_layers", l.numLayers), w.field("num_heads", l.numHeads);
    w.field("num_kv_heads", l.numKvHeads), w.field("head_dim", l.headDim);
    w.field("block_size", l.blockSize);
    w.field("kv_dtype", dtypeName(l.kvDtype));
    w.field("kv_layout", l.kvLayout);
    w.endObject();
  }
  w.key("sections");
  w.beginArray();
  for (const Artifact::SectionInfo &s : art.sections()) {
    w.beginObject();
    w.field("name", s.name), w.field("offset", s.offset);
    w.field("size", s.size);
    w.endObject();
  }
  w.endArray();
  w.key("inputs");
  jsonIo(w, m.inputs);
  w.key("outputs");
  jsonIo(w, m.outputs);
  w.key("symbols");
  w.beginObject();
  for (const SymbolBound &s : m.symbols)
    w.field(s.name, s.max);
  w.endObject();
  w.key("tensors");
  w.beginArray();
  for (const TensorEntry &t : m.tensors) {
    w.beginObject();
    w.field("name", t.name), w.field("dtype", dtypeName(t.dtype));
    w.key("shape"), jsonShape(w, t.shape);
    w.field("bytes", t.bytes), w.field("offset", t.offset);
    w.field("layout", t.layout);
    if (isQuantDType(t.dtype)) {
      w.field("group_size", t.groupSize);
      w.field("bits_per_weight",
              quantBitsPerWeight(t.dtype, t.shape.size() == 2 ? t.shape[1] : 0,
                                 t.groupSize));
    }
    w.endObject();
  }
  w.endArray();
  w.key("weight_formats");
  w.beginArray();
  for (const WeightFormatTotal &f : weightFormats(m)) {
    w.beginObject();
    w.field("format", f.format);
    if (f.groupSize > 0)
      w.field("group_size", f.groupSize);
    else if (f.groupSize < 0)
      w.field("group_size", "mixed");
    w.field("tensors", f.tensors), w.field("elements", f.elements);
    w.field("bytes", f.bytes), w.field("bits_per_weight", f.bitsPerWeight());
    w.endObject();
  }
  w.endArray();
  if (const TensorEntry *head = lmHeadWeight(m)) {
    w.key("lm_head");
    w.beginObject();
    w.field("tensor", head->name), w.field("format", dtypeName(head->dtype));
    if (head->groupSize)
      w.field("group_size", head->groupSize);
    w.endObject();
  }
  w.key("buffers");
  w.beginArray();
  for (const Buffer &b : m.buffers) {
    w.beginObject();
    w.field("id", b.id), w.field("name", b.name);
    w.field("kind", kindName(b.kind)), w.field("dtype", dtypeName(b.dtype));
    w.key("max_shape"), jsonShape(w, b.maxShape);
    w.field("max_bytes", b.maxBytes);
    w.key("arena_offset");
    b.kind == BufferKind::Arena ? w.value(b.arenaOffset) : w.null();
    if (b.kind == BufferKind::Param)
      w.field("tensor", b.tensorIndex);
    if (b.kind == BufferKind::Input)
      w.field("input", b.ioIndex);
    w.endObject();
  }
  w.endArray();
  w.key("steps");
  w.beginArray();
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &s = m.steps[i];
    w.beginObject();
    w.field("index", i), w.field("kernel", s.kernel);
    w.field("origin", s.origin);
    w.key("inputs"), jsonIds(w, s.inputs);
    w.key("outputs"), jsonIds(w, s.outputs);
    w.key("attrs");
    w.beginObject();
    for (const Attr &a : s.attrs)
      jsonAttr(w, a);
    w.endObject();
    w.endObject();
  }
  w.endArray();
  const MemorySummary &mem = m.memory;
  w.key("memory");
  w.beginObject();
  w.field("weights_bytes", mem.weightsBytes);
  w.field("arena_bytes", mem.arenaBytes);
  w.field("arena_lower_bound_bytes", mem.arenaLowerBoundBytes);
  w.field("arena_naive_bytes", mem.arenaNaiveBytes);
  w.field("kv_cache_bytes", mem.kvCacheBytes);
  w.field("overhead_bytes", mem.overheadBytes);
  w.field("total_bytes", totalBytes(mem));
  // What serving takes at the engine's KV budget (MemoryFootprint.h).
  w.field("kv_blocks", fp.kvBlocks);
  w.field("kv_tokens", fp.kvTokens);
  w.field("kv_budget_bytes", fp.kvBytes);
  w.field("manifest_bytes", fp.manifestBytes);
  w.field("step_io_bytes", fp.stepIoBytes);
  w.field("thread_scratch_bytes", fp.threadScratchBytes);
  w.field("threads", fp.threads);
  w.field("runtime_overhead_bytes", fp.overheadBytes);
  w.field("provision_total_bytes", fp.totalBytes);
  w.endObject();
  w.endObject();
  out += '\n';
  return out;
}

} // namespace ingot::cli
