//===- ExecutorMessages.h - How the executor names things -------*- C++ -*-===//
//
// The executor's errors name inputs, buffers and steps the same way
// everywhere; these are those names, and the check that a model output was
// computed with the shape its IoSpec declares.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/ShapeRules.h"
#include "ingot/Status.h"

#include <string>

namespace ingot {

/// "name: float32[tokens,576]"
std::string describeIo(const IoSpec &io);
/// Every model input, one per line, or " (none)".
std::string describeInputs(const Manifest &m);
/// "buffer #7 'x'"
std::string describeBuffer(const Buffer &b);
/// The name kernels use for a buffer in messages.
std::string bufferLabel(const Buffer &b);
/// "step 3 (linear, node 'fc1')"
std::string describeStep(const Step &s, size_t index);

/// Callers size their reads of an output by its declared fixed dims (the
/// engine reads vocab_size logits per row): the computed shape must match.
Status checkOutputShape(const IoSpec &io, const shape::Shape &shape);

} // namespace ingot
