//===- GenerateCudaKernels.cpp - Elementwise steps as CUDA kernels --------===//
//
// One gpu.module holds every generated kernel with one #nvvm.target per
// chip, so the serialiser (codegen/cuda/CudaSerialize.cpp) lowers the
// kernels once per architecture from the same IR.
//
//===----------------------------------------------------------------------===//
#include "codegen/Passes.h"
#include "codegen/cuda/CudaTargets.h"
#include "codegen/gpu/ElementwiseKernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace ingot::codegen {
#define GEN_PASS_DEF_GENERATECUDAKERNELS
#include "codegen/Passes.h.inc"
} // namespace ingot::codegen

using namespace mlir;
using namespace ingot;
using namespace ingot::codegen;

namespace {

/// The launch description the artifact writer copies into the manifest.
DictionaryAttr launchAttr(OpBuilder &b, const ElementwiseLaunch &launch) {
  std::vector<int64_t> args;
  for (const GpuArgSpec &a : launch.args) {
    args.push_back(static_cast<int64_t>(a.kind));
    args.push_back(a.operand);
    args.push_back(a.axis);
  }
  auto symbol = SymbolRefAttr::get(
      b.getStringAttr(kCudaModuleName),
      {FlatSymbolRefAttr::get(b.getStringAttr(launch.symbol))});
  return b.getDictionaryAttr({
      b.getNamedAttr("symbol", symbol),
      b.getNamedAttr("block", b.getI64IntegerAttr(launch.blockSize)),
      b.getNamedAttr("grid_operand", b.getI64IntegerAttr(launch.gridOperand)),
      b.getNamedAttr("args", b.getDenseI64ArrayAttr(args)),
  });
}

struct GenerateCudaKernelsPass
    : public ingot::codegen::impl::GenerateCudaKernelsBase<
          GenerateCudaKernelsPass> {
  using GenerateCudaKernelsBase::GenerateCudaKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (chips.empty()) {
      module.emitError("ingot-generate-cuda-kernels: no chips given");
      return signalPassFailure();
    }
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32) {
      module.emitError("block-size must be a multiple of 32 in [32, 1024]");
      return signalPassFailure();
    }
    SmallVector<Attribute> targets;
    for (const std::string &chip : chips) {
      std::string features = ptxFeaturesFor(chip);
      if (features.empty()) {
        module.emitError("unknown CUDA architecture '")
            << chip << "'; known: " << knownCudaArchs();
        return signalPassFailure();
      }
      targets.push_back(NVVM::NVVMTargetAttr::get(
          ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", chip, features));
    }

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(
        b, module.getLoc(), kCudaModuleName, b.getArrayAttr(targets));
    // Collected first: the walk must not see the kernels being added.
    SmallVector<plan::KernelOp> steps;
    module.walk([&](plan::KernelOp kernel) { steps.push_back(kernel); });
    for (auto [index, kernel] : llvm::enumerate(steps)) {
      std::string whyNot;
      std::optional<fused::Program> program =
          elementwiseProgram(kernel, &whyNot);
      if (!program) {
        if (explain)
          kernel.emitRemark("no generated CUDA kernel: ") << whyNot;
        continue;
      }
      std::string symbol =
          "ingot_s" + std::to_string(index) + "_" + kernel.getKernel().str();
      ElementwiseLaunch launch = buildElementwiseKernel(
          b, gpuModule, kernel, *program, symbol, blockSize);
      kernel->setAttr(kCudaKernelAttr, launchAttr(b, launch));
    }
    if (gpuModule.getBody()->empty())
      gpuModule.erase();
    else
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      b.getUnitAttr());
  }
};

} // namespace
