//===- OnnxQuantOps.cpp - Linear quantisation ops of the default domain ---===//
//
// QuantizeLinear and DequantizeLinear become the arithmetic their
// specification defines — casts, round half to even, clamps — which
// fusion then merges into one pass (DynamicQuantizeLinear is in
// OnnxDynamicQuant.cpp, the integer products in OnnxQuantMatMul.cpp and
// OnnxQuantConv.cpp). Scales and zero
// points are per tensor, per axis or per block (opset 21's block_size).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxMathConverters.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

FailureOr<Value> castTo(NodeContext &n, Value v, Type t) {
  if (elementTypeOf(v) == t)
    return v;
  return n.build<graph::CastOp>(t, v);
}

/// A 1-D scale or zero point of run-time length: [len, 1, ..., 1] serves
/// one value and one per element of `axis` alike (broadcasting checks the
/// length when the plan runs). Without a valid axis it must be one value:
/// a reshape to a scalar fails the run otherwise.
FailureOr<Value> runTimeAlongAxis(NodeContext &n, Value param, int64_t axis,
                                  int64_t rank) {
  SmallVector<int64_t> dims;
  if (axis >= 0) {
    dims.assign(size_t(rank - axis), 1);
    dims[0] = -1;
  }
  return n.build<graph::ReshapeOp>(elementTypeOf(param), param,
                                   tensorI64Constant(n, dims),
                                   n.builder().getI64IntegerAttr(0));
}

/// A scale or zero point laid out to broadcast against x of rank `rank`:
/// one value as it is, one per element of `axis` as [C, 1, ..., 1].
FailureOr<Value> alongAxis(NodeContext &n, Value param, const char *role,
                           int64_t axis, int64_t rank) {
  auto type = cast<RankedTensorType>(param.getType());
  if (!type.hasStaticShape() && type.getRank() == 1)
    return runTimeAlongAxis(n, param, axis, rank);
  if (type.getNumElements() == 1)
    return param;
  if (axis < 0)
    return n.fail("axis " + std::to_string(n.attrInt("axis", 1)) +
                  " is out of range for a per-axis " + role + " on rank " +
                  std::to_string(rank));
  if (type.getRank() != 1)
    return n.fail(std::string(role) + " has rank " +
                      std::to_string(type.getRank()) +
                      " (blocked quantisation)",
                  "one value, or one per element of `axis`");
  SmallVector<int64_t> dims(size_t(rank - axis), 1);
  dims[0] = type.getDimSize(0);
  return n.build<graph::ReshapeOp>(type.getElementType(), param,
                                   tensorI64Constant(n, dims),
                                   n.builder().getI64IntegerAttr(0));
}

/// clamp(round(x / scale) + zp, lo, hi) cast to `target`: the rounding and
/// saturation of QuantizeLinear and DynamicQuantizeLinear.
FailureOr<Value> quantize(NodeContext &n, Value x, Value scale, Value zpF32,
                          Type target) {
  auto bounds = [&]() -> std::pair<double, double> {
    auto i = cast<IntegerType>(target);
    double span = double(uint64_t(1) << i.getWidth());
    return i.isUnsigned() ? std::pair{0.0, span - 1}
                          : std::pair{-span / 2, span / 2 - 1};
  }();
  FailureOr<Value> q = n.build<graph::DivOp>(n.f32(), x, scale);
  if (succeeded(q))
    q = n.build<graph::UnaryMathOp>(n.f32(), *q,
                                    n.builder().getStringAttr("round"),
                                    FloatAttr(), FloatAttr());
  if (succeeded(q) && zpF32)
    q = n.build<graph::AddOp>(n.f32(), *q, zpF32);
  if (succeeded(q))
    q = n.build<graph::BinaryMathOp>(n.f32(), *q,
                                     scalarConstant(n, n.f32(), bounds.first),
                                     n.builder().getStringAttr("max"));
  if (succeeded(q))
    q = n.build<graph::BinaryMathOp>(n.f32(), *q,
                                     scalarConstant(n, n.f32(), bounds.second),
                                     n.builder().getStringAttr("min"));
  if (failed(q))
    return failure();
  FailureOr<Value> cast = n.build<graph::CastOp>(target, *q);
  if (succeeded(cast))
    n.ctx.setExactFloat(*cast, *q);
  return cast;
}

namespace {

bool isQuantType(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  return i && llvm::is_contained({2u, 4u, 8u, 16u}, i.getWidth()) &&
         (i.isUnsigned() || i.isSignless());
}

/// float8 and float4 values: DequantizeLinear widens them as they are and
/// QuantizeLinear casts x / scale to them (rounding to nearest even). Their
/// zero point is defined as 0 for float8 and ignored for float4, as in
/// onnx's reference.
bool isQuantFloat(Type t) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType, Float4E2M1FNType>(t);
}

/// A float8 zero point must be 0 (onnx's reference refuses any other);
/// one known at compile time is checked, one fed at run time is unused.
LogicalResult requireZeroFloatZeroPoint(NodeContext &n, Value zp) {
  if (!zp || isa<Float4E2M1FNType>(elementTypeOf(zp)))
    return success();
  DenseElementsAttr known;
  if (!matchPattern(zp, m_Constant(&known)))
    return success();
  for (APFloat v : known.getValues<APFloat>())
    if (!v.isZero())
      return n.fail("a float8 zero point that is not 0", "zero points of 0");
  return success();
}

/// How a scale or zero point maps onto x: one value, one per element of
/// `axis`, or (block > 0) one per `block` consecutive elements of it.
struct QuantLayout {
  int64_t axis = -1, block = 0, rank = 0, axisDim = 0;
  Value x;
};

/// The normalised `axis` of a per-axis op, -1 when out of range (only an
/// error if a scale has one value per element of it, as in onnxruntime),
/// and the block size of a blocked one.
LogicalResult quantAxis(NodeContext &n, Value x, QuantLayout &l) {
  auto type = cast<RankedTensorType>(x.getType());
  l.rank = type.getRank();
  l.block = n.attrInt("block_size", 0);
  l.axis = n.attrInt("axis", 1);
  if (n.ctx.hasError())
    return failure();
  l.axis =
      l.axis < -l.rank || l.axis >= l.rank ? -1 : (l.axis + l.rank) % l.rank;
  if (l.block == 0)
    return success();
  if (l.block < 0 || l.axis < 0)
    return n.fail("block_size " + std::to_string(l.block) + " on axis " +
                      std::to_string(n.attrInt("axis", 1)) + " of " +
                      shape::toString(graph::shapeOf(type)),
                  "a positive block size on an axis of x");
  l.axisDim = type.getDimSize(l.axis);
  l.x = x;
  return success();
}

/// A blocked scale or zero point when x's axis or the parameter has a
/// run-time length: element i of the axis reads block i / block_size,
/// gathered over an index range as long as x's axis.
FailureOr<Value> gatherBlocks(NodeContext &n, Value param, const char *role,
                              const QuantLayout &l) {
  auto type = cast<RankedTensorType>(param.getType());
  if (type.getRank() != l.rank)
    return n.fail(std::string(role) + " has rank " +
                      std::to_string(type.getRank()) + " for an x of rank " +
                      std::to_string(l.rank),
                  "x's rank with its axis counting blocks");
  OpBuilder &b = n.builder();
  FailureOr<Value> length =
      n.build<graph::ShapeOp>(n.i64(), l.x, b.getI64IntegerAttr(l.axis),
                              b.getI64IntegerAttr(l.axis + 1));
  if (succeeded(length))
    length = n.build<graph::ReshapeOp>(
        n.i64(), *length, tensorI64Constant(n, {}), b.getI64IntegerAttr(0));
  FailureOr<Value> index = length;
  if (succeeded(index))
    index = n.build<graph::RangeOp>(n.i64(), scalarConstant(n, n.i64(), 0.0),
                                    *length, scalarConstant(n, n.i64(), 1.0),
                                    b.getI64IntegerAttr(-1));
  if (succeeded(index))
    index = n.build<graph::DivOp>(n.i64(), *index,
                                  scalarConstant(n, n.i64(), double(l.block)));
  if (failed(index))
    return failure();
  return n.build<graph::GatherOp>(type.getElementType(), param, *index,
                                  b.getI64IntegerAttr(l.axis));
}

/// A blocked scale or zero point ([..., ceil(D / block), ...]) with each
/// value repeated over its block along the axis and cut to x's D.
FailureOr<Value> expandBlocks(NodeContext &n, Value param, const char *role,
                              const QuantLayout &l) {
  auto type = cast<RankedTensorType>(param.getType());
  if (ShapedType::isDynamic(l.axisDim) || !type.hasStaticShape())
    return gatherBlocks(n, param, role, l);
  const int64_t blocks = (l.axisDim + l.block - 1) / l.block;
  if (!type.hasStaticShape() || type.getRank() != l.rank ||
      type.getDimSize(l.axis) != blocks)
    return n.fail(
        std::string(role) + " is " + shape::toString(graph::shapeOf(type)) +
            " for " + std::to_string(blocks) + " blocks of " +
            std::to_string(l.block) + " on axis " + std::to_string(l.axis),
        "x's shape with that axis counting blocks");
  OpBuilder &b = n.builder();
  Type elem = type.getElementType();
  SmallVector<int64_t> wide(type.getShape());
  wide.insert(wide.begin() + l.axis + 1, l.block);
  FailureOr<Value> v = n.build<graph::UnsqueezeOp>(
      elem, param, b.getDenseI64ArrayAttr({l.axis + 1}));
  if (succeeded(v))
    v = n.build<graph::ExpandOp>(elem, *v, tensorI64Constant(n, wide));
  SmallVector<int64_t> flat(type.getShape());
  flat[l.axis] = blocks * l.block;
  if (succeeded(v))
    v = n.build<graph::ReshapeOp>(elem, *v, tensorI64Constant(n, flat),
                                  b.getI64IntegerAttr(0));
  if (failed(v) || blocks * l.block == l.axisDim)
    return v;
  return n.build<graph::SliceOp>(
      elem, *v, tensorI64Constant(n, {0}), tensorI64Constant(n, {l.axisDim}),
      tensorI64Constant(n, {l.axis}), tensorI64Constant(n, {1}));
}

/// A scale or zero point laid out to broadcast against x.
FailureOr<Value> quantParam(NodeContext &n, Value param, const char *role,
                            const QuantLayout &l) {
  return l.block ? expandBlocks(n, param, role, l)
                 : alongAxis(n, param, role, l.axis, l.rank);
}

} // namespace

/// (x - zero_point) * scale in f32, cast to `outType`.
static FailureOr<Value> dequantize(NodeContext &n, Value x, Value scale,
                                   Value zp, const QuantLayout &l,
                                   Type outType) {
  Type xt = elementTypeOf(x);
  if (isQuantFloat(xt)) {
    if (failed(requireZeroFloatZeroPoint(n, zp)))
      return failure();
    FailureOr<Value> wide = castTo(n, x, n.f32());
    FailureOr<Value> s = quantParam(n, scale, "x_scale", l);
    if (failed(wide) || failed(s))
      return failure();
    FailureOr<Value> y = n.build<graph::MulOp>(n.f32(), *wide, *s);
    return failed(y) ? y : castTo(n, *y, outType);
  }
  if (!isQuantType(xt) && xt != n.i32())
    return n.fail("x has element type " + typeName(xt),
                  "(u)int2/4/8/16, int32, float8 or float4e2m1");
  if (zp && elementTypeOf(zp) != xt)
    return n.fail("x_zero_point is " + typeName(elementTypeOf(zp)) + ", x is " +
                  typeName(xt));
  // 8- and 16-bit differences are exact in f32, so the subtraction fuses
  // with the float ops after it; int32 ones subtract in int32 first.
  Type compute = xt == n.i32() ? n.i32() : n.f32();
  Value exact = n.ctx.exactFloat(x);
  FailureOr<Value> v = exact ? exact : castTo(n, x, compute);
  if (succeeded(v) && zp) {
    FailureOr<Value> z = quantParam(n, zp, "x_zero_point", l);
    if (succeeded(z))
      z = castTo(n, *z, compute);
    v = failed(z) ? z : n.build<graph::SubOp>(compute, *v, *z);
  }
  FailureOr<Value> s = quantParam(n, scale, "x_scale", l);
  if (succeeded(v))
    v = castTo(n, *v, n.f32());
  if (failed(v) || failed(s))
    return failure();
  FailureOr<Value> y = n.build<graph::MulOp>(n.f32(), *v, *s);
  return failed(y) ? y : castTo(n, *y, outType);
}

/// y = (x - zero_point) * scale, the subtraction exact as in onnxruntime.
LogicalResult convertDequantizeLinear(NodeContext &n) {
  Value x, scale, zp;
  QuantLayout l;
  if (failed(n.input(0, x)) || failed(n.input(1, scale)) ||
      failed(n.optionalInput(2, zp)) ||
      failed(n.requireType(
          scale, "x_scale",
          {n.f32(), n.builder().getF16Type(), n.builder().getBF16Type()})) ||
      failed(quantAxis(n, x, l)))
    return failure();
  // A 16-bit scale computes in f32 and gives a result of its own type,
  // rounded once at the end.
  const Type outType = elementTypeOf(scale);
  if (FailureOr<Value> wide = castTo(n, scale, n.f32()); succeeded(wide))
    scale = *wide;
  else
    return failure();
  if (int64_t dt = n.attrInt("output_dtype", 0);
      dt != 0 && elementTypeOf(n.ctx.mlir(), int32_t(dt)) != outType)
    return n.fail("output_dtype " + dtypeName(int32_t(dt)) +
                      " is not the scale's type",
                  "the scale's type (" + typeName(outType) + ")");
  return n.setOutput(0, dequantize(n, x, scale, zp, l, outType));
}

/// x / scale cast to a float8 (saturating unless `saturate` is 0) or to
/// float4e2m1 after adding its zero point, as onnx's reference computes.
static FailureOr<Value> quantizeToFloat(NodeContext &n, Value x, Value scale,
                                        Value zp, const QuantLayout &l,
                                        Type target) {
  const int64_t saturate = n.attrInt("saturate", 1);
  if (saturate != 0 && saturate != 1)
    return n.fail("saturate " + std::to_string(saturate) + " is not 0 or 1");
  if (failed(requireZeroFloatZeroPoint(n, zp)))
    return failure();
  FailureOr<Value> q = n.build<graph::DivOp>(n.f32(), x, scale);
  const bool float4 = isa<Float4E2M1FNType>(target);
  if (succeeded(q) && float4 && zp) {
    FailureOr<Value> z = quantParam(n, zp, "y_zero_point", l);
    if (succeeded(z))
      z = castTo(n, *z, n.f32());
    q = failed(z) ? z : n.build<graph::AddOp>(n.f32(), *q, *z);
  }
  if (failed(q))
    return failure();
  FailureOr<Value> cast = n.build<graph::CastOp>(target, *q);
  if (succeeded(cast) && !float4 && saturate == 0)
    (*cast).getDefiningOp()->setAttr(
        "saturate", IntegerAttr::get(IntegerType::get(n.ctx.mlir(), 64), 0));
  return cast;
}

/// y = saturate(round(x / scale) + zero_point) in the zero point's type
/// (else output_dtype, else uint8).
LogicalResult convertQuantizeLinear(NodeContext &n) {
  Value x, scale, zp;
  QuantLayout l;
  if (failed(n.input(0, x)) || failed(n.input(1, scale)) ||
      failed(n.optionalInput(2, zp)) ||
      failed(n.requireType(x, "x", {n.f32()})) ||
      failed(n.requireType(scale, "y_scale", {n.f32()})) ||
      failed(quantAxis(n, x, l)))
    return failure();
  if (int64_t p = n.attrInt("precision", 0);
      p != 0 && p != onnx::TensorProto::FLOAT)
    return n.fail("precision " + dtypeName(int32_t(p)) + " unsupported",
                  "float32");
  Type target = IntegerType::get(n.ctx.mlir(), 8, IntegerType::Unsigned);
  if (zp)
    target = elementTypeOf(zp);
  else if (int64_t dt = n.attrInt("output_dtype", 0); dt != 0)
    target = elementTypeOf(n.ctx.mlir(), int32_t(dt));
  if (!target || (!isQuantType(target) && !isQuantFloat(target)))
    return n.fail("the quantised type is " +
                      (target ? typeName(target) : std::string("unknown")),
                  "(u)int2/4/8/16, float8 or float4e2m1");
  FailureOr<Value> s = quantParam(n, scale, "y_scale", l);
  if (isQuantFloat(target))
    return n.setOutput(
        0, succeeded(s) ? quantizeToFloat(n, x, *s, zp, l, target) : s);
  FailureOr<Value> z = Value();
  if (zp) {
    z = quantParam(n, zp, "y_zero_point", l);
    if (succeeded(z))
      z = castTo(n, *z, n.f32());
  }
  if (failed(s) || failed(z))
    return failure();
  return n.setOutput(0, quantize(n, x, *s, *z, target));
}

} // namespace ingot::compiler::onnximport
