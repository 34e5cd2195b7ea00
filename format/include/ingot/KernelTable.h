//===- KernelTable.h - Every kernel a plan may call, once -------*- C++ -*-===//
//
// The one declaration of each kernel's contract: its name, its signature
// (KernelSignature.h) and whether an output may take over the memory of an
// input that dies at the step. The compiler's lowering checks the steps it
// emits against it, the memory planner reads in-place legality from it, the
// artifact validator checks every step of a manifest against it, and the
// runtime's CPU registry binds one implementation to each entry (a unit test
// checks that every entry has one and every implementation an entry).
// Names and semantics: docs/kernels.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/KernelSignature.h"

#include <string_view>
#include <vector>

namespace ingot {

struct KernelSpec {
  const char *name;
  /// Whether the memory planner may alias an output with an input.
  bool inPlace;
  KernelSignature sig;
};

/// Every kernel, sorted by name.
const std::vector<KernelSpec> &kernelTable();
/// The kernel named `name`, or nullptr.
const KernelSpec *findKernelSpec(std::string_view name);

} // namespace ingot
