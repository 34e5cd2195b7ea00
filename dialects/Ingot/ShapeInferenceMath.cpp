//===- ShapeInferenceMath.cpp - Shape rules of the coverage ops ------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"

using namespace mlir;

namespace ingot::graph {

std::optional<bool> inferMathOp(Operation *op, ArrayRef<ValueInfo> ins,
                                shape::Shape &out,
                                std::optional<std::vector<int64_t>> &values,
                                std::string &error) {
  return std::nullopt;
}

} // namespace ingot::graph
