//===- GgmlType.cpp - Tensor element types of a GGUF file -----------------===//
//
// Block sizes are ggml's: a quantised block stores its f16 scale (and min)
// next to the packed values, so blockBytes counts both.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgmlType.h"

#include <limits>

namespace ingot::compiler::gguf {
namespace {

// In the order supportedGgmlTypes lists them: plain floats, then the block
// formats from the simplest to the K-quants.
constexpr GgmlTypeTraits kKnownTypes[] = {
    {GgmlType::F32, "F32", 1, 4},       {GgmlType::F16, "F16", 1, 2},
    {GgmlType::BF16, "BF16", 1, 2},     {GgmlType::Q4_0, "Q4_0", 32, 18},
    {GgmlType::Q4_1, "Q4_1", 32, 20},   {GgmlType::Q5_0, "Q5_0", 32, 22},
    {GgmlType::Q5_1, "Q5_1", 32, 24},   {GgmlType::Q8_0, "Q8_0", 32, 34},
    {GgmlType::Q4_K, "Q4_K", 256, 144}, {GgmlType::Q5_K, "Q5_K", 256, 176},
    {GgmlType::Q6_K, "Q6_K", 256, 210},
};

} // namespace

std::optional<GgmlTypeTraits> ggmlTypeTraits(uint32_t id) {
  for (const GgmlTypeTraits &t : kKnownTypes)
    if (static_cast<uint32_t>(t.type) == id)
      return t;
  return std::nullopt;
}

std::string ggmlTypeName(uint32_t id) {
  if (std::optional<GgmlTypeTraits> t = ggmlTypeTraits(id))
    return t->name;
  return "type " + std::to_string(id);
}

std::string supportedGgmlTypes() {
  std::string list;
  for (const GgmlTypeTraits &t : kKnownTypes) {
    if (!list.empty())
      list += ", ";
    list += t.name;
  }
  return list;
}

int64_t ggmlRowBytes(const GgmlTypeTraits &t, int64_t k) {
  if (k < 0 || t.blockValues <= 0 || t.blockBytes <= 0 ||
      k % t.blockValues != 0)
    return -1;
  int64_t blocks = k / t.blockValues;
  // A corrupt file can claim any row length; refuse rather than wrap.
  if (blocks > std::numeric_limits<int64_t>::max() / t.blockBytes)
    return -1;
  return blocks * t.blockBytes;
}

} // namespace ingot::compiler::gguf
