//===- OnnxImportContext.h - State shared by ONNX converters ----*- C++ -*-===//
//
// Private to the ONNX importer. ImportContext holds the state of one import
// (values by ONNX name, their tracked shapes/values, the weight source);
// NodeContext is what a converter sees of one node: its inputs, attributes,
// a builder that infers result types, and error reporting that names the
// node, op type and opset. Converters are registered in OnnxRegistry.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/onnx/OnnxWeights.h"
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ingot::compiler::onnximport {

/// The opsets of the default ONNX domain the importer accepts.
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 28;

/// MLIR element type of an ONNX dtype; null for unsupported dtypes.
mlir::Type elementTypeOf(mlir::MLIRContext *ctx, int32_t dataType);
/// "float32", "int64", "int32", "bool" for an ingot element type.
std::string typeName(mlir::Type elementType);
/// The element type of a ranked tensor value.
mlir::Type elementTypeOf(mlir::Value value);

/// State of one import: values by ONNX name and what is known about them.
class ImportContext {
public:
  ImportContext(mlir::ModuleOp module, std::string file,
                OnnxWeightSource &weights, std::string modelDir, int64_t opset);

  mlir::MLIRContext *mlir() const { return builder_.getContext(); }
  mlir::OpBuilder &builder() { return builder_; }
  const std::string &file() const { return file_; }
  int64_t opset() const { return opset_; }
  /// Directory that external data locations are relative to.
  const std::string &modelDir() const { return modelDir_; }

  /// Where initializers are materialised: the entry of `block`, in order
  /// of first use, ahead of the nodes.
  void setBody(mlir::Block *block);
  void addInitializer(const onnx::TensorProto *tensor);
  bool isInitializer(const std::string &name) const {
    return initializers_.count(name) != 0;
  }

  /// Binds an ONNX value name (graph input, node output).
  void define(const std::string &name, mlir::Value value);
  /// Names defined between pushScope and popScope (a subgraph's values)
  /// are forgotten at popScope; outer names they shadowed come back.
  void pushScope() { scopes_.emplace_back(); }
  void popScope();
  /// Converts a subgraph's nodes at the builder's insertion point and
  /// returns its outputs (set by the graph importer, OnnxImporter.cpp).
  using SubgraphConverter = std::function<mlir::LogicalResult(
      const onnx::GraphProto &, llvm::SmallVectorImpl<mlir::Value> &)>;
  void setSubgraphConverter(SubgraphConverter fn) {
    convertSubgraph_ = std::move(fn);
  }
  mlir::LogicalResult convertSubgraph(const onnx::GraphProto &graph,
                                      llvm::SmallVectorImpl<mlir::Value> &out) {
    return convertSubgraph_(graph, out);
  }
  /// Names read by some node input or graph output.
  void markConsumed(const std::string &name) { consumed_.insert(name); }
  bool isConsumed(const std::string &name) const {
    return consumed_.count(name) != 0;
  }
  bool isDefined(const std::string &name) const {
    return values_.count(name) || initializers_.count(name);
  }
  /// The value named `name`, materialising an initializer on first use.
  mlir::FailureOr<mlir::Value> lookup(const std::string &name);
  /// The initializer `name` (of this graph or an enclosing one), or null.
  const onnx::TensorProto *initializerProto(const std::string &name) const {
    auto it = initializers_.find(name);
    return it == initializers_.end() ? nullptr : it->second;
  }
  /// A weight the importer computed (e.g. dequantised), named by the
  /// tensor and placed with the initializers.
  mlir::FailureOr<mlir::Value> addDerivedWeight(const onnx::TensorProto &t);
  /// The element type of the value or initializer `name` without
  /// materialising it; null if undefined or of an unsupported dtype.
  mlir::Type elementTypeOfName(const std::string &name) const;

  /// Turns a tensor (initializer or Constant value) into `ingot.constant`
  /// or `ingot.param "<name>"` at the builder's insertion point.
  mlir::FailureOr<mlir::Value> materialize(const onnx::TensorProto &tensor,
                                           const std::string &name,
                                           bool ownedCopy, mlir::OpBuilder &b);

  /// Shape and tracked integer values of `value`.
  const graph::ValueInfo &info(mlir::Value value);
  void setInfo(mlir::Value value, graph::ValueInfo info) {
    infos_[value] = std::move(info);
  }
  /// The values of an integer initializer not materialised yet (axes read
  /// straight from the model leave no dead constant behind); nullopt if it
  /// is not one or cannot be read.
  std::optional<std::vector<int64_t>> initializerInts(const std::string &name);
  /// All element values of an integer value known at compile time.
  std::optional<std::vector<int64_t>> constantInts(mlir::Value value);

  /// `quantized` is `exact` (an integral f32 inside the 8-bit range) cast
  /// to 8 bits: DequantizeLinear reads `exact` instead of casting back,
  /// so float chains fuse across a QuantizeLinear -> DequantizeLinear.
  void setExactFloat(mlir::Value quantized, mlir::Value exact) {
    exactFloats_[quantized] = exact;
  }
  mlir::Value exactFloat(mlir::Value quantized) const {
    return exactFloats_.lookup(quantized);
  }

  /// Records the first error of the import; always returns failure.
  mlir::LogicalResult fail(std::string message);
  bool hasError() const { return error_.has_value(); }
  /// The recorded error, cleared (a branch that may fail at run time).
  std::string takeError() {
    std::string e = error_.value_or("");
    error_.reset();
    return e;
  }
  /// Forgets what is known about the values of `region`'s ops, before the
  /// region is dropped (their addresses may be reused).
  void forgetValuesIn(mlir::Region &region);
  Status status() const {
    return error_ ? Status::error(*error_) : Status::ok();
  }
  /// The last diagnostic MLIR emitted (verifier messages).
  std::string takeDiagnostic();
  void setDiagnostic(std::string message) { diagnostic_ = std::move(message); }

private:
  mlir::OpBuilder builder_;
  mlir::Block *body_ = nullptr;
  /// The last initializer materialised; the next goes right after it.
  mlir::Operation *lastInitializer_ = nullptr;
  std::string file_;
  OnnxWeightSource &weights_;
  std::string modelDir_;
  int64_t opset_;
  std::map<std::string, mlir::Value> values_;
  /// Per open scope: names it defined and what they shadowed (null: none).
  std::vector<std::vector<std::pair<std::string, mlir::Value>>> scopes_;
  SubgraphConverter convertSubgraph_;
  std::map<std::string, const onnx::TensorProto *> initializers_;
  std::set<std::string> consumed_;
  llvm::DenseMap<mlir::Value, graph::ValueInfo> infos_;
  llvm::DenseMap<mlir::Value, mlir::Value> exactFloats_;
  std::optional<std::string> error_;
  std::string diagnostic_;
};

/// What a converter sees of one node.
class NodeContext {
public:
  NodeContext(ImportContext &ctx, const onnx::NodeProto &node,
              std::string name);

  ImportContext &ctx;
  const onnx::NodeProto &node;

  const std::string &name() const { return name_; }
  const std::string &opType() const { return node.op_type(); }
  int64_t opset() const { return ctx.opset(); }
  mlir::Location loc() const { return loc_; }
  mlir::OpBuilder &builder() { return ctx.builder(); }

  /// Whether input `i` is given (present and not the empty name).
  bool hasInput(int i) const;
  /// Required input `i`; an error if absent.
  mlir::LogicalResult input(int i, mlir::Value &out);
  /// Optional input `i`; `out` is null when absent.
  mlir::LogicalResult optionalInput(int i, mlir::Value &out);
  /// Makes input `i` read as `value` (a widened copy, OnnxNarrowTypes.cpp).
  void overrideInput(int i, mlir::Value value) { overrides_[i] = value; }
  /// Integer input `i` whose values must be known at compile time (axes).
  mlir::LogicalResult constantInts(int i, const char *role,
                                   std::vector<int64_t> &out);

  /// Attribute `name` if present; an error if it has another type.
  const onnx::AttributeProto *attr(const char *name, int type);
  int64_t attrInt(const char *name, int64_t dflt);
  float attrFloat(const char *name, float dflt);
  std::vector<int64_t> attrInts(const char *name);

  /// Creates `OpTy` with the ODS builder, then sets its result type from
  /// the op's shape rule and verifies it.
  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> build(mlir::Type elementType, Args &&...args) {
    auto op = OpTy::create(builder(), loc_,
                           mlir::RankedTensorType::get({}, elementType),
                           std::forward<Args>(args)...);
    if (mlir::failed(finish(op.getOperation())))
      return mlir::failure();
    return op->getResult(0);
  }
  /// Binds output `i` of the node (ignored when the output is unnamed).
  mlir::LogicalResult setOutput(int i, mlir::FailureOr<mlir::Value> value);
  /// Fails if output `i` is named and used by a node or the graph outputs.
  mlir::LogicalResult requireUnused(int i, const char *what);

  /// "<file>: node '<name>' (<OpType>, opset <N>): ".
  std::string prefix() const;
  /// Reports "<file>: node '<name>' (<OpType>, opset <N>): <what> —
  /// supported: <supported>".
  mlir::LogicalResult fail(const std::string &what,
                           const std::string &supported = "");
  /// Fails unless `value`'s element type is one of `allowed`.
  mlir::LogicalResult requireType(mlir::Value value, const char *role,
                                  llvm::ArrayRef<mlir::Type> allowed);
  /// Normalises `axis` into [0, rank) or fails naming the valid range.
  mlir::LogicalResult normalizeAxis(int64_t axis, int64_t rank,
                                    const char *what, int64_t &out);

  mlir::Type f32() { return builder().getF32Type(); }
  mlir::Type i64() { return builder().getI64Type(); }
  mlir::Type i32() { return builder().getI32Type(); }
  mlir::Type i1() { return builder().getI1Type(); }

private:
  mlir::LogicalResult finish(mlir::Operation *op);

  std::string name_;
  mlir::Location loc_;
  std::map<int, mlir::Value> overrides_;
};

/// A 1-D i64 `ingot.constant` at the builder's insertion point.
mlir::Value tensorI64Constant(NodeContext &n, llvm::ArrayRef<int64_t> values);
/// A rank-0 constant of `elementType` (float or integer).
mlir::Value scalarConstant(NodeContext &n, mlir::Type elementType,
                           double value);
/// An integer-list operand that is input `input` from `inputFromOpset` on
/// (constant) and attribute `attrName` before it (OnnxOpsetForms.cpp);
/// `given` says whether either form was present.
mlir::LogicalResult intsOperand(NodeContext &n, int input, const char *attrName,
                                int64_t inputFromOpset, bool required,
                                std::vector<int64_t> &out, bool &given);
/// Slice before opset 10, whose starts, ends and axes are attributes.
mlir::LogicalResult convertSliceAttributes(NodeContext &n);
/// Softmax or LogSoftmax of `x` at `axis` (normalised): along that axis
/// from opset 13, over the dims from `axis` on, flattened, before it.
mlir::FailureOr<mlir::Value> softmaxOverTrailingDims(NodeContext &n,
                                                     mlir::Value x,
                                                     int64_t axis,
                                                     bool logSoftmax);

/// How a node that computes on a dtype the kernels widen reads it
/// (OnnxNarrowTypes.cpp): `storage` is the ONNX dtype, `compute` the one
/// its operands were cast to; both null when nothing was widened.
struct NarrowTypeWidening {
  mlir::Type storage;
  mlir::Type compute;
  /// uint64 ordered as int64 by flipping the sign bit (adding 2^63, which
  /// wraps): results in the compute type get it flipped back.
  bool signFlipped = false;
};
/// Before conversion: casts the node's operands of such dtypes to their
/// compute type (or refuses uint64 where int64 would give other results).
mlir::LogicalResult widenNarrowOperands(NodeContext &n, NarrowTypeWidening &w);
/// After conversion: casts its data results back to the storage dtype.
mlir::LogicalResult narrowResults(NodeContext &n, const NarrowTypeWidening &w);

/// A converter turns one node into ingot ops and binds its outputs.
using ConvertFn = mlir::LogicalResult (*)(NodeContext &);

/// One registry entry: an ONNX op type and the opsets it is handled for.
/// `domain` is "" for the default ONNX domain (also spelt "ai.onnx"); other
/// domains (e.g. "com.microsoft") name the domain the node must declare.
/// Opsets are those of the default domain the model imports.
struct OpConverter {
  const char *opType;
  int64_t minOpset;
  int64_t maxOpset;
  ConvertFn convert;
  const char *domain = "";
};
/// Every registered converter, in table order.
llvm::ArrayRef<OpConverter> opConverters();
/// Coverage tables: math/reduction/normalisation ops (OnnxMathOps.cpp) and
/// tensor/data-movement/convolution ops (OnnxTensorOps.cpp).
llvm::ArrayRef<OpConverter> mathOpConverters();
/// Ops written as a few graph ops (OnnxComposite.cpp).
llvm::ArrayRef<OpConverter> compositeOpConverters();
llvm::ArrayRef<OpConverter> tensorOpConverters();
/// onnxruntime's QLinear* contrib ops (OnnxQuantMicrosoft.cpp).
llvm::ArrayRef<OpConverter> quantMicrosoftConverters();
/// The converter for an op type of `domain` ("" or "ai.onnx" for the
/// default one), or null.
const OpConverter *findOpConverter(llvm::StringRef opType,
                                   llvm::StringRef domain = "");
/// The non-default domains some converter is registered for, comma-separated.
std::string knownOpDomains();
/// Fails naming an attribute that the op's schema at the model's opset does
/// not have, or one given twice (OnnxAttributeSchema.cpp).
mlir::LogicalResult checkAttributeNames(NodeContext &n);

// Converters, by family (OnnxElementwise.cpp, OnnxNnOps.cpp,
// OnnxShapeOps.cpp, OnnxConstantOps.cpp).
mlir::LogicalResult convertAdd(NodeContext &n);
mlir::LogicalResult convertSub(NodeContext &n);
mlir::LogicalResult convertMul(NodeContext &n);
mlir::LogicalResult convertDiv(NodeContext &n);
mlir::LogicalResult convertPow(NodeContext &n);
mlir::LogicalResult convertSqrt(NodeContext &n);
mlir::LogicalResult convertNeg(NodeContext &n);
mlir::LogicalResult convertExp(NodeContext &n);
mlir::LogicalResult convertErf(NodeContext &n);
mlir::LogicalResult convertTanh(NodeContext &n);
mlir::LogicalResult convertSigmoid(NodeContext &n);
mlir::LogicalResult convertRelu(NodeContext &n);
mlir::LogicalResult convertWhere(NodeContext &n);
mlir::LogicalResult convertIsNaN(NodeContext &n);
mlir::LogicalResult convertIsInf(NodeContext &n);
mlir::LogicalResult convertCast(NodeContext &n);
mlir::LogicalResult convertCastLike(NodeContext &n);
mlir::LogicalResult convertSwish(NodeContext &n);
mlir::LogicalResult convertIdentity(NodeContext &n);
mlir::LogicalResult convertMatMul(NodeContext &n);
mlir::LogicalResult convertGemm(NodeContext &n);
mlir::LogicalResult convertSoftmax(NodeContext &n);
mlir::LogicalResult convertLayerNormalization(NodeContext &n);
mlir::LogicalResult convertReduceMean(NodeContext &n);
mlir::LogicalResult convertTranspose(NodeContext &n);
mlir::LogicalResult convertReshape(NodeContext &n);
mlir::LogicalResult convertSqueeze(NodeContext &n);
mlir::LogicalResult convertUnsqueeze(NodeContext &n);
/// Squeeze / Unsqueeze whose axes input is only known at run time (a
/// length known at compile time fixes the rank; OnnxRunTimeAxes.cpp).
mlir::LogicalResult squeezeRunTimeAxes(NodeContext &n, mlir::Value x,
                                       mlir::Value axes);
mlir::LogicalResult unsqueezeRunTimeAxes(NodeContext &n, mlir::Value x,
                                         mlir::Value axes);
/// i64 axes only known at run time with negative entries counted from the
/// end of `rank` dims (out-of-range ones stay out of range for the reader
/// to refuse).
mlir::FailureOr<mlir::Value>
normalizeRunTimeAxes(NodeContext &n, mlir::Value axes, int64_t rank);
mlir::LogicalResult convertConcat(NodeContext &n);
mlir::LogicalResult convertGather(NodeContext &n);
mlir::LogicalResult convertGatherND(NodeContext &n);
mlir::LogicalResult convertShape(NodeContext &n);
mlir::LogicalResult convertSize(NodeContext &n);
mlir::LogicalResult convertTrilu(NodeContext &n);
mlir::LogicalResult convertConstant(NodeContext &n);
mlir::LogicalResult convertConstantOfShape(NodeContext &n);
mlir::LogicalResult convertIf(NodeContext &n);
mlir::LogicalResult convertLoop(NodeContext &n);
mlir::LogicalResult convertScan(NodeContext &n);
mlir::LogicalResult convertMatMulNBits(NodeContext &n);

} // namespace ingot::compiler::onnximport
