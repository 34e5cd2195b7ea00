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

// PyTorch computes pad vectors from constants with ConstantOfShape, Slice
// (read backwards) and Transpose: each folds when its values are known, so
// the whole chain becomes one constant and the pads are static.
OpFoldResult SliceOp::fold(FoldAdaptor) { return foldTrackedValues(*this); }
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
