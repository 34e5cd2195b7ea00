//===- Nvrtc.h - CUDA C++ kernel templates to PTX in process ----*- C++ -*-===//
//
// The CUDA toolkit's NVRTC compiles the instances of codegen/kernels/cuda
// to PTX for one architecture, without a GPU, driver or nvcc. Loaded with
// dlopen on first use, like nvJitLink: only a compile for a CUDA target
// needs the toolkit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <string>
#include <utility>
#include <vector>

namespace ingot::codegen {

/// In-memory headers the program may #include: (name, text).
using HeaderList = std::vector<std::pair<std::string, std::string>>;

/// codegen/kernels/cuda/*.cuh, embedded at build time: (file name, text).
const HeaderList &cudaKernelTemplateHeaders();

/// Compiles `source` (CUDA C++) to PTX for `arch` ("sm_90"). Errors name
/// the library when it cannot be found, and carry NVRTC's log otherwise.
Status compileCudaToPtx(const std::string &source, const HeaderList &headers,
                        const std::string &arch, std::string *ptx);

} // namespace ingot::codegen
