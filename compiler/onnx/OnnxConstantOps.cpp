//===- OnnxConstantOps.cpp - Constant and ConstantOfShape -----------------===//
//
// A Constant node becomes `ingot.constant` or `ingot.param` by the same rule
// as initializers (ImportContext::materialize); a param made from a Constant
// is named by the node's output.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

#include <cstring>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// The attribute forms of a Constant's value that ingot accepts.
constexpr const char *kConstantForms =
    "value (float32, int64, int32, bool), value_float, value_floats, "
    "value_int, value_ints";

/// Reads the single element of a one-element tensor as a double.
LogicalResult scalarOf(NodeContext &n, const onnx::TensorProto &tensor,
                       double &out) {
  std::vector<char> bytes;
  if (Status s = readTensor(tensor, n.name() + ".value", n.ctx.modelDir(),
                            n.ctx.file(), bytes);
      !s)
    return n.fail(s.message());
  int64_t elemSize = *storedElementSize(tensor.data_type());
  if (bytes.size() != size_t(elemSize))
    return n.fail("attribute 'value' must hold exactly one element, got " +
                  std::to_string(bytes.size() / elemSize));
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT: {
    float v;
    std::memcpy(&v, bytes.data(), sizeof v);
    out = v;
    break;
  }
  case onnx::TensorProto::INT64: {
    int64_t v;
    std::memcpy(&v, bytes.data(), sizeof v);
    out = double(v);
    break;
  }
  case onnx::TensorProto::INT32: {
    int32_t v;
    std::memcpy(&v, bytes.data(), sizeof v);
    out = v;
    break;
  }
  default: // BOOL
    out = bytes[0] != 0;
    break;
  }
  return success();
}

} // namespace

/// Constant: one of value / value_float(s) / value_int(s) becomes a constant
/// or a param; strings and sparse values are rejected.
LogicalResult convertConstant(NodeContext &n) {
  if (n.node.attribute_size() != 1)
    return n.fail("a Constant needs exactly one value attribute, got " +
                      std::to_string(n.node.attribute_size()),
                  kConstantForms);
  if (n.node.output_size() < 1 || n.node.output(0).empty())
    return n.fail("a Constant needs a named output");
  const onnx::AttributeProto &a = n.node.attribute(0);
  const std::string &name = n.node.output(0);
  const onnx::TensorProto *tensor = nullptr;
  onnx::TensorProto built;
  if (a.name() == "value" && a.has_t()) {
    tensor = &a.t();
    if (!elementTypeOf(n.ctx.mlir(), tensor->data_type()))
      return n.fail("value has dtype " + dtypeName(tensor->data_type()),
                    kSupportedDtypes);
  } else if (a.name() == "value_float" || a.name() == "value_floats") {
    built.set_data_type(onnx::TensorProto::FLOAT);
    if (a.name() == "value_float") {
      built.add_float_data(a.f());
    } else {
      built.add_dims(a.floats_size());
      built.mutable_float_data()->CopyFrom(a.floats());
    }
  } else if (a.name() == "value_int" || a.name() == "value_ints") {
    built.set_data_type(onnx::TensorProto::INT64);
    if (a.name() == "value_int") {
      built.add_int64_data(a.i());
    } else {
      built.add_dims(a.ints_size());
      built.mutable_int64_data()->CopyFrom(a.ints());
    }
  } else {
    return n.fail("a Constant with attribute '" + a.name() + "'",
                  kConstantForms);
  }
  // Attribute tensors live in the model the weight source keeps alive;
  // tensors built here need a copy owned by the weight source.
  FailureOr<Value> value =
      n.ctx.materialize(tensor ? *tensor : built, name,
                        /*ownedCopy=*/tensor == nullptr, n.builder());
  if (failed(value))
    return failure();
  value->getDefiningOp()->setLoc(n.loc());
  return n.setOutput(0, value);
}

/// ConstantOfShape: a tensor of the int64 run-time shape filled with the
/// one-element `value` (float32 0 when absent), typed by that value.
LogicalResult convertConstantOfShape(NodeContext &n) {
  Value shape;
  if (failed(n.input(0, shape)) ||
      failed(n.requireType(shape, "shape", {n.i64()})))
    return failure();
  Type elem = n.f32();
  double fill = 0.0;
  if (const auto *a = n.attr("value", onnx::AttributeProto::TENSOR)) {
    elem = elementTypeOf(n.ctx.mlir(), a->t().data_type());
    if (!elem)
      return n.fail("value has dtype " + dtypeName(a->t().data_type()),
                    kSupportedDtypes);
    if (failed(scalarOf(n, a->t(), fill)))
      return failure();
  }
  if (n.ctx.hasError())
    return failure();
  return n.setOutput(0, n.build<graph::ConstantOfShapeOp>(
                            elem, shape, n.builder().getF64FloatAttr(fill)));
}

} // namespace ingot::compiler::onnximport
