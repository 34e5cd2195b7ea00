//===- CudaSerialize.h - Generated CUDA kernels to code objects -*- C++ -*-===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <vector>

namespace mlir {
class DialectRegistry;
class ModuleOp;
} // namespace mlir

namespace ingot::codegen {

/// What lowering the generated kernels needs in the context: the NVVM
/// target, the LLVM IR translations and the conversions to LLVM.
void registerCudaCodegen(mlir::DialectRegistry &registry);

/// Lowers gpu.module @ingot_cuda (ingot-generate-cuda-kernels) to PTX for
/// each of its chips with LLVM's NVPTX back end, in process, and assembles
/// each PTX into a cubin with nvJitLink; the PTX of the newest chip is kept
/// too, for GPUs newer than any cubin. Fills the manifest's "cuda" target
/// (code objects and the kernel of every step the pass covered) and the
/// bytes of its code section. Without @ingot_cuda, `target` gets no
/// objects and `section` stays empty.
Status serializeCudaKernels(mlir::ModuleOp module, GpuTarget *target,
                            std::vector<uint8_t> *section);

} // namespace ingot::codegen
