//===- DecomposedGelu.h - GELU as exporters write it ------------*- C++ -*-===//
//
// PyTorch's ONNX export writes GELU as elementwise ops: the erf form
// 0.5 · x · (1 + erf(x / √2)) and the tanh form
// 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))), with the three
// factors multiplied in any order and x / √2 as a div or a mul by 1/√2.
// matchDecomposedGelu recognises them from the last multiply.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Ingot/IngotDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace ingot {

struct DecomposedGelu {
  mlir::Value input;     // x
  bool tanhForm = false; // else the erf form
  /// Every op of the pattern but the root, producers before users; each
  /// reads only x, constants and the others, and is read only by them.
  llvm::SmallVector<mlir::Operation *> inner;
};

/// The GELU whose final multiply is `root`, if it is one.
std::optional<DecomposedGelu> matchDecomposedGelu(graph::MulOp root);

} // namespace ingot
