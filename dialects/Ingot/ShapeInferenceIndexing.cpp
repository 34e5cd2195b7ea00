//===- ShapeInferenceIndexing.cpp - Shape rules of the indexing ops -------===//
//
// GatherElements, ScatterND, TopK, OneHot and NonZero (IngotTensorOps.td):
// results shaped by an index tensor, a k, a depth, or (NonZero) by run-time
// data, whose count boundTensorResult bounds.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInferenceTensor.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace ingot::graph {
namespace {

constexpr int64_t kDyn = shape::kDynamic;

bool inferTopK(TopKOp t, ArrayRef<ValueInfo> ins, shape::Shape &out,
               std::string &error) {
  int64_t axis;
  if (!shape::normalizeAxis(t.getAxis(), ins[0].shape.size(), &axis)) {
    error = "topk axis is out of range";
    return false;
  }
  out = ins[0].shape;
  int64_t k = allValuesKnown(ins[1].values) && ins[1].values->size() == 1
                  ? (*ins[1].values)[0]
                  : kDyn;
  if (k != kDyn && (k < 0 || (out[axis] != kDyn && k > out[axis]))) {
    error = "k = " + std::to_string(k) +
            " is out of range for axis "
            "size " +
            std::to_string(out[axis]);
    return false;
  }
  out[axis] = k;
  return true;
}

bool inferOneHot(OneHotOp o, ArrayRef<ValueInfo> ins, shape::Shape &out,
                 std::string &error) {
  int64_t rank = ins[0].shape.size(), axis = o.getAxis(),
          depth = o.getDepth();
  if (axis < 0)
    axis += rank + 1;
  if (axis < 0 || axis > rank || depth < 1 ||
      shape::numElements(ins[1].shape) != 2) {
    error = "one_hot needs axis in [-rank-1, rank], depth >= 1 and "
            "two values";
    return false;
  }
  out = ins[0].shape;
  out.insert(out.begin() + axis, depth);
  return true;
}

} // namespace

std::optional<bool> inferIndexingOp(Operation *op, ArrayRef<ValueInfo> ins,
                                    shape::Shape &out, std::string &error) {
  using Result = std::optional<bool>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<GatherElementsOp>([&](GatherElementsOp g) -> Result {
        int64_t axis;
        if (ins[0].shape.size() != ins[1].shape.size() ||
            !shape::normalizeAxis(g.getAxis(), ins[0].shape.size(), &axis)) {
          error = "data and indices must have the same rank and axis must "
                  "be in range";
          return false;
        }
        out = ins[1].shape;
        return true;
      })
      .Case<ScatterNDOp>([&](ScatterNDOp) -> Result {
        out = ins[0].shape;
        return true;
      })
      .Case<TopKOp>(
          [&](TopKOp t) -> Result { return inferTopK(t, ins, out, error); })
      .Case<OneHotOp>(
          [&](OneHotOp o) -> Result { return inferOneHot(o, ins, out, error); })
      .Case<NonZeroOp>([&](NonZeroOp) -> Result {
        out = {int64_t(ins[0].shape.size()), kDyn};
        return true;
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace ingot::graph
