//===- ExternalWeights.h - Weights an artifact keeps outside ----*- C++ -*-===//
//
// An artifact compiled with --weights=external names the safetensors files
// and tensors its weights are made from, and how (ingot/Manifest.h's
// WeightTransform). At load the runtime reads those files from the
// directory the user gives (--weights DIR), checks each listed tensor's
// dtype and shape against what the compiler saw, and makes every external
// tensor's bytes with the compiler's own producer (ingot/ParamProducer.h),
// so they equal the bytes an embedded artifact would hold.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <string>

namespace ingot {

/// Writes every external tensor of `m` at its offset in `space`, which
/// holds m.externalWeights.spaceBytes bytes. Errors name the file and the
/// tensor: a missing file or tensor, another dtype or shape, a damaged
/// header, or a NaN or infinity among the values.
Status loadExternalWeights(const Manifest &m, const std::string &dir,
                           uint8_t *space);

} // namespace ingot
