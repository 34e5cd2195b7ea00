//===- CudaSerialize.h - Generated CUDA kernels to code objects -*- C++ -*-===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class ModuleOp;
} // namespace mlir

namespace ingot::codegen {

/// What lowering the generated kernels needs in the context: the NVVM
/// target, the LLVM IR translations and the conversions to LLVM.
void registerCudaCodegen(mlir::DialectRegistry &registry);

/// Builds the CUDA code of `module` for each of `archs`: gpu.module
/// @ingot_cuda (ingot-generate-cuda-kernels) lowered to PTX with LLVM's
/// NVPTX back end, and the steps' template instances
/// (ingot-instantiate-cuda-templates) compiled to PTX with NVRTC, all in
/// process; nvJitLink links both into one cubin per architecture, and the
/// PTX of the newest is kept too (one object per source), for GPUs newer
/// than any cubin. Fills the manifest's "cuda" target (code objects and the
/// launches of every covered step) and the bytes of its code section. With
/// no kernel at all, `target` gets no objects and `section` stays empty.
Status serializeCudaKernels(mlir::ModuleOp module,
                            const std::vector<std::string> &archs,
                            GpuTarget *target, std::vector<uint8_t> *section);

} // namespace ingot::codegen
