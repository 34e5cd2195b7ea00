//===- InputValidation.h - Checks a run's inputs ----------------*- C++ -*-===//
#pragma once

#include "ingot/Executor.h"
#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <vector>

namespace ingot {

/// Checks `inputs` against the model's inputs in `m` (every one given once,
/// dtype, rank, fixed dims, consistent symbol values within their compiled
/// maxima, data size, buffer bound); on success `ioIndex` holds, per given
/// input, the index of its IoSpec in m.inputs.
Status validateInputs(const Manifest &m, const std::vector<NamedTensor> &inputs,
                      std::vector<size_t> *ioIndex);

} // namespace ingot
