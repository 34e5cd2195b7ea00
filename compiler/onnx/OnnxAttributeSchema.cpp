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
    {"Add", "", 7, 23, ""},
    {"Sub", "", 7, 23, ""},
    {"Mul", "", 7, 23, ""},
    {"Div", "", 7, 23, ""},
    {"Pow", "", 7, 23, ""},
    {"Sqrt", "", 7, 23, ""},
    {"Neg", "", 7, 23, ""},
    {"Exp", "", 7, 23, ""},
    {"Erf", "", 9, 23, ""},
    {"Tanh", "", 7, 23, ""},
    {"Sigmoid", "", 7, 23, ""},
    {"Relu", "", 7, 23, ""},
    {"Where", "", 9, 23, ""},
    {"IsNaN", "", 9, 23, ""},
    {"IsInf", "", 10, 23, "detect_negative detect_positive"},
    {"Cast", "", 7, 18, "to"},
    {"Cast", "", 19, 23, "saturate to"},
    {"Identity", "", 7, 23, ""},
    {"If", "", 7, 23, "else_branch then_branch"},
    {"Loop", "", 7, 23, "body"},
    {"Scan", "", 9, 23,
     "body num_scan_inputs scan_input_axes scan_input_directions "
     "scan_output_axes scan_output_directions"},
    {"MatMul", "", 7, 23, ""},
    {"Gemm", "", 7, 23, "alpha beta transA transB"},
    {"Softmax", "", 7, 23, "axis"},
    {"LayerNormalization", "", 17, 23, "axis epsilon stash_type"},
    {"ReduceMean", "", 7, 17, "axes keepdims"},
    {"ReduceMean", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"Transpose", "", 7, 23, "perm"},
    {"Reshape", "", 7, 13, ""},
    {"Reshape", "", 14, 23, "allowzero"},
    {"Squeeze", "", 7, 12, "axes"},
    {"Squeeze", "", 13, 23, ""},
    {"Unsqueeze", "", 7, 12, "axes"},
    {"Unsqueeze", "", 13, 23, ""},
    {"Concat", "", 7, 23, "axis"},
    {"Gather", "", 7, 23, "axis"},
    {"GatherND", "", 11, 11, ""},
    {"GatherND", "", 12, 23, "batch_dims"},
    {"Shape", "", 7, 14, ""},
    {"Shape", "", 15, 23, "end start"},
    {"Size", "", 7, 23, ""},
    {"Trilu", "", 14, 23, "upper"},
    {"Constant", "", 7, 10, "value"},
    {"Constant", "", 11, 11, "sparse_value value"},
    {"Constant", "", 12, 23,
     "sparse_value value value_float value_floats value_int value_ints "
     "value_string value_strings"},
    {"ConstantOfShape", "", 9, 23, "value"},
    {"Gelu", "", 20, 23, "approximate"},
    {"Reciprocal", "", 7, 23, ""},
    {"Log", "", 7, 23, ""},
    {"Abs", "", 7, 23, ""},
    {"Softplus", "", 7, 23, ""},
    {"Mish", "", 18, 23, ""},
    {"Sin", "", 7, 23, ""},
    {"Cos", "", 7, 23, ""},
    {"Floor", "", 7, 23, ""},
    {"Ceil", "", 7, 23, ""},
    {"Round", "", 11, 23, ""},
    {"Sign", "", 9, 23, ""},
    {"HardSigmoid", "", 7, 23, "alpha beta"},
    {"LeakyRelu", "", 7, 23, "alpha"},
    {"Elu", "", 7, 23, "alpha"},
    {"Not", "", 7, 23, ""},
    {"And", "", 7, 23, ""},
    {"Or", "", 7, 23, ""},
    {"Max", "", 7, 23, ""},
    {"Min", "", 7, 23, ""},
    {"Clip", "", 7, 10, "max min"},
    {"Clip", "", 11, 23, ""},
    {"Equal", "", 7, 23, ""},
    {"Less", "", 7, 23, ""},
    {"LessOrEqual", "", 12, 23, ""},
    {"Greater", "", 7, 23, ""},
    {"GreaterOrEqual", "", 12, 23, ""},
    {"ReduceSum", "", 7, 12, "axes keepdims"},
    {"ReduceSum", "", 13, 23, "keepdims noop_with_empty_axes"},
    {"ReduceMax", "", 7, 17, "axes keepdims"},
    {"ReduceMax", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceMin", "", 7, 17, "axes keepdims"},
    {"ReduceMin", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceProd", "", 7, 17, "axes keepdims"},
    {"ReduceProd", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceL2", "", 7, 17, "axes keepdims"},
    {"ReduceL2", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceSumSquare", "", 7, 17, "axes keepdims"},
    {"ReduceSumSquare", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ReduceLogSumExp", "", 7, 17, "axes keepdims"},
    {"ReduceLogSumExp", "", 18, 23, "keepdims noop_with_empty_axes"},
    {"ArgMax", "", 7, 11, "axis keepdims"},
    {"ArgMax", "", 12, 23, "axis keepdims select_last_index"},
    {"ArgMin", "", 7, 11, "axis keepdims"},
    {"ArgMin", "", 12, 23, "axis keepdims select_last_index"},
    {"LogSoftmax", "", 7, 23, "axis"},
    {"CumSum", "", 11, 23, "exclusive reverse"},
    {"Dropout", "", 7, 11, "ratio"},
    {"Dropout", "", 12, 23, "seed"},
    {"DequantizeLinear", "", 10, 12, ""},
    {"DequantizeLinear", "", 13, 20, "axis"},
    {"DequantizeLinear", "", 21, 22, "axis block_size"},
    {"DequantizeLinear", "", 23, 23, "axis block_size output_dtype"},
    {"QuantizeLinear", "", 10, 12, ""},
    {"QuantizeLinear", "", 13, 18, "axis"},
    {"QuantizeLinear", "", 19, 20, "axis saturate"},
    {"QuantizeLinear", "", 21, 22, "axis block_size output_dtype saturate"},
    {"QuantizeLinear", "", 23, 23,
     "axis block_size output_dtype precision saturate"},
    {"DynamicQuantizeLinear", "", 11, 23, ""},
    {"MatMulInteger", "", 10, 23, ""},
    {"QLinearMatMul", "", 10, 23, ""},
    {"ConvInteger", "", 10, 23,
     "auto_pad dilations group kernel_shape pads strides"},
    {"QLinearConv", "", 10, 23,
     "auto_pad dilations group kernel_shape pads strides"},
    {"BatchNormalization", "", 7, 8, "epsilon momentum spatial"},
    {"BatchNormalization", "", 9, 13, "epsilon momentum"},
    {"BatchNormalization", "", 14, 23, "epsilon momentum training_mode"},
    {"InstanceNormalization", "", 7, 23, "epsilon"},
    {"RMSNormalization", "", 23, 23, "axis epsilon stash_type"},
    {"SkipLayerNormalization", "com.microsoft", 7, 23, "epsilon"},
    {"SimplifiedLayerNormalization", "com.microsoft", 7, 23,
     "axis epsilon stash_type"},
    {"SimplifiedLayerNormalization", "", 7, 23, "axis epsilon stash_type"},
    {"Mod", "", 10, 23, "fmod"},
    {"BitShift", "", 11, 23, "direction"},
    {"BitwiseAnd", "", 18, 23, ""},
    {"BitwiseOr", "", 18, 23, ""},
    {"BitwiseXor", "", 18, 23, ""},
    {"BitwiseNot", "", 18, 23, ""},
    {"Einsum", "", 12, 23, "equation"},
    {"Flatten", "", 7, 23, "axis"},
    {"Split", "", 7, 12, "axis split"},
    {"Split", "", 13, 17, "axis"},
    {"Split", "", 18, 23, "axis num_outputs"},
    {"Slice", "", 7, 9, "axes ends starts"},
    {"Slice", "", 10, 23, ""},
    {"Expand", "", 8, 23, ""},
    {"Tile", "", 7, 23, ""},
    {"Range", "", 11, 23, ""},
    {"Pad", "", 7, 10, "mode pads value"},
    {"Pad", "", 11, 23, "mode"},
    {"GatherElements", "", 11, 23, "axis"},
    {"ScatterND", "", 11, 15, ""},
    {"ScatterND", "", 16, 23, "reduction"},
    {"DepthToSpace", "", 7, 10, "blocksize"},
    {"DepthToSpace", "", 11, 23, "blocksize mode"},
    {"OneHot", "", 9, 23, "axis"},
    {"NonZero", "", 9, 23, ""},
    {"TopK", "", 7, 9, "axis k"},
    {"TopK", "", 10, 10, "axis"},
    {"TopK", "", 11, 23, "axis largest sorted"},
    {"Conv", "", 7, 23, "auto_pad dilations group kernel_shape pads strides"},
    {"ConvTranspose", "", 7, 23,
     "auto_pad dilations group kernel_shape output_padding output_shape pads "
     "strides"},
    {"LSTM", "", 7, 13,
     "activation_alpha activation_beta activations clip direction hidden_size "
     "input_forget"},
    {"LSTM", "", 14, 23,
     "activation_alpha activation_beta activations clip direction hidden_size "
     "input_forget layout"},
    {"GRU", "", 7, 13,
     "activation_alpha activation_beta activations clip direction hidden_size "
     "linear_before_reset"},
    {"GRU", "", 14, 23,
     "activation_alpha activation_beta activations clip direction hidden_size "
     "layout linear_before_reset"},
    {"MaxPool", "", 7, 7, "auto_pad kernel_shape pads strides"},
    {"MaxPool", "", 8, 9, "auto_pad kernel_shape pads storage_order strides"},
    {"MaxPool", "", 10, 23,
     "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"},
    {"AveragePool", "", 7, 9,
     "auto_pad count_include_pad kernel_shape pads strides"},
    {"AveragePool", "", 10, 18,
     "auto_pad ceil_mode count_include_pad kernel_shape pads strides"},
    {"AveragePool", "", 19, 23,
     "auto_pad ceil_mode count_include_pad dilations kernel_shape pads "
     "strides"},
    {"GlobalAveragePool", "", 7, 23, ""},
    {"GlobalMaxPool", "", 7, 23, ""},
    {"Resize", "", 11, 17,
     "coordinate_transformation_mode cubic_coeff_a exclude_outside "
     "extrapolation_value mode nearest_mode"},
    {"Resize", "", 18, 23,
     "antialias axes coordinate_transformation_mode cubic_coeff_a "
     "exclude_outside extrapolation_value keep_aspect_ratio_policy mode "
     "nearest_mode"},
    // onnxruntime's QLinear* contrib ops (OnnxQuantMicrosoft.cpp).
    {"QLinearAdd", "com.microsoft", 10, 23, ""},
    {"QLinearMul", "com.microsoft", 10, 23, ""},
    {"QLinearSigmoid", "com.microsoft", 10, 23, ""},
    {"QLinearLeakyRelu", "com.microsoft", 10, 23, "alpha"},
    {"QLinearGlobalAveragePool", "com.microsoft", 10, 23, "channels_last"},
    {"QLinearAveragePool", "com.microsoft", 10, 23,
     "auto_pad ceil_mode channels_last count_include_pad kernel_shape pads "
     "strides"},
    {"QLinearConcat", "com.microsoft", 10, 23, "axis"},
    {"QLinearWhere", "com.microsoft", 10, 23, ""},
    {"QLinearSoftmax", "com.microsoft", 10, 23, "axis opset"},
    {"QGemm", "com.microsoft", 10, 23, "alpha transA transB"},
    {"MatMulNBits", "com.microsoft", 10, 23,
     "K N accuracy_level bits block_size weight_prepacked"},
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
