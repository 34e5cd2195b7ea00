//===- ShapeInference.cpp - Result shapes of ingot ops --------------------===//
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInferenceTensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
namespace ingot::graph {
namespace {

bool allKnown(const std::vector<int64_t> &v) {
  for (int64_t x : v)
    if (x == kUnknownValue)
      return false;
  return true;
}

bool isIntTensor(Type type) {
  // Values are tracked as int64 for shape arithmetic: i32 and i64 only
  // (narrow and unsigned integers would need wrapping rules of their own).
  auto t = dyn_cast<RankedTensorType>(type);
  return t && (t.getElementType().isSignlessInteger(64) ||
               t.getElementType().isSignlessInteger(32));
}

/// Reshape whose target may hold unknown entries: the known ones still fix
/// their dims, so partially symbolic reshapes keep their static dims.
LogicalResult inferReshape(const shape::Shape &in,
                           const std::vector<int64_t> &target, bool allowZero,
                           shape::Shape &out, std::string &error) {
  if (allKnown(target) && shape::numElements(in) != shape::kDynamic)
    return success(shape::reshape(in, target, allowZero, &out, &error));
  out.clear();
  int64_t inferAt = -1, knownProduct = 1;
  bool productKnown = true;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t t = target[i];
    int64_t dim = shape::kDynamic;
    if (t == kUnknownValue) {
      productKnown = false;
    } else if (t == -1) {
      if (inferAt >= 0) {
        error = "reshape target has more than one -1";
        return failure();
      }
      inferAt = static_cast<int64_t>(i);
    } else if (t == 0 && !allowZero) {
      if (i >= in.size()) {
        error = "reshape target copies dim " + std::to_string(i) +
                " but the input has rank " + std::to_string(in.size());
        return failure();
      }
      dim = in[i];
    } else if (t < 0) {
      error = "reshape target has invalid entry " + std::to_string(t);
      return failure();
    } else {
      dim = t;
    }
    if (dim == shape::kDynamic && t != -1)
      productKnown = false;
    else if (t != -1)
      knownProduct *= dim;
    out.push_back(dim);
  }
  int64_t total = shape::numElements(in);
  if (inferAt >= 0 && productKnown && total != shape::kDynamic &&
      knownProduct != 0) {
    out[inferAt] = total / knownProduct;
    return success();
  }
  // Dims copied with 0 cancel out of both sides (the merge-heads pattern
  // ?x?x4x8 -> [0, 0, -1]): the -1 is what the other input dims multiply to.
  if (inferAt < 0 || allowZero)
    return success();
  int64_t rest = 1, others = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    bool copied = i < target.size() && target[i] == 0;
    if (copied)
      continue;
    if (in[i] == shape::kDynamic)
      return success();
    rest *= in[i];
  }
  for (size_t i = 0; i < target.size(); ++i) {
    if (static_cast<int64_t>(i) == inferAt || (target[i] == 0 && i < in.size()))
      continue;
    if (out[i] == shape::kDynamic)
      return success();
    others *= out[i];
  }
  if (others != 0 && rest % others == 0)
    out[inferAt] = rest / others;
  return success();
}

/// Ops that compute on tensors: result shapes from broadcasting, the matmul
/// rules or the op's attributes; integer add/sub/mul/div and casts keep the
/// values of shape vectors.
std::optional<bool> inferComputeOp(Operation *op, ArrayRef<ValueInfo> ins,
                                   const std::vector<shape::Shape> &shapes,
                                   shape::Shape &out,
                                   std::optional<std::vector<int64_t>> &values,
                                   std::string &error) {
  return llvm::TypeSwitch<Operation *, std::optional<bool>>(op)
      .Case<ParamOp, ConstantOp>([&](Operation *) {
        ValueInfo self = valueInfoFromIR(op->getResult(0));
        out = self.shape;
        values = self.values;
        return true;
      })
      .Case<AddOp, SubOp, MulOp, DivOp>([&](Operation *) {
        values = foldIntBinary(op, ins[0], ins[1]);
        return shape::broadcast(shapes, &out, &error);
      })
      .Case<PowOp>(
          [&](Operation *) { return shape::broadcast(shapes, &out, &error); })
      .Case<WhereOp>([&](Operation *) {
        values = foldWhere(ins[0], ins[1], ins[2]);
        return shape::broadcast(shapes, &out, &error);
      })
      .Case<NegOp>([&](Operation *) {
        out = shapes[0];
        if (isIntTensor(op->getResult(0).getType()))
          values = foldNegate(ins[0], /*logical=*/false);
        return true;
      })
      .Case<SqrtOp, ExpOp, ErfOp, TanhOp, SigmoidOp, ReluOp, SoftmaxOp,
            LayerNormOp, TriluOp, RmsNormOp, GeluOp, RopeOp>([&](Operation *) {
        out = shapes[0];
        return true;
      })
      .Case<SiluMulOp>([&](SiluMulOp s) {
        out = shapes[0];
        // One operand holds gate and up side by side.
        if (!s.getUp() && !out.empty() && out.back() != shape::kDynamic)
          out.back() /= 2;
        return true;
      })
      .Case<PagedAttentionOp, RopePagedAttentionOp>([&](Operation *) {
        if (shapes[0].size() != 2) {
          error = "query must be [tokens, features]";
          return false;
        }
        int64_t heads = cast<IntegerAttr>(op->getAttr("num_heads")).getInt();
        int64_t dim = cast<IntegerAttr>(op->getAttr("head_dim")).getInt();
        out = {shapes[0][0], heads * dim};
        return true;
      })
      .Case<CastOp>([&](CastOp cast) {
        out = shapes[0];
        if (isTrackedTensor(cast.getType()) && ins[0].values) {
          values = ins[0].values;
          if (cast.getType().getElementType().isInteger(1))
            for (int64_t &v : *values)
              v = v == kUnknownValue ? v : int64_t(v != 0);
        }
        return true;
      })
      .Case<LinearOp>([&](LinearOp l) {
        const shape::Shape &x = shapes[0], &w = shapes[1];
        if (x.empty() || w.size() != 2) {
          error = "linear needs x of rank >= 1 and a 2-D weight";
          return false;
        }
        // Packed layouts keep the logical [N, K] shape.
        bool nk = l.getWLayout() != "kn";
        int64_t k = nk ? w[1] : w[0], n = nk ? w[0] : w[1];
        if (x.back() != shape::kDynamic && k != shape::kDynamic &&
            x.back() != k) {
          error = "inner dims differ: x has " + std::to_string(x.back()) +
                  ", the weight " + std::to_string(k);
          return false;
        }
        out = x;
        out.back() = n;
        return true;
      })
      .Case<MatMulOp, MatMulIntegerOp>([&](Operation *) {
        return shape::matmul(shapes[0], shapes[1], &out, &error);
      })
      .Case<GemmOp>([&](GemmOp g) {
        return shape::gemm(
            shapes[0], shapes[1], shapes.size() > 2 ? &shapes[2] : nullptr,
            g.getTransA() != 0, g.getTransB() != 0, &out, &error);
      })
      .Default([](Operation *) -> std::optional<bool> { return std::nullopt; });
}

/// Ops that rearrange or reduce a tensor; reshape, squeeze, unsqueeze and
/// concat carry shape-vector values through.
std::optional<bool> inferLayoutOp(Operation *op, ArrayRef<ValueInfo> ins,
                                  const std::vector<shape::Shape> &shapes,
                                  shape::Shape &out,
                                  std::optional<std::vector<int64_t>> &values,
                                  std::string &error) {
  return llvm::TypeSwitch<Operation *, std::optional<bool>>(op)
      .Case<ReduceMeanOp>([&](ReduceMeanOp r) {
        return shape::reduce(shapes[0], std::vector<int64_t>(r.getAxes()),
                             r.getKeepdims() != 0, &out, &error);
      })
      .Case<TransposeOp>([&](TransposeOp t) {
        std::vector<int64_t> perm(t.getPerm());
        if (!shape::transpose(shapes[0], perm, &out, &error))
          return false;
        values = transposeValues(shapes[0], perm, ins[0].values);
        return true;
      })
      .Case<ReshapeOp>([&](ReshapeOp r) {
        values = ins[0].values;
        if (ins[1].values)
          return succeeded(inferReshape(shapes[0], *ins[1].values,
                                        r.getAllowzero() != 0, out, error));
        int64_t rank = shapes[1].empty() ? shape::kDynamic : shapes[1][0];
        if (rank == shape::kDynamic) {
          error = "reshape target length must be static";
          return false;
        }
        out.assign(rank, shape::kDynamic);
        return true;
      })
      .Case<SqueezeOp>([&](SqueezeOp s) {
        values = ins[0].values;
        return shape::squeeze(shapes[0], std::vector<int64_t>(s.getAxes()),
                              &out, &error);
      })
      .Case<UnsqueezeOp>([&](UnsqueezeOp u) {
        values = ins[0].values;
        return shape::unsqueeze(shapes[0], std::vector<int64_t>(u.getAxes()),
                                &out, &error);
      })
      .Case<ConcatOp>([&](ConcatOp c) {
        std::vector<int64_t> joined;
        bool track = shapes[0].size() == 1;
        for (const ValueInfo &v : ins) {
          if (!v.values)
            track = false;
          else if (track)
            joined.insert(joined.end(), v.values->begin(), v.values->end());
        }
        if (track)
          values = std::move(joined);
        return shape::concat(shapes, c.getAxis(), &out, &error);
      })
      .Default([](Operation *) -> std::optional<bool> { return std::nullopt; });
}

} // namespace

bool isTrackedTensor(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return isIntTensor(type) || (t && t.getElementType().isInteger(1));
}

ValueInfo valueInfoFromIR(Value value) {
  ValueInfo info;
  info.shape = shapeOf(value.getType());
  // A Shape op's values are its input's dims, known where those are static.
  if (auto shapeOp = value.getDefiningOp<ShapeOp>()) {
    std::vector<ValueInfo> outs;
    std::string error;
    if (succeeded(inferValueInfo(shapeOp, {valueInfoFromIR(shapeOp.getInput())},
                                 outs, error)))
      return outs[0];
  }
  DenseIntElementsAttr attr;
  if (isTrackedTensor(value.getType()) &&
      matchPattern(value, m_Constant(&attr)) &&
      attr.getNumElements() <= kMaxTrackedValues) {
    std::vector<int64_t> v;
    for (const APInt &x : attr.getValues<APInt>())
      v.push_back(x.getBitWidth() == 1 ? int64_t(x.getZExtValue())
                                       : x.getSExtValue());
    info.values = std::move(v);
  }
  return info;
}

LogicalResult inferValueInfo(Operation *op, ArrayRef<ValueInfo> ins,
                             std::vector<ValueInfo> &results,
                             std::string &error) {
  results.assign(op->getNumResults(), ValueInfo());
  // A branch's results are what its regions yield: the declared join.
  if (isa<IfOp, FailOp>(op)) {
    for (auto [r, t] : llvm::zip(results, op->getResultTypes()))
      r.shape = shapeOf(t);
    return success();
  }
  // The fused add + norm ops: the sum and the normalised value, both of
  // the operands' (equal) shape.
  if (isa<AddRmsNormOp, AddLayerNormOp>(op)) {
    if (ins.size() < 2 || !isCompatibleShape(ins[0].shape, ins[1].shape)) {
      error = "the two addends must have one shape";
      return failure();
    }
    results[0].shape = results[1].shape = ins[0].shape;
    return success();
  }
  // The quantised tensor, then its rank-0 scale and zero point.
  if (isa<DynamicQuantizeLinearOp>(op)) {
    results[0].shape = ins.empty() ? shape::Shape() : ins[0].shape;
    return success();
  }
  if (results.size() != 1) {
    error = "expected exactly one result";
    return failure();
  }
  shape::Shape &out = results[0].shape;
  std::vector<shape::Shape> shapes;
  for (const ValueInfo &v : ins)
    shapes.push_back(v.shape);
  std::optional<std::vector<int64_t>> values;

  std::optional<bool> handled;
  for (auto rule : {inferComputeOp, inferLayoutOp, inferShapeVectorOp})
    if ((handled = rule(op, ins, shapes, out, values, error)))
      break;
  // Coverage ops keep their rules beside their definitions.
  for (auto rule : {inferMathOp, inferTensorOp, inferFusedOp})
    if (!handled)
      handled = rule(op, ins, out, values, error);
  if (!handled)
    error = "no shape rule for '" + op->getName().getStringRef().str() + "'";
  if (!handled || !*handled)
    return failure();
  // Only small integer results keep values; a dynamic one cannot be sized.
  if (values && isTrackedTensor(op->getResult(0).getType())) {
    int64_t n = shape::numElements(out);
    if (n != shape::kDynamic && n <= kMaxTrackedValues &&
        static_cast<int64_t>(values->size()) == n)
      results[0].values = std::move(values);
  }
  return success();
}

} // namespace ingot::graph
