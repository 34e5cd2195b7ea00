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
    {"Add", "", 7, 28, ""},
    {"Sub", "", 7, 28, ""},
    {"Mul", "", 7, 28, ""},
    {"Div", "", 7, 28, ""},
    {"Pow", "", 7, 28, ""},
    {"Sqrt", "", 7, 28, ""},
    {"Neg", "", 7, 28, ""},
    {"Exp", "", 7, 28, ""},
    {"Erf", "", 9, 28, ""},
    {"Tanh", "", 7, 28, ""},
    {"Sigmoid", "", 7, 28, ""},
    {"Relu", "", 7, 28, ""},
    {"Where", "", 9, 28, ""},
    {"IsNaN", "", 9, 28, ""},
    {"IsInf", "", 10, 28, "detect_negative detect_positive"},
    {"Cast", "", 7, 18, "to"},
    {"Cast", "", 19, 23, "saturate to"},
    {"Cast", "", 24, 28, "round_mode saturate to"},
    {"CastLike", "", 15, 18, ""},
    {"CastLike", "", 19, 23, "saturate"},
    {"CastLike", "", 24, 28, "round_mode saturate"},
    {"Swish", "", 24, 28, "alpha"},
    {"Identity", "", 7, 28, ""},
    {"If", "", 7, 28, "else_branch then_branch"},
    {"Loop", "", 7, 28, "body"},
    {"Scan", "", 9, 28, "body num_scan_inputs scan_input_axes "
     "scan_input_directions scan_output_axes "
     "scan_output_directions"},
    {"MatMul", "", 7, 28, ""},
    {"Gemm", "", 7, 28, "alpha beta transA transB"},
    {"Softmax", "", 7, 28, "axis"},
    {"LayerNormalization", "", 17, 28, "axis epsilon stash_type"},
    {"ReduceMean", "", 7, 17, "axes keepdims"},
    {"ReduceMean", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"Transpose", "", 7, 28, "perm"},
    {"Reshape", "", 7, 13, ""},
    {"Reshape", "", 14, 28, "allowzero"},
    {"Squeeze", "", 7, 12, "axes"},
    {"Squeeze", "", 13, 28, ""},
    {"Unsqueeze", "", 7, 12, "axes"},
    {"Unsqueeze", "", 13, 28, ""},
    {"Concat", "", 7, 28, "axis"},
    {"Gather", "", 7, 28, "axis"},
    {"GatherND", "", 11, 11, ""},
    {"GatherND", "", 12, 28, "batch_dims"},
    {"Shape", "", 7, 14, ""},
    {"Shape", "", 15, 28, "end start"},
    {"Size", "", 7, 28, ""},
    {"Trilu", "", 14, 28, "upper"},
    {"Constant", "", 7, 10, "value"},
    {"Constant", "", 11, 11, "sparse_value value"},
    {"Constant", "", 12, 28, "sparse_value value value_float value_floats "
     "value_int value_ints value_string value_strings"},
    {"ConstantOfShape", "", 9, 28, "value"},
    {"Gelu", "", 20, 28, "approximate"},
    {"Reciprocal", "", 7, 28, ""},
    {"Log", "", 7, 28, ""},
    {"Abs", "", 7, 28, ""},
    {"Softplus", "", 7, 28, ""},
    {"Mish", "", 18, 28, ""},
    {"Sin", "", 7, 28, ""},
    {"Cos", "", 7, 28, ""},
    {"Floor", "", 7, 28, ""},
    {"Ceil", "", 7, 28, ""},
    {"Round", "", 11, 28, ""},
    {"Sign", "", 9, 28, ""},
    {"HardSigmoid", "", 7, 28, "alpha beta"},
    {"LeakyRelu", "", 7, 28, "alpha"},
    {"Elu", "", 7, 28, "alpha"},
    {"Not", "", 7, 28, ""},
    {"And", "", 7, 28, ""},
    {"Or", "", 7, 28, ""},
    {"Max", "", 7, 28, ""},
    {"Min", "", 7, 28, ""},
    {"Clip", "", 7, 10, "max min"},
    {"Clip", "", 11, 28, ""},
    {"Equal", "", 7, 28, ""},
    {"Less", "", 7, 28, ""},
    {"LessOrEqual", "", 12, 28, ""},
    {"Greater", "", 7, 28, ""},
    {"GreaterOrEqual", "", 12, 28, ""},
    {"ReduceSum", "", 7, 12, "axes keepdims"},
    {"ReduceSum", "", 13, 28, "keepdims noop_with_empty_axes"},
    {"ReduceMax", "", 7, 17, "axes keepdims"},
    {"ReduceMax", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"ReduceMin", "", 7, 17, "axes keepdims"},
    {"ReduceMin", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"ReduceProd", "", 7, 17, "axes keepdims"},
    {"ReduceProd", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"ReduceL2", "", 7, 17, "axes keepdims"},
    {"ReduceL2", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"ReduceSumSquare", "", 7, 17, "axes keepdims"},
    {"ReduceSumSquare", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"ReduceLogSumExp", "", 7, 17, "axes keepdims"},
    {"ReduceLogSumExp", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"ArgMax", "", 7, 11, "axis keepdims"},
    {"ArgMax", "", 12, 28, "axis keepdims select_last_index"},
    {"ArgMin", "", 7, 11, "axis keepdims"},
    {"ArgMin", "", 12, 28, "axis keepdims select_last_index"},
    {"LogSoftmax", "", 7, 28, "axis"},
    {"CumSum", "", 11, 28, "exclusive reverse"},
    {"Dropout", "", 7, 11, "ratio"},
    {"Dropout", "", 12, 28, "seed"},
    {"DequantizeLinear", "", 10, 12, ""},
    {"DequantizeLinear", "", 13, 20, "axis"},
    {"DequantizeLinear", "", 21, 22, "axis block_size"},
    {"DequantizeLinear", "", 23, 28, "axis block_size output_dtype"},
    {"QuantizeLinear", "", 10, 12, ""},
    {"QuantizeLinear", "", 13, 18, "axis"},
    {"QuantizeLinear", "", 19, 20, "axis saturate"},
    {"QuantizeLinear", "", 21, 22, "axis block_size output_dtype saturate"},
    {"QuantizeLinear", "", 23, 28, "axis block_size output_dtype precision "
     "saturate"},
    {"DynamicQuantizeLinear", "", 11, 28, ""},
    {"MatMulInteger", "", 10, 28, ""},
    {"QLinearMatMul", "", 10, 28, ""},
    {"ConvInteger", "", 10, 28, "auto_pad dilations group kernel_shape pads "
     "strides"},
    {"QLinearConv", "", 10, 28, "auto_pad dilations group kernel_shape pads "
     "strides"},
    {"BatchNormalization", "", 7, 8, "epsilon momentum spatial"},
    {"BatchNormalization", "", 9, 13, "epsilon momentum"},
    {"BatchNormalization", "", 14, 28, "epsilon momentum training_mode"},
    {"InstanceNormalization", "", 7, 28, "epsilon"},
    {"GroupNormalization", "", 21, 28, "epsilon num_groups stash_type"},
    {"LRN", "", 7, 28, "alpha beta bias size"},
    {"RMSNormalization", "", 23, 28, "axis epsilon stash_type"},
    {"SkipLayerNormalization", "com.microsoft", 7, 28, "epsilon"},
    {"SimplifiedLayerNormalization", "com.microsoft", 7, 28, "axis epsilon "
     "stash_type"},
    {"SimplifiedLayerNormalization", "", 7, 28, "axis epsilon stash_type"},
    {"Mod", "", 10, 28, "fmod"},
    {"BitShift", "", 11, 28, "direction"},
    {"BitwiseAnd", "", 18, 28, ""},
    {"BitwiseOr", "", 18, 28, ""},
    {"BitwiseXor", "", 18, 28, ""},
    {"BitwiseNot", "", 18, 28, ""},
    {"Einsum", "", 12, 28, "equation"},
    {"Sum", "", 7, 28, ""},
    {"Mean", "", 7, 28, ""},
    {"PRelu", "", 7, 28, ""},
    {"HardSwish", "", 14, 28, ""},
    {"Selu", "", 7, 28, "alpha gamma"},
    {"Celu", "", 12, 28, "alpha"},
    {"ThresholdedRelu", "", 10, 28, "alpha"},
    {"Softsign", "", 7, 28, ""},
    {"Shrink", "", 9, 28, "bias lambd"},
    {"Xor", "", 7, 28, ""},
    {"ReduceL1", "", 7, 17, "axes keepdims"},
    {"ReduceL1", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"ReduceLogSum", "", 7, 17, "axes keepdims"},
    {"ReduceLogSum", "", 18, 28, "keepdims noop_with_empty_axes"},
    {"Flatten", "", 7, 28, "axis"},
    {"Split", "", 7, 12, "axis split"},
    {"Split", "", 13, 17, "axis"},
    {"Split", "", 18, 28, "axis num_outputs"},
    {"Slice", "", 7, 9, "axes ends starts"},
    {"Slice", "", 10, 28, ""},
    {"Expand", "", 8, 28, ""},
    {"Tile", "", 7, 28, ""},
    {"Range", "", 11, 26, ""},
    {"Range", "", 27, 28, "stash_type"},
    {"Pad", "", 7, 10, "mode pads value"},
    {"Pad", "", 11, 28, "mode"},
    {"GatherElements", "", 11, 28, "axis"},
    {"ScatterND", "", 11, 15, ""},
    {"ScatterND", "", 16, 28, "reduction"},
    {"ScatterElements", "", 11, 15, "axis"},
    {"ScatterElements", "", 16, 28, "axis reduction"},
    {"Scatter", "", 9, 10, "axis"},
    {"DepthToSpace", "", 7, 10, "blocksize"},
    {"DepthToSpace", "", 11, 28, "blocksize mode"},
    {"SpaceToDepth", "", 7, 27, "blocksize"},
    {"SpaceToDepth", "", 28, 28, "blocksize mode"},
    {"OneHot", "", 9, 28, "axis"},
    {"NonZero", "", 9, 28, ""},
    {"NonMaxSuppression", "", 10, 28, "center_point_box"},
    {"TopK", "", 7, 9, "axis k"},
    {"TopK", "", 10, 10, "axis"},
    {"TopK", "", 11, 28, "axis largest sorted"},
    {"Conv", "", 7, 28, "auto_pad dilations group kernel_shape pads strides"},
    {"ConvTranspose", "", 7, 28, "auto_pad dilations group kernel_shape "
     "output_padding output_shape pads strides"},
    {"LSTM", "", 7, 13, "activation_alpha activation_beta activations clip "
     "direction hidden_size input_forget"},
    {"LSTM", "", 14, 28, "activation_alpha activation_beta activations clip "
     "direction hidden_size input_forget layout"},
    {"GRU", "", 7, 13, "activation_alpha activation_beta activations clip "
     "direction hidden_size linear_before_reset"},
    {"GRU", "", 14, 28, "activation_alpha activation_beta activations clip "
     "direction hidden_size layout linear_before_reset"},
    {"MaxPool", "", 7, 7, "auto_pad kernel_shape pads strides"},
    {"MaxPool", "", 8, 9, "auto_pad kernel_shape pads storage_order strides"},
    {"MaxPool", "", 10, 28, "auto_pad ceil_mode dilations kernel_shape pads "
     "storage_order strides"},
    {"AveragePool", "", 7, 9, "auto_pad count_include_pad kernel_shape pads "
     "strides"},
    {"AveragePool", "", 10, 18, "auto_pad ceil_mode count_include_pad "
     "kernel_shape pads strides"},
    {"AveragePool", "", 19, 28, "auto_pad ceil_mode count_include_pad "
     "dilations kernel_shape pads strides"},
    {"GlobalAveragePool", "", 7, 28, ""},
    {"GlobalMaxPool", "", 7, 28, ""},
    {"Resize", "", 11, 17, "coordinate_transformation_mode cubic_coeff_a "
     "exclude_outside extrapolation_value mode "
     "nearest_mode"},
    {"Resize", "", 18, 28, "antialias axes coordinate_transformation_mode "
     "cubic_coeff_a exclude_outside extrapolation_value "
     "keep_aspect_ratio_policy mode nearest_mode"},
    {"Upsample", "", 7, 8, "mode scales"},
    {"Upsample", "", 9, 9, "mode"},
    {"QLinearAdd", "com.microsoft", 10, 28, ""},
    {"QLinearMul", "com.microsoft", 10, 28, ""},
    {"QLinearSigmoid", "com.microsoft", 10, 28, ""},
    {"QLinearLeakyRelu", "com.microsoft", 10, 28, "alpha"},
    {"QLinearGlobalAveragePool", "com.microsoft", 10, 28, "channels_last"},
    {"QLinearAveragePool", "com.microsoft", 10, 28, "auto_pad ceil_mode "
     "channels_last "
     "count_include_pad "
     "kernel_shape pads "
     "strides"},
    {"QLinearConcat", "com.microsoft", 10, 28, "axis"},
    {"QLinearWhere", "com.microsoft", 10, 28, ""},
    {"QLinearSoftmax", "com.microsoft", 10, 28, "axis opset"},
    {"QGemm", "com.microsoft", 10, 28, "alpha transA transB"},
    {"MatMulNBits", "com.microsoft", 10, 28, "K N accuracy_level bits "
     "block_size weight_prepacked"},
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
