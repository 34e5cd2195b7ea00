//===- GgmlType.h - Tensor element types of a GGUF file ---------*- C++ -*-===//
//
// Private to the GGUF importer. The type ids are ggml's `enum ggml_type`
// (ggml.h), which GGUF tensor infos store as a uint32. Quantised types pack
// `blockValues` consecutive values of a row (along ne0, the innermost GGUF
// dimension) into `blockBytes` bytes; a row's length must be a multiple of
// blockValues.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ingot::compiler::gguf {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
};

struct GgmlTypeTraits {
  GgmlType type;
  const char *name;  // as llama.cpp prints it
  int64_t blockValues;
  int64_t blockBytes;
};

/// The traits of a type id ingot reads; nullopt for the others (IQ*, Q2_K,
/// Q3_K, Q8_1, Q8_K, integer types).
std::optional<GgmlTypeTraits> ggmlTypeTraits(uint32_t id);

/// "Q4_K" for a known id, "type 23" otherwise.
std::string ggmlTypeName(uint32_t id);

/// The ids ingot reads, for messages: "F32, F16, BF16, Q8_0, ...".
std::string supportedGgmlTypes();

/// Bytes of a row of `k` values, or -1 when k is not a whole number of
/// blocks.
int64_t ggmlRowBytes(const GgmlTypeTraits &t, int64_t k);

} // namespace ingot::compiler::gguf
