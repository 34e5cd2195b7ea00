//===- IngotDialect.cpp - The ingot graph dialect -------------------------===//
#include "dialects/Ingot/IngotDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace ingot::graph;

#include "dialects/Ingot/IngotDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Ingot/IngotAttrs.cpp.inc"

LogicalResult
QuantAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                  StringRef format, int64_t group) {
  static const char *kFormats[] = {"q8", "q4", "q4m", "f8e4m3"};
  if (!llvm::is_contained(kFormats, format))
    return emitError() << "unknown quantised format \"" << format
                       << "\"; known: q8, q4, q4m, f8e4m3";
  if (group < 1)
    return emitError() << "quantisation group must be >= 1, got " << group;
  return success();
}

void IngotDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Ingot/IngotAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Ingot/IngotOps.cpp.inc"
      >();
}

Operation *IngotDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

namespace ingot::graph {

shape::Shape shapeOf(Type type) {
  auto ranked = cast<RankedTensorType>(type);
  shape::Shape s;
  for (int64_t d : ranked.getShape())
    s.push_back(ShapedType::isDynamic(d) ? shape::kDynamic : d);
  return s;
}

bool isCompatibleShape(const shape::Shape &actual,
                       const shape::Shape &inferred) {
  if (actual.size() != inferred.size())
    return false;
  for (size_t i = 0; i < actual.size(); ++i)
    if (actual[i] != shape::kDynamic && inferred[i] != shape::kDynamic &&
        actual[i] != inferred[i])
      return false;
  return true;
}

} // namespace ingot::graph
