//===- Inspect.h - Shared parts of `ingot inspect` --------------*- C++ -*-===//
#pragma once

#include "JsonText.h"
#include "ingot/Artifact.h"
#include "ingot/MemoryFootprint.h"

#include <string>
#include <vector>

namespace ingot::cli {

const char *kindName(BufferKind k);
/// A dynamic dim's name; "?" when the compiler did not name it.
std::string dimSymbol(const Dim &d);
uint64_t totalBytes(const MemorySummary &m);
/// The artifact and its memory footprint as one JSON object (--json).
std::string inspectJson(const Artifact &art, const MemoryFootprint &fp);
/// Prints rows with each column padded to its widest cell.
void printTable(const std::vector<std::vector<std::string>> &rows);

// InspectCode.cpp: the GPU targets' code objects.
void printGpuTargets(const Artifact &art);
/// "cuda.sm_90.cubin": the file --extract-code writes for one object.
std::string codeObjectFileName(const GpuTarget &t, size_t index);
Status extractCode(const Artifact &art, const std::string &dir);
/// Per GPU target: its code objects (with what their ELF says) and kernels.
OrderedJson jsonGpuTargets(const Artifact &art);

} // namespace ingot::cli

namespace ingot::cli {

/// The weight bytes of one storage format (a dtype) in an artifact.
struct WeightFormatTotal {
  std::string format;    // dtypeName: "float32", "q8", "q4m", ...
  int64_t groupSize = 0; // quantised: the tensors' group size, -1 if mixed
  bool perChannel = true; // quantised: every tensor one group per row
  uint64_t tensors = 0, elements = 0, bytes = 0;
  double bitsPerWeight() const {
    return elements ? 8.0 * double(bytes) / double(elements) : 0;
  }
};

/// Weight bytes by format, largest first.
std::vector<WeightFormatTotal> weightFormats(const Manifest &m);
/// The lm_head's weight tensor (the linear step whose node is "lm_head"),
/// or nullptr when the plan has none.
const TensorEntry *lmHeadWeight(const Manifest &m);
/// The table the first gather of a weight reads (an LLM's embedding), or
/// nullptr when no gather reads one.
const TensorEntry *embeddingTable(const Manifest &m);

} // namespace ingot::cli
