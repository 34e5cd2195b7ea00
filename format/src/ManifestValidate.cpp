//===- ManifestValidate.cpp - Structural checks on a manifest -------------===//
//
// layOutTensors and validateManifest (declared in ArtifactFormat.h): run by
// the writer before it writes and by the loader after it decodes, so that
// the writer can never produce a manifest the loader would refuse. Indices,
// offsets and sizes are checked here; the plan checks that rely on them
// are in ManifestValidate*.cpp (ManifestValidate.h).
//
//===----------------------------------------------------------------------===//
#include "ingot/ArtifactFormat.h"

#include "ArtifactFormatUtil.h"
#include "ManifestValidate.h"
#include "ingot/KvLayout.h"
#include "ingot/Quant.h"
#include "ingot/TokenizerFormat.h"
#include "ingot/WeightLayout.h"

#include <cmath>
#include <set>

namespace ingot::format {
namespace {

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

/// A Dynamic buffer has no slice: its bound dims are >= 0, the others -1,
/// and it claims no bytes or offset that a reader could trust.
Status checkDynamicBuffer(const Buffer &b, const std::string &what) {
  if (b.maxShape.size() != b.rank)
    return Status::error(what + " is sized at run time but its max_shape " +
                         shapeStr(b.maxShape) + " does not have rank " +
                         std::to_string(b.rank));
  for (int64_t d : b.maxShape)
    if (d < -1)
      return Status::error(what + " has an invalid max_shape " +
                           shapeStr(b.maxShape));
  if (b.maxBytes || b.arenaOffset)
    return Status::error(what + " is sized at run time but claims " +
                         std::to_string(b.maxBytes) +
                         " bytes at arena offset " +
                         std::to_string(b.arenaOffset));
  return Status::ok();
}

/// The bytes tensor `t` needs: numel * element size, or for a quantised
/// dtype its blocks (2-D, group >= 1). False when invalid or overflowing.
bool tensorBytes(const TensorEntry &t, uint64_t *bytes) {
  if (!isQuantDType(t.dtype))
    return t.groupSize == 0 && shapeBytes(t.shape, dtypeSize(t.dtype), bytes);
  if (t.shape.size() != 2)
    return false;
  const int64_t b =
      quantTensorBytes(t.dtype, t.shape[0], t.shape[1], t.groupSize);
  if (b < 0)
    return false;
  *bytes = uint64_t(b);
  return true;
}

/// The LLM parts of a manifest (hasLlm): KV geometry, tokenizer, defaults.
/// Whether this runtime knows the tokenizer's model and its options; an
/// artifact from a newer compiler fails here rather than encoding wrongly.
bool knownTokenizerModel(const TokenizerData &t, std::string *why) {
  if (t.model == "byte_level_bpe") {
    tok::TokenizerOptions options;
    return tok::parseTokenizerOptions(t.pretokenizer, &options, why);
  }
  if (t.model != "sentencepiece_bpe") {
    *why = "unknown model " + quoted(t.model) +
           " (known: byte_level_bpe, sentencepiece_bpe)";
    return false;
  }
  tok::SentencePieceOptions options;
  if (!tok::parseSentencePieceOptions(t.pretokenizer, t.decoder, &options, why))
    return false;
  if (!t.scores.empty() && t.scores.size() != t.vocab.size()) {
    *why = std::to_string(t.scores.size()) + " scores for " +
           std::to_string(t.vocab.size()) + " tokens";
    return false;
  }
  if (t.unkId < -1 || t.unkId >= int64_t(t.vocab.size())) {
    *why = "unknown-token id " + std::to_string(t.unkId) +
           " is outside the vocabulary";
    return false;
  }
  return true;
}

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
  std::string why;
  if (!knownTokenizerModel(t, &why))
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

Status layOutTensors(Manifest *m, uint64_t *weightsSize) {
  uint64_t cursor = 0;
  // The section's tensors first, then those made at load from external
  // weights: the section is then a prefix of the load-time weight space.
  for (bool external : {false, true}) {
    for (size_t i = 0; i < m->tensors.size(); ++i) {
      TensorEntry &t = m->tensors[i];
      if (t.external != external)
        continue;
      std::string what = "tensor " + std::to_string(i) + " " + quoted(t.name);
      if (!validDType(t.dtype))
        return fail(what + " has an invalid dtype");
      if (!tensorBytes(t, &t.bytes))
        return fail(what + " has an invalid shape " + shapeStr(t.shape) +
                    " or group size " + std::to_string(t.groupSize) + " for " +
                    dtypeName(t.dtype));
      t.offset = alignUp(cursor, kTensorAlign);
      if (t.offset < cursor ||
          __builtin_add_overflow(t.offset, t.bytes, &cursor))
        return fail(what + ": weight section size overflows");
    }
    if (!external)
      *weightsSize = cursor;
  }
  if (!m->externalWeights.empty())
    m->externalWeights.spaceBytes = cursor;
  return Status::ok();
}

Status validateManifest(const Manifest &m, uint64_t weightsSize) {
  if (m.formatVersion != kArtifactFormatVersion)
    return fail("manifest format version " + std::to_string(m.formatVersion) +
                ", expected " + std::to_string(kArtifactFormatVersion));
  if (Status s = validateExternalWeights(m, weightsSize); !s)
    return s;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorEntry &t = m.tensors[i];
    std::string what = "tensor " + std::to_string(i) + " " + quoted(t.name);
    uint64_t want;
    if (!validDType(t.dtype))
      return fail(what + " has an invalid dtype");
    if (!tensorBytes(t, &want))
      return fail(what + " has an invalid shape " + shapeStr(t.shape) +
                  " or group size " + std::to_string(t.groupSize) + " for " +
                  dtypeName(t.dtype));
    if (Status s = checkWeightLayout(t.layout, t.dtype, t.shape, t.groupSize);
        !s)
      return fail(what + ": " + s.message());
    if (t.bytes != want)
      return fail(what + " is " + std::to_string(t.bytes) +
                  " bytes but its shape and dtype need " +
                  std::to_string(want));
    if (t.offset % kTensorAlign)
      return fail(what + " is not 64-byte aligned");
    const uint64_t limit =
        t.external ? m.externalWeights.spaceBytes : weightsSize;
    if (t.offset > limit || t.bytes > limit - t.offset)
      return fail(what + " lies outside the " + std::to_string(limit) +
                  (t.external ? "-byte weight space" : "-byte weight section"));
    if (t.external && t.offset < weightsSize)
      return fail(what + " is made from external weights but lies in the " +
                  "weight section");
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
    if (isQuantDType(b.dtype) && b.kind != BufferKind::Param)
      return fail(what + " is " + dtypeName(b.dtype) +
                  ": only weights may be quantised");
    if (!b.maxShape.empty() && b.maxShape.size() != b.rank)
      return fail(what + " has rank " + std::to_string(b.rank) +
                  " but max_shape " + shapeStr(b.maxShape));
    uint64_t need = 0;
    bool known = b.maxShape.size() == b.rank;
    if (b.kind == BufferKind::Dynamic) {
      if (Status s = checkDynamicBuffer(b, what); !s)
        return s;
      continue;
    }
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
      // Kernels size their reads of a quantised weight from its shape:
      // buffer and tensor must agree on both.
      if ((isQuantDType(b.dtype) ||
           isQuantDType(m.tensors[b.tensorIndex].dtype)) &&
          (b.dtype != m.tensors[b.tensorIndex].dtype ||
           b.maxShape != m.tensors[b.tensorIndex].shape))
        return fail(what + " is " + dtypeName(b.dtype) + " " +
                    shapeStr(b.maxShape) + " but its tensor is " +
                    dtypeName(m.tensors[b.tensorIndex].dtype) + " " +
                    shapeStr(m.tensors[b.tensorIndex].shape));
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
      if (m.buffers[s.outputs[k]].kind != BufferKind::Arena &&
          m.buffers[s.outputs[k]].kind != BufferKind::Dynamic)
        return fail(what + ": output " + std::to_string(k) +
                    " writes to a read-only " +
                    (m.buffers[s.outputs[k]].kind == BufferKind::Param
                         ? "parameter (weights are mapped read-only), "
                         : "model input, ") +
                    describeBuffer(m, s.outputs[k]));
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
  for (auto check : {validateTensorLayout, validateIo, validateSteps,
                     validateArenaLiveness, validateGpuTargets})
    if (Status s = check(m); !s)
      return s;
  if (!m.hasLlm)
    return Status::ok();
  if (Status s = validateLlm(m); !s)
    return s;
  // A tokenizer-only artifact has no plan to check.
  return m.steps.empty() ? Status::ok() : validateLlmEntryPoints(m);
}

} // namespace ingot::format
