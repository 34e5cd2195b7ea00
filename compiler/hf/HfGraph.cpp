//===- HfGraph.cpp - State shared by the HF architecture builders ---------===//
#include "compiler/hf/HfGraph.h"

#include "dialects/Ingot/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace ingot::compiler::hf {

void HfGraph::fail(std::string message) {
  if (!error_)
    error_ = std::move(message);
}

const SafetensorsTensor *HfGraph::weight(const std::string &key,
                                         ArrayRef<int64_t> shape) {
  if (failed())
    return nullptr;
  std::string file;
  const SafetensorsTensor *entry = store_.lookup(key, &file);
  if (!entry) {
    fail(store_.indexPath() + ": missing tensor '" + key + "' (expected " +
         shapeString(shape) + ", as " + config_.path() + " implies)");
    return nullptr;
  }
  used_.insert(key);
  const SafetensorsTensor &t = *entry;
  if (!t.dtype) {
    fail(file + ": tensor '" + key + "' has dtype " + t.dtypeName +
         ", which is not supported for weights — supported: F32, F16, BF16");
    return nullptr;
  }
  if (ArrayRef<int64_t>(t.shape) != shape) {
    fail(file + ": tensor '" + key + "' has shape " + shapeString(t.shape) +
         ", expected " + shapeString(shape) + " from " + config_.path());
    return nullptr;
  }
  return &t;
}

namespace {

/// N of a "...layers.N..." or "...h.N..." tensor name (the decoder layer it
/// belongs to); nullopt for a tensor outside the layers.
std::optional<int64_t> layerOf(StringRef key) {
  SmallVector<StringRef> parts;
  key.split(parts, '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t n;
    if ((parts[i] == "layers" || parts[i] == "h") &&
        !parts[i + 1].getAsInteger(10, n))
      return n;
  }
  return std::nullopt;
}

/// Buffers some checkpoints carry that transformers never loads: it
/// recomputes rotary frequencies from rope_theta and builds GPT-2's causal
/// mask (attn.bias, attn.masked_bias) itself.
bool isRecomputedBuffer(StringRef key) {
  return key.ends_with(".rotary_emb.inv_freq") || key.ends_with(".attn.bias") ||
         key.ends_with(".attn.masked_bias");
}

} // namespace

Status HfGraph::checkAllTensorsUsed(const std::string &arch,
                                    int64_t layers) const {
  for (const std::string &key : store_.names()) {
    if (used_.count(key) || isRecomputedBuffer(key))
      continue;
    std::string file;
    store_.lookup(key, &file);
    const std::string where = (file.empty() ? store_.indexPath() : file) +
                              ": tensor '" + store_.storedName(key) + "' ";
    if (std::optional<int64_t> layer = layerOf(key); layer && *layer >= layers)
      return Status::error(
          where + "is for layer " + std::to_string(*layer) + ", but " +
          config_.path() + " sets " +
          (config_.has("n_layer") ? "n_layer" : "num_hidden_layers") + " = " +
          std::to_string(layers) + " (layers 0.." + std::to_string(layers - 1) +
          "); the weights do not match the config");
    return Status::error(where + "is not used by the " + arch + " graph that " +
                         config_.path() +
                         " describes; ingot refuses weights it would "
                         "silently ignore");
  }
  return Status::ok();
}

Value HfGraph::makeParam(const std::string &name, const SafetensorsTensor &t,
                         ArrayRef<int64_t> shape) {
  if (auto it = params_.find(name); it != params_.end())
    return it->second;
  Type elem;
  switch (*t.dtype) {
  case DType::F16:
    elem = b_.getF16Type();
    break;
  case DType::BF16:
    elem = b_.getBF16Type();
    break;
  default:
    elem = b_.getF32Type();
    break;
  }
  auto op =
      graph::ParamOp::create(b_, loc(name), RankedTensorType::get(shape, elem),
                             b_.getStringAttr(name));
  params_[name] = op.getResult();
  return op.getResult();
}

Value HfGraph::param(const std::string &key, ArrayRef<int64_t> shape) {
  const SafetensorsTensor *t = weight(key, shape);
  return t ? makeParam(key, *t, shape) : nullptr;
}

Value HfGraph::paramRows(const std::string &key, ArrayRef<int64_t> shape,
                         int64_t begin, int64_t end) {
  const SafetensorsTensor *t = weight(key, shape);
  if (!t)
    return nullptr;
  if (shape.empty() || shape.size() > 2 || begin < 0 || begin >= end ||
      end > shape[0]) {
    fail("internal: rows " + std::to_string(begin) + ":" + std::to_string(end) +
         " of '" + key + "' " + shapeString(shape));
    return nullptr;
  }
  SmallVector<int64_t> slice(shape);
  slice[0] = end - begin;
  return makeParam(key + "#rows=" + std::to_string(begin) + ":" +
                       std::to_string(end),
                   *t, slice);
}

Value HfGraph::paramCols(const std::string &key, ArrayRef<int64_t> shape,
                         int64_t begin, int64_t end) {
  const SafetensorsTensor *t = weight(key, shape);
  if (!t)
    return nullptr;
  if (shape.size() != 2 || begin < 0 || begin >= end || end > shape[1]) {
    fail("internal: cols " + std::to_string(begin) + ":" + std::to_string(end) +
         " of '" + key + "' " + shapeString(shape));
    return nullptr;
  }
  return makeParam(key + "#cols=" + std::to_string(begin) + ":" +
                       std::to_string(end),
                   *t, {shape[0], end - begin});
}

Value HfGraph::paramPlusOne(const std::string &key, ArrayRef<int64_t> shape) {
  const SafetensorsTensor *t = weight(key, shape);
  if (!t)
    return nullptr;
  SafetensorsTensor asF32 = *t;
  asF32.dtype = DType::F32; // the source adds 1 and widens
  return makeParam(key + "#plus1", asF32, shape);
}

Value HfGraph::pagedAttention(StringRef name, Value q, Value k, Value v,
                              int64_t layer, int64_t heads, int64_t kvHeads,
                              int64_t headDim, double scale, int64_t window,
                              double softcap) {
  auto i64 = [&](int64_t x) { return b_.getI64IntegerAttr(x); };
  const StepInputs &in = inputs_;
  return build<graph::PagedAttentionOp>(
      name, f32(), q, k, v, in.positions, in.slotMapping, in.blockTables,
      in.queryEnds, i64(layer), i64(heads), i64(kvHeads), i64(headDim),
      b_.getF64FloatAttr(scale), i64(window), i64(0), i64(0), i64(0),
      b_.getF64FloatAttr(softcap));
}

Value HfGraph::scale(StringRef name, Value x, double factor) {
  if (failed())
    return nullptr;
  auto type = RankedTensorType::get({}, f32());
  Value c = graph::ConstantOp::create(
      b_, loc((name + ".factor").str()), type,
      DenseElementsAttr::get(type, static_cast<float>(factor)));
  return build<graph::MulOp>(name, f32(), x, c);
}

Value HfGraph::softcap(StringRef name, Value x, double cap) {
  Value inner = scale((name + ".div").str(), x, 1.0 / cap);
  Value t = build<graph::TanhOp>((name + ".tanh").str(), f32(), inner);
  return scale(name, t, cap);
}

Value HfGraph::finish(Operation *op, StringRef name) {
  std::vector<graph::ValueInfo> ins, outs;
  for (Value v : op->getOperands())
    ins.push_back(graph::valueInfoFromIR(v));
  std::string error;
  if (mlir::failed(graph::inferValueInfo(op, ins, outs, error))) {
    op->erase();
    fail("internal: op '" + name.str() + "': " + error);
    return nullptr;
  }
  Type elem =
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  SmallVector<int64_t> dims;
  for (int64_t d : outs[0].shape)
    dims.push_back(d == shape::kDynamic ? ShapedType::kDynamic : d);
  op->getResult(0).setType(RankedTensorType::get(dims, elem));
  // Shapes come from a validated config and validated weights, so a
  // verifier failure here is a bug in a builder, not in the model.
  if (mlir::failed(mlir::verify(op))) {
    op->erase();
    fail("internal: op '" + name.str() +
         "' does not verify: " + std::exchange(diagnostic_, std::string()));
    return nullptr;
  }
  return op->getResult(0);
}

Value HfGraph::toF32(StringRef name, Value v) {
  if (failed())
    return nullptr;
  if (cast<RankedTensorType>(v.getType()).getElementType().isF32())
    return v;
  return build<graph::CastOp>(name, f32(), v);
}

Value HfGraph::linear(StringRef name, Value x, Value w, Value bias,
                      StringRef layout) {
  return build<graph::LinearOp>(name, f32(), x, w, bias, /*residual=*/Value(),
                                b_.getStringAttr(layout),
                                b_.getStringAttr("none"));
}

Value HfGraph::rmsNorm(StringRef name, Value x, Value w, double epsilon) {
  return build<graph::RmsNormOp>(name, f32(), x, w,
                                 b_.getF32FloatAttr(float(epsilon)));
}

Value HfGraph::headRmsNorm(StringRef name, Value x, Value w, int64_t heads,
                           double epsilon) {
  if (failed())
    return nullptr;
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t width = type.getShape().back();
  if (ShapedType::isDynamic(width) || width % heads) {
    fail("internal: " + name.str() + ": last dim is not " +
         std::to_string(heads) + " heads");
    return nullptr;
  }
  auto shape = [&](ArrayRef<int64_t> dims) -> Value {
    auto t = RankedTensorType::get({int64_t(dims.size())}, b_.getI64Type());
    return graph::ConstantOp::create(b_, loc((name + ".shape").str()), t,
                                     DenseIntElementsAttr::get(t, dims));
  };
  Value perHead = build<graph::ReshapeOp>(
      (name + ".split").str(), f32(), x, shape({-1, heads, width / heads}),
      b_.getI64IntegerAttr(0));
  Value normed = rmsNorm(name, perHead, w, epsilon);
  return build<graph::ReshapeOp>((name + ".join").str(), f32(), normed,
                                 shape({-1, width}), b_.getI64IntegerAttr(0));
}

Value HfGraph::layerNorm(StringRef name, Value x, Value w, Value bias,
                         double epsilon) {
  Value w32 = toF32((name + ".weight.cast").str(), w);
  Value b32 = bias ? toF32((name + ".bias.cast").str(), bias) : Value();
  return build<graph::LayerNormOp>(name, f32(), x, w32, b32,
                                   b_.getI64IntegerAttr(-1),
                                   b_.getF32FloatAttr(float(epsilon)));
}

Value HfGraph::add(StringRef name, Value a, Value b) {
  return build<graph::AddOp>(name, f32(), a, b);
}

Value HfGraph::gatherRows(StringRef name, Value x, Value indices) {
  if (failed())
    return nullptr;
  Type elem = cast<RankedTensorType>(x.getType()).getElementType();
  return build<graph::GatherOp>(name, elem, x, indices,
                                b_.getI64IntegerAttr(0));
}

Value HfGraph::embed(StringRef name, Value table, Value indices) {
  Value rows = gatherRows(name, table, indices);
  return rows ? toF32((name + ".cast").str(), rows) : nullptr;
}

} // namespace ingot::compiler::hf
