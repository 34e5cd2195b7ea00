//===- ingot-opt.cpp - mlir-opt with ingot's dialects and passes ----------===//
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<ingot::graph::IngotDialect, ingot::plan::PlanDialect,
                  mlir::func::FuncDialect>();
  ingot::registerIngotPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ingot optimizer driver\n", registry));
}
