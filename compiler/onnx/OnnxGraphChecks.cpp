//===- OnnxGraphChecks.cpp - Structural checks of an ONNX graph -----------===//
#include "compiler/onnx/OnnxGraphChecks.h"
#include "compiler/onnx/OnnxImportContext.h"

#include "mlir/IR/BuiltinTypes.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <queue>
#include <set>
#include <unordered_map>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

const std::string kIrRange =
    std::to_string(kMinIrVersion) + "–" + std::to_string(kMaxIrVersion);

/// "[2, 3, ?]" for dims (kDynamic as ?) or "[2, 3, n]" for declared ones.
std::string dimsText(const std::vector<std::string> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "]";
}

std::vector<std::string> declaredDims(const onnx::TensorShapeProto &shape) {
  std::vector<std::string> dims;
  for (const auto &d : shape.dim())
    dims.push_back(d.has_dim_value()   ? std::to_string(d.dim_value())
                   : d.has_dim_param() ? d.dim_param()
                                       : "?");
  return dims;
}

std::vector<std::string> computedDims(ArrayRef<int64_t> shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape)
    dims.push_back(ShapedType::isDynamic(d) ? "?" : std::to_string(d));
  return dims;
}

/// A graph input that names an initializer. ONNX (IR >= 4) makes it an
/// input whose default is the initializer; ingot has no optional inputs,
/// so it keeps the default as a weight (what onnxruntime computes when the
/// input is not fed) and `ingot run` refuses a value for it as an unknown
/// input. IR < 4 requires every initializer to be listed so; same result.
/// What the input declares must agree with the initializer.
Status checkShadowedInput(const std::string &path,
                          const onnx::ValueInfoProto &input,
                          const onnx::TensorProto &init) {
  if (!input.type().has_tensor_type())
    return Status::ok();
  const onnx::TypeProto::Tensor &declared = input.type().tensor_type();
  std::string what = path + ": graph input '" + input.name() +
                     "' is also an initializer, but declares ";
  if (declared.elem_type() != onnx::TensorProto::UNDEFINED &&
      declared.elem_type() != init.data_type())
    return Status::error(what + "dtype " + dtypeName(declared.elem_type()) +
                         " while the initializer is " +
                         dtypeName(init.data_type()));
  if (!declared.has_shape())
    return Status::ok();
  const onnx::TensorShapeProto &shape = declared.shape();
  bool same = shape.dim_size() == init.dims_size();
  for (int i = 0; same && i < shape.dim_size(); ++i)
    same = !shape.dim(i).has_dim_value() ||
           shape.dim(i).dim_value() == init.dims(i);
  if (same)
    return Status::ok();
  std::vector<std::string> initDims;
  for (int64_t d : init.dims())
    initDims.push_back(std::to_string(d));
  return Status::error(what + "shape " + dimsText(declaredDims(shape)) +
                       " while the initializer is " + dimsText(initDims));
}

} // namespace

/// Reads the ModelProto; any failure is "not a valid ONNX model".
Status parseModel(const std::string &path, onnx::ModelProto &model) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  // Protobuf cannot parse a message over 2 GiB; big models keep their
  // weights in external data files instead.
  if (st.st_size > INT_MAX) {
    ::close(fd);
    return Status::error(path + ": the model protobuf is " +
                         std::to_string(st.st_size) +
                         " bytes, over protobuf's 2 GiB limit — save it with "
                         "external data (onnx.save(..., "
                         "save_as_external_data=True))");
  }
  bool ok;
  {
    google::protobuf::io::FileInputStream raw(fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    ok = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  ::close(fd);
  // An empty or random file can parse as a message without a graph.
  if (!ok || !model.has_graph())
    return Status::error(path +
                         ": not a valid ONNX model (protobuf parse failed)");
  return Status::ok();
}

Status checkIrVersion(const std::string &path, const onnx::ModelProto &model) {
  int64_t ir = model.ir_version();
  if (ir >= kMinIrVersion && ir <= kMaxIrVersion)
    return Status::ok();
  return Status::error(
      path + ": ir_version " + std::to_string(ir) +
      (model.has_ir_version() ? "" : " (not set)") +
      " is not a supported ONNX IR version — supported: " + kIrRange);
}

Status checkGraphNames(const std::string &path, const onnx::GraphProto &graph) {
  if (graph.output_size() == 0)
    return Status::error(path + ": graph '" + graph.name() +
                         "' declares no outputs — a model must compute at "
                         "least one");
  // Where each name is defined, for "defined twice" messages.
  std::map<std::string, std::string> definedBy;
  auto define = [&](const std::string &name, std::string where) -> Status {
    auto [it, fresh] = definedBy.try_emplace(name, where);
    if (fresh)
      return Status::ok();
    return Status::error(path + ": value '" + name + "' is defined twice: as " +
                         it->second + " and as " + where +
                         " — every name must be defined once");
  };
  std::map<std::string, const onnx::TensorProto *> initializers;
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (!initializers.emplace(init.name(), &init).second)
      return Status::error(path + ": initializer '" + init.name() +
                           "' is given twice");
    definedBy[init.name()] = "an initializer";
  }
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (!inputs.insert(input.name()).second)
      return Status::error(path + ": graph input '" + input.name() +
                           "' is declared twice");
    auto init = initializers.find(input.name());
    if (init != initializers.end()) {
      if (Status s = checkShadowedInput(path, input, *init->second); !s)
        return s;
      continue;
    }
    if (Status s = define(input.name(), "a graph input"); !s)
      return s;
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::string name = node.name().empty()
                           ? node.op_type() + "_" + std::to_string(i)
                           : node.name();
    for (const std::string &out : node.output())
      if (!out.empty())
        if (Status s = define(out, "an output of node '" + name + "' (" +
                                       node.op_type() + ")");
            !s)
          return s;
  }
  return Status::ok();
}

/// Kahn's algorithm, preferring file order, so sorted graphs keep it.
namespace {

/// Names `g` reads that it does not define itself, added to `out`.
void outerNamesRead(const onnx::GraphProto &g, std::vector<std::string> &out) {
  std::set<std::string> own;
  for (const onnx::ValueInfoProto &in : g.input())
    own.insert(in.name());
  for (const onnx::TensorProto &init : g.initializer())
    own.insert(init.name());
  for (const onnx::NodeProto &node : g.node())
    for (const std::string &o : node.output())
      own.insert(o);
  for (const onnx::NodeProto &node : g.node())
    for (std::string &name : namesRead(node))
      if (!own.count(name))
        out.push_back(std::move(name));
  for (const onnx::ValueInfoProto &o : g.output())
    if (!own.count(o.name()))
      out.push_back(o.name());
}

} // namespace

std::vector<std::string> namesRead(const onnx::NodeProto &node) {
  std::vector<std::string> names;
  for (const std::string &in : node.input())
    if (!in.empty())
      names.push_back(in);
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH)
      outerNamesRead(a.g(), names);
    for (const onnx::GraphProto &g : a.graphs())
      outerNamesRead(g, names);
  }
  return names;
}

Status topologicalOrder(const std::string &path, const onnx::GraphProto &g,
                        std::vector<int> &order) {
  int n = g.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const std::string &out : g.node(i).output())
      if (!out.empty())
        producer[out] = i;
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> users(n);
  for (int i = 0; i < n; ++i)
    for (const std::string &in : namesRead(g.node(i)))
      if (auto it = producer.find(in);
          it != producer.end() && it->second != i) {
        ++pending[i];
        users[it->second].push_back(i);
      }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0)
      ready.push(i);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0)
        ready.push(u);
  }
  if (int(order.size()) == n)
    return Status::ok();
  for (int i = 0; i < n; ++i)
    if (pending[i] > 0)
      return Status::error(path + ": the graph has a cycle through node '" +
                           g.node(i).name() + "' (" + g.node(i).op_type() +
                           ")");
  return Status::error(path + ": the graph has a cycle");
}

Status checkDeclaredOutput(const std::string &path,
                           const onnx::ValueInfoProto &out, Value value) {
  const onnx::TypeProto &type = out.type();
  std::string what = path + ": graph output '" + out.name() + "' is declared";
  if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET)
    return Status::ok();
  if (!type.has_tensor_type())
    return Status::error(what + " as a non-tensor type, but the graph "
                                "computes a tensor");
  auto computed = cast<RankedTensorType>(value.getType());
  int32_t declared = type.tensor_type().elem_type();
  if (declared != onnx::TensorProto::UNDEFINED &&
      elementTypeOf(value.getContext(), declared) != computed.getElementType())
    return Status::error(what + " as " + dtypeName(declared) +
                         ", but the graph computes " +
                         typeName(computed.getElementType()));
  if (!type.tensor_type().has_shape())
    return Status::ok();
  const onnx::TensorShapeProto &shape = type.tensor_type().shape();
  bool same = shape.dim_size() == computed.getRank();
  for (int i = 0; same && i < shape.dim_size(); ++i)
    same = !shape.dim(i).has_dim_value() || computed.isDynamicDim(i) ||
           shape.dim(i).dim_value() == computed.getDimSize(i);
  if (same)
    return Status::ok();
  return Status::error(what + " with shape " + dimsText(declaredDims(shape)) +
                       ", but the graph computes " +
                       dimsText(computedDims(computed.getShape())));
}

} // namespace ingot::compiler::onnximport
