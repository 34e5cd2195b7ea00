//===- ParamProducer.cpp - Bytes of a planned weight tensor ---------------===//
#include "ingot/ParamProducer.h"

#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

#include <cstring>

namespace ingot {
namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The row-major bytes of `spec`: its parts interleaved along concatAxis
/// (each part contributes a contiguous run per index of the outer dims).
Status materialise(WeightSource &weights, const ParamSpec &spec,
                   std::vector<uint8_t> &out) {
  uint64_t total = spec.elemBytes, outer = 1;
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    total *= uint64_t(spec.shape[d]);
    if (int64_t(d) < spec.concatAxis)
      outer *= uint64_t(spec.shape[d]);
  }
  std::vector<std::string> parts = spec.parts;
  if (parts.empty())
    parts.push_back(spec.name);
  if (parts.size() == 1) {
    // One source tensor is already row-major: read it in place, so that
    // quantising it holds the tensor once, not twice.
    out.clear();
    out.reserve(total);
    if (Status s = weights.produce(parts[0],
                                   [&](const void *p, size_t n) {
                                     auto *c = static_cast<const uint8_t *>(p);
                                     out.insert(out.end(), c, c + n);
                                   });
        !s)
      return s;
    if (out.size() != total)
      return Status::error("weight '" + spec.name + "': part '" + parts[0] +
                           "' has " + std::to_string(out.size()) +
                           " bytes but " + shapeText(spec.shape) + " needs " +
                           std::to_string(total));
    return Status::ok();
  }
  std::vector<std::vector<uint8_t>> bytes(parts.size());
  uint64_t sum = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::vector<uint8_t> &b = bytes[i];
    if (Status s = weights.produce(parts[i],
                                   [&](const void *p, size_t n) {
                                     auto *c = static_cast<const uint8_t *>(p);
                                     b.insert(b.end(), c, c + n);
                                   });
        !s)
      return s;
    if (outer == 0 || b.size() % outer)
      return Status::error("weight '" + spec.name + "': part '" + parts[i] +
                           "' has " + std::to_string(b.size()) +
                           " bytes, not a whole number of slices for " +
                           shapeText(spec.shape));
    sum += b.size();
  }
  if (sum != total)
    return Status::error("weight '" + spec.name + "': parts hold " +
                         std::to_string(sum) + " bytes but " +
                         shapeText(spec.shape) + " needs " +
                         std::to_string(total));
  out.resize(total);
  uint8_t *dst = out.data();
  for (uint64_t o = 0; o < outer; ++o)
    for (const std::vector<uint8_t> &b : bytes) {
      const uint64_t run = b.size() / outer;
      std::memcpy(dst, b.data() + o * run, run);
      dst += run;
    }
  return Status::ok();
}

/// Row-major parts concatenated along dim 0 are the parts one after the
/// other: streamed, like a plain tensor, with the total checked.
Status streamRows(WeightSource &weights, const ParamSpec &spec,
                  const ByteSink &sink) {
  uint64_t total = spec.elemBytes, written = 0;
  for (int64_t d : spec.shape)
    total *= uint64_t(d);
  for (const std::string &part : spec.parts)
    if (Status s = weights.produce(part,
                                   [&](const void *p, size_t n) {
                                     written += n;
                                     if (written <= total)
                                       sink(p, n);
                                   });
        !s)
      return s;
  if (written != total)
    return Status::error("weight '" + spec.name + "': parts hold " +
                         std::to_string(written) + " bytes but " +
                         shapeText(spec.shape) + " needs " +
                         std::to_string(total));
  return Status::ok();
}

/// The row-major values of `spec` quantised into its block format.
Status quantise(const ParamSpec &spec, const std::vector<uint8_t> &rowMajor,
                const ByteSink &sink) {
  if (spec.shape.size() != 2)
    return Status::error("weight '" + spec.name + "': quantising needs a " +
                         "2-D tensor, got " + shapeText(spec.shape));
  const int64_t n = spec.shape[0], k = spec.shape[1];
  const int64_t bytes = quantTensorBytes(spec.quant, n, k, spec.group);
  if (bytes < 0)
    return Status::error("weight '" + spec.name + "': invalid quantisation " +
                         "group " + std::to_string(spec.group));
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  QuantOptions o;
  o.format = spec.quant;
  o.group = spec.group;
  if (Status s =
          quantizeTensor(o, spec.elemType, rowMajor.data(), n, k, out.data());
      !s)
    return Status::error("weight '" + spec.name + "': " + s.message());
  sink(out.data(), out.size());
  return Status::ok();
}

/// Whether every part of `spec` is stored in exactly its block format, so
/// the stored bytes are the param's bytes: rows of blocks concatenate along
/// dim 0 as the values do.
bool storedAsIs(const WeightSource &weights, const ParamSpec &spec) {
  if (!isQuantDType(spec.quant) || spec.layout != "row-major" ||
      spec.concatAxis != 0 || spec.shape.size() != 2)
    return false;
  std::vector<std::string> parts = spec.parts;
  if (parts.empty())
    parts.push_back(spec.name);
  for (const std::string &part : parts) {
    std::optional<WeightSource::Blocks> b = weights.storedBlocks(part);
    if (!b || b->format != spec.quant || b->group != spec.group)
      return false;
  }
  return true;
}

/// The stored blocks of every part, one after the other, size-checked.
Status streamStored(WeightSource &weights, const ParamSpec &spec,
                    const ByteSink &sink) {
  const int64_t total =
      quantTensorBytes(spec.quant, spec.shape[0], spec.shape[1], spec.group);
  uint64_t written = 0;
  std::vector<std::string> parts = spec.parts;
  if (parts.empty())
    parts.push_back(spec.name);
  for (const std::string &part : parts)
    if (Status s = weights.produceStored(part,
                                         [&](const void *p, size_t n) {
                                           written += n;
                                           if (written <= uint64_t(total))
                                             sink(p, n);
                                         });
        !s)
      return s;
  if (total < 0 || written != uint64_t(total))
    return Status::error(
        "weight '" + spec.name + "': stored blocks hold " +
        std::to_string(written) + " bytes but " + shapeText(spec.shape) +
        " in " + dtypeName(spec.quant) + " needs " + std::to_string(total));
  return Status::ok();
}

} // namespace

/// "q16": the row-major blocks (kept from the source or quantised), then
/// repacked into panels (WeightLayout.h).
static Status produceQ16(WeightSource &weights, const ParamSpec &spec,
                         const ByteSink &sink) {
  if (spec.shape.size() != 2)
    return Status::error("weight '" + spec.name + "': layout q16 needs a " +
                         "2-D tensor, got " + shapeText(spec.shape));
  ParamSpec rowMajor = spec;
  rowMajor.layout = "row-major";
  std::vector<uint8_t> blocks;
  if (Status s = produceParam(weights, rowMajor,
                              [&](const void *p, size_t n) {
                                auto *c = static_cast<const uint8_t *>(p);
                                blocks.insert(blocks.end(), c, c + n);
                              });
      !s)
    return s;
  if (int64_t(blocks.size()) !=
      quantTensorBytes(spec.quant, spec.shape[0], spec.shape[1], spec.group))
    return Status::error("weight '" + spec.name + "': its blocks hold " +
                         std::to_string(blocks.size()) + " bytes, not those " +
                         "of " + shapeText(spec.shape) + " in groups of " +
                         std::to_string(spec.group));
  std::vector<uint8_t> packed(blocks.size());
  if (Status s = packQ16(spec.quant, blocks.data(), spec.shape[0],
                         spec.shape[1], spec.group, packed.data());
      !s)
    return Status::error("weight '" + spec.name + "': " + s.message());
  sink(packed.data(), packed.size());
  return Status::ok();
}

Status produceParam(WeightSource &weights, const ParamSpec &spec,
                    const ByteSink &sink) {
  if (spec.layout == "q16")
    return produceQ16(weights, spec, sink);
  if (storedAsIs(weights, spec))
    return streamStored(weights, spec, sink);
  const bool plain = spec.layout == "row-major" && !isQuantDType(spec.quant);
  if (spec.parts.empty() && plain)
    return weights.produce(spec.name, sink);
  if (plain && spec.concatAxis == 0)
    return streamRows(weights, spec, sink);
  std::vector<uint8_t> rowMajor;
  if (Status s = materialise(weights, spec, rowMajor); !s)
    return s;
  if (isQuantDType(spec.quant))
    return quantise(spec, rowMajor, sink);
  if (spec.layout == "row-major") {
    sink(rowMajor.data(), rowMajor.size());
    return Status::ok();
  }
  if (spec.shape.size() != 2)
    return Status::error("weight '" + spec.name + "': layout '" + spec.layout +
                         "' needs a 2-D tensor, got " + shapeText(spec.shape));
  std::vector<uint8_t> packed(rowMajor.size());
  if (Status s = packWeight(spec.layout, rowMajor.data(), spec.shape[0],
                            spec.shape[1], spec.elemBytes, packed.data());
      !s)
    return Status::error("weight '" + spec.name + "': " + s.message());
  sink(packed.data(), packed.size());
  return Status::ok();
}

ParamSpec paramSpecOf(const TensorEntry &t) {
  ParamSpec spec;
  spec.name = t.name;
  spec.parts = t.transform.parts;
  spec.concatAxis = t.transform.concatAxis;
  spec.layout = t.layout;
  spec.shape = t.shape;
  spec.elemType = t.transform.sourceType;
  spec.elemBytes = dtypeSize(t.transform.sourceType);
  if (isQuantDType(t.dtype)) {
    spec.quant = t.dtype;
    spec.group = t.groupSize;
  }
  return spec;
}

} // namespace ingot
