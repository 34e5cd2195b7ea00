//===- NvJitLink.h - PTX to cubin in process with nvJitLink -----*- C++ -*-===//
//
// The CUDA toolkit's nvJitLink library assembles PTX into a cubin for one
// architecture without a GPU or driver. It is loaded with dlopen on first
// use, so ingot builds and runs without the toolkit and only a compile for
// a CUDA target needs it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::codegen {

/// Assembles `ptx` into a cubin for `arch` ("sm_90"). Errors name the
/// library when it cannot be found, and carry nvJitLink's log otherwise.
Status linkPtxToCubin(const std::string &ptx, const std::string &arch,
                      std::vector<uint8_t> *cubin);
/// Assembles several PTX modules (generated kernels and template
/// instances) into one cubin for `arch`.
Status linkPtxsToCubin(const std::vector<std::string> &ptxs,
                       const std::string &arch, std::vector<uint8_t> *cubin);

} // namespace ingot::codegen
