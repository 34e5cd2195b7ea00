//===- ShapeInferenceTensor.cpp - Shape rules of the tensor family -------===//
//
// Rules for the tensor family (IngotTensorOps.td). Ops that take shape-like
// operands (Slice, Expand, Tile, Pad, TopK's k, Range) use their tracked
// values; entries not known make the dims they control dynamic. When those
// ops act on small integer vectors with known values they also produce
// values, so shape arithmetic written with them still folds. The data
// movement ops' rules are here; indexing (gather/scatter, top-k, one-hot,
// non-zero) is in ShapeInferenceIndexing.cpp, the windowed ops' geometry
// in ShapeInferenceWindow.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/ShapeInferenceTensor.h"
#include "dialects/Ingot/ShapeInferenceWindow.h"

#include "llvm/ADT/TypeSwitch.h"

#include <array>
#include <cmath>

using namespace mlir;

namespace ingot::graph {
namespace {

constexpr int64_t kDyn = shape::kDynamic;

/// Length of ONNX Slice along a dim of size `dim`; clamps as the spec says.
int64_t sliceLength(int64_t dim, int64_t start, int64_t end, int64_t step,
                    int64_t *first) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    *first = start;
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, -1, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  *first = start;
  return start > end ? (start - end - step - 1) / -step : 0;
}

bool inferSlice(SliceOp op, ArrayRef<ValueInfo> ins, shape::Shape &out,
                std::optional<std::vector<int64_t>> &values,
                std::string &error) {
  const shape::Shape &in = ins[0].shape;
  out = in;
  int64_t rank = in.size();
  for (int i = 1; i < 5; ++i)
    if (ins[i].shape.size() != 1) {
      error = "starts, ends, axes and steps must be 1-D";
      return false;
    }
  if (!allValuesKnown(ins[3].values)) {
    out.assign(rank, kDyn); // any dim may be sliced
    return true;
  }
  const std::vector<int64_t> &axes = *ins[3].values;
  size_t n = axes.size();
  for (int i = 1; i < 5; ++i)
    if (ins[i].shape[0] != kDyn && ins[i].shape[0] != int64_t(n)) {
      error = "starts, ends, axes and steps must have the same length";
      return false;
    }
  std::vector<int64_t> firsts(rank, 0), steps(rank, 1);
  bool exact = true;
  for (size_t j = 0; j < n; ++j) {
    int64_t axis;
    if (!shape::normalizeAxis(axes[j], rank, &axis)) {
      error = "slice axis " + std::to_string(axes[j]) +
              " is out of range for rank " + std::to_string(rank);
      return false;
    }
    auto at = [&](int k) {
      return ins[k].values ? (*ins[k].values)[j] : kUnknownValue;
    };
    int64_t start = at(1), end = at(2), step = at(4);
    if (step == 0) {
      error = "slice step must not be 0";
      return false;
    }
    if (start == kUnknownValue || end == kUnknownValue ||
        step == kUnknownValue || in[axis] == kDyn) {
      out[axis] = kDyn;
      exact = false;
      continue;
    }
    out[axis] = sliceLength(in[axis], start, end, step, &firsts[axis]);
    steps[axis] = step;
  }
  // Slicing a small integer tensor with known entries (shape vectors, and
  // PyTorch's [rank, 2] pad matrices read backwards).
  if (exact)
    values = sliceValues(in, out, firsts, steps, ins[0].values);
  return true;
}

bool inferExpand(Operation *op, ArrayRef<ValueInfo> ins, shape::Shape &out,
                 std::optional<std::vector<int64_t>> &values,
                 std::string &error) {
  const shape::Shape &in = ins[0].shape;
  if (ins[1].shape.size() != 1 || ins[1].shape[0] == kDyn) {
    error = "shape operand must be a 1-D tensor of static length";
    return false;
  }
  shape::Shape target(ins[1].shape[0], kDyn);
  if (ins[1].values)
    for (size_t i = 0; i < target.size(); ++i)
      if (int64_t v = (*ins[1].values)[i]; v != kUnknownValue)
        target[i] = v;
  // Numpy broadcasting, except that two different static dims are not an
  // error: bound computation sets every symbol to its maximum, so an input
  // dim that is 1 or t at run time may read 512 there. The result type's
  // static dim (from t at import) is then the answer, else the larger is a
  // safe bound. The verifier rejects real mismatches in the IR types.
  auto declared = cast<RankedTensorType>(op->getResult(0).getType());
  size_t rank = std::max(in.size(), target.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
    int64_t t =
        i + target.size() >= rank ? target[i + target.size() - rank] : 1;
    if (t != kDyn && t < 0) {
      error = "expand shape has negative entry " + std::to_string(t);
      return false;
    }
    if (a == 1 || a == t)
      out[i] = t;
    else if (t == 1)
      out[i] = a;
    else if (a == kDyn || t == kDyn)
      out[i] = a == kDyn ? t : a;
    else if (declared.getRank() == int64_t(rank) && !declared.isDynamicDim(i))
      out[i] = declared.getDimSize(i);
    else
      out[i] = std::max(a, t);
  }
  // Expanding a shape vector (or a scalar) with known entries.
  if (ins[0].values && allValuesKnown(ins[1].values) && in.size() <= 1 &&
      out.size() == 1 && out[0] != kDyn) {
    const auto &v = *ins[0].values;
    values =
        v.size() == size_t(out[0]) ? v : std::vector<int64_t>(out[0], v[0]);
  }
  return true;
}

bool inferFlatten(FlattenOp f, ArrayRef<ValueInfo> ins, shape::Shape &out,
                  std::optional<std::vector<int64_t>> &values,
                  std::string &error) {
  const shape::Shape &in = ins[0].shape;
  int64_t rank = in.size(), axis = f.getAxis();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank) {
    error = "flatten axis " + std::to_string(f.getAxis()) +
            " is out of range for rank " + std::to_string(rank);
    return false;
  }
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? a : b) = mulDims(i < axis ? a : b, in[i]);
  out = {a, b};
  values = ins[0].values;
  return true;
}

bool inferTile(ArrayRef<ValueInfo> ins, shape::Shape &out,
               std::optional<std::vector<int64_t>> &values,
               std::string &error) {
  const shape::Shape &in = ins[0].shape;
  // A repeats vector of run-time length must still hold one entry per dim
  // (the spec fixes it): the kernel checks that when it runs.
  if (ins[1].shape.size() != 1 ||
      (ins[1].shape[0] != int64_t(in.size()) && ins[1].shape[0] != kDyn)) {
    error = "repeats must be 1-D with one entry per input dim";
    return false;
  }
  out = in;
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t r = ins[1].values && ins[1].values->size() == out.size()
                    ? (*ins[1].values)[i]
                    : kUnknownValue;
    if (r != kUnknownValue && r < 0) {
      error = "negative repeat " + std::to_string(r);
      return false;
    }
    out[i] = r == kUnknownValue ? kDyn : mulDims(out[i], r);
  }
  if (ins[0].values && out.size() == 1 && out[0] != kDyn) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < out[0]; ++i)
      v.push_back((*ins[0].values)[i % ins[0].values->size()]);
    values = std::move(v);
  }
  return true;
}

/// A float scalar of Range whose value is a whole number known ahead: a
/// float constant, or a cast of an integer constant (YOLOv8's anchor grid
/// takes Range(0.0, float(dim), 1.0) of a feature map's width).
std::optional<int64_t> integralFloat(Value v) {
  Value source = v;
  if (auto cast = v.getDefiningOp<CastOp>())
    source = cast.getInput();
  auto c = source.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  if (dense.getElementType().isInteger(64)) {
    const int64_t i = (*dense.getValues<APInt>().begin()).getSExtValue();
    return std::abs(i) < (int64_t(1) << 24) ? std::optional(i) : std::nullopt;
  }
  if (!dense.getElementType().isF32() && !dense.getElementType().isF64())
    return std::nullopt;
  const double d = (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (d != std::floor(d) || std::fabs(d) >= double(int64_t(1) << 24))
    return std::nullopt;
  return int64_t(d);
}

/// start, limit and delta: tracked integers, or whole-number floats.
std::optional<std::array<int64_t, 3>> rangeOperands(RangeOp r,
                                                    ArrayRef<ValueInfo> ins) {
  std::array<int64_t, 3> v;
  const Value operands[3] = {r.getStart(), r.getLimit(), r.getDelta()};
  for (size_t i = 0; i < 3; ++i) {
    if (allValuesKnown(ins[i].values)) {
      v[i] = (*ins[i].values)[0];
    } else if (std::optional<int64_t> f = integralFloat(operands[i])) {
      v[i] = *f;
    } else {
      return std::nullopt;
    }
  }
  return v;
}

bool inferRange(RangeOp r, ArrayRef<ValueInfo> ins, shape::Shape &out,
                std::optional<std::vector<int64_t>> &values,
                std::string &error) {
  for (size_t i = 0; i < 3; ++i)
    if (!ins[i].shape.empty()) {
      error = "start, limit and delta must be scalars";
      return false;
    }
  int64_t count = r.getCount();
  if (std::optional<std::array<int64_t, 3>> v = rangeOperands(r, ins)) {
    const auto [a, b, d] = *v;
    if (d == 0) {
      error = "range delta must not be 0";
      return false;
    }
    int64_t n = (b - a + d + (d > 0 ? -1 : 1)) / d;
    count = std::max<int64_t>(n, 0);
    // Values only for an integer result (they feed shapes); a float one's
    // size is all its readers need.
    if (count <= kMaxTrackedValues &&
        isTrackedTensor(r->getResult(0).getType())) {
      std::vector<int64_t> vals;
      for (int64_t i = 0; i < count; ++i)
        vals.push_back(a + i * d);
      values = std::move(vals);
    }
  }
  out = {count >= 0 ? count : kDyn};
  return true;
}

bool inferPad(ArrayRef<ValueInfo> ins, shape::Shape &out, std::string &error) {
  const shape::Shape &in = ins[0].shape;
  size_t rank = in.size();
  // Pads of run-time length: the spec fixes it at 2·rank (the importer
  // folds an axes operand into full pads), which the kernel checks.
  if (ins[1].shape.size() != 1 ||
      (ins[1].shape[0] != int64_t(2 * rank) && ins[1].shape[0] != kDyn)) {
    error = "pads must hold 2 * rank = " + std::to_string(2 * rank) +
            " entries";
    return false;
  }
  if (!ins[2].shape.empty() && shape::numElements(ins[2].shape) != 1) {
    error = "the pad value must be a scalar";
    return false;
  }
  out = in;
  for (size_t i = 0; i < rank; ++i) {
    const bool known = ins[1].values && ins[1].values->size() == 2 * rank;
    int64_t b = known ? (*ins[1].values)[i] : kUnknownValue;
    int64_t e = known ? (*ins[1].values)[i + rank] : kUnknownValue;
    if (b == kUnknownValue || e == kUnknownValue || out[i] == kDyn)
      out[i] = kDyn;
    else
      out[i] += b + e;
    if (out[i] != kDyn && out[i] < 0) {
      error = "pads crop dim " + std::to_string(i) + " below zero";
      return false;
    }
  }
  return true;
}

/// Flatten, Slice, Expand, Tile, Range, Pad.
std::optional<bool> inferMovementOp(Operation *op, ArrayRef<ValueInfo> ins,
                                    shape::Shape &out,
                                    std::optional<std::vector<int64_t>> &values,
                                    std::string &error) {
  using Result = std::optional<bool>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<FlattenOp>([&](FlattenOp f) -> Result {
        return inferFlatten(f, ins, out, values, error);
      })
      .Case<SliceOp>([&](SliceOp s) -> Result {
        return inferSlice(s, ins, out, values, error);
      })
      .Case<ExpandOp>([&](ExpandOp e) -> Result {
        return inferExpand(e, ins, out, values, error);
      })
      .Case<TileOp>(
          [&](TileOp) -> Result { return inferTile(ins, out, values, error); })
      .Case<RangeOp>([&](RangeOp r) -> Result {
        return inferRange(r, ins, out, values, error);
      })
      .Case<PadOp>([&](PadOp) -> Result { return inferPad(ins, out, error); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

std::optional<bool> inferTensorOp(Operation *op, ArrayRef<ValueInfo> ins,
                                  shape::Shape &out,
                                  std::optional<std::vector<int64_t>> &values,
                                  std::string &error) {
  if (std::optional<bool> r = inferMovementOp(op, ins, out, values, error))
    return r;
  if (std::optional<bool> r = inferIndexingOp(op, ins, out, error))
    return r;
  return inferWindowedOp(op, ins, out, error); // ShapeInferenceWindow.cpp
}

} // namespace ingot::graph
