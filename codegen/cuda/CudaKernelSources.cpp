//===- CudaKernelSources.cpp - The kernel templates, embedded -------------===//
//
// codegen/kernels/cuda/*.cuh as text (CudaKernelSources.inc is generated
// by codegen/kernels/EmbedSources.cmake), handed to NVRTC as in-memory
// headers so a compile needs nothing from the source tree.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/Nvrtc.h"

namespace ingot::codegen {

const HeaderList &cudaKernelTemplateHeaders() {
  static const HeaderList headers = {
#include "CudaKernelSources.inc"
  };
  return headers;
}

} // namespace ingot::codegen
