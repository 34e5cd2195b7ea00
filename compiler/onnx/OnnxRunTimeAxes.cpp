//===- OnnxRunTimeAxes.cpp - Squeeze and Unsqueeze with run-time axes -----===//
//
// An axes input that is not a constant (the node suite feeds it as a graph
// input) still has a length known at compile time, and so the result's
// rank: the result's shape vector is computed by the plan from the axes'
// values with ordinary shape ops, and a reshape applies it. Bad axes fail
// the run by name (a gather or reshape out of range), never silently: a
// repeated or out-of-range axis leaves the shape vector inconsistent with
// the input.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

#include <numeric>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// 0, 1, ..., count - 1.
std::vector<int64_t> iota(int64_t count) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  std::iota(v.begin(), v.end(), int64_t(0));
  return v;
}

/// i64 shape-vector arithmetic over NodeContext, stopping at the first
/// failure.
struct ShapeVectors {
  NodeContext &n;
  bool ok = true;

  Value keep(FailureOr<Value> r) {
    ok = ok && succeeded(r);
    return ok ? *r : nullptr;
  }
  Value i64(int64_t v) { return scalarConstant(n, n.i64(), double(v)); }
  Value compare(Value a, Value b, const char *kind) {
    return ok ? keep(n.build<graph::CompareOp>(n.i1(), a, b,
                                               n.builder().getStringAttr(kind)))
              : nullptr;
  }
  Value where(Value c, Value a, Value b) {
    return ok ? keep(n.build<graph::WhereOp>(n.i64(), c, a, b)) : nullptr;
  }
  Value add(Value a, Value b) {
    return ok ? keep(n.build<graph::AddOp>(n.i64(), a, b)) : nullptr;
  }
  Value cast(Value a) {
    return ok ? keep(n.build<graph::CastOp>(n.i64(), a)) : nullptr;
  }
  Value unsqueeze(Value a, int64_t axis) {
    return ok ? keep(n.build<graph::UnsqueezeOp>(
                    n.i64(), a, n.builder().getDenseI64ArrayAttr({axis})))
              : nullptr;
  }
  Value gather(Value data, Value indices) {
    return ok ? keep(n.build<graph::GatherOp>(n.i64(), data, indices,
                                              n.builder().getI64IntegerAttr(0)))
              : nullptr;
  }
  Value shapeOf(Value x) {
    OpBuilder &b = n.builder();
    return ok ? keep(n.build<graph::ShapeOp>(n.i64(), x, b.getI64IntegerAttr(0),
                                             b.getI64IntegerAttr(INT64_MAX)))
              : nullptr;
  }
  /// How many of `axes` (normalised against `rank`) name each position
  /// 0 .. rank - 1: [rank] i64.
  Value axisHits(Value axes, int64_t rank) {
    Value norm = ok ? keep(normalizeRunTimeAxes(n, axes, rank)) : nullptr;
    Value grid = tensorI64Constant(n, iota(rank));
    Value hits = cast(compare(unsqueeze(norm, 1), unsqueeze(grid, 0), "equal"));
    OpBuilder &b = n.builder();
    return ok ? keep(n.build<graph::ReduceOp>(
                    n.i64(), hits, Value(), b.getStringAttr("sum"),
                    b.getDenseI64ArrayAttr({0}), b.getI64IntegerAttr(0),
                    IntegerAttr()))
              : nullptr;
  }
};

/// The axes operand: i64 of a length known at compile time.
LogicalResult axesOperand(NodeContext &n, Value axes, int64_t &count) {
  if (failed(n.requireType(axes, "axes", {n.i64()})))
    return failure();
  auto type = cast<RankedTensorType>(axes.getType());
  if (type.getRank() != 1 || type.isDynamicDim(0))
    return n.fail("axes of run-time length (the result's rank would be "
                  "unknown)",
                  "axes of a length known at compile time");
  count = type.getDimSize(0);
  return success();
}

LogicalResult reshapeTo(NodeContext &n, Value x, Value shape) {
  return n.setOutput(
      0, n.build<graph::ReshapeOp>(elementTypeOf(x), x, shape,
                                   n.builder().getI64IntegerAttr(1)));
}

} // namespace

FailureOr<Value> normalizeRunTimeAxes(NodeContext &n, Value axes,
                                      int64_t rank) {
  ShapeVectors s{n};
  Value norm = s.where(s.compare(axes, s.i64(0), "less"),
                       s.add(axes, s.i64(rank)), axes);
  if (!s.ok)
    return failure();
  return norm;
}

/// Unsqueeze: position j of the result is a new 1 where an axis names it,
/// else the next dim of x (a cumulative count of the old positions picks
/// it).
LogicalResult unsqueezeRunTimeAxes(NodeContext &n, Value x, Value axes) {
  int64_t count;
  if (failed(axesOperand(n, axes, count)))
    return failure();
  const int64_t rank = cast<RankedTensorType>(x.getType()).getRank() + count;
  if (rank == count) // a scalar: every position is new
    return reshapeTo(
        n, x, tensorI64Constant(n, std::vector<int64_t>(size_t(rank), 1)));
  ShapeVectors s{n};
  Value isNew = s.compare(s.axisHits(axes, rank), s.i64(0), "greater");
  Value old = s.where(isNew, s.i64(0), s.i64(1));
  Value index =
      s.ok ? s.keep(n.build<graph::CumSumOp>(n.i64(), old, Value(),
                                             n.builder().getI64IntegerAttr(0),
                                             n.builder().getI64IntegerAttr(1),
                                             n.builder().getI64IntegerAttr(0)))
           : nullptr;
  // Exclusive sums: the old position's index into x's dims; new positions
  // read a clamped index whose value the where drops.
  Value clamped = s.ok ? s.keep(n.build<graph::BinaryMathOp>(
                             n.i64(), index, s.i64(int64_t(rank - count - 1)),
                             n.builder().getStringAttr("min")))
                       : nullptr;
  Value shape = s.where(isNew, s.i64(1), s.gather(s.shapeOf(x), clamped));
  if (!s.ok)
    return failure();
  return reshapeTo(n, x, shape);
}

/// Squeeze: the kept positions in order are the `rank - count` smallest of
/// hits · rank + position (TopK, ascending), so the shape vector keeps a
/// static length.
LogicalResult squeezeRunTimeAxes(NodeContext &n, Value x, Value axes) {
  int64_t count;
  if (failed(axesOperand(n, axes, count)))
    return failure();
  const int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (count > rank)
    return n.fail(std::to_string(count) + " axes for an input of rank " +
                  std::to_string(rank));
  ShapeVectors s{n};
  Value hits = s.axisHits(axes, rank);
  Value key = s.ok ? s.keep(n.build<graph::MulOp>(n.i64(), hits, s.i64(rank)))
                   : nullptr;
  key = s.add(key, tensorI64Constant(n, iota(rank)));
  OpBuilder &b = n.builder();
  Value kept = s.ok ? s.keep(n.build<graph::TopKOp>(
                          n.i64(), key, tensorI64Constant(n, {rank - count}),
                          b.getI64IntegerAttr(0), b.getI64IntegerAttr(0),
                          b.getI64IntegerAttr(1), b.getI64IntegerAttr(1)))
                    : nullptr;
  Value shape = s.gather(s.shapeOf(x), kept);
  if (!s.ok)
    return failure();
  return reshapeTo(n, x, shape);
}

} // namespace ingot::compiler::onnximport
