//===- Targets.h - The --target list of a compile ---------------*- C++ -*-===//
#pragma once

#include "ingot/Status.h"

#include <string>
#include <vector>

namespace ingot::compiler {

/// What one compile builds for, parsed from --target values such as
/// "cpu", "cuda" (= cuda:sm_80,cuda:sm_90) and "cuda:sm_90", each possibly
/// a comma-separated list.
struct TargetList {
  std::vector<std::string> cudaArchs; // ascending: sm_80, sm_90, ...
  /// The manifest's targets: "cpu" first (the plan every artifact can run
  /// on the CPU), then "cuda:sm_XX" per architecture. Same set, same order,
  /// whatever order the flags came in, so artifacts stay byte-identical.
  std::vector<std::string> names;
};

Status parseTargets(const std::vector<std::string> &specs, TargetList *out);

} // namespace ingot::compiler
