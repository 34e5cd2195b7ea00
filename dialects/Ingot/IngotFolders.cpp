//===- IngotFolders.cpp - Folders of the ingot graph dialect --------------===//
//
// Shape computations (Shape -> Gather -> Concat -> Reshape, integer
// arithmetic on shape vectors, ConstantOfShape/Slice/Transpose of small
// integer tensors) fold to constants whenever the dims they read are static,
// reusing the value tracking of ShapeInference.cpp. A few identities fold away
// data movement that does nothing.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// Folds an op whose small integer result is fully known to a constant.
OpFoldResult foldTrackedValues(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || !isTrackedTensor(type))
    return {};
  std::vector<ValueInfo> ins, outs;
  for (Value v : op->getOperands())
    ins.push_back(valueInfoFromIR(v));
  std::string error;
  if (failed(inferValueInfo(op, ins, outs, error)) || !outs[0].values)
    return {};
  SmallVector<APInt> elems;
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  for (int64_t v : *outs[0].values) {
    if (v == kUnknownValue)
      return {};
    elems.push_back(
        APInt(bits, static_cast<uint64_t>(v), /*isSigned=*/bits > 1));
  }
  if (static_cast<int64_t>(elems.size()) != type.getNumElements())
    return {};
  return DenseIntElementsAttr::get(type, elems);
}

/// x -> x when the op only restates its input's type.
OpFoldResult foldSameType(Operation *op) {
  Value in = op->getOperand(0);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (in.getType() == type && type.hasStaticShape())
    return in;
  return {};
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

// x op y on small integer shape vectors, e.g. seq_len - 1.
OpFoldResult AddOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
OpFoldResult SubOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
OpFoldResult MulOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
OpFoldResult DivOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
// Shape arithmetic of PyTorch exports: expand's -1 entries are found with
// Equal and replaced with Where; sizes are clamped with Max/Min.
OpFoldResult CompareOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
OpFoldResult WhereOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
OpFoldResult BinaryMathOp::fold(FoldAdaptor) {
  return foldTrackedValues(*this);
}

// cast(x : T) : T = x
OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return foldTrackedValues(*this);
}

// transpose(x, identity perm) = x; a small constant integer tensor
// transposes to a constant.
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPerm();
  bool identity = !perm.empty() || getType().getRank() <= 1;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == static_cast<int64_t>(i);
  if (identity && getInput().getType() == getType())
    return getInput();
  return foldTrackedValues(*this);
}

namespace {

/// The values of a constant integer tensor.
bool constantInts(Value v, SmallVector<int64_t> &out) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  for (const APInt &x : attr)
    out.push_back(x.getSExtValue());
  return true;
}

/// An end at or past this reads a dynamic dim to its end: exporters write
/// INT32_MAX, INT64_MAX or jax2tf's 10^9, all past any dim a tensor the
/// runtime holds can have.
constexpr int64_t kWholeDimEnd = 1000000000;

/// Every sliced axis starts at 0, steps by 1 and ends past its dim.
bool isIdentitySlice(SliceOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
  SmallVector<int64_t> starts, ends, axes, steps;
  if (!type || type != op.getType() || !constantInts(op.getStarts(), starts) ||
      !constantInts(op.getEnds(), ends) || !constantInts(op.getAxes(), axes) ||
      !constantInts(op.getSteps(), steps) || starts.size() != ends.size() ||
      axes.size() != starts.size() || steps.size() != starts.size())
    return false;
  const int64_t rank = type.getRank();
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || starts[i] != 0 || steps[i] != 1)
      return false;
    const int64_t dim = type.getDimSize(axis);
    if (ends[i] < (ShapedType::isDynamic(dim) ? kWholeDimEnd : dim))
      return false;
  }
  return true;
}

} // namespace

// slice(x) = x when it takes every element (jax2tf slices whole tensors
// around each conv, [:, :, :, :] with ends of 10^9, a copy per run
// otherwise). PyTorch computes pad vectors from constants with
// ConstantOfShape, Slice (read backwards) and Transpose: each folds when
// its values are known, so the whole chain becomes one constant and the
// pads are static.
OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (isIdentitySlice(*this))
    return getInput();
  return foldTrackedValues(*this);
}
OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  return foldTrackedValues(*this);
}

// reshape(x : T, s) : T = x for static T; constant shape vectors fold.
OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (OpFoldResult same = foldSameType(*this))
    return same;
  return foldTrackedValues(*this);
}

OpFoldResult SqueezeOp::fold(FoldAdaptor) {
  if (OpFoldResult same = foldSameType(*this))
    return same;
  return foldTrackedValues(*this);
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor) {
  return foldTrackedValues(*this);
}

// concat(x) = x; concat of constant shape vectors is a constant.
OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return foldTrackedValues(*this);
}

OpFoldResult GatherOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }

// shape(x) is a constant when the dims it reads are static.
OpFoldResult ShapeOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
