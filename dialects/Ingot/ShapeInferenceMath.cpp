//===- ShapeInferenceMath.cpp - Shape rules of the math coverage ops ------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/ShapeInferenceTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;

namespace ingot::graph {
namespace {

/// Reduce whose axes are an operand: exact when its values are tracked,
/// else only the rank is known (and only when keepdims or a static count of
/// axes fixes it); reduced dims are not known, so every dim that is not 1
/// becomes dynamic.
bool reduceWithAxesOperand(const shape::Shape &in, const ValueInfo &axes,
                           bool keep, bool noopWhenEmpty, shape::Shape &out,
                           std::string &error) {
  int64_t count = axes.shape.empty() ? 1 : axes.shape[0];
  if (axes.values && llvm::none_of(*axes.values, [](int64_t v) {
        return v == kUnknownValue;
      })) {
    if (axes.values->empty() && noopWhenEmpty) {
      out = in;
      return true;
    }
    return shape::reduce(in, *axes.values, keep, &out, &error);
  }
  if (count == 0) {
    if (noopWhenEmpty)
      out = in;
    else
      shape::reduce(in, {}, keep, &out, &error);
    return true;
  }
  if (keep) {
    out = in;
    for (int64_t &d : out)
      if (d != 1)
        d = shape::kDynamic;
    return true;
  }
  if (count == shape::kDynamic || count > int64_t(in.size())) {
    error = "reduce without keepdims needs an axes operand of static length "
            "at most the rank";
    return false;
  }
  out.assign(in.size() - count, shape::kDynamic);
  return true;
}

} // namespace

std::optional<bool> inferMathOp(Operation *op, ArrayRef<ValueInfo> ins,
                                shape::Shape &out,
                                std::optional<std::vector<int64_t>> &values,
                                std::string &error) {
  std::vector<shape::Shape> shapes;
  for (const ValueInfo &v : ins)
    shapes.push_back(v.shape);
  return llvm::TypeSwitch<Operation *, std::optional<bool>>(op)
      .Case<UnaryMathOp, LogSoftmaxOp, CumSumOp>( // (not the axis operand)
          [&](Operation *) -> std::optional<bool> {
            out = shapes[0];
            // Exporters negate shape tests ("rank != 3") before an If.
            auto kind = op->getAttrOfType<StringAttr>("kind");
            if (isa<UnaryMathOp>(op) && kind && kind.getValue() == "not")
              values = foldNegate(ins[0], /*logical=*/true);
            return true;
          })
      .Case<BinaryMathOp, CompareOp>([&](Operation *) -> std::optional<bool> {
        // PyTorch's expand-with-(-1) shape arithmetic compares and selects.
        values = foldCompareOrMinMax(
            cast<StringAttr>(op->getAttr("kind")).getValue(), ins[0], ins[1]);
        return shape::broadcast(shapes, &out, &error);
      })
      .Case<ReduceOp>([&](ReduceOp r) -> std::optional<bool> {
        bool keep = r.getKeepdims() != 0;
        if (ins.size() < 2)
          return shape::reduce(shapes[0], std::vector<int64_t>(r.getAxes()),
                               keep, &out, &error);
        return reduceWithAxesOperand(shapes[0], ins[1], keep,
                                     r.getNoopWithEmptyAxes().value_or(0) != 0,
                                     out, error);
      })
      .Case<ArgReduceOp>([&](ArgReduceOp r) -> std::optional<bool> {
        return shape::reduce(shapes[0], {static_cast<int64_t>(r.getAxis())},
                             r.getKeepdims() != 0, &out, &error);
      })
      .Default([](Operation *) -> std::optional<bool> { return std::nullopt; });
}

/// Upper bounds of the dims that depend on run-time data, for bound
/// computation when every input dim is known (same contract as
/// boundTensorResult): a reduce with a run-time axes operand never exceeds
/// its input dims with keepdims, nor the largest input dim without.
/// nullopt when `op` has no such bound.
std::optional<shape::Shape> boundMathResult(Operation *op,
                                            ArrayRef<ValueInfo> ins,
                                            const shape::Shape &inferred) {
  auto r = dyn_cast<ReduceOp>(op);
  if (!r || ins.size() < 2 || shape::numElements(ins[0].shape) == shape::kDynamic)
    return std::nullopt;
  const shape::Shape &in = ins[0].shape;
  shape::Shape bound = inferred;
  // A reduced dim of size 0 keeps a 1 (the identity), so no bound is < 1.
  int64_t largest = 1;
  for (int64_t d : in)
    largest = std::max(largest, d);
  for (size_t i = 0; i < bound.size(); ++i)
    if (bound[i] == shape::kDynamic)
      bound[i] = r.getKeepdims() ? std::max<int64_t>(in[i], 1) : largest;
  return bound;
}

} // namespace ingot::graph
