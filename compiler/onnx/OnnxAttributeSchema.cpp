//===- OnnxAttributeSchema.cpp - The attributes of each op's schema -------===//
//
// onnxruntime refuses a node carrying an attribute its op's schema does not
// have (a misspelt `axs` on Softmax); ingot refuses it too, instead of
// converting the node as if the attribute were absent. The rows are the
// attribute names of each registered op's schema, per range of opsets of
// the default domain: onnx.defs for the default domain, onnxruntime's contrib
// schemas for com.microsoft (and for the ops onnxruntime alone defines).
// Attributes a converter does not read (Dropout's seed, BatchNormalization's
// momentum, Resize's cubic-only ones) are in the schema and so accepted.
// test/e2e/test_onnx_errors.py checks the rows against the installed onnx and
// onnxruntime and prints the rows to paste when a converter is added or a
// schema changes.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

namespace ingot::compiler::onnximport {
namespace {

struct AttributeRow {
  const char *opType;
  const char *domain;
  int64_t firstOpset;
  int64_t lastOpset;
  /// Space-separated, sorted.
  const char *names;
};

// clang-format off
const AttributeRow kAttributeRows[] = {
    {"Add", "", 13, 23, ""},
    {"Sub", "", 13, 23, ""},
    {"Mul", "", 13, 23, ""},
    {"Div", "", 13, 23, ""},
    {"Pow", "", 13, 23, ""},
    {"Sqrt", "", 13, 23, ""},
    {"Neg", "", 13, 23, ""},
    {"Exp", "", 13, 23, ""},
    {"Erf", "", 13, 23, ""},
    {"Tanh", "", 13, 23, ""},
    {"Sigmoid", "", 13, 23, ""},
    {"Relu", "", 13, 23, ""},
    {"Where", "", 13, 23, ""},
    {"Cast", "", 13, 18, "to"},
    {"Cast", "", 19, 23, "saturate to"},
    {"Identity", "", 13, 23, ""},
    {"MatMul", "", 13, 23, ""},
    {"Gemm", "", 13, 23, "alpha beta transA transB"},
    {"Softmax", "", 13, 23, "axis"},
    {"LayerNormalization", "", 17, 23, "axis epsilon stash_type"},
    {"ReduceMean", "", 13, 17, "axes keepdims"},
    {"ReduceMean", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"Transpose", "", 13, 23, "perm"},
    {"Reshape", "", 13, 13, ""},
    {"Reshape", "", 14, 23, "allowzero"},
    {"Squeeze", "", 13, 23, ""},
    {"Unsqueeze", "", 13, 23, ""},
    {"Concat", "", 13, 23, "axis"},
    {"Gather", "", 13, 23, "axis"},
    {"Shape", "", 13, 14, ""},
    {"Shape", "", 15, 23, "end start"},
    {"Trilu", "", 14, 23, "upper"},
    {"Constant", "", 13, 23,
     "sparse_value value value_float value_floats value_int value_ints "
     "value_string value_strings"},
    {"ConstantOfShape", "", 13, 23, "value"},
    {"Gelu", "", 20, 23, "approximate"},
    {"Reciprocal", "", 13, 23, ""},
    {"Log", "", 13, 23, ""},
    {"Abs", "", 13, 23, ""},
    {"Softplus", "", 13, 23, ""},
    {"Mish", "", 18, 23, ""},
    {"Sin", "", 13, 23, ""},
    {"Cos", "", 13, 23, ""},
    {"Floor", "", 13, 23, ""},
    {"Ceil", "", 13, 23, ""},
    {"Round", "", 13, 23, ""},
    {"Sign", "", 13, 23, ""},
    {"HardSigmoid", "", 13, 23, "alpha beta"},
    {"LeakyRelu", "", 13, 23, "alpha"},
    {"Elu", "", 13, 23, "alpha"},
    {"Not", "", 13, 23, ""},
    {"And", "", 13, 23, ""},
    {"Or", "", 13, 23, ""},
    {"Max", "", 13, 23, ""},
    {"Min", "", 13, 23, ""},
    {"Clip", "", 13, 23, ""},
    {"Equal", "", 13, 23, ""},
    {"Less", "", 13, 23, ""},
    {"LessOrEqual", "", 13, 23, ""},
    {"Greater", "", 13, 23, ""},
    {"GreaterOrEqual", "", 13, 23, ""},
    {"ReduceSum", "", 13, 23, "keepdims noop_with_empty_axes"},
    {"ReduceMax", "", 13, 17, "axes keepdims"},
    {"ReduceMax", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceMin", "", 13, 17, "axes keepdims"},
    {"ReduceMin", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceProd", "", 13, 17, "axes keepdims"},
    {"ReduceProd", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceL2", "", 13, 17, "axes keepdims"},
    {"ReduceL2", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceSumSquare", "", 13, 17, "axes keepdims"},
    {"ReduceSumSquare", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceLogSumExp", "", 13, 17, "axes keepdims"},
    {"ReduceLogSumExp", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ArgMax", "", 13, 23, "axis keepdims select_last_index"},
    {"ArgMin", "", 13, 23, "axis keepdims select_last_index"},
    {"LogSoftmax", "", 13, 23, "axis"},
    {"CumSum", "", 13, 23, "exclusive reverse"},
    {"Dropout", "", 13, 23, "seed"},
    {"BatchNormalization", "", 13, 13, "epsilon momentum"},
    {"BatchNormalization", "", 14, 23, "epsilon momentum training_mode"},
    {"InstanceNormalization", "", 13, 23, "epsilon"},
    {"RMSNormalization", "", 23, 23, "axis epsilon stash_type"},
    {"SkipLayerNormalization", "com.microsoft", 13, 23, "epsilon"},
    {"SimplifiedLayerNormalization", "com.microsoft", 13, 23,
     "axis epsilon stash_type"},
    {"SimplifiedLayerNormalization", "", 13, 23, "axis epsilon stash_type"},
    {"Einsum", "", 13, 23, "equation"},
    {"Flatten", "", 13, 23, "axis"},
    {"Split", "", 13, 17, "axis"},
    {"Split", "", 18, 23, "axis num_outputs"},
    {"Slice", "", 13, 23, ""},
    {"Expand", "", 13, 23, ""},
    {"Tile", "", 13, 23, ""},
    {"Range", "", 13, 23, ""},
    {"Pad", "", 13, 23, "mode"},
    {"GatherElements", "", 13, 23, "axis"},
    {"ScatterND", "", 13, 15, ""},
    {"ScatterND", "", 16, 23, "reduction"},
    {"DepthToSpace", "", 13, 23, "blocksize mode"},
    {"OneHot", "", 13, 23, "axis"},
    {"NonZero", "", 13, 23, ""},
    {"TopK", "", 13, 23, "axis largest sorted"},
    {"Conv", "", 13, 23, "auto_pad dilations group kernel_shape pads strides"},
    {"MaxPool", "", 13, 23,
     "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"},
    {"AveragePool", "", 13, 18,
     "auto_pad ceil_mode count_include_pad kernel_shape pads strides"},
    {"AveragePool", "", 19, 23,
     "auto_pad ceil_mode count_include_pad dilations kernel_shape pads "
     "strides"},
    {"GlobalAveragePool", "", 13, 23, ""},
    {"Resize", "", 13, 17,
     "coordinate_transformation_mode cubic_coeff_a exclude_outside "
     "extrapolation_value mode nearest_mode"},
    {"Resize", "", 18, 23,
     "antialias axes coordinate_transformation_mode cubic_coeff_a "
     "exclude_outside extrapolation_value keep_aspect_ratio_policy mode "
     "nearest_mode"},
};
// clang-format on

} // namespace

mlir::LogicalResult checkAttributeNames(NodeContext &n) {
  llvm::StringRef domain = n.node.domain();
  if (domain == "ai.onnx")
    domain = "";
  const AttributeRow *row =
      llvm::find_if(kAttributeRows, [&](const AttributeRow &r) {
        return n.opType() == r.opType && domain == r.domain &&
               n.opset() >= r.firstOpset && n.opset() <= r.lastOpset;
      });
  // Every registered op has rows (the e2e test checks it); an op without
  // them is not second-guessed.
  if (row == std::end(kAttributeRows))
    return mlir::success();
  llvm::SmallVector<llvm::StringRef> known;
  llvm::StringRef(row->names).split(known, ' ', -1, /*KeepEmpty=*/false);
  std::set<std::string> seen;
  for (const onnx::AttributeProto &a : n.node.attribute()) {
    if (!seen.insert(a.name()).second)
      return n.fail("attribute '" + a.name() + "' is given twice");
    if (llvm::is_contained(known, a.name()))
      continue;
    // The prefix names the opset the list is for.
    return n.fail("unknown attribute '" + a.name() + "' — " + n.opType() +
                  (known.empty() ? " has no attributes"
                                 : " has: " + llvm::join(known, ", ")));
  }
  return mlir::success();
}

} // namespace ingot::compiler::onnximport
