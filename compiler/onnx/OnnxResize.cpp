//===- OnnxResize.cpp - ONNX Resize --------------------------------------===//
//
// Scales or sizes known at compile time become attributes, so the result
// has a compiled shape. Ones that are run-time data (fed as graph inputs,
// or computed from an input's values) stay one operand the kernel reads;
// the resized dims are then sized at run time.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

#include "mlir/IR/Matchers.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <unistd.h>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Float values of a compile-time input. Float tensors of more than one
/// element are weights (`ingot.param`) whose bytes the import context does
/// not expose, so those are read again from the model file.
std::optional<std::vector<double>> constantFloats(NodeContext &n, int i,
                                                  Value v) {
  DenseFPElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr))) {
    std::vector<double> out;
    for (const APFloat &f : attr.getValues<APFloat>())
      out.push_back(f.convertToDouble());
    return out;
  }
  static std::map<std::string, std::shared_ptr<onnx::ModelProto>> cache;
  std::shared_ptr<onnx::ModelProto> &model = cache[n.ctx.file()];
  if (!model) {
    model = std::make_shared<onnx::ModelProto>();
    int fd = ::open(n.ctx.file().c_str(), O_RDONLY);
    if (fd < 0)
      return std::nullopt;
    google::protobuf::io::FileInputStream raw(fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    bool ok = model->ParseFromCodedStream(&coded);
    ::close(fd);
    if (!ok)
      return std::nullopt;
  }
  const std::string &name = n.node.input(i);
  const onnx::TensorProto *tensor = nullptr;
  for (const onnx::TensorProto &t : model->graph().initializer())
    if (t.name() == name)
      tensor = &t;
  for (const onnx::NodeProto &node : model->graph().node())
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        node.output(0) == name)
      for (const onnx::AttributeProto &a : node.attribute())
        if (a.name() == "value" && a.has_t())
          tensor = &a.t();
  std::vector<char> bytes;
  if (!tensor || tensor->data_type() != onnx::TensorProto::FLOAT ||
      !readTensor(*tensor, name, n.ctx.modelDir(), n.ctx.file(), bytes))
    return std::nullopt;
  std::vector<double> out(bytes.size() / 4);
  for (size_t k = 0; k < out.size(); ++k) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * k, 4);
    out[k] = f;
  }
  return out;
}

/// keep_aspect_ratio_policy (18+): one scale for all `axes`, the smallest
/// (not_larger) or largest (not_smaller) of sizes / input dims; those dims
/// become round_half_up(scale · dim) and the scale drives the coordinate
/// mapping, as in the ONNX reference. Needs the axes' dims static.
LogicalResult keepAspectRatio(NodeContext &n, Value x,
                              const std::vector<int64_t> &axes,
                              const std::string &policy,
                              std::vector<int64_t> &sizes,
                              std::vector<double> &scales) {
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t rank = shape.size();
  std::vector<int64_t> dims;
  std::optional<double> scale;
  for (int64_t axis : axes) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (ShapedType::isDynamic(shape[a]) || shape[a] == 0)
      return n.fail("keep_aspect_ratio_policy on a dynamic or empty dim",
                    "static resized dims");
    double s = double(sizes[a]) / double(shape[a]);
    scale = !scale                   ? s
            : policy == "not_larger" ? std::min(*scale, s)
                                     : std::max(*scale, s);
    dims.push_back(a);
  }
  scales.assign(rank, 1.0);
  for (int64_t a : dims) {
    scales[a] = *scale;
    sizes[a] = int64_t(*scale * double(shape[a]) + 0.5);
  }
  return success();
}

bool isEmptyTensor(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.hasStaticShape() && t.getNumElements() == 0;
}

/// The attributes of one Resize node, checked.
struct ResizeAttrs {
  std::string mode, ctm, nearest, policy;
  float cubicA = -0.75f;
  int64_t excludeOutside = 0;
  bool antialias = false;
  std::vector<int64_t> axes; // normalised; every dim when not given
};

LogicalResult readResizeAttrs(NodeContext &n, int64_t rank, ResizeAttrs &r) {
  r.mode = attrStr(n, "mode", "nearest");
  r.ctm = attrStr(n, "coordinate_transformation_mode", "half_pixel");
  r.nearest = attrStr(n, "nearest_mode", "round_prefer_floor");
  r.policy = attrStr(n, "keep_aspect_ratio_policy", "stretch");
  int64_t antialias = n.attrInt("antialias", 0);
  std::vector<int64_t> axes = n.attrInts("axes");
  r.cubicA = n.attrFloat("cubic_coeff_a", -0.75f);
  r.excludeOutside = n.attrInt("exclude_outside", 0);
  if (n.ctx.hasError())
    return failure();
  if (r.mode != "nearest" && r.mode != "linear" && r.mode != "cubic")
    return n.fail("mode '" + r.mode + "'", "nearest, linear, cubic");
  const std::string &ctm = r.ctm;
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" &&
      ctm != "align_corners" && ctm != "asymmetric" &&
      ctm != "tf_crop_and_resize" &&
      !(ctm == "half_pixel_symmetric" && n.opset() >= 19))
    return n.fail("coordinate_transformation_mode '" + ctm + "'",
                  "half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                  "tf_crop_and_resize, half_pixel_symmetric (19+)");
  if (r.nearest != "round_prefer_floor" && r.nearest != "round_prefer_ceil" &&
      r.nearest != "floor" && r.nearest != "ceil")
    return n.fail("nearest_mode '" + r.nearest + "'",
                  "round_prefer_floor, round_prefer_ceil, floor, ceil");
  if (antialias != 0 && antialias != 1)
    return n.fail("antialias " + std::to_string(antialias), "antialias 0 or 1");
  if (antialias && (r.mode == "nearest" || ctm == "tf_crop_and_resize"))
    return n.fail("antialias with mode '" + r.mode + "' and " + ctm,
                  "antialias with linear or cubic, not tf_crop_and_resize");
  r.antialias = antialias != 0;
  if (r.policy != "stretch" && r.policy != "not_larger" &&
      r.policy != "not_smaller")
    return n.fail("keep_aspect_ratio_policy '" + r.policy + "'",
                  "stretch, not_larger, not_smaller");
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  for (int64_t axis : axes) {
    int64_t a;
    if (failed(n.normalizeAxis(axis, rank, "axes entry", a)))
      return failure();
    r.axes.push_back(a);
  }
  return success();
}

/// Compile-time sizes: one per axis, the others keep their dim (-1 for a
/// dynamic one); keep_aspect_ratio_policy then also fixes the scales.
LogicalResult staticSizes(NodeContext &n, Value x, const ResizeAttrs &r,
                          const std::vector<int64_t> &given,
                          std::vector<int64_t> &sizes,
                          std::vector<double> &scales) {
  if (given.size() != r.axes.size())
    return n.fail("sizes must have one entry per axis");
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  sizes.assign(shape.begin(), shape.end());
  for (size_t i = 0; i < r.axes.size(); ++i)
    sizes[r.axes[i]] = given[i];
  for (int64_t &s : sizes)
    if (ShapedType::isDynamic(s))
      s = -1;
  if (r.policy != "stretch")
    return keepAspectRatio(n, x, r.axes, r.policy, sizes, scales);
  return success();
}

/// tf_crop_and_resize's roi (input 1) as starts of every dim then ends:
/// with `axes`, the given entries are placed at their dims and the others
/// keep the whole range [0, 1] (a Gather from roi with 0 and 1 appended).
LogicalResult fullRoi(NodeContext &n, int64_t rank, const ResizeAttrs &r,
                      Value &roi) {
  if (!n.hasInput(1) || failed(n.input(1, roi)) || isEmptyTensor(roi))
    return n.fail("tf_crop_and_resize without a roi", "a roi input");
  if (failed(n.requireType(roi, "roi", {n.f32()})))
    return failure();
  const int64_t k = int64_t(r.axes.size());
  auto type = cast<RankedTensorType>(roi.getType());
  if (type.getRank() != 1 ||
      (type.hasStaticShape() && type.getDimSize(0) != 2 * k))
    return n.fail("roi of shape " + shape::toString(graph::shapeOf(type)),
                  "2 entries per resized axis (" + std::to_string(2 * k) + ")");
  if (k == rank && llvm::is_sorted(r.axes))
    return success();
  std::vector<int64_t> pick(size_t(2 * rank));
  for (int64_t d = 0; d < rank; ++d)
    pick[d] = 2 * k, pick[d + rank] = 2 * k + 1; // the appended 0 and 1
  for (int64_t i = 0; i < k; ++i)
    pick[r.axes[i]] = i, pick[r.axes[i] + rank] = i + k;
  OpBuilder &b = n.builder();
  auto unit = RankedTensorType::get({2}, n.f32());
  Value zeroOne = graph::ConstantOp::create(
      b, n.loc(), unit, DenseElementsAttr::get(unit, ArrayRef<float>{0, 1}));
  FailureOr<Value> padded = n.build<graph::ConcatOp>(
      n.f32(), ValueRange{roi, zeroOne}, b.getI64IntegerAttr(0));
  if (succeeded(padded))
    padded = n.build<graph::GatherOp>(
        n.f32(), *padded, tensorI64Constant(n, pick), b.getI64IntegerAttr(0));
  if (failed(padded))
    return failure();
  roi = *padded;
  return success();
}

/// Picks the input that carries the target: sizes when present and not
/// empty, else scales. Both as run-time inputs of unknown length would
/// leave the choice to the run: refused.
LogicalResult resizeTarget(NodeContext &n, Value scalesIn, Value sizesIn,
                           Value &target, bool &isSizes) {
  bool hasSizes = sizesIn && !isEmptyTensor(sizesIn);
  bool hasScales = scalesIn && !isEmptyTensor(scalesIn);
  if (hasSizes && hasScales && !n.ctx.constantInts(sizesIn) &&
      !constantFloats(n, 2, scalesIn))
    return n.fail("both scales and sizes are run-time inputs",
                  "one of them empty or absent");
  if (!hasSizes && !hasScales)
    return n.fail("neither scales nor sizes given");
  isSizes = hasSizes;
  target = hasSizes ? sizesIn : scalesIn;
  return success();
}

} // namespace

/// Resize (11+): nearest, linear or cubic; axes (18+) name the resized dims.
LogicalResult convertResize(NodeContext &n) {
  Value x, scalesIn, sizesIn, target;
  bool isSizes = false;
  ResizeAttrs r;
  bool eightBit = false;
  if (failed(n.input(0, x)) || failed(eightBitAsF32(n, x, eightBit)) ||
      failed(n.requireType(x, "X", {n.f32()})) ||
      failed(n.optionalInput(2, scalesIn)) ||
      failed(n.optionalInput(3, sizesIn)) ||
      failed(readResizeAttrs(n, rankOf(x), r)) ||
      failed(resizeTarget(n, scalesIn, sizesIn, target, isSizes)))
    return failure();
  // Interpolating 8-bit values rounds in a way of onnxruntime's own.
  if (eightBit && r.mode != "nearest")
    return n.fail("an 8-bit input with mode '" + r.mode + "'",
                  "mode 'nearest' for uint8/int8 inputs");
  int64_t rank = rankOf(x);
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  Value scalesOperand, sizesOperand;
  std::optional<std::vector<int64_t>> constSizes;
  std::optional<std::vector<double>> constScales;
  if (isSizes && (constSizes = n.ctx.constantInts(target))) {
    if (failed(staticSizes(n, x, r, *constSizes, sizes, scales)))
      return failure();
  } else if (!isSizes && (constScales = constantFloats(n, 2, target))) {
    if (constScales->size() != r.axes.size())
      return n.fail("scales must have one entry per axis");
    scales.assign(rank, 1.0);
    for (size_t i = 0; i < r.axes.size(); ++i)
      scales[r.axes[i]] = (*constScales)[i];
  } else if (isSizes) {
    if (failed(n.requireType(target, "sizes", {n.i64()})))
      return failure();
    sizesOperand = target;
  } else {
    if (failed(n.requireType(target, "scales", {n.f32()})))
      return failure();
    scalesOperand = target;
  }
  bool runTime = scalesOperand || sizesOperand;
  Value roi;
  const bool crop = r.ctm == "tf_crop_and_resize";
  if (crop && failed(fullRoi(n, rank, r, roi)))
    return failure();
  const float extrapolation = n.attrFloat("extrapolation_value", 0.0f);
  if (n.ctx.hasError())
    return failure();
  OpBuilder &b = n.builder();
  FailureOr<Value> y = n.build<graph::ResizeOp>(
      n.f32(), x, scalesOperand, sizesOperand, roi,
      b.getDenseF64ArrayAttr(scales), b.getDenseI64ArrayAttr(sizes),
      b.getStringAttr(r.mode), b.getStringAttr(r.ctm),
      b.getStringAttr(r.nearest),
      r.mode == "cubic" ? b.getF64FloatAttr(r.cubicA) : FloatAttr(),
      r.mode == "cubic" && r.excludeOutside ? b.getI64IntegerAttr(1)
                                            : IntegerAttr(),
      runTime ? b.getDenseI64ArrayAttr(r.axes) : DenseI64ArrayAttr(),
      sizesOperand && r.policy != "stretch" ? b.getStringAttr(r.policy)
                                            : StringAttr(),
      crop && extrapolation != 0.0f ? b.getF64FloatAttr(extrapolation)
                                    : FloatAttr(),
      r.antialias ? b.getI64IntegerAttr(1) : IntegerAttr());
  if (succeeded(y) && eightBit)
    y = n.build<graph::CastOp>(n.i32(), *y);
  return n.setOutput(0, y);
}

/// Upsample (7-9, Resize's predecessor): compile-time scales (an attribute
/// before opset 9, input 1 from it), output dims floor(dim * scale), and
/// asymmetric coordinates; nearest truncates the source coordinate, as
/// onnxruntime's Upsample does. Scales below 1 are refused, as there.
LogicalResult convertUpsample(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "X", {n.f32()})))
    return failure();
  std::string mode = "nearest";
  if (const auto *a = n.attr("mode", onnx::AttributeProto::STRING))
    mode = a->s();
  std::optional<std::vector<double>> scales;
  if (n.opset() < 9) {
    if (const auto *a = n.attr("scales", onnx::AttributeProto::FLOATS))
      scales = std::vector<double>(a->floats().begin(), a->floats().end());
  } else if (Value s; succeeded(n.input(1, s))) {
    scales = constantFloats(n, 1, s);
  }
  if (n.ctx.hasError())
    return failure();
  if (mode != "nearest" && mode != "linear")
    return n.fail("mode '" + mode + "'", "nearest, linear");
  if (!scales)
    return n.fail("scales that are not known at compile time",
                  "constant scales (an initializer or Constant)");
  if (int64_t(scales->size()) != rankOf(x))
    return n.fail("scales must have one entry per dim of X");
  for (double s : *scales)
    if (!(s >= 1))
      return n.fail("scale " + std::to_string(s), "scales of at least 1");
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::ResizeOp>(
             n.f32(), x, Value(), Value(), Value(),
             b.getDenseF64ArrayAttr(*scales), b.getDenseI64ArrayAttr({}),
             b.getStringAttr(mode), b.getStringAttr("asymmetric"),
             b.getStringAttr("floor"), FloatAttr(), IntegerAttr(),
             DenseI64ArrayAttr(), StringAttr(), FloatAttr(), IntegerAttr()));
}

} // namespace ingot::compiler::onnximport
