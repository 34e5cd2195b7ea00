//===- OnnxImportContext.cpp - State shared by ONNX converters ------------===//
#include "compiler/onnx/OnnxImportContext.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

#include <cstring>
#include <utility>

using namespace mlir;

namespace ingot::compiler::onnximport {

//===----------------------------------------------------------------------===//
// ImportContext
//===----------------------------------------------------------------------===//

ImportContext::ImportContext(ModuleOp module, std::string file,
                             OnnxWeightSource &weights, std::string modelDir,
                             int64_t opset)
    : builder_(module.getContext()), file_(std::move(file)), weights_(weights),
      modelDir_(std::move(modelDir)), opset_(opset) {}

void ImportContext::setBody(Block *block) {
  body_ = block;
  lastInitializer_ = nullptr;
  builder_.setInsertionPointToEnd(block);
}

void ImportContext::addInitializer(const onnx::TensorProto *tensor) {
  initializers_[tensor->name()] = tensor;
}

void ImportContext::define(const std::string &name, Value value) {
  if (!scopes_.empty()) {
    auto it = values_.find(name);
    scopes_.back().emplace_back(name,
                                it == values_.end() ? Value() : it->second);
  }
  values_[name] = value;
}

void ImportContext::forgetValuesIn(Region &region) {
  region.walk([&](Operation *op) {
    for (Value v : op->getResults()) {
      infos_.erase(v);
      exactFloats_.erase(v);
    }
  });
}

void ImportContext::popScope() {
  // Undone newest first, so a name defined twice gets its outer value.
  for (auto it = scopes_.back().rbegin(); it != scopes_.back().rend(); ++it) {
    if (it->second)
      values_[it->first] = it->second;
    else
      values_.erase(it->first);
  }
  scopes_.pop_back();
}

FailureOr<Value> ImportContext::lookup(const std::string &name) {
  if (auto it = values_.find(name); it != values_.end())
    return it->second;
  auto init = initializers_.find(name);
  if (init == initializers_.end())
    return fail(file_ + ": value '" + name + "' is not defined");
  // Initializers are materialised once, on first use, ahead of the nodes
  // (an insertion point kept across insertions could be the block's end).
  OpBuilder b(mlir());
  if (lastInitializer_)
    b.setInsertionPointAfter(lastInitializer_);
  else
    b.setInsertionPointToStart(body_);
  FailureOr<Value> value =
      materialize(*init->second, name, /*ownedCopy=*/false, b);
  if (failed(value))
    return failure();
  lastInitializer_ = value->getDefiningOp();
  values_[name] = *value;
  return value;
}

FailureOr<Value> ImportContext::addDerivedWeight(const onnx::TensorProto &t) {
  OpBuilder b(mlir());
  if (lastInitializer_)
    b.setInsertionPointAfter(lastInitializer_);
  else
    b.setInsertionPointToStart(body_);
  FailureOr<Value> value = materialize(t, t.name(), /*ownedCopy=*/true, b);
  if (succeeded(value))
    lastInitializer_ = value->getDefiningOp();
  return value;
}

Type ImportContext::elementTypeOfName(const std::string &name) const {
  if (auto it = values_.find(name); it != values_.end())
    return elementTypeOf(it->second);
  if (auto it = initializers_.find(name); it != initializers_.end())
    return elementTypeOf(mlir(), it->second->data_type());
  return nullptr;
}

// Which tensors become inline constants: integer and bool tensors of at most
// kMaxInlineConstantElements elements (shape vectors, axes, indices, masks of
// a few elements) so shape chains fold and axes can be read; and float
// scalars (epsilons, Pow exponents, attention scales, mask fill values),
// which are hyperparameters that later raising patterns match on. Every
// other float tensor is a weight and stays an `ingot.param`, whatever its
// size. Initializers and Constant nodes follow the same rule.
FailureOr<Value> ImportContext::materialize(const onnx::TensorProto &tensor,
                                            const std::string &name,
                                            bool ownedCopy, OpBuilder &b) {
  Type elem = elementTypeOf(mlir(), tensor.data_type());
  if (!elem)
    return fail(file_ + ": initializer '" + name + "' has dtype " +
                dtypeName(tensor.data_type()) +
                ", which is not supported — supported: " + kSupportedDtypes);
  std::optional<int64_t> count = elementCount(tensor);
  if (!count)
    return fail(file_ + ": tensor '" + name + "' has invalid dims");
  SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(dims, elem);
  Location loc = NameLoc::get(b.getStringAttr(name));
  bool inlined = isa<FloatType>(elem)
                     ? *count == 1
                     : *count <= graph::kMaxInlineConstantElements;
  Operation *op;
  if (inlined) {
    std::vector<char> bytes;
    if (Status s = readTensor(tensor, name, modelDir_, file_, bytes); !s)
      return fail(s.message());
    DenseElementsAttr attr;
    if (elem.isInteger(1)) {
      SmallVector<bool> bits;
      for (char c : bytes)
        bits.push_back(c != 0);
      attr = DenseElementsAttr::get(type, ArrayRef<bool>(bits));
    } else if (*count == 0) {
      attr = DenseElementsAttr::get(type, ArrayRef<Attribute>());
    } else {
      attr = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(bytes));
    }
    op = graph::ConstantOp::create(b, loc, type, attr);
  } else {
    if (Status s = checkTensorData(tensor, name, modelDir_, file_); !s)
      return fail(s.message());
    if (ownedCopy)
      weights_.addOwnedTensor(name, tensor);
    else
      weights_.addTensor(name, &tensor);
    op = graph::ParamOp::create(b, loc, type, b.getStringAttr(name));
  }
  Value value = op->getResult(0);
  setInfo(value, graph::valueInfoFromIR(value));
  return value;
}

const graph::ValueInfo &ImportContext::info(Value value) {
  auto it = infos_.find(value);
  if (it == infos_.end())
    it = infos_.try_emplace(value, graph::valueInfoFromIR(value)).first;
  return it->second;
}

std::optional<std::vector<int64_t>> ImportContext::constantInts(Value value) {
  const graph::ValueInfo &vi = info(value);
  if (vi.values) {
    bool known = true;
    for (int64_t v : *vi.values)
      known &= v != graph::kUnknownValue;
    if (known)
      return *vi.values;
  }
  // Large integer constants are not tracked as values but can be read.
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  std::vector<int64_t> out;
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

LogicalResult ImportContext::fail(std::string message) {
  if (!error_)
    error_ = std::move(message);
  return failure();
}

std::string ImportContext::takeDiagnostic() {
  return std::exchange(diagnostic_, std::string());
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(ImportContext &ctx, const onnx::NodeProto &node,
                         std::string name)
    : ctx(ctx), node(node), name_(std::move(name)),
      loc_(NameLoc::get(StringAttr::get(ctx.mlir(), name_))) {}

std::string NodeContext::prefix() const {
  return ctx.file() + ": node '" + name_ + "' (" + opType() + ", opset " +
         std::to_string(opset()) + "): ";
}

LogicalResult NodeContext::fail(const std::string &what,
                                const std::string &supported) {
  std::string message = prefix() + what;
  if (!supported.empty())
    message += " — supported: " + supported;
  return ctx.fail(std::move(message));
}

bool NodeContext::hasInput(int i) const {
  return i < node.input_size() && !node.input(i).empty();
}

LogicalResult NodeContext::input(int i, Value &out) {
  if (!hasInput(i))
    return fail("missing required input #" + std::to_string(i));
  if (auto it = overrides_.find(i); it != overrides_.end()) {
    out = it->second;
    return success();
  }
  const std::string &name = node.input(i);
  if (!ctx.isDefined(name))
    return fail("input '" + name +
                "' is not a graph input, an initializer or the output of an "
                "earlier node");
  FailureOr<Value> value = ctx.lookup(name);
  if (failed(value))
    return failure();
  out = *value;
  return success();
}

LogicalResult NodeContext::optionalInput(int i, Value &out) {
  out = nullptr;
  return hasInput(i) ? input(i, out) : success();
}

std::optional<std::vector<int64_t>>
ImportContext::initializerInts(const std::string &name) {
  auto it = initializers_.find(name);
  if (it == initializers_.end() || values_.count(name))
    return std::nullopt;
  const onnx::TensorProto &tensor = *it->second;
  int32_t type = tensor.data_type();
  if (type != onnx::TensorProto::INT64 && type != onnx::TensorProto::INT32)
    return std::nullopt;
  std::vector<char> bytes;
  if (!readTensor(tensor, name, modelDir_, file_, bytes))
    return std::nullopt;
  std::vector<int64_t> out;
  for (size_t at = 0; at < bytes.size();) {
    if (type == onnx::TensorProto::INT64) {
      int64_t v;
      std::memcpy(&v, bytes.data() + at, sizeof v);
      out.push_back(v);
      at += sizeof v;
    } else {
      int32_t v;
      std::memcpy(&v, bytes.data() + at, sizeof v);
      out.push_back(v);
      at += sizeof v;
    }
  }
  return out;
}

LogicalResult NodeContext::constantInts(int i, const char *role,
                                        std::vector<int64_t> &out) {
  // An integer initializer read only as axes is not materialised at all.
  if (hasInput(i)) {
    if (auto values = ctx.initializerInts(node.input(i))) {
      out = std::move(*values);
      return success();
    }
  }
  Value value;
  if (failed(input(i, value)))
    return failure();
  Type elem = elementTypeOf(value);
  if (!elem.isInteger(64) && !elem.isInteger(32))
    return fail(std::string(role) + " must be an integer tensor, got " +
                typeName(elem));
  std::optional<std::vector<int64_t>> values = ctx.constantInts(value);
  if (!values)
    return fail(std::string(role) + " ('" + node.input(i) +
                    "') must be known at compile time",
                "an initializer, a Constant node or a shape expression that "
                "folds to a constant");
  out = std::move(*values);
  return success();
}

const onnx::AttributeProto *NodeContext::attr(const char *name, int type) {
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (a.name() != name)
      continue;
    // Old exporters may leave `type` unset; trust the field then.
    if (a.type() != type && a.type() != onnx::AttributeProto::UNDEFINED) {
      (void)fail(std::string("attribute '") + name + "' has type " +
                 onnx::AttributeProto::AttributeType_Name(a.type()) +
                 ", expected " +
                 onnx::AttributeProto::AttributeType_Name(
                     onnx::AttributeProto::AttributeType(type)));
      return nullptr;
    }
    return &a;
  }
  return nullptr;
}

int64_t NodeContext::attrInt(const char *name, int64_t dflt) {
  const auto *a = attr(name, onnx::AttributeProto::INT);
  return a ? a->i() : dflt;
}

float NodeContext::attrFloat(const char *name, float dflt) {
  const auto *a = attr(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : dflt;
}

std::vector<int64_t> NodeContext::attrInts(const char *name) {
  const auto *a = attr(name, onnx::AttributeProto::INTS);
  if (!a)
    return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

LogicalResult NodeContext::finish(Operation *op) {
  std::vector<graph::ValueInfo> ins, outs;
  for (Value v : op->getOperands())
    ins.push_back(ctx.info(v));
  std::string error;
  if (failed(graph::inferValueInfo(op, ins, outs, error))) {
    op->erase();
    return fail(error);
  }
  Type elem = elementTypeOf(op->getResult(0));
  SmallVector<int64_t> dims;
  for (int64_t d : outs[0].shape)
    dims.push_back(d == shape::kDynamic ? ShapedType::kDynamic : d);
  op->getResult(0).setType(RankedTensorType::get(dims, elem));
  // The verifier checks element types and operand constraints.
  if (failed(mlir::verify(op))) {
    std::string diagnostic = ctx.takeDiagnostic();
    op->erase();
    return fail(diagnostic.empty() ? "invalid operands" : diagnostic);
  }
  ctx.setInfo(op->getResult(0), std::move(outs[0]));
  return success();
}

LogicalResult NodeContext::setOutput(int i, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  if (i < node.output_size() && !node.output(i).empty())
    ctx.define(node.output(i), *value);
  return success();
}

LogicalResult NodeContext::requireUnused(int i, const char *what) {
  if (i >= node.output_size() || node.output(i).empty() ||
      !ctx.isConsumed(node.output(i)))
    return success();
  return fail(std::string("output '") + node.output(i) + "' (" + what +
                  ") is used, which is not supported",
              "the first output only");
}

LogicalResult NodeContext::requireType(Value value, const char *role,
                                       ArrayRef<Type> allowed) {
  Type elem = elementTypeOf(value);
  if (llvm::is_contained(allowed, elem))
    return success();
  std::string list;
  for (Type t : allowed)
    list += (list.empty() ? "" : ", ") + typeName(t);
  return fail(std::string(role) + " has element type " + typeName(elem), list);
}

LogicalResult NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                         const char *what, int64_t &out) {
  if (shape::normalizeAxis(axis, rank, &out))
    return success();
  return fail(std::string(what) + " " + std::to_string(axis) +
                  " is out of range for rank " + std::to_string(rank),
              "values in [" + std::to_string(-rank) + ", " +
                  std::to_string(rank - 1) + "]");
}

} // namespace ingot::compiler::onnximport
