//===- OnnxTensorNnOps.cpp - Conv, pooling, Resize and TopK converters ----===//
//
// Window attributes are written out in full (defaults filled in) so the
// kernels and shape rules see one form. Resize needs its scales or sizes at
// compile time: they size the result.
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

} // namespace

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
  if (failed(n.input(0, x)) || failed(requireSpatial(n, x)))
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
  return n.setOutput(0, build(graph::MaxPoolOp(), n.f32(), 0));
}

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
  if (!kernel.empty() &&
      ArrayRef<int64_t>(kernel) != wt.getShape().drop_front(2))
    return n.fail("kernel_shape does not match the weight's dims");
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::ConvOp>(
             n.f32(), x, w, bias, b.getDenseI64ArrayAttr(strides),
             b.getDenseI64ArrayAttr(pads), b.getDenseI64ArrayAttr(dilations),
             b.getI64IntegerAttr(group), b.getStringAttr(autoPad)));
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

/// Resize (13+): nearest or linear; scales or sizes must be known at
/// compile time (axes from 18 are expanded to every dim).
LogicalResult convertResize(NodeContext &n) {
  Value x, scalesIn, sizesIn;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "X", {n.f32()})) ||
      failed(n.optionalInput(2, scalesIn)) ||
      failed(n.optionalInput(3, sizesIn)))
    return failure();
  std::string mode = attrStr(n, "mode", "nearest");
  std::string ctm = attrStr(n, "coordinate_transformation_mode", "half_pixel");
  std::string nearest = attrStr(n, "nearest_mode", "round_prefer_floor");
  std::string policy = attrStr(n, "keep_aspect_ratio_policy", "stretch");
  int64_t antialias = n.attrInt("antialias", 0);
  std::vector<int64_t> axes = n.attrInts("axes");
  if (n.ctx.hasError())
    return failure();
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return n.fail("mode '" + mode + "'", "nearest, linear, cubic");
  float cubicA = n.attrFloat("cubic_coeff_a", -0.75f);
  int64_t excludeOutside = n.attrInt("exclude_outside", 0);
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" &&
      ctm != "align_corners" && ctm != "asymmetric" &&
      !(ctm == "half_pixel_symmetric" && n.opset() >= 19))
    return n.fail("coordinate_transformation_mode '" + ctm + "'",
                  "half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                  "half_pixel_symmetric (19+)");
  if (nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" &&
      nearest != "floor" && nearest != "ceil")
    return n.fail("nearest_mode '" + nearest + "'",
                  "round_prefer_floor, round_prefer_ceil, floor, ceil");
  if (antialias != 0)
    return n.fail("antialias " + std::to_string(antialias), "antialias 0");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return n.fail("keep_aspect_ratio_policy '" + policy + "'",
                  "stretch, not_larger, not_smaller");
  int64_t rank = rankOf(x);
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (sizesIn && !isEmptyTensor(sizesIn)) {
    std::vector<int64_t> given;
    if (failed(n.constantInts(3, "sizes", given)))
      return failure();
    if (given.size() != axes.size())
      return n.fail("sizes must have one entry per axis");
    sizes.assign(shape.begin(), shape.end());
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a;
      if (failed(n.normalizeAxis(axes[i], rank, "axes entry", a)))
        return failure();
      sizes[a] = given[i];
    }
    // Dims left out of `axes` keep their size; -1 says so for dynamic ones.
    for (int64_t &s : sizes)
      if (ShapedType::isDynamic(s))
        s = -1;
    if (policy != "stretch" &&
        failed(keepAspectRatio(n, x, axes, policy, sizes, scales)))
      return failure();
  } else if (scalesIn && !isEmptyTensor(scalesIn)) {
    std::optional<std::vector<double>> given = constantFloats(n, 2, scalesIn);
    if (!given)
      return n.fail("scales must be known at compile time",
                    "an initializer or Constant scales input");
    if (given->size() != axes.size())
      return n.fail("scales must have one entry per axis");
    scales.assign(rank, 1.0);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a;
      if (failed(n.normalizeAxis(axes[i], rank, "axes entry", a)))
        return failure();
      scales[a] = (*given)[i];
    }
  } else {
    return n.fail("neither scales nor sizes given");
  }
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::ResizeOp>(
             n.f32(), x, b.getDenseF64ArrayAttr(scales),
             b.getDenseI64ArrayAttr(sizes), b.getStringAttr(mode),
             b.getStringAttr(ctm), b.getStringAttr(nearest),
             mode == "cubic" ? b.getF64FloatAttr(cubicA) : FloatAttr(),
             mode == "cubic" && excludeOutside ? b.getI64IntegerAttr(1)
                                               : IntegerAttr()));
}

} // namespace ingot::compiler::onnximport
