//===- OnnxTensorNnOps.cpp - Conv, pooling and TopK converters ------------===//
//
// Window attributes are written out in full (defaults filled in) so the
// kernels and shape rules see one form (Resize is in OnnxResize.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

std::string attrStr(NodeContext &n, const char *name, const char *dflt) {
  const auto *a = n.attr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : dflt;
}

/// Fills strides/pads/dilations with their defaults for `nd` spatial dims and
/// checks auto_pad.
LogicalResult windowAttrs(NodeContext &n, size_t nd,
                          std::vector<int64_t> &strides,
                          std::vector<int64_t> &pads,
                          std::vector<int64_t> &dilations,
                          std::string &autoPad) {
  strides = n.attrInts("strides");
  pads = n.attrInts("pads");
  dilations = n.attrInts("dilations");
  autoPad = attrStr(n, "auto_pad", "NOTSET");
  if (n.ctx.hasError())
    return failure();
  if (strides.empty())
    strides.assign(nd, 1);
  if (pads.empty())
    pads.assign(2 * nd, 0);
  if (dilations.empty())
    dilations.assign(nd, 1);
  if (strides.size() != nd || pads.size() != 2 * nd || dilations.size() != nd)
    return n.fail("strides, pads or dilations do not match " +
                  std::to_string(nd) + " spatial dims");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.fail("auto_pad '" + autoPad + "'",
                  "NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  return success();
}

LogicalResult eightBitAsF32(NodeContext &n, Value &x, bool &eightBit) {
  Type storage = n.ctx.elementTypeOfName(n.node.input(0));
  eightBit = storage && storage.isInteger(8) && elementTypeOf(x) != n.f32();
  if (!eightBit)
    return success();
  FailureOr<Value> f = n.build<graph::CastOp>(n.f32(), x);
  if (failed(f))
    return failure();
  x = *f;
  return success();
}

LogicalResult requireSpatial(NodeContext &n, Value x) {
  int64_t rank = rankOf(x);
  if (rank >= 3 && rank <= 5)
    return n.requireType(x, "X", {n.f32()});
  return n.fail("a rank-" + std::to_string(rank) + " input",
                "1-D, 2-D and 3-D (rank 3 to 5) inputs");
}

namespace {

LogicalResult convertPool(NodeContext &n, bool isMax) {
  Value x;
  bool integer = false;
  if (failed(n.input(0, x)) ||
      (isMax && failed(eightBitAsF32(n, x, integer))) ||
      failed(requireSpatial(n, x)))
    return failure();
  size_t nd = rankOf(x) - 2;
  std::vector<int64_t> kernel = n.attrInts("kernel_shape");
  std::vector<int64_t> strides, pads, dilations;
  std::string autoPad;
  if (failed(windowAttrs(n, nd, strides, pads, dilations, autoPad)))
    return failure();
  if (kernel.size() != nd)
    return n.fail("kernel_shape must have " + std::to_string(nd) + " entries");
  int64_t ceilMode = n.attrInt("ceil_mode", 0);
  int64_t includePad = isMax ? 0 : n.attrInt("count_include_pad", 0);
  if (n.ctx.hasError())
    return failure();
  OpBuilder &b = n.builder();
  auto build = [&](auto tag, Type elem, int64_t select) {
    using OpTy = decltype(tag);
    return n.build<OpTy>(
        elem, x, b.getDenseI64ArrayAttr(kernel),
        b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pads),
        b.getDenseI64ArrayAttr(dilations), b.getStringAttr(autoPad),
        b.getI64IntegerAttr(ceilMode != 0),
        b.getI64IntegerAttr(includePad != 0), b.getI64IntegerAttr(select));
  };
  if (!isMax)
    return n.setOutput(0, build(graph::AveragePoolOp(), n.f32(), 0));
  // Indices, when used, is a second max_pool step that returns the argmax.
  if (n.node.output_size() > 1 && !n.node.output(1).empty()) {
    int64_t storageOrder = n.attrInt("storage_order", 0);
    if (n.ctx.hasError())
      return failure();
    if (failed(n.setOutput(
            1, build(graph::MaxPoolOp(), n.i64(), storageOrder != 0 ? 2 : 1))))
      return failure();
  }
  FailureOr<Value> y = build(graph::MaxPoolOp(), n.f32(), 0);
  if (succeeded(y) && integer)
    y = n.build<graph::CastOp>(n.i32(), *y);
  return n.setOutput(0, y);
}

} // namespace

LogicalResult convertMaxPool(NodeContext &n) { return convertPool(n, true); }
LogicalResult convertAveragePool(NodeContext &n) {
  return convertPool(n, false);
}

LogicalResult convertGlobalAveragePool(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "X", {n.f32()})))
    return failure();
  return n.setOutput(0, n.build<graph::GlobalAveragePoolOp>(n.f32(), x));
}

LogicalResult convertConv(NodeContext &n) {
  Value x, w, bias;
  if (failed(n.input(0, x)) || failed(n.input(1, w)) ||
      failed(n.optionalInput(2, bias)) || failed(requireSpatial(n, x)) ||
      failed(n.requireType(w, "W", {n.f32()})) ||
      (bias && failed(n.requireType(bias, "B", {n.f32()}))))
    return failure();
  size_t nd = rankOf(x) - 2;
  std::vector<int64_t> strides, pads, dilations;
  std::string autoPad;
  if (failed(windowAttrs(n, nd, strides, pads, dilations, autoPad)))
    return failure();
  std::vector<int64_t> kernel = n.attrInts("kernel_shape");
  int64_t group = n.attrInt("group", 1);
  if (n.ctx.hasError())
    return failure();
  auto wt = cast<RankedTensorType>(w.getType());
  ArrayRef<int64_t> wk = wt.getShape().drop_front(2);
  bool kernelDynamic = llvm::any_of(wk, ShapedType::isDynamic);
  if (!kernel.empty() && (kernel.size() != wk.size() ||
                          llvm::any_of(llvm::zip(kernel, wk), [](auto p) {
                            auto [k, d] = p;
                            return !ShapedType::isDynamic(d) && d != k;
                          })))
    return n.fail("kernel_shape does not match the weight's dims");
  OpBuilder &b = n.builder();
  // A weight fed as an input may leave its dims dynamic: kernel_shape then
  // sizes the result, and the kernel checks the real weight against it.
  return n.setOutput(
      0, n.build<graph::ConvOp>(
             n.f32(), x, w, bias, /*residual=*/Value(),
             b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pads),
             b.getDenseI64ArrayAttr(dilations), b.getI64IntegerAttr(group),
             b.getStringAttr(autoPad),
             kernelDynamic && !kernel.empty() ? b.getDenseI64ArrayAttr(kernel)
                                              : DenseI64ArrayAttr(),
             /*activation=*/StringAttr(), /*activation_alpha=*/FloatAttr(),
             /*clip_min=*/FloatAttr(), /*clip_max=*/FloatAttr()));
}

/// TopK: one op per used output (values, then i64 indices).
LogicalResult convertTopK(NodeContext &n) {
  Value x, k;
  if (n.opset() < 10) { // k is an attribute
    const onnx::AttributeProto *a = n.attr("k", onnx::AttributeProto::INT);
    if (n.ctx.hasError())
      return failure();
    if (!a)
      return n.fail("attribute 'k' is required");
    k = tensorI64Constant(n, {a->i()});
  } else if (failed(n.input(1, k))) {
    return failure();
  }
  if (failed(n.input(0, x)) || failed(n.requireType(k, "K", {n.i64()})) ||
      failed(n.requireType(x, "X", {n.f32(), n.i64(), n.i32()})))
    return failure();
  int64_t axis, largest = n.attrInt("largest", 1),
                sorted = n.attrInt("sorted", 1);
  if (failed(n.normalizeAxis(n.attrInt("axis", -1), rankOf(x), "axis", axis)))
    return failure();
  OpBuilder &b = n.builder();
  for (int select = 0; select < 2; ++select) {
    if (select >= n.node.output_size() || n.node.output(select).empty())
      continue;
    if (failed(n.setOutput(
            select, n.build<graph::TopKOp>(select ? n.i64() : elementTypeOf(x),
                                           x, k, b.getI64IntegerAttr(axis),
                                           b.getI64IntegerAttr(largest != 0),
                                           b.getI64IntegerAttr(sorted != 0),
                                           b.getI64IntegerAttr(select)))))
      return failure();
  }
  return success();
}

} // namespace ingot::compiler::onnximport
