//===- ProfileOutput.h - Writing a StepProfiler's trace ---------*- C++ -*-===//
#pragma once

#include "ingot/Profiler.h"
#include "ingot/Status.h"

#include <string>

namespace ingot::cli {

/// Writes `profiler`'s Chrome trace to `path` (via a temp file and rename,
/// so a reader never sees half a trace); the error names `flag` and `path`.
Status writeChromeTrace(const StepProfiler &profiler, const std::string &path,
                        const std::string &flag);

} // namespace ingot::cli
