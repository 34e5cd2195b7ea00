//===- ingot-opt.cpp - mlir-opt with ingot's dialects and passes ----------===//
#include "codegen/Passes.h"
#include "codegen/cuda/CudaSerialize.h"
#include "passes/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<ingot::graph::IngotDialect, ingot::plan::PlanDialect,
                  mlir::func::FuncDialect>();
  ingot::codegen::registerCudaCodegen(registry);
  ingot::registerIngotPasses();
  ingot::codegen::registerIngotCodegenPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  // The codegen phase's lowering, for lit tests of the generated kernels.
  mlir::registerPass([] { return mlir::createConvertGpuOpsToNVVMOps(); });
  mlir::registerGpuModuleToBinaryPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ingot optimizer driver\n", registry));
}
