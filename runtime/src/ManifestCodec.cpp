//===- ManifestCodec.cpp - Manifest <-> protobuf wire format --------------===//
//
// Schema: docs/manifest.proto (proto2, so field defaults match the C++
// struct defaults). A field equal to its default is not written; the output
// is a deterministic function of the Manifest. The decoder checks wire types,
// ranges and enum values, and skips fields it does not know.
//
//===----------------------------------------------------------------------===//
#include "ManifestCodecUtil.h"
#include "ManifestLlmCodec.h"
#include "ProtoWire.h"

#include "ingot/Artifact.h"

namespace ingot {
namespace {

using namespace proto;
using namespace llmcodec;
using namespace codecutil;

//===--- Encoding ---------------------------------------------------------===//

Writer encodeTensor(const TensorEntry &t) {
  Writer w;
  if (!t.name.empty())
    w.bytesField(1, t.name);
  if (t.dtype != DType::F32)
    w.uintField(2, uint64_t(t.dtype));
  w.packedInts(3, t.shape);
  if (t.layout != "row-major")
    w.bytesField(4, t.layout);
  if (t.offset)
    w.uintField(5, t.offset);
  if (t.bytes)
    w.uintField(6, t.bytes);
  if (t.groupSize)
    w.uintField(7, uint64_t(t.groupSize));
  return w;
}

Writer encodeBuffer(const Buffer &b) {
  Writer w;
  if (b.id)
    w.uintField(1, b.id);
  if (b.kind != BufferKind::Arena)
    w.uintField(2, uint64_t(b.kind));
  if (b.dtype != DType::F32)
    w.uintField(3, uint64_t(b.dtype));
  if (b.rank)
    w.uintField(4, b.rank);
  w.packedInts(5, b.maxShape);
  if (b.maxBytes)
    w.uintField(6, b.maxBytes);
  if (b.arenaOffset)
    w.uintField(7, b.arenaOffset);
  if (b.tensorIndex != -1)
    w.intField(8, b.tensorIndex);
  if (b.ioIndex != -1)
    w.intField(9, b.ioIndex);
  if (!b.name.empty())
    w.bytesField(10, b.name);
  return w;
}

Writer encodeAttr(const Attr &a) {
  Writer w;
  if (!a.name.empty())
    w.bytesField(1, a.name);
  if (a.kind != Attr::Kind::Int)
    w.uintField(2, uint64_t(a.kind));
  if (a.i)
    w.intField(3, a.i);
  if (!sameBits(a.f, 0.0))
    w.doubleField(4, a.f);
  w.packedInts(5, a.ints);
  w.packedDoubles(6, a.floats);
  if (!a.s.empty())
    w.bytesField(7, a.s);
  return w;
}

Writer encodeStep(const Step &s) {
  Writer w;
  if (!s.kernel.empty())
    w.bytesField(1, s.kernel);
  w.packedUints(2, s.inputs);
  w.packedUints(3, s.outputs);
  for (const Attr &a : s.attrs)
    w.messageField(4, encodeAttr(a));
  if (!s.origin.empty())
    w.bytesField(5, s.origin);
  return w;
}

Writer encodeIo(const IoSpec &io) {
  Writer w;
  if (!io.name.empty())
    w.bytesField(1, io.name);
  if (io.dtype != DType::F32)
    w.uintField(2, uint64_t(io.dtype));
  for (const Dim &d : io.dims) {
    Writer dw;
    if (d.size != -1)
      dw.intField(1, d.size);
    if (!d.symbol.empty())
      dw.bytesField(2, d.symbol);
    w.messageField(3, dw);
  }
  if (io.buffer)
    w.uintField(4, io.buffer);
  return w;
}

Writer encodeMemory(const MemorySummary &m) {
  Writer w;
  const uint64_t fields[] = {m.weightsBytes,         m.arenaBytes,
                             m.arenaLowerBoundBytes, m.arenaNaiveBytes,
                             m.kvCacheBytes,         m.overheadBytes};
  for (uint32_t i = 0; i < 6; ++i)
    if (fields[i])
      w.uintField(i + 1, fields[i]);
  return w;
}

//===--- Decoding ---------------------------------------------------------===//

bool decodeTensor(Reader &r, TensorEntry *t, std::string *) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return readStr(r, type, &t->name);
    case 2:
      return readDType(r, type, &t->dtype);
    case 3:
      return r.repeatedVarint(type, &t->shape);
    case 4:
      return readStr(r, type, &t->layout);
    case 5:
      return readU64(r, type, &t->offset);
    case 6:
      return readU64(r, type, &t->bytes);
    case 7: {
      uint64_t g = 0;
      if (!readU64(r, type, &g) || g > (uint64_t(1) << 40))
        return false;
      t->groupSize = int64_t(g);
      return true;
    }
    default:
      return r.skip(type);
    }
  });
}

bool decodeBuffer(Reader &r, Buffer *b, std::string *) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    uint32_t kind;
    switch (field) {
    case 1:
      return readU32(r, type, &b->id);
    case 2:
      if (!readU32(r, type, &kind))
        return false;
      if (kind < 1 || kind > 3)
        return r.fail("invalid buffer kind");
      b->kind = BufferKind(kind);
      return true;
    case 3:
      return readDType(r, type, &b->dtype);
    case 4:
      return readU32(r, type, &b->rank);
    case 5:
      return r.repeatedVarint(type, &b->maxShape);
    case 6:
      return readU64(r, type, &b->maxBytes);
    case 7:
      return readU64(r, type, &b->arenaOffset);
    case 8:
      return readI32(r, type, &b->tensorIndex);
    case 9:
      return readI32(r, type, &b->ioIndex);
    case 10:
      return readStr(r, type, &b->name);
    default:
      return r.skip(type);
    }
  });
}

bool decodeAttr(Reader &r, Attr *a, std::string *) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    uint32_t kind;
    switch (field) {
    case 1:
      return readStr(r, type, &a->name);
    case 2:
      if (!readU32(r, type, &kind))
        return false;
      if (kind < 1 || kind > 5)
        return r.fail("invalid attribute kind");
      a->kind = Attr::Kind(kind);
      return true;
    case 3:
      return readI64(r, type, &a->i);
    case 4:
      return wantType(r, type, proto::Fixed64) && r.doubleValue(&a->f);
    case 5:
      return r.repeatedVarint(type, &a->ints);
    case 6:
      return r.repeatedDouble(type, &a->floats);
    case 7:
      return readStr(r, type, &a->s);
    default:
      return r.skip(type);
    }
  });
}

/// Packed uint32 buffer ids.
bool readIds(Reader &r, uint32_t type, std::vector<uint32_t> *ids) {
  return readPackedNarrow(r, type, ids, "buffer id out of range for uint32");
}

bool decodeStep(Reader &r, Step *s, std::string *where) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return readStr(r, type, &s->kernel);
    case 2:
      return readIds(r, type, &s->inputs);
    case 3:
      return readIds(r, type, &s->outputs);
    case 4:
      return decodeElement(r, type, s->attrs, ".attrs", where, decodeAttr);
    case 5:
      return readStr(r, type, &s->origin);
    default:
      return r.skip(type);
    }
  });
}

bool decodeDim(Reader &r, Dim *d, std::string *) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return readI64(r, type, &d->size);
    case 2:
      return readStr(r, type, &d->symbol);
    default:
      return r.skip(type);
    }
  });
}

bool decodeIo(Reader &r, IoSpec *io, std::string *where) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return readStr(r, type, &io->name);
    case 2:
      return readDType(r, type, &io->dtype);
    case 3:
      return decodeElement(r, type, io->dims, ".dims", where, decodeDim);
    case 4:
      return readU32(r, type, &io->buffer);
    default:
      return r.skip(type);
    }
  });
}

bool decodeSymbol(Reader &r, SymbolBound *s, std::string *) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return readStr(r, type, &s->name);
    case 2:
      return readI64(r, type, &s->max);
    default:
      return r.skip(type);
    }
  });
}

bool decodeMemory(Reader &r, MemorySummary *m, std::string *) {
  uint64_t *fields[] = {&m->weightsBytes,         &m->arenaBytes,
                        &m->arenaLowerBoundBytes, &m->arenaNaiveBytes,
                        &m->kvCacheBytes,         &m->overheadBytes};
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    if (field >= 1 && field <= 6)
      return readU64(r, type, fields[field - 1]);
    return r.skip(type);
  });
}

bool decodeTop(Reader &r, Manifest *m, std::string *where) {
  return forEachField(r, [&](uint32_t field, uint32_t type) {
    switch (field) {
    case 1:
      return readU32(r, type, &m->formatVersion);
    case 2:
      return readStr(r, type, &m->compilerVersion);
    case 3:
      return readStr(r, type, &m->modelName);
    case 4:
      return readStr(r, type, &m->targets.emplace_back());
    case 5:
      return decodeElement(r, type, m->tensors, "tensors", where, decodeTensor);
    case 6:
      return decodeElement(r, type, m->buffers, "buffers", where, decodeBuffer);
    case 7:
      return decodeElement(r, type, m->steps, "steps", where, decodeStep);
    case 8:
      return decodeElement(r, type, m->inputs, "inputs", where, decodeIo);
    case 9:
      return decodeElement(r, type, m->outputs, "outputs", where, decodeIo);
    case 10:
      return decodeElement(r, type, m->symbols, "symbols", where, decodeSymbol);
    case 11:
      return decodeSingle(r, type, &m->memory, "memory", where, decodeMemory);
    case 12:
      return readBool(r, type, &m->hasLlm);
    case 13:
      return decodeSingle(r, type, &m->llm, "llm", where, decodeLlm);
    case 14:
      return decodeSingle(r, type, &m->tokenizer, "tokenizer", where,
                          decodeTokenizer);
    case 15:
      return decodeSingle(r, type, &m->generation, "generation", where,
                          decodeGeneration);
    default:
      return r.skip(type);
    }
  });
}

} // namespace

std::vector<uint8_t> encodeManifest(const Manifest &m) {
  Writer w;
  if (m.formatVersion != 1)
    w.uintField(1, m.formatVersion);
  if (!m.compilerVersion.empty())
    w.bytesField(2, m.compilerVersion);
  if (!m.modelName.empty())
    w.bytesField(3, m.modelName);
  for (const std::string &t : m.targets)
    w.bytesField(4, t);
  for (const TensorEntry &t : m.tensors)
    w.messageField(5, encodeTensor(t));
  for (const Buffer &b : m.buffers)
    w.messageField(6, encodeBuffer(b));
  for (const Step &s : m.steps)
    w.messageField(7, encodeStep(s));
  for (const IoSpec &io : m.inputs)
    w.messageField(8, encodeIo(io));
  for (const IoSpec &io : m.outputs)
    w.messageField(9, encodeIo(io));
  for (const SymbolBound &s : m.symbols) {
    Writer sw;
    if (!s.name.empty())
      sw.bytesField(1, s.name);
    if (s.max)
      sw.intField(2, s.max);
    w.messageField(10, sw);
  }
  Writer mem = encodeMemory(m.memory);
  if (!mem.bytes().empty())
    w.messageField(11, mem);
  if (m.hasLlm)
    w.uintField(12, 1);
  // Written whenever they differ from the defaults, so that decoding gives
  // back exactly what was encoded whatever hasLlm says.
  for (auto [field, sub] : {std::pair(13u, encodeLlm(m.llm)),
                            std::pair(14u, encodeTokenizer(m.tokenizer)),
                            std::pair(15u, encodeGeneration(m.generation))})
    if (!sub.bytes().empty())
      w.messageField(field, sub);
  return std::move(w.bytes());
}

Status decodeManifest(const uint8_t *data, size_t size, Manifest *out) {
  Manifest m;
  Reader r(data, size);
  std::string where;
  if (!decodeTop(r, &m, &where))
    return Status::error("malformed manifest" +
                         (where.empty() ? std::string() : " at " + where) +
                         ": " + r.error());
  *out = std::move(m);
  return Status::ok();
}

} // namespace ingot
