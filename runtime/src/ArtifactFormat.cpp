//===- ArtifactFormat.cpp - Header codec and manifest checks --------------===//
#include "ArtifactFormat.h"

#include "Checksum.h"
#include "ingot/KvCache.h"
#include "tokenizer/ChatTemplate.h"
#include "tokenizer/PreTokenizer.h"

#include <cmath>
#include <cstring>
#include <set>

namespace ingot::format {
namespace {

void putU32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
void putU64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
uint32_t getU32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t getU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

/// A name from the file, safe to print: quoted, escaped, length-capped.
std::string quoted(const std::string &s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + (s.size() > 80 ? "...'" : "'");
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// numel(shape) * elementSize, or false on a negative dim or overflow.
bool shapeBytes(const std::vector<int64_t> &shape, size_t elementSize,
                uint64_t *bytes) {
  uint64_t n = elementSize;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n))
      return false;
  *bytes = n;
  return true;
}

bool validDType(DType t) { return isValidDType(uint32_t(t)); }

Status fail(const std::string &msg) { return Status::error(msg); }

/// The LLM parts of a manifest (hasLlm): KV geometry, tokenizer, defaults.
Status validateLlm(const Manifest &m) {
  const LlmConfig &l = m.llm;
  const std::pair<const char *, int64_t> dims[] = {
      {"num_layers", l.numLayers},
      {"hidden_size", l.hiddenSize},
      {"num_heads", l.numHeads},
      {"num_kv_heads", l.numKvHeads},
      {"head_dim", l.headDim},
      {"vocab_size", l.vocabSize},
      {"max_positions", l.maxPositions},
      {"block_size", l.blockSize},
      {"max_tokens_per_step", l.maxTokensPerStep},
      {"max_seqs", l.maxSeqs},
      {"max_blocks_per_seq", l.maxBlocksPerSeq}};
  for (auto [name, v] : dims)
    if (v <= 0)
      return fail(std::string("LLM config: ") + name + " is " +
                  std::to_string(v) + "; it must be positive");
  if (l.numHeads % l.numKvHeads)
    return fail("LLM config: num_heads " + std::to_string(l.numHeads) +
                " is not a multiple of num_kv_heads " +
                std::to_string(l.numKvHeads));
  if (!validDType(l.kvDtype))
    return fail("LLM config: invalid KV-cache dtype");
  // A layout from a newer compiler would be misread as another: refuse it.
  if (!parseKvLayout(l.kvLayout, nullptr))
    return fail("LLM config: KV-cache layout " + quoted(l.kvLayout) +
                " is not known to this runtime (known: " + knownKvLayouts() +
                "); recompile the model with this version of ingot");

  const TokenizerData &t = m.tokenizer;
  const int64_t n = int64_t(t.vocab.size());
  auto inVocab = [&](int64_t id) { return id >= 0 && id < n; };
  if (n == 0 || n > l.vocabSize)
    return fail("tokenizer: " + std::to_string(n) +
                " token ids, but the model's vocabulary has " +
                std::to_string(l.vocabSize) + " (must be 1 to that many)");
  for (size_t i = 0; i < t.merges.size(); ++i)
    if (!inVocab(t.merges[i].first) || !inVocab(t.merges[i].second))
      return fail("tokenizer: merge " + std::to_string(i) + " (" +
                  std::to_string(t.merges[i].first) + ", " +
                  std::to_string(t.merges[i].second) +
                  ") refers to an id outside the vocabulary of " +
                  std::to_string(n));
  for (const TokenizerData::AddedToken &a : t.addedTokens)
    if (!inVocab(a.id) || a.content.empty())
      return fail("tokenizer: added token " + std::to_string(a.id) + " " +
                  quoted(a.content) +
                  " is empty or outside the vocabulary of " +
                  std::to_string(n));
  for (int32_t id : {t.bosId, t.eosId})
    if (id != -1 && !inVocab(id))
      return fail("tokenizer: BOS/EOS id " + std::to_string(id) +
                  " is outside the vocabulary of " + std::to_string(n));
  tok::TokenizerOptions options;
  std::string why;
  if (!tok::parseTokenizerOptions(t.pretokenizer, &options, &why))
    return fail("tokenizer: " + why);
  if (!tok::isKnownChatTemplate(t.chatTemplate))
    return fail("tokenizer: unknown chat template " + quoted(t.chatTemplate) +
                " (supported: chatml, llama3)");

  const GenerationDefaults &g = m.generation;
  if (!std::isfinite(g.temperature) || g.temperature < 0 || g.topK < 0 ||
      !(g.topP > 0 && g.topP <= 1) || g.maxNewTokens < 0)
    return fail("generation defaults out of range: temperature " +
                std::to_string(g.temperature) + ", top_k " +
                std::to_string(g.topK) + ", top_p " + std::to_string(g.topP) +
                ", max_new_tokens " + std::to_string(g.maxNewTokens));
  for (int32_t id : g.eosIds)
    if (id < 0 || id >= l.vocabSize)
      return fail("generation: EOS id " + std::to_string(id) +
                  " is outside the model's vocabulary of " +
                  std::to_string(l.vocabSize));
  return Status::ok();
}

} // namespace

uint64_t headerSize(size_t compilerVersionSize, size_t sectionCount) {
  return kFixedHeaderSize + alignUp(compilerVersionSize, 8) +
         kSectionEntrySize * sectionCount + 8;
}

std::vector<uint8_t> encodeHeader(const std::string &compilerVersion,
                                  const std::vector<SectionRecord> &sections) {
  uint64_t size = headerSize(compilerVersion.size(), sections.size());
  std::vector<uint8_t> h(size, 0);
  std::memcpy(h.data(), kMagic, 8);
  putU32(&h[8], kArtifactFormatVersion);
  putU32(&h[12], uint32_t(size));
  putU32(&h[16], uint32_t(sections.size()));
  putU32(&h[20], uint32_t(compilerVersion.size()));
  std::memcpy(&h[kFixedHeaderSize], compilerVersion.data(),
              compilerVersion.size());
  uint8_t *e = &h[kFixedHeaderSize + alignUp(compilerVersion.size(), 8)];
  for (const SectionRecord &s : sections) {
    std::memcpy(e, s.name.data(), s.name.size());
    putU64(e + kSectionNameSize, s.offset);
    putU64(e + kSectionNameSize + 8, s.size);
    putU64(e + kSectionNameSize + 16, s.checksum);
    e += kSectionEntrySize;
  }
  putU64(&h[size - 8], checksum64(h.data(), size - 8));
  return h;
}

Status checkSectionName(const std::string &name) {
  if (name.empty() || name.size() >= kSectionNameSize)
    return fail("section name " + quoted(name) + " must be 1 to " +
                std::to_string(kSectionNameSize - 1) + " bytes");
  for (unsigned char c : name)
    if (c <= 0x20 || c >= 0x7f)
      return fail("section name " + quoted(name) +
                  " has a character that is not printable ASCII");
  return Status::ok();
}

Status parseHeader(const uint8_t *data, uint64_t fileSize,
                   std::string *compilerVersion,
                   std::vector<SectionRecord> *sections) {
  if (std::memcmp(data, kMagic, fileSize < 8 ? fileSize : 8))
    return fail("not an ingot artifact (bad magic)");
  if (fileSize < kFixedHeaderSize)
    return fail("truncated: " + std::to_string(fileSize) +
                " bytes is smaller than the artifact header");
  uint32_t version = getU32(data + 8);
  if (version != kArtifactFormatVersion)
    return fail("format version " + std::to_string(version) +
                ", this runtime reads " +
                std::to_string(kArtifactFormatVersion) + ": recompile");
  uint32_t size = getU32(data + 12), count = getU32(data + 16),
           cvSize = getU32(data + 20);
  if (count > kMaxSections || cvSize > kMaxCompilerVersionSize ||
      size != headerSize(cvSize, count))
    return fail("corrupt header: inconsistent header size fields");
  if (size > fileSize)
    return fail("truncated: the header needs " + std::to_string(size) +
                " bytes but the file has " + std::to_string(fileSize));
  if (getU64(data + size - 8) != checksum64(data, size - 8))
    return fail("checksum mismatch in the header: the file is corrupted");

  compilerVersion->assign(
      reinterpret_cast<const char *>(data) + kFixedHeaderSize, cvSize);
  sections->clear();
  const uint8_t *e = data + kFixedHeaderSize + alignUp(cvSize, 8);
  uint64_t prevEnd = size;
  std::set<std::string> seen;
  for (uint32_t i = 0; i < count; ++i, e += kSectionEntrySize) {
    SectionRecord s;
    size_t len = strnlen(reinterpret_cast<const char *>(e), kSectionNameSize);
    s.name.assign(reinterpret_cast<const char *>(e), len);
    if (Status st = checkSectionName(s.name); !st)
      return fail("section " + std::to_string(i) + ": " + st.message());
    s.offset = getU64(e + kSectionNameSize);
    s.size = getU64(e + kSectionNameSize + 8);
    s.checksum = getU64(e + kSectionNameSize + 16);
    std::string what = "section " + quoted(s.name);
    if (!seen.insert(s.name).second)
      return fail("duplicate " + what);
    uint64_t align = s.name == kWeightsSection ? kWeightsAlign : kSectionAlign;
    if (s.offset % align)
      return fail(what + " at offset " + std::to_string(s.offset) + " is not " +
                  std::to_string(align) + "-byte aligned");
    if (s.offset < prevEnd)
      return fail(what + " overlaps the header or the previous section");
    if (s.offset > fileSize || s.size > fileSize - s.offset)
      return fail(what + " (offset " + std::to_string(s.offset) + ", " +
                  std::to_string(s.size) + " bytes) runs past the end of the " +
                  std::to_string(fileSize) + "-byte file: it is truncated");
    // Padding is not covered by any checksum, so it must be exactly zero.
    for (uint64_t p = prevEnd; p < s.offset; ++p)
      if (data[p])
        return fail("nonzero padding byte at offset " + std::to_string(p) +
                    ": the file is corrupted");
    prevEnd = s.offset + s.size;
    sections->push_back(std::move(s));
  }
  if (!seen.count(kManifestSection) || !seen.count(kWeightsSection))
    return fail("corrupt header: missing the manifest or weights section");
  if (prevEnd != fileSize)
    return fail("file is " + std::to_string(fileSize) +
                " bytes but its sections end at " + std::to_string(prevEnd) +
                ": trailing bytes or a corrupted section table");
  return Status::ok();
}

Status layOutTensors(Manifest *m, uint64_t *weightsSize) {
  uint64_t cursor = 0;
  for (size_t i = 0; i < m->tensors.size(); ++i) {
    TensorEntry &t = m->tensors[i];
    std::string what = "tensor " + std::to_string(i) + " " + quoted(t.name);
    if (!validDType(t.dtype))
      return fail(what + " has an invalid dtype");
    if (!shapeBytes(t.shape, dtypeSize(t.dtype), &t.bytes))
      return fail(what + " has an invalid shape " + shapeStr(t.shape));
    t.offset = alignUp(cursor, kTensorAlign);
    if (t.offset < cursor || __builtin_add_overflow(t.offset, t.bytes, &cursor))
      return fail(what + ": weight section size overflows");
  }
  *weightsSize = cursor;
  return Status::ok();
}

Status validateManifest(const Manifest &m, uint64_t weightsSize) {
  if (m.formatVersion != kArtifactFormatVersion)
    return fail("manifest format version " + std::to_string(m.formatVersion) +
                ", expected " + std::to_string(kArtifactFormatVersion));
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorEntry &t = m.tensors[i];
    std::string what = "tensor " + std::to_string(i) + " " + quoted(t.name);
    uint64_t want;
    if (!validDType(t.dtype))
      return fail(what + " has an invalid dtype");
    if (!shapeBytes(t.shape, dtypeSize(t.dtype), &want))
      return fail(what + " has an invalid shape " + shapeStr(t.shape));
    if (t.bytes != want)
      return fail(what + " is " + std::to_string(t.bytes) +
                  " bytes but its shape and dtype need " +
                  std::to_string(want));
    if (t.offset % kTensorAlign)
      return fail(what + " is not 64-byte aligned");
    if (t.offset > weightsSize || t.bytes > weightsSize - t.offset)
      return fail(what + " lies outside the " + std::to_string(weightsSize) +
                  "-byte weight section");
  }
  const size_t nb = m.buffers.size();
  for (size_t i = 0; i < nb; ++i) {
    const Buffer &b = m.buffers[i];
    std::string what = "buffer " + std::to_string(i) + " " + quoted(b.name);
    if (b.id != i)
      return fail(what + " has id " + std::to_string(b.id) +
                  "; ids must equal their index");
    if (!validDType(b.dtype))
      return fail(what + " has an invalid dtype");
    if (!b.maxShape.empty() && b.maxShape.size() != b.rank)
      return fail(what + " has rank " + std::to_string(b.rank) +
                  " but max_shape " + shapeStr(b.maxShape));
    uint64_t need = 0;
    bool known = b.maxShape.size() == b.rank;
    if (!shapeBytes(b.maxShape, dtypeSize(b.dtype), &need))
      return fail(what + " has an invalid max_shape " + shapeStr(b.maxShape));
    switch (b.kind) {
    case BufferKind::Arena:
      if (b.arenaOffset % 64)
        return fail(what + " has an arena offset that is not 64-byte aligned");
      if (b.arenaOffset > m.memory.arenaBytes ||
          b.maxBytes > m.memory.arenaBytes - b.arenaOffset)
        return fail(what + " lies outside the " +
                    std::to_string(m.memory.arenaBytes) + "-byte arena");
      if (known && need > b.maxBytes)
        return fail(what + ": max_shape " + shapeStr(b.maxShape) + " needs " +
                    std::to_string(need) + " bytes, slice has " +
                    std::to_string(b.maxBytes));
      break;
    case BufferKind::Param:
      if (b.tensorIndex < 0 || size_t(b.tensorIndex) >= m.tensors.size())
        return fail(what + " refers to tensor " +
                    std::to_string(b.tensorIndex) + " of " +
                    std::to_string(m.tensors.size()));
      if (known && need > m.tensors[b.tensorIndex].bytes)
        return fail(what + ": max_shape " + shapeStr(b.maxShape) +
                    " is larger than its tensor");
      break;
    case BufferKind::Input:
      if (b.ioIndex < 0 || size_t(b.ioIndex) >= m.inputs.size())
        return fail(what + " refers to input " + std::to_string(b.ioIndex) +
                    " of " + std::to_string(m.inputs.size()));
      break;
    default:
      return fail(what + " has an invalid kind");
    }
  }
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &s = m.steps[i];
    std::string what = "step " + std::to_string(i) + " (" + quoted(s.kernel) +
                       " from " + quoted(s.origin) + ")";
    if (s.kernel.empty())
      return fail(what + " has no kernel name");
    for (size_t k = 0; k < s.inputs.size(); ++k)
      if (s.inputs[k] != kNoBuffer && s.inputs[k] >= nb)
        return fail(what + ": input " + std::to_string(k) + " is buffer " +
                    std::to_string(s.inputs[k]) + " of " + std::to_string(nb));
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      if (s.outputs[k] >= nb)
        return fail(what + ": output " + std::to_string(k) + " is buffer " +
                    std::to_string(s.outputs[k]) + " of " + std::to_string(nb));
      if (m.buffers[s.outputs[k]].kind != BufferKind::Arena)
        return fail(what + ": output " + std::to_string(k) +
                    " writes to a read-only input or parameter buffer");
    }
    for (const Attr &a : s.attrs)
      if (uint8_t(a.kind) < 1 || uint8_t(a.kind) > 5)
        return fail(what + ": attribute " + quoted(a.name) +
                    " has an invalid kind");
  }
  std::set<std::string> symbols;
  for (const SymbolBound &s : m.symbols)
    if (s.name.empty() || s.max < 0 || !symbols.insert(s.name).second)
      return fail("symbol " + quoted(s.name) +
                  " is unnamed, duplicated or has a negative bound");
  for (int out = 0; out < 2; ++out) {
    const std::vector<IoSpec> &specs = out ? m.outputs : m.inputs;
    for (size_t i = 0; i < specs.size(); ++i) {
      const IoSpec &io = specs[i];
      std::string what = (out ? "output " : "input ") + std::to_string(i) +
                         " " + quoted(io.name);
      if (!validDType(io.dtype))
        return fail(what + " has an invalid dtype");
      if (io.buffer >= nb)
        return fail(what + " is buffer " + std::to_string(io.buffer) + " of " +
                    std::to_string(nb));
      const Buffer &b = m.buffers[io.buffer];
      if (!out && (b.kind != BufferKind::Input || b.ioIndex != int32_t(i)))
        return fail(what + " is not bound to an input buffer for it");
      // Dims only describe the I/O; memory bounds come from the buffers.
      for (size_t d = 0; d < io.dims.size(); ++d)
        if (io.dims[d].size < -1)
          return fail(what + ": dim " + std::to_string(d) + " has size " +
                      std::to_string(io.dims[d].size) +
                      " (must be >= 0, or -1 when dynamic)");
    }
  }
  return m.hasLlm ? validateLlm(m) : Status::ok();
}

} // namespace ingot::format
