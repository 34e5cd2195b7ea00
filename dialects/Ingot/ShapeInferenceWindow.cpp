//===- ShapeInferenceWindow.cpp - Convolution, pooling, resize rules ------===//
#include "dialects/Ingot/ShapeInferenceWindow.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace ingot::graph {
namespace {

constexpr int64_t kDyn = shape::kDynamic;

/// Output size of one spatial dim of a convolution or pooling window.
int64_t windowOut(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                  int64_t padBegin, int64_t padEnd, StringRef autoPad,
                  bool ceilMode) {
  if (in == kDyn)
    return kDyn;
  int64_t ek = (k - 1) * dilation + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return (in + stride - 1) / stride;
  if (autoPad == "VALID")
    padBegin = padEnd = 0;
  int64_t span = in + padBegin + padEnd - ek;
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A last window that would start inside the end padding is dropped.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}


} // namespace

bool inferPool(Operation *op, ArrayRef<int64_t> kernel,
               ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
               ArrayRef<int64_t> dilations, StringRef autoPad, bool ceilMode,
               const shape::Shape &in, shape::Shape &out, std::string &error) {
  size_t nd = kernel.size();
  if (in.size() != nd + 2 || nd < 1 || nd > 3) {
    error = "expects a rank-3 to rank-5 input with one kernel dim per "
            "spatial dim, got rank " +
            std::to_string(in.size()) + " and " + std::to_string(nd) +
            " kernel dims";
    return false;
  }
  if (strides.size() != nd || dilations.size() != nd || pads.size() != 2 * nd) {
    error = "strides and dilations need one entry per spatial dim and pads "
            "two";
    return false;
  }
  out = {in[0], in[1]};
  for (size_t i = 0; i < nd; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1) {
      error = "kernel, strides and dilations must be positive";
      return false;
    }
    out.push_back(windowOut(in[i + 2], kernel[i], strides[i], dilations[i],
                            pads[i], pads[i + nd], autoPad, ceilMode));
  }
  return true;
}

template <typename ConvLike>
bool inferConv(ConvLike op, ArrayRef<ValueInfo> ins, shape::Shape &out,
               std::string &error) {
  const shape::Shape &x = ins[0].shape, &w = ins[1].shape;
  if (w.size() != x.size()) {
    error = "weight rank " + std::to_string(w.size()) +
            " differs from the input rank " + std::to_string(x.size());
    return false;
  }
  // The input channels are checked by the verifier on the IR types, not
  // here: at the symbols' maxima a dynamic channel dim reads as the maximum.
  int64_t group = op.getGroup();
  if (group < 1 || (w[0] != kDyn && w[0] % group != 0)) {
    error = "weight dim 0 " + std::to_string(w[0]) +
            " is not a multiple of group " + std::to_string(group);
    return false;
  }
  shape::Shape kernel(w.begin() + std::min<size_t>(2, w.size()), w.end());
  std::optional<ArrayRef<int64_t>> declared = op.getKernelShape();
  if (declared && declared->size() != kernel.size()) {
    error = "kernel_shape has " + std::to_string(declared->size()) +
            " dims, the weight " + std::to_string(kernel.size());
    return false;
  }
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (declared && kernel[i] != kDyn && kernel[i] != (*declared)[i]) {
      error = "kernel_shape does not match the weight's dims";
      return false;
    }
    if (kernel[i] == kDyn && declared)
      kernel[i] = (*declared)[i];
  }
  // A weight fed as an input may leave kernel dims to run time: inferPool
  // checks the attributes with a unit window, and the output dims of those
  // axes are then dynamic (ComputeBounds bounds them with that unit
  // window, the largest output any kernel gives).
  shape::Shape unitKernel = kernel;
  for (int64_t &k : unitKernel)
    if (k == kDyn)
      k = 1;
  if (!inferPool(op, unitKernel, op.getStrides(), op.getPads(),
                 op.getDilations(), op.getAutoPad(), false, x, out, error))
    return false;
  for (size_t i = 0; i < kernel.size(); ++i)
    if (kernel[i] == kDyn)
      out[i + 2] = kDyn;
  out[1] = w[0];
  return true;
}
template bool inferConv(ConvOp, ArrayRef<ValueInfo>, shape::Shape &,
                        std::string &);
template bool inferConv(ConvIntegerOp, ArrayRef<ValueInfo>, shape::Shape &,
                        std::string &);

bool inferConvTranspose(ConvTransposeOp op, ArrayRef<ValueInfo> ins,
                        shape::Shape &out, std::string &error) {
  const shape::Shape &x = ins[0].shape, &w = ins[1].shape;
  const size_t nd = x.size() < 3 ? 0 : x.size() - 2;
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(),
                    dil = op.getDilations(), extra = op.getOutputPadding();
  if (nd < 1 || nd > 3 || w.size() != x.size()) {
    error = "expects [N, C, d1 (, d2 (, d3))] input and a weight of its rank";
    return false;
  }
  if (strides.size() != nd || dil.size() != nd || extra.size() != nd ||
      pads.size() != 2 * nd ||
      (op.getOutputShape() && op.getOutputShape()->size() != nd)) {
    error = "strides/dilations/output_padding/pads/output_shape do not match "
            "the spatial rank";
    return false;
  }
  if (std::optional<StringRef> mode = op.getAutoPad();
      mode && *mode != "SAME_UPPER" && *mode != "SAME_LOWER") {
    error = "auto_pad must be SAME_UPPER or SAME_LOWER when given";
    return false;
  }
  int64_t group = op.getGroup();
  if (group < 1) {
    error = "group must be >= 1";
    return false;
  }
  // A weight fed as an input may leave its dims dynamic: the result's
  // channels and spatial dims then are too.
  out = {x[0], w[1] == kDyn ? kDyn : w[1] * group};
  for (size_t i = 0; i < nd; ++i) {
    int64_t k = w[i + 2], in = x[i + 2];
    if ((k != kDyn && k < 1) || strides[i] < 1 || dil[i] < 1 || extra[i] < 0 ||
        extra[i] >= std::max(strides[i], dil[i])) {
      error = "kernel dims must be positive, strides and dilations "
              "positive, 0 <= output_padding < max(stride, dilation)";
      return false;
    }
    // An output_shape or a SAME_* auto_pad fixes the size; the pads then
    // follow from it at run time.
    if (std::optional<ArrayRef<int64_t>> target = op.getOutputShape()) {
      out.push_back((*target)[i]);
      continue;
    }
    if (in == kDyn || k == kDyn) {
      out.push_back(kDyn);
      continue;
    }
    int64_t size = strides[i] * (in - 1) + extra[i] + dil[i] * (k - 1) + 1 -
                   pads[i] - pads[i + nd];
    if (op.getAutoPad()) // no pads (the importer zeroes them): at most in·s
      size = std::min(size, in * strides[i]);
    if (in < 1 || size < 1) {
      error = "output dim " + std::to_string(i + 2) + " would be " +
              std::to_string(size);
      return false;
    }
    out.push_back(size);
  }
  return true;
}

namespace {

/// The shape rule shared by LSTM (4 gates, b of 8H) and GRU (3 gates, b of
/// 6H): x [seq, batch, input], w [dirs, gates·H, input], r [dirs, gates·H,
/// H], then the optional operands in order: b [dirs, 2·gates·H] when
/// `hasBias`, the initial states [dirs, batch, H]. Y or a state by `select`,
/// or with `select` = the output count all of them stacked along dim 0.
bool inferRecurrent(ArrayRef<ValueInfo> ins, int64_t h, int64_t dirs,
                    int64_t gates, bool hasBias, int64_t select,
                    shape::Shape &out, std::string &error) {
  const shape::Shape &x = ins[0].shape, &w = ins[1].shape, &r = ins[2].shape;
  auto is = [](int64_t dim, int64_t want) {
    return dim == kDyn || dim == want;
  };
  const int64_t g = gates * h;
  if (x.size() != 3 || w.size() != 3 || r.size() != 3 || h < 1 ||
      !is(w[0], dirs) || !is(w[1], g) || !is(w[2], x[2]) || !is(r[0], dirs) ||
      !is(r[1], g) || !is(r[2], h)) {
    error = "expects x [seq, batch, input], w [dirs, " + std::to_string(gates) +
            "H, input] and r [dirs, " + std::to_string(gates) +
            "H, H] with H = hidden_size and dirs from direction";
    return false;
  }
  for (size_t i = 3; i < ins.size(); ++i) {
    const shape::Shape &s = ins[i].shape;
    bool bias = hasBias && i == 3;
    if (bias ? s.size() != 2 || !is(s[0], dirs) || !is(s[1], 2 * g)
             : s.size() != 3 || !is(s[0], dirs) || !is(s[2], h)) {
      error = "b must be [dirs, " + std::to_string(2 * gates) +
              "H] and initial states [dirs, batch, H]";
      return false;
    }
  }
  const int64_t all = gates == 4 ? 3 : 2;
  if (select == all)
    out = {x[0] == kDyn ? kDyn : x[0] + all - 1, dirs, x[1], h};
  else if (select == 0)
    out = {x[0], dirs, x[1], h};
  else
    out = {dirs, x[1], h};
  return true;
}

} // namespace

bool inferLstm(LstmOp op, ArrayRef<ValueInfo> ins, shape::Shape &out,
               std::string &error) {
  return inferRecurrent(ins, op.getHiddenSize(),
                        op.getDirection() == "bidirectional" ? 2 : 1, 4,
                        bool(op.getBias()), op.getSelect(), out, error);
}

bool inferGru(GruOp op, ArrayRef<ValueInfo> ins, shape::Shape &out,
              std::string &error) {
  return inferRecurrent(ins, op.getHiddenSize(),
                        op.getDirection() == "bidirectional" ? 2 : 1, 3,
                        bool(op.getBias()), op.getSelect(), out, error);
}

/// Run-time scales leave the resized dims open; run-time sizes fix them
/// when their values are tracked (computed from shapes) and the policy
/// stretches.
bool inferRunTimeResize(ResizeOp op, ArrayRef<ValueInfo> ins,
                        shape::Shape &out) {
  out = ins[0].shape;
  ArrayRef<int64_t> axes = *op.getAxes();
  const std::optional<std::vector<int64_t>> &sizes = ins[1].values;
  bool exact = op.getSizesInput() && sizes && sizes->size() == axes.size() &&
               op.getKeepAspectRatioPolicy().value_or("stretch") == "stretch";
  for (size_t i = 0; i < axes.size(); ++i)
    out[axes[i]] = exact && (*sizes)[i] >= 0 ? (*sizes)[i] : kDyn;
  return true;
}

bool inferResize(ResizeOp op, ArrayRef<ValueInfo> ins, shape::Shape &out,
                 std::string &error) {
  if (op.getScalesInput() || op.getSizesInput())
    return inferRunTimeResize(op, ins, out);
  const shape::Shape &in = ins[0].shape;
  ArrayRef<int64_t> sizes = op.getSizes();
  ArrayRef<double> scales = op.getScales();
  if (!sizes.empty()) {
    if (sizes.size() != in.size()) {
      error = "sizes need one entry per dim";
      return false;
    }
    // -1 keeps the input dim (axes not resized, of unknown size).
    out.clear();
    for (size_t i = 0; i < in.size(); ++i)
      out.push_back(sizes[i] < 0 ? in[i] : sizes[i]);
    return true;
  }
  if (scales.size() != in.size()) {
    error = "scales need one entry per dim";
    return false;
  }
  out.clear();
  for (size_t i = 0; i < in.size(); ++i)
    // f32 product, as onnxruntime computes it.
    out.push_back(in[i] == kDyn
                      ? kDyn
                      : int64_t(std::floor(float(in[i]) * float(scales[i]))));
  return true;
}

namespace {

bool inferDepthToSpace(DepthToSpaceOp d, const shape::Shape &in,
                       shape::Shape &out, std::string &error) {
  int64_t b = d.getBlocksize();
  if (in.size() != 4 || b < 1 || (in[1] != kDyn && in[1] % (b * b) != 0)) {
    error = "expects [N, C, H, W] with C divisible by blocksize^2";
    return false;
  }
  out = {in[0], in[1] == kDyn ? kDyn : in[1] / (b * b), mulDims(in[2], b),
         mulDims(in[3], b)};
  return true;
}

bool inferSpaceToDepth(SpaceToDepthOp d, const shape::Shape &in,
                       shape::Shape &out, std::string &error) {
  int64_t b = d.getBlocksize();
  if (in.size() != 4 || b < 1 || (in[2] != kDyn && in[2] % b != 0) ||
      (in[3] != kDyn && in[3] % b != 0)) {
    error = "expects [N, C, H, W] with H and W divisible by blocksize";
    return false;
  }
  out = {in[0], mulDims(in[1], b * b), in[2] == kDyn ? kDyn : in[2] / b,
         in[3] == kDyn ? kDyn : in[3] / b};
  return true;
}

} // namespace

std::optional<bool> inferWindowedOp(Operation *op, ArrayRef<ValueInfo> ins,
                                    shape::Shape &out, std::string &error) {
  using Result = std::optional<bool>;
  // Only the cases read it: an op that is none of these may have no operand.
  auto in = [&]() -> const shape::Shape & { return ins[0].shape; };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<ConvOp, ConvIntegerOp>(
          [&](auto c) -> Result { return inferConv(c, ins, out, error); })
      .Case<ConvTransposeOp>([&](ConvTransposeOp c) -> Result {
        return inferConvTranspose(c, ins, out, error);
      })
      .Case<LstmOp>(
          [&](LstmOp l) -> Result { return inferLstm(l, ins, out, error); })
      .Case<GruOp>(
          [&](GruOp g) -> Result { return inferGru(g, ins, out, error); })
      .Case<MaxPoolOp, AveragePoolOp>([&](auto p) -> Result {
        return inferPool(p, p.getKernelShape(), p.getStrides(), p.getPads(),
                         p.getDilations(), p.getAutoPad(), p.getCeilMode() != 0,
                         in(), out, error);
      })
      .Case<GlobalAveragePoolOp>([&](GlobalAveragePoolOp) -> Result {
        if (in().size() < 3) {
          error = "expects a rank >= 3 input";
          return false;
        }
        out = in();
        std::fill(out.begin() + 2, out.end(), 1);
        return true;
      })
      .Case<ResizeOp>(
          [&](ResizeOp r) -> Result { return inferResize(r, ins, out, error); })
      .Case<DepthToSpaceOp>([&](DepthToSpaceOp d) -> Result {
        return inferDepthToSpace(d, in(), out, error);
      })
      .Case<SpaceToDepthOp>([&](SpaceToDepthOp d) -> Result {
        return inferSpaceToDepth(d, in(), out, error);
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace ingot::graph
