//===- ShapeInferenceShapeVector.cpp - Rules of shape-vector ops ----------===//
//
// Gather, Shape and ConstantOfShape: the ops exporters use to read and
// build shape vectors. Values known here let reshapes further on resolve
// their dims.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInferenceTensor.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
namespace ingot::graph {

std::optional<bool>
inferShapeVectorOp(Operation *op, ArrayRef<ValueInfo> ins,
                   const std::vector<shape::Shape> &shapes, shape::Shape &out,
                   std::optional<std::vector<int64_t>> &values,
                   std::string &error) {
  return llvm::TypeSwitch<Operation *, std::optional<bool>>(op)
      .Case<GatherOp>([&](GatherOp g) {
        if (!shape::gather(shapes[0], shapes[1], g.getAxis(), &out, &error))
          return false;
        // Gathering entries of a 1-D shape vector by constant indices.
        if (ins[0].values && ins[1].values && shapes[0].size() == 1) {
          std::vector<int64_t> picked;
          int64_t n = static_cast<int64_t>(ins[0].values->size());
          for (int64_t idx : *ins[1].values) {
            if (idx == kUnknownValue || idx < -n || idx >= n)
              return true;
            picked.push_back((*ins[0].values)[idx < 0 ? idx + n : idx]);
          }
          values = std::move(picked);
        }
        return true;
      })
      .Case<ShapeOp>([&](ShapeOp s) {
        int64_t begin, end;
        shape::shapeOpRange(static_cast<int64_t>(shapes[0].size()),
                            s.getStart(), s.getEnd(), &begin, &end);
        std::vector<int64_t> dims;
        for (int64_t i = begin; i < end; ++i)
          dims.push_back(shapes[0][i] == shape::kDynamic ? kUnknownValue
                                                         : shapes[0][i]);
        out = {static_cast<int64_t>(dims.size())};
        values = std::move(dims);
        return true;
      })
      .Case<ConstantOfShapeOp>([&](ConstantOfShapeOp c) {
        if (shapes[0].size() != 1 || shapes[0][0] == shape::kDynamic) {
          error = "shape operand must be a 1-D tensor of static length";
          return false;
        }
        if (ins[0].values) {
          out.clear();
          for (int64_t v : *ins[0].values) {
            if (v != kUnknownValue && v < 0) {
              error = "negative dimension " + std::to_string(v);
              return false;
            }
            out.push_back(v == kUnknownValue ? shape::kDynamic : v);
          }
        } else {
          out.assign(shapes[0][0], shape::kDynamic);
        }
        int64_t n = shape::numElements(out);
        if (isTrackedTensor(c.getType()) && n != shape::kDynamic &&
            n <= kMaxTrackedValues)
          values = std::vector<int64_t>(
              n, static_cast<int64_t>(c.getValue().convertToDouble()));
        return true;
      })
      .Default([](Operation *) -> std::optional<bool> { return std::nullopt; });
}

} // namespace ingot::graph
