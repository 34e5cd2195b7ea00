//===- OnnxConvTranspose.cpp - ConvTranspose and GlobalMaxPool
//-------------===//
//
// The windowed ops that are not Conv's or pooling's windows: ConvTranspose
// (explicit pads) and GlobalMaxPool (a max reduction over the spatial
// dims). Registered in OnnxTensorOps.cpp's table.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

/// ConvTranspose. A SAME_* auto_pad or an output_shape derive the pads
/// from the input's size; they travel as attributes so that the pads
/// follow the run-time size of a dynamic input.
LogicalResult convertConvTranspose(NodeContext &n) {
  Value x, w, bias;
  if (failed(n.input(0, x)) || failed(n.input(1, w)) ||
      failed(n.optionalInput(2, bias)) || failed(requireSpatial(n, x)) ||
      failed(n.requireType(w, "W", {n.f32()})) ||
      (bias && failed(n.requireType(bias, "B", {n.f32()}))))
    return failure();
  const size_t nd = rankOf(x) - 2;
  std::vector<int64_t> strides = n.attrInts("strides"),
                       dilations = n.attrInts("dilations"),
                       pads = n.attrInts("pads"),
                       extra = n.attrInts("output_padding"),
                       kernel = n.attrInts("kernel_shape"),
                       outputShape = n.attrInts("output_shape");
  std::string autoPad = "NOTSET";
  if (const auto *a = n.attr("auto_pad", onnx::AttributeProto::STRING))
    autoPad = a->s();
  int64_t group = n.attrInt("group", 1);
  if (n.ctx.hasError())
    return failure();
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.fail("auto_pad " + autoPad,
                  "NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  if (!outputShape.empty() && outputShape.size() != nd)
    return n.fail("an output_shape of " + std::to_string(outputShape.size()) +
                      " dims",
                  std::to_string(nd) + " (one per spatial dim)");
  if (llvm::any_of(outputShape, [](int64_t d) { return d < 1; }))
    return n.fail("an output_shape dim below 1", "positive sizes");
  auto wt = cast<RankedTensorType>(w.getType());
  ArrayRef<int64_t> wk = wt.getShape().drop_front(2);
  if (!kernel.empty() && (kernel.size() != wk.size() ||
                          llvm::any_of(llvm::zip(kernel, wk), [](auto p) {
                            auto [k, d] = p;
                            return !ShapedType::isDynamic(d) && d != k;
                          })))
    return n.fail("kernel_shape that differs from the weight's dims");
  if (strides.empty())
    strides.assign(nd, 1);
  if (dilations.empty())
    dilations.assign(nd, 1);
  if (extra.empty())
    extra.assign(nd, 0);
  const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (pads.empty() || autoPad == "VALID" || same)
    pads.assign(2 * nd, 0);
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::ConvTransposeOp>(
             n.f32(), x, w, bias, b.getDenseI64ArrayAttr(strides),
             b.getDenseI64ArrayAttr(pads), b.getDenseI64ArrayAttr(dilations),
             b.getDenseI64ArrayAttr(extra), b.getI64IntegerAttr(group),
             outputShape.empty() ? DenseI64ArrayAttr()
                                 : b.getDenseI64ArrayAttr(outputShape),
             same ? b.getStringAttr(autoPad) : StringAttr()));
}

/// GlobalMaxPool: the maximum over every spatial dim, kept as 1s.
LogicalResult convertGlobalMaxPool(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(requireSpatial(n, x)))
    return failure();
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rankOf(x); ++d)
    axes.push_back(d);
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::ReduceOp>(n.f32(), x, Value(), b.getStringAttr("max"),
                                  b.getDenseI64ArrayAttr(axes),
                                  b.getI64IntegerAttr(1), IntegerAttr()));
}

} // namespace ingot::compiler::onnximport
