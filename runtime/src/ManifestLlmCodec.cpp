//===- ManifestLlmCodec.cpp - Wire format of the LLM manifest parts -------===//
//
// Counts come from the bytes actually present: every vocab entry, merge id
// and added token consumes at least one byte of input, so hostile input
// cannot make the decoder allocate more than a small multiple of its size.
//
//===----------------------------------------------------------------------===//
#include "ManifestLlmCodec.h"
#include "ManifestCodecUtil.h"

#include <iterator>

namespace ingot::llmcodec {
namespace {

using namespace proto;
using namespace codecutil;

/// Packed int32 values (ids): rejects anything outside int32.
bool readInt32s(Reader &r, uint32_t type, std::vector<int32_t> *out) {
  return readPackedNarrow(r, type, out, "id out of range for int32");
}

bool decodeAddedToken(Reader &r, TokenizerData::AddedToken *a, std::string *) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return readI32(r, type, &a->id);
    case 2:
      return readStr(r, type, &a->content);
    case 3:
      return readBool(r, type, &a->special);
    default:
      return r.skip(type);
    }
  });
}

} // namespace

bool readBool(Reader &r, uint32_t type, bool *b) {
  uint64_t v;
  if (!readU64(r, type, &v))
    return false;
  if (v > 1)
    return r.fail("invalid bool");
  *b = v;
  return true;
}

proto::Writer encodeLlm(const LlmConfig &l) {
  proto::Writer w;
  const LlmConfig d;
  if (l.architecture != d.architecture)
    w.bytesField(1, l.architecture);
  const int64_t LlmConfig::*ints[] = {
      &LlmConfig::numLayers,        &LlmConfig::hiddenSize,
      &LlmConfig::numHeads,         &LlmConfig::numKvHeads,
      &LlmConfig::headDim,          &LlmConfig::vocabSize,
      &LlmConfig::maxPositions,     &LlmConfig::blockSize,
      &LlmConfig::maxTokensPerStep, &LlmConfig::maxSeqs,
      &LlmConfig::maxBlocksPerSeq};
  for (uint32_t i = 0; i < std::size(ints); ++i)
    if (l.*ints[i] != d.*ints[i])
      w.intField(i + 2, l.*ints[i]);
  if (l.kvDtype != d.kvDtype)
    w.uintField(13, uint64_t(l.kvDtype));
  if (l.kvLayout != d.kvLayout)
    w.bytesField(14, l.kvLayout);
  return w;
}

proto::Writer encodeTokenizer(const TokenizerData &t) {
  proto::Writer w;
  const TokenizerData d;
  for (const std::string &v : t.vocab)
    w.bytesField(1, v);
  std::vector<int32_t> pairs;
  pairs.reserve(t.merges.size() * 2);
  for (auto [a, b] : t.merges)
    pairs.push_back(a), pairs.push_back(b);
  w.packedInts(2, pairs);
  for (const TokenizerData::AddedToken &a : t.addedTokens) {
    proto::Writer aw;
    if (a.id)
      aw.intField(1, a.id);
    if (!a.content.empty())
      aw.bytesField(2, a.content);
    if (a.special)
      aw.uintField(3, 1);
    w.messageField(3, aw);
  }
  if (t.pretokenizer != d.pretokenizer)
    w.bytesField(4, t.pretokenizer);
  if (t.bosId != d.bosId)
    w.intField(5, t.bosId);
  if (t.eosId != d.eosId)
    w.intField(6, t.eosId);
  if (t.addBos)
    w.uintField(7, 1);
  if (!t.chatTemplate.empty())
    w.bytesField(8, t.chatTemplate);
  if (t.model != d.model)
    w.bytesField(9, t.model);
  w.packedFloats(10, t.scores);
  if (t.byteFallback)
    w.uintField(11, 1);
  if (t.unkId != d.unkId)
    w.intField(12, t.unkId);
  if (t.fuseUnk)
    w.uintField(13, 1);
  if (!t.decoder.empty())
    w.bytesField(14, t.decoder);
  return w;
}

proto::Writer encodeGeneration(const GenerationDefaults &g) {
  proto::Writer w;
  const GenerationDefaults d;
  if (!sameBits(g.temperature, d.temperature))
    w.doubleField(1, g.temperature);
  if (g.topK != d.topK)
    w.intField(2, g.topK);
  if (!sameBits(g.topP, d.topP))
    w.doubleField(3, g.topP);
  w.packedInts(4, g.eosIds);
  if (g.maxNewTokens != d.maxNewTokens)
    w.intField(5, g.maxNewTokens);
  return w;
}

bool decodeLlm(Reader &r, LlmConfig *l, std::string *) {
  int64_t LlmConfig::*ints[] = {
      &LlmConfig::numLayers,        &LlmConfig::hiddenSize,
      &LlmConfig::numHeads,         &LlmConfig::numKvHeads,
      &LlmConfig::headDim,          &LlmConfig::vocabSize,
      &LlmConfig::maxPositions,     &LlmConfig::blockSize,
      &LlmConfig::maxTokensPerStep, &LlmConfig::maxSeqs,
      &LlmConfig::maxBlocksPerSeq};
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    if (field >= 2 && field < 2 + std::size(ints))
      return readI64(r, type, &(l->*ints[field - 2]));
    switch (field) {
    case 1:
      return readStr(r, type, &l->architecture);
    case 13:
      return readDType(r, type, &l->kvDtype);
    case 14:
      return readStr(r, type, &l->kvLayout);
    default:
      return r.skip(type);
    }
  });
}

bool decodeTokenizer(Reader &r, TokenizerData *t, std::string *where) {
  std::vector<int32_t> pairs;
  bool ok = forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1: // each entry costs at least two bytes, which bounds the count
      return readStr(r, type, &t->vocab.emplace_back());
    case 2:
      return readInt32s(r, type, &pairs);
    case 3:
      return decodeElement(r, type, t->addedTokens, ".added_tokens", where,
                           decodeAddedToken);
    case 4:
      return readStr(r, type, &t->pretokenizer);
    case 5:
      return readI32(r, type, &t->bosId);
    case 6:
      return readI32(r, type, &t->eosId);
    case 7:
      return readBool(r, type, &t->addBos);
    case 8:
      return readStr(r, type, &t->chatTemplate);
    case 9:
      return readStr(r, type, &t->model);
    case 10: // four bytes per score, which bounds the count
      return r.repeatedFloat(type, &t->scores);
    case 11:
      return readBool(r, type, &t->byteFallback);
    case 12:
      return readI32(r, type, &t->unkId);
    case 13:
      return readBool(r, type, &t->fuseUnk);
    case 14:
      return readStr(r, type, &t->decoder);
    default:
      return r.skip(type);
    }
  });
  if (!ok)
    return false;
  if (pairs.size() % 2)
    return r.fail("merges hold an odd number of ids");
  t->merges.reserve(pairs.size() / 2);
  for (size_t i = 0; i < pairs.size(); i += 2)
    t->merges.emplace_back(pairs[i], pairs[i + 1]);
  return true;
}

bool decodeGeneration(Reader &r, GenerationDefaults *g, std::string *) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return wantType(r, type, proto::Fixed64) &&
             r.doubleValue(&g->temperature);
    case 2:
      return readI64(r, type, &g->topK);
    case 3:
      return wantType(r, type, proto::Fixed64) && r.doubleValue(&g->topP);
    case 4:
      return readInt32s(r, type, &g->eosIds);
    case 5:
      return readI64(r, type, &g->maxNewTokens);
    default:
      return r.skip(type);
    }
  });
}

} // namespace ingot::llmcodec
