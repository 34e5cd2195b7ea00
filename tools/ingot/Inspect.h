//===- Inspect.h - Shared parts of `ingot inspect` --------------*- C++ -*-===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/MemoryFootprint.h"

#include <string>

namespace ingot::cli {

const char *kindName(BufferKind k);
/// A dynamic dim's name; "?" when the compiler did not name it.
std::string dimSymbol(const Dim &d);
uint64_t totalBytes(const MemorySummary &m);
/// The artifact and its memory footprint as one JSON object (--json).
std::string inspectJson(const Artifact &art, const MemoryFootprint &fp);

} // namespace ingot::cli
