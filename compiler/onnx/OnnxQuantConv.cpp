//===- OnnxQuantConv.cpp - ConvInteger and QLinearConv --------------------===//
//
// Both run on ingot.conv_integer, the exact int32 convolution of 8-bit
// tensors (runtime/src/cpu/ConvInteger.cpp); QLinearConv adds its int32
// bias there and requantises as QLinearMatMul does, the weight's scale
// per output channel laid out along the result's channel axis.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxMathConverters.h"
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// (x - x_zp) conv (w - w_zp) in int32 with the node's window attributes.
FailureOr<Value> integerConv(NodeContext &n, Value x, Value w, Value xzp,
                             Value wzp) {
  if (failed(requireInteger8(n, x, w)))
    return failure();
  const int64_t rank = rankOf(x);
  if (rank < 3 || rank > 5 || rankOf(w) != rank)
    return n.fail("a rank-" + std::to_string(rank) + " input and a rank-" +
                      std::to_string(rankOf(w)) + " weight",
                  "1-D, 2-D and 3-D convolutions (rank 3 to 5, both alike)");
  std::vector<int64_t> strides, pads, dilations;
  std::string autoPad;
  if (failed(
          windowAttrs(n, size_t(rank - 2), strides, pads, dilations, autoPad)))
    return failure();
  std::vector<int64_t> kernel = n.attrInts("kernel_shape");
  const int64_t group = n.attrInt("group", 1);
  if (n.ctx.hasError())
    return failure();
  ArrayRef<int64_t> wk =
      cast<RankedTensorType>(w.getType()).getShape().drop_front(2);
  if (!kernel.empty() && (kernel.size() != wk.size() ||
                          llvm::any_of(llvm::zip(kernel, wk), [](auto p) {
                            auto [k, d] = p;
                            return !ShapedType::isDynamic(d) && d != k;
                          })))
    return n.fail("kernel_shape does not match the weight's dims");
  // A weight fed as an input may leave its dims dynamic: kernel_shape then
  // sizes the result (as for Conv).
  const bool kernelDynamic =
      !kernel.empty() && llvm::any_of(wk, ShapedType::isDynamic);
  OpBuilder &b = n.builder();
  return n.build<graph::ConvIntegerOp>(
      n.i32(), x, w, xzp, wzp, b.getDenseI64ArrayAttr(strides),
      b.getDenseI64ArrayAttr(pads), b.getDenseI64ArrayAttr(dilations),
      b.getI64IntegerAttr(group), b.getStringAttr(autoPad),
      kernelDynamic ? b.getDenseI64ArrayAttr(kernel) : DenseI64ArrayAttr());
}

} // namespace

LogicalResult convertConvInteger(NodeContext &n) {
  Value x, w, xzp, wzp;
  if (failed(n.input(0, x)) || failed(n.input(1, w)) ||
      failed(n.optionalInput(2, xzp)) || failed(n.optionalInput(3, wzp)))
    return failure();
  return n.setOutput(0, integerConv(n, x, w, xzp, wzp));
}

/// saturate(round((conv + B) * (x_scale * w_scale / y_scale)) + y_zp).
LogicalResult convertQLinearConv(NodeContext &n) {
  Value x, xs, xzp, w, ws, wzp, ys, yzp, bias;
  if (failed(n.input(0, x)) || failed(n.input(1, xs)) ||
      failed(n.optionalInput(2, xzp)) || failed(n.input(3, w)) ||
      failed(n.input(4, ws)) || failed(n.optionalInput(5, wzp)) ||
      failed(n.input(6, ys)) || failed(n.optionalInput(7, yzp)) ||
      failed(n.optionalInput(8, bias)))
    return failure();
  FailureOr<Value> acc = integerConv(n, x, w, xzp, wzp);
  if (failed(acc))
    return failure();
  const int64_t rank = rankOf(x);
  if (bias) {
    if (failed(n.requireType(bias, "B", {n.i32()})))
      return failure();
    FailureOr<Value> b = alongAxis(n, bias, "B", 1, rank);
    acc = failed(b) ? b : n.build<graph::AddOp>(n.i32(), *acc, *b);
  }
  FailureOr<Value> wScale = alongAxis(n, ws, "w_scale", 1, rank);
  if (failed(acc) || failed(wScale))
    return failure();
  Type target = yzp ? elementTypeOf(yzp) : elementTypeOf(x);
  return n.setOutput(0, requantize(n, *acc, xs, *wScale, ys, yzp, target));
}

} // namespace ingot::compiler::onnximport
