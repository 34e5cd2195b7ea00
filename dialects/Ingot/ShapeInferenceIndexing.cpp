//===- ShapeInferenceIndexing.cpp - Shape rules of the indexing ops -------===//
//
// GatherElements, ScatterND, TopK, OneHot, NonZero and NonMaxSuppression
// (IngotIndexOps.td): results shaped by an index tensor, a k, a depth, or
// (NonZero, NonMaxSuppression) by run-time data, whose count
// boundTensorResult bounds.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInferenceTensor.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace ingot::graph {
namespace {

/// Same rank, and equal dims where both are known.
bool compatibleShapes(const shape::Shape &a, const shape::Shape &b) {
  if (a.size() != b.size())
    return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (a[d] != b[d] && a[d] != shape::kDynamic && b[d] != shape::kDynamic)
      return false;
  return true;
}

constexpr int64_t kDyn = shape::kDynamic;

/// boxes [B, N, 4] and scores [B, C, N] -> [?, 3].
bool inferNonMaxSuppression(ArrayRef<ValueInfo> ins, shape::Shape &out,
                            std::string &error) {
  const shape::Shape &boxes = ins[0].shape, &scores = ins[1].shape;
  auto same = [](int64_t a, int64_t b) {
    return a == b || a == kDyn || b == kDyn;
  };
  if (boxes.size() != 3 || !same(boxes[2], 4) || scores.size() != 3 ||
      !same(boxes[0], scores[0]) || !same(boxes[1], scores[2])) {
    error = "boxes must be [B, N, 4] and scores [B, C, N], got " +
            shape::toString(boxes) + " and " + shape::toString(scores);
    return false;
  }
  out = {kDyn, 3};
  return true;
}

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
  int64_t rank = ins[0].shape.size(), axis = o.getAxis();
  if (o.getDepth().has_value() == bool(o.getDepthValue())) {
    error = "one_hot needs exactly one of the depth attribute and operand";
    return false;
  }
  // A run-time depth known by value tracking sizes the dim all the same.
  int64_t depth = o.getDepth().value_or(kDyn);
  if (ins.size() > 2 && !ins[2].shape.empty() &&
      shape::numElements(ins[2].shape) != kDyn &&
      shape::numElements(ins[2].shape) != 1) {
    error = "one_hot's depth operand must hold one value";
    return false;
  }
  if (ins.size() > 2 && allValuesKnown(ins[2].values))
    depth = (*ins[2].values)[0];
  if (axis < 0)
    axis += rank + 1;
  const int64_t values = shape::numElements(ins[1].shape);
  if (axis < 0 || axis > rank || (depth != kDyn && depth < 1) ||
      (values != kDyn && values != 2)) {
    error = "one_hot needs axis in [-rank-1, rank], depth >= 1 and "
            "two values";
    return false;
  }
  out = ins[0].shape;
  out.insert(out.begin() + axis, depth);
  return true;
}

/// indices.shape[:-1] + data.shape[b + k:], k the tuples' static length.
bool inferGatherND(GatherNDOp g, ArrayRef<ValueInfo> ins, shape::Shape &out,
                   std::string &error) {
  const shape::Shape &data = ins[0].shape, &idx = ins[1].shape;
  const int64_t b = g.getBatchDims(), r = data.size(), q = idx.size();
  if (q < 1 || idx.back() == kDyn) {
    error = "indices need a last dim of static length";
    return false;
  }
  const int64_t k = idx.back();
  if (b < 0 || b >= std::min(r, q) || k < 1 || k > r - b) {
    error = "batch_dims " + std::to_string(b) + " and index tuples of " +
            std::to_string(k) + " do not fit data " + shape::toString(data);
    return false;
  }
  for (int64_t d = 0; d < b; ++d)
    if (data[d] != kDyn && idx[d] != kDyn && data[d] != idx[d]) {
      error = "batch dim " + std::to_string(d) + " differs: data " +
              shape::toString(data) + ", indices " + shape::toString(idx);
      return false;
    }
  out.assign(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + k, data.end());
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
      .Case<GatherNDOp>([&](GatherNDOp g) -> Result {
        return inferGatherND(g, ins, out, error);
      })
      .Case<ScatterNDOp>([&](ScatterNDOp) -> Result {
        out = ins[0].shape;
        return true;
      })
      .Case<ScatterElementsOp>([&](ScatterElementsOp s) -> Result {
        int64_t axis;
        if (ins[1].shape.size() != ins[0].shape.size() ||
            !compatibleShapes(ins[1].shape, ins[2].shape) ||
            !shape::normalizeAxis(s.getAxis(), ins[0].shape.size(), &axis)) {
          error = "indices and updates must share a shape of the data's "
                  "rank, and axis must be in range";
          return false;
        }
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
      .Case<NonMaxSuppressionOp>([&](NonMaxSuppressionOp) -> Result {
        return inferNonMaxSuppression(ins, out, error);
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Upper bounds of the dims that depend on run-time data, for bound
/// computation when every input dim is known: a slice or top-k never
/// exceeds the input dim, NonZero finds at most numel elements,
/// NonMaxSuppression keeps at most min(N, its maximum) boxes per batch
/// and class (N when the maximum is a run-time operand). nullopt when `op`
/// has no such bound.
std::optional<shape::Shape> boundTensorResult(Operation *op,
                                              ArrayRef<ValueInfo> ins,
                                              const shape::Shape &inferred) {
  shape::Shape bound = inferred;
  const shape::Shape &in = ins[0].shape;
  if (isa<NonZeroOp>(op)) {
    int64_t n = shape::numElements(in);
    if (n == kDyn)
      return std::nullopt;
    bound[1] = n;
    return bound;
  }
  if (auto nms = dyn_cast<NonMaxSuppressionOp>(op)) {
    const shape::Shape &scores = ins[1].shape;
    if (shape::numElements(scores) == kDyn)
      return std::nullopt;
    const int64_t perClass =
        nms.getMaxOutput()
            ? scores[2]
            : std::min<int64_t>(scores[2], nms.getMaxOutputBoxesPerClass());
    bound[0] = scores[0] * scores[1] * perClass;
    return bound;
  }
  if (isa<SliceOp, TopKOp>(op) && bound.size() == in.size()) {
    for (size_t i = 0; i < bound.size(); ++i)
      if (bound[i] == kDyn)
        bound[i] = in[i];
    if (shape::numElements(bound) == kDyn)
      return std::nullopt;
    return bound;
  }
  return std::nullopt;
}

} // namespace ingot::graph
