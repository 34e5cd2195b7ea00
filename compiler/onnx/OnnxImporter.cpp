//===- OnnxImporter.cpp - ONNX models into the ingot dialect --------------===//
//
// The driver: parses the model, checks its opset, turns the graph inputs
// into `func.func @main` arguments, converts the nodes in topological order
// through the registry (OnnxRegistry.cpp) and returns the graph outputs.
// Structural checks of the model live in OnnxGraphChecks.cpp.
// Initializers become params/constants lazily, on first use.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImporter.h"
#include "compiler/onnx/OnnxGraphChecks.h"
#include "compiler/onnx/OnnxImportContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <filesystem>
#include <set>

using namespace mlir;

namespace ingot::compiler {
namespace {

using namespace onnximport;

const std::string kOpsetRange =
    "opsets " + std::to_string(kMinOpset) + "–" + std::to_string(kMaxOpset);

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// Imports one model's main graph into `func.func @main`.
class GraphImporter {
public:
  GraphImporter(ImportContext &ctx, const onnx::ModelProto &model,
                const OnnxImportOptions &options)
      : ctx(ctx), model(model), graph(model.graph()), options(options) {}

  Status run(ModuleOp module);

private:
  Status inputType(const onnx::ValueInfoProto &input, RankedTensorType &type,
                   ArrayAttr &dims);
  Status convertNode(const onnx::NodeProto &node, int index);
  /// Converts `g`'s nodes in dependency order at the builder's insertion
  /// point (the main graph, or an If branch inside a scope).
  Status convertNodes(const onnx::GraphProto &g);
  LogicalResult convertSubgraph(const onnx::GraphProto &g,
                                SmallVectorImpl<Value> &outputs);

  ImportContext &ctx;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  const OnnxImportOptions &options;
  std::set<std::string> dimNames;
};

Status GraphImporter::inputType(const onnx::ValueInfoProto &input,
                                RankedTensorType &type, ArrayAttr &dims) {
  const std::string &name = input.name();
  const std::string &path = ctx.file();
  if (!input.type().has_tensor_type())
    return Status::error(path + ": input '" + name +
                         "' is not a tensor — supported: tensor inputs");
  const onnx::TypeProto::Tensor &tensor = input.type().tensor_type();
  Type elem = elementTypeOf(ctx.mlir(), tensor.elem_type());
  if (!elem)
    return Status::error(path + ": input '" + name + "' has dtype " +
                         dtypeName(tensor.elem_type()) +
                         " — supported: " + kSupportedDtypes);
  auto pin = options.inputShapes.find(name);
  if (!tensor.has_shape() && pin == options.inputShapes.end())
    return Status::error(
        path + ": input '" + name +
        "' has no shape (unknown rank) — pin it with --shape " + name +
        "=D0xD1x...");
  SmallVector<int64_t> shape;
  SmallVector<Attribute> symbols;
  Builder b(ctx.mlir());
  int rank =
      tensor.has_shape() ? tensor.shape().dim_size() : int(pin->second.size());
  if (pin != options.inputShapes.end() && int(pin->second.size()) != rank)
    return Status::error(path + ": --shape " + name + " gives " +
                         std::to_string(pin->second.size()) +
                         " dims, but the input has rank " +
                         std::to_string(rank));
  for (int i = 0; i < rank; ++i) {
    const onnx::TensorShapeProto::Dimension *dim =
        tensor.has_shape() ? &tensor.shape().dim(i) : nullptr;
    bool fixed = dim && dim->has_dim_value() && dim->dim_value() >= 0;
    if (pin != options.inputShapes.end()) {
      int64_t want = pin->second[i];
      if (want < 0)
        return Status::error(path + ": --shape " + name + ": dim " +
                             std::to_string(i) + " is " + std::to_string(want) +
                             " — supported: sizes >= 0");
      if (fixed && dim->dim_value() != want)
        return Status::error(path + ": --shape " + name + ": dim " +
                             std::to_string(i) + " is " +
                             std::to_string(dim->dim_value()) +
                             " in the model, not " + std::to_string(want));
      shape.push_back(want);
      symbols.push_back(b.getStringAttr(""));
    } else if (fixed) {
      shape.push_back(dim->dim_value());
      symbols.push_back(b.getStringAttr(""));
    } else {
      std::string symbol = dim && dim->has_dim_param() ? dim->dim_param() : "";
      if (symbol.empty() || symbol == "?") {
        // A dim with neither value nor param gets a name of its own, and so
        // does each "?" (exporters write it for "unknown", not "equal").
        symbol = name + "_dim" + std::to_string(i);
        while (dimNames.count(symbol))
          symbol += "_";
        dimNames.insert(symbol);
      }
      shape.push_back(ShapedType::kDynamic);
      symbols.push_back(b.getStringAttr(symbol));
    }
  }
  type = RankedTensorType::get(shape, elem);
  dims = b.getArrayAttr(symbols);
  return Status::ok();
}

Status GraphImporter::convertNode(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  NodeContext n(ctx, node, name);
  const OpConverter *converter =
      findOpConverter(node.op_type(), node.domain());
  if (!converter && !isDefaultDomain(node.domain())) {
    int64_t version = 0;
    for (const auto &imp : model.opset_import())
      if (imp.domain() == node.domain())
        version = imp.version();
    std::string known = knownOpDomains();
    return Status::error(ctx.file() + ": node '" + name + "' (" +
                         node.op_type() + ", domain '" + node.domain() +
                         "', opset " + std::to_string(version) +
                         "): unsupported op of a non-default domain — "
                         "supported: the default ONNX domain" +
                         (known.empty() ? "" : " and some ops of " + known) +
                         "; see docs/supported-ops.md");
  }
  if (!converter) {
    bool nested = llvm::any_of(node.attribute(), [](const auto &a) {
      return a.type() == onnx::AttributeProto::GRAPH ||
             a.type() == onnx::AttributeProto::GRAPHS;
    });
    return Status::error(n.prefix() + "unsupported ONNX op '" + node.op_type() +
                         "'" +
                         (nested ? " (nested graphs are not supported)" : "") +
                         " — see docs/supported-ops.md");
  }
  if (ctx.opset() < converter->minOpset || ctx.opset() > converter->maxOpset) {
    (void)n.fail(node.op_type() + " is not available at opset " +
                     std::to_string(ctx.opset()),
                 "opsets " + std::to_string(converter->minOpset) + "–" +
                     std::to_string(converter->maxOpset));
    return ctx.status();
  }
  if (failed(checkAttributeNames(n)))
    return ctx.status();
  NarrowTypeWidening widening;
  if (failed(widenNarrowOperands(n, widening)))
    return ctx.status();
  if (failed(converter->convert(n)) || ctx.hasError() ||
      failed(narrowResults(n, widening))) {
    if (!ctx.hasError())
      (void)n.fail("conversion failed");
    return ctx.status();
  }
  for (const std::string &out : node.output())
    if (!out.empty() && ctx.isConsumed(out) && !ctx.isDefined(out)) {
      (void)n.fail("output '" + out + "' is used but not produced");
      return ctx.status();
    }
  return Status::ok();
}

Status GraphImporter::convertNodes(const onnx::GraphProto &g) {
  for (const onnx::NodeProto &node : g.node())
    for (const std::string &in : namesRead(node))
      ctx.markConsumed(in);
  for (const onnx::ValueInfoProto &out : g.output())
    ctx.markConsumed(out.name());
  std::vector<int> order;
  if (Status s = topologicalOrder(ctx.file(), g, order); !s)
    return s;
  for (int index : order)
    if (Status s = convertNode(g.node(index), index); !s)
      return s;
  return Status::ok();
}

LogicalResult GraphImporter::convertSubgraph(const onnx::GraphProto &g,
                                             SmallVectorImpl<Value> &outputs) {
  // Loop and Scan bind their body's inputs before converting it.
  for (const onnx::ValueInfoProto &in : g.input())
    if (!ctx.isDefined(in.name()))
      return ctx.fail(ctx.file() + ": subgraph '" + g.name() +
                      "' declares input '" + in.name() +
                      "' that its node does not bind — supported: Loop and "
                      "Scan bodies and If branches (which have no inputs)");
  if (g.sparse_initializer_size() > 0)
    return ctx.fail(ctx.file() + ": subgraph '" + g.name() +
                    "': sparse initializers are not supported");
  for (const onnx::TensorProto &init : g.initializer())
    ctx.addInitializer(&init);
  if (Status s = convertNodes(g); !s)
    return ctx.hasError() ? failure() : ctx.fail(s.message());
  for (const onnx::ValueInfoProto &out : g.output()) {
    if (!ctx.isDefined(out.name()))
      return ctx.fail(ctx.file() + ": subgraph '" + g.name() + "' output '" +
                      out.name() + "' is not produced by any node or value");
    FailureOr<Value> value = ctx.lookup(out.name());
    if (failed(value))
      return failure();
    outputs.push_back(*value);
  }
  return success();
}

Status GraphImporter::run(ModuleOp module) {
  const std::string &path = ctx.file();
  if (graph.sparse_initializer_size() > 0)
    return Status::error(path + ": sparse initializers are not supported");
  if (Status s = checkGraphNames(path, graph); !s)
    return s;
  for (const onnx::TensorProto &init : graph.initializer())
    ctx.addInitializer(&init);

  // Graph inputs that are also initializers are weights (the initializer
  // is their default; see checkShadowedInput in OnnxGraphChecks.cpp).
  std::vector<const onnx::ValueInfoProto *> inputs;
  std::string inputList;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (ctx.isInitializer(input.name()))
      continue;
    inputs.push_back(&input);
    inputList += (inputList.empty() ? "" : ", ") + input.name();
    for (const auto &dim : input.type().tensor_type().shape().dim())
      if (dim.has_dim_param())
        dimNames.insert(dim.dim_param());
  }
  for (const auto &[name, dims] : options.inputShapes)
    if (llvm::none_of(inputs,
                      [&](const auto *in) { return in->name() == name; }))
      return Status::error(path + ": --shape names '" + name +
                           "', which is not a graph input — inputs: " +
                           (inputList.empty() ? "(none)" : inputList));

  SmallVector<Type> argTypes;
  SmallVector<ArrayAttr> argDims;
  for (const onnx::ValueInfoProto *input : inputs) {
    RankedTensorType type;
    ArrayAttr dims;
    if (Status s = inputType(*input, type, dims); !s)
      return s;
    argTypes.push_back(type);
    argDims.push_back(dims);
  }

  MLIRContext *mctx = ctx.mlir();
  OpBuilder b(mctx);
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, FileLineColLoc::get(mctx, path, 0, 0),
                                   "main", b.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  ctx.setBody(body);
  for (size_t i = 0; i < inputs.size(); ++i) {
    func.setArgAttr(i, "ingot.name", b.getStringAttr(inputs[i]->name()));
    func.setArgAttr(i, "ingot.dims", argDims[i]);
    body->getArgument(i).setLoc(
        NameLoc::get(b.getStringAttr(inputs[i]->name())));
    ctx.define(inputs[i]->name(), body->getArgument(i));
  }

  ctx.setSubgraphConverter(
      [this](const onnx::GraphProto &g, SmallVectorImpl<Value> &outputs) {
        return convertSubgraph(g, outputs);
      });
  Status status = [&]() -> Status {
    if (Status s = convertNodes(graph); !s)
      return s;

    SmallVector<Value> results;
    for (const onnx::ValueInfoProto &out : graph.output()) {
      if (!ctx.isDefined(out.name()))
        return Status::error(path + ": graph output '" + out.name() +
                             "' is not produced by any node, input or "
                             "initializer");
      FailureOr<Value> value = ctx.lookup(out.name());
      if (failed(value))
        return ctx.status();
      if (Status s = checkDeclaredOutput(path, out, *value); !s)
        return s;
      results.push_back(*value);
    }
    b.setInsertionPointToEnd(body);
    func::ReturnOp::create(b, FileLineColLoc::get(mctx, path, 0, 0), results);
    func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
    for (int i = 0; i < graph.output_size(); ++i)
      func.setResultAttr(i, "ingot.name",
                         b.getStringAttr(graph.output(i).name()));
    if (failed(mlir::verify(func)))
      return Status::error(path + ": the imported function does not verify: " +
                           ctx.takeDiagnostic());
    return Status::ok();
  }();
  if (!status)
    func.erase();
  return status;
}

} // namespace

Status importOnnx(const std::string &path, const OnnxImportOptions &options,
                  ModuleOp module, std::unique_ptr<WeightSource> *weights) {
  auto model = std::make_unique<onnx::ModelProto>();
  if (Status s = parseModel(path, *model); !s)
    return s;
  if (Status s = checkIrVersion(path, *model); !s)
    return s;

  int64_t opset = -1;
  for (const auto &imp : model->opset_import())
    if (isDefaultDomain(imp.domain()))
      opset = imp.version();
  if (opset < 0)
    return Status::error(path +
                         ": the model imports no opset of the default "
                         "ONNX domain — supported: " +
                         kOpsetRange);
  if (opset < kMinOpset || opset > kMaxOpset)
    return Status::error(path + ": opset " + std::to_string(opset) +
                         " of the default ONNX domain is not supported — "
                         "supported: " +
                         kOpsetRange +
                         " (onnx.version_converter can convert the model)");

  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::string modelDir = parent.empty() ? "." : parent.string();
  auto source = std::make_unique<onnximport::OnnxWeightSource>(std::move(model),
                                                               modelDir, path);
  MLIRContext *mctx = module.getContext();
  mctx->getOrLoadDialect<func::FuncDialect>();
  mctx->getOrLoadDialect<graph::IngotDialect>();

  ImportContext ctx(module, path, *source, modelDir, opset);
  // Verifier diagnostics become part of the node's error message.
  ScopedDiagnosticHandler handler(mctx, [&](Diagnostic &diag) {
    ctx.setDiagnostic(diag.str());
    return success();
  });
  GraphImporter importer(ctx, source->model(), options);
  if (Status s = importer.run(module); !s)
    return s;
  if (weights)
    *weights = std::move(source);
  return Status::ok();
}

} // namespace ingot::compiler
