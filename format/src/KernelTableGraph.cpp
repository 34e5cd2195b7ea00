//===- KernelTableGraph.cpp - Signatures of the ONNX-graph kernels
//---------===//
//
// Entries of the kernel table (KernelTable.h), one function per family of
// runtime kernels. A signature says what the kernel accepts, so changing
// one changes what the validator lets through: keep it equal to the
// kernel's own checks (KernelTableTest checks every CPU kernel against it).
//
//===----------------------------------------------------------------------===//
#include "KernelTableFamilies.h"

namespace ingot::kernel_table {

using namespace sig;
using namespace sig::dtypes;

/// ConvKernels (runtime/src/cpu/ConvKernels.cpp).
void addConvSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"conv",
       false,
       {{in("x", kF32), in("weight", kF32), opt("bias", kF32),
         opt("residual", kF32)},
        {in("y", kF32)},
        {"strides", "pads", "dilations", "auto_pad", "group", "kernel_shape",
         "activation", "activation_alpha", "clip_min", "clip_max"}}});
  const DTypeSet q8{DType::U8, DType::I8};
  table.push_back({"conv_integer",
                   false,
                   {{in("x", q8), in("weight", q8), opt("x_zero_point", q8),
                     opt("weight_zero_point", q8)},
                    {in("y", DTypeSet{DType::I32})},
                    {"strides", "pads", "dilations", "auto_pad", "group",
                     "kernel_shape"}}});
  table.push_back({"conv_transpose",
                   false,
                   {{in("x", kF32), in("weight", kF32), opt("bias", kF32)},
                    {in("y", kF32)},
                    {"strides", "pads", "dilations", "output_padding", "group",
                     "output_shape", "auto_pad"}}});
  // One of Y, Y_h, Y_c per step (`select`); runtime/src/cpu/Lstm.cpp.
  table.push_back(
      {"lstm",
       false,
       {{in("x", kF32), in("w", kF32), in("r", kF32), opt("b", kF32),
         opt("initial_h", kF32), opt("initial_c", kF32)},
        {in("y", kF32)},
        {"hidden_size", "direction", "select"}}});
  // Y or Y_h per step; runtime/src/cpu/Gru.cpp.
  table.push_back(
      {"gru",
       false,
       {{in("x", kF32), in("w", kF32), in("r", kF32), opt("b", kF32),
         opt("initial_h", kF32)},
        {in("y", kF32)},
        {"hidden_size", "direction", "linear_before_reset", "select"}}});
}

/// Branches of ingot.if (runtime/src/cpu/ControlFlow.cpp): `skip_unless`
/// passes over the next `steps` steps when its condition is false, `skip`
/// always; `fail` stops the run (a branch that cannot run); `copy` moves a
/// branch's result into the buffer both write.
void addControlFlowSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"skip_unless",
                   false,
                   {{in("condition", kBool)}, {}, {"steps"}, false, true}});
  table.push_back({"skip", false, {{}, {}, {"steps"}, false, true}});
  table.push_back({"fail", false, {{}, {}, {"message"}, false, true}});
  table.push_back({"copy", false, {{in("x", kDense)}, {like("y", 0)}, {}}});
}

/// ConvKernels (runtime/src/cpu/ConvKernels.cpp).
void addPoolSpecs(std::vector<KernelSpec> &table) {
  const std::vector<std::string_view> window = {
      "kernel_shape", "strides",           "pads",  "dilations", "auto_pad",
      "ceil_mode",    "count_include_pad", "select"};
  // max_pool's `select` writes the argmax indices (i64) instead.
  table.push_back(
      {"max_pool", false, {{in("x", kF32)}, {in("y", kF32 | kI64)}, window}});
  table.push_back(
      {"average_pool", false, {{in("x", kF32)}, {in("y", kF32)}, window}});
  table.push_back(
      {"global_average_pool", false, {{in("x", kF32)}, {in("y", kF32)}, {}}});
}

/// Conversion (runtime/src/cpu/Conversion.cpp).
void addConversionSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"cast", false, {{in("x", kDense)}, {in("y", kDense)}, {"saturate"}}});
  // Reads the shape only, so any dtype (a quantised weight's too).
  table.push_back(
      {"shape", false, {{in("x", kAny)}, {in("y", kI64)}, {"start", "end"}}});
  table.push_back({"constant_of_shape",
                   false,
                   {{in("shape", kI64)}, {in("y", kDense)}, {"value"}}});
  table.push_back(
      {"trilu",
       false,
       {{in("x", kDense), opt("k", kIndex)}, {like("y", 0)}, {"upper"}}});
}

/// DataMovement (runtime/src/cpu/DataMovement.cpp).
void addDataMovementSpecs(std::vector<KernelSpec> &table) {
  const KernelSignature axes{
      {in("x", kDense), opt("axes", kIndex)}, {like("y", 0)}, {"axes"}};
  table.push_back({"reshape",
                   true,
                   {{in("x", kDense), in("shape", kIndex)},
                    {like("y", 0)},
                    {"allowzero"}}});
  table.push_back({"squeeze", true, axes});
  table.push_back({"unsqueeze", true, axes});
  table.push_back({"concat",
                   false,
                   {{in("x0", kDense), optLike("x", 0)},
                    {like("y", 0)},
                    {"axis"},
                    /*variadic=*/true}});
  // A quantised table is decoded: its rows come out as f32.
  table.push_back({"gather",
                   false,
                   {{in("data", kAny), in("indices", kIndex)},
                    {like("y", 0, kF32)},
                    {"axis"}}});
}

/// Elementwise (runtime/src/cpu/Elementwise.cpp).
void addElementwiseSpecs(std::vector<KernelSpec> &table) {
  const KernelSignature arithmetic{
      {in("a", kNumeric), like("b", 0)}, {like("y", 0)}, {}};
  table.push_back({"add", true, arithmetic});
  table.push_back({"sub", true, arithmetic});
  table.push_back({"mul", true, arithmetic});
  table.push_back({"div", true, arithmetic});
  table.push_back(
      {"pow",
       true,
       {{in("x", kNumeric), in("exponent", kNumeric)}, {like("y", 0)}, {}}});
  table.push_back({"where",
                   true,
                   {{in("condition", kBool), in("x", kDense), like("y", 1)},
                    {like("out", 1)},
                    {}}});
}

/// MathKernels (runtime/src/cpu/MathKernels.cpp).
void addMathCoverageSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"unary_math",
       false,
       {{in("x", kLogical)}, {like("y", 0)}, {"kind", "alpha", "beta"}}});
  table.push_back(
      {"binary_math",
       false,
       {{in("a", kLogical), like("b", 0)}, {like("y", 0)}, {"kind"}}});
  table.push_back(
      {"compare",
       false,
       {{in("a", kLogical), like("b", 0)}, {in("y", kBool)}, {"kind"}}});
}

/// MathReduce (runtime/src/cpu/MathReduce.cpp).
void addMathReduceSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"reduce",
                   false,
                   {{in("x", kLogical), opt("axes", kIndex)},
                    {like("y", 0)},
                    {"kind", "axes", "keepdims", "noop_with_empty_axes"}}});
  table.push_back({"arg_reduce",
                   false,
                   {{in("x", kNumeric)},
                    {in("y", kI64)},
                    {"kind", "axis", "keepdims", "select_last_index"}}});
  table.push_back(
      {"log_softmax", false, {{in("x", kF32)}, {in("y", kF32)}, {"axis"}}});
  table.push_back({"cumsum",
                   false,
                   {{in("x", kNumeric), opt("axis", kIndex)},
                    {like("y", 0)},
                    {"axis", "exclusive", "reverse"}}});
}

/// Reduce (runtime/src/cpu/Reduce.cpp).
void addReduceSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"reduce_mean",
                   false,
                   {{in("x", kF32), opt("axes", kIndex)},
                    {in("y", kF32)},
                    {"axes", "keepdims", "noop_with_empty_axes"}}});
}

/// TensorIndexKernels (runtime/src/cpu/TensorIndexKernels.cpp).
void addTensorIndexSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"gather_nd",
                   false,
                   {{in("data", kDense), in("indices", kI64)},
                    {like("y", 0)},
                    {"batch_dims"}}});
  table.push_back({"gather_elements",
                   false,
                   {{in("data", kDense), in("indices", kIndex)},
                    {like("y", 0)},
                    {"axis"}}});
  table.push_back(
      {"scatter_nd",
       false,
       {{in("data", kDense), in("indices", kI64), in("updates", kDense)},
        {like("y", 0)},
        {"reduction"}}});
  table.push_back(
      {"scatter_elements",
       false,
       {{in("data", kDense), in("indices", kIndex), like("updates", 0)},
        {like("y", 0)},
        {"axis", "reduction"}}});
  // `sorted` is always honoured (ties keep the lower index first).
  table.push_back({"topk",
                   false,
                   {{in("x", kNumeric), in("k", kIndex)},
                    {like("y", 0, kI64)},
                    {"axis", "largest", "sorted", "select"}}});
}

/// TensorKernels (runtime/src/cpu/TensorKernels.cpp).
void addTensorCoverageSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"flatten", true, {{in("x", kDense)}, {like("y", 0)}, {"axis"}}});
  table.push_back(
      {"expand",
       false,
       {{in("x", kDense), in("shape", kIndex)}, {like("y", 0)}, {}}});
  table.push_back(
      {"tile",
       false,
       {{in("x", kDense), in("repeats", kIndex)}, {like("y", 0)}, {}}});
  // `count` is the importer's note of the length; the kernel recomputes it.
  table.push_back({"range",
                   false,
                   {{in("start", kNumeric), like("limit", 0), like("delta", 0)},
                    {like("y", 0)},
                    {"count"}}});
  table.push_back({"depth_to_space",
                   false,
                   {{in("x", kDense)}, {like("y", 0)}, {"blocksize", "mode"}}});
  table.push_back({"space_to_depth",
                   false,
                   {{in("x", kDense)}, {like("y", 0)}, {"blocksize", "mode"}}});
  table.push_back({"one_hot",
                   false,
                   {{in("indices", kNumeric), in("values", kDense),
                     opt("depth_value", kNumeric)},
                    {like("y", 1)},
                    {"depth", "axis"}}});
  table.push_back(
      {"non_zero", false, {{in("x", kDense)}, {in("y", kI64)}, {}}});
  table.push_back(
      {"non_max_suppression",
       false,
       {{in("boxes", kF32), in("scores", kF32), opt("max_output", kI64),
         opt("iou", kF32), opt("score", kF32)},
        {in("selected", kI64)},
        {"center_point_box", "max_output_boxes_per_class", "iou_threshold",
         "score_threshold"}}});
}

/// TensorResize (runtime/src/cpu/TensorResize.cpp).
void addResizeSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"resize",
       false,
       {{in("x", kF32), opt("scales", kF32), opt("sizes", kIndex),
         opt("roi", kF32)},
        {in("y", kF32)},
        {"scales", "sizes", "mode", "coordinate_transformation_mode",
         "nearest_mode", "cubic_coeff_a", "exclude_outside", "axes",
         "keep_aspect_ratio_policy", "extrapolation_value", "antialias"}}});
}

/// TensorSliceKernels (runtime/src/cpu/TensorSliceKernels.cpp).
void addTensorSliceSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"slice",
                   false,
                   {{in("x", kDense), in("starts", kIndex), in("ends", kIndex),
                     opt("axes", kIndex), opt("steps", kIndex)},
                    {like("y", 0)},
                    {}}});
  table.push_back({"pad",
                   false,
                   {{in("x", kDense), in("pads", kIndex), optLike("value", 0)},
                    {like("y", 0)},
                    {"mode"}}});
}

/// Transpose (runtime/src/cpu/Transpose.cpp).
void addTransposeSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"transpose", false, {{in("x", kDense)}, {like("y", 0)}, {"perm"}}});
}

/// Unary (runtime/src/cpu/Unary.cpp).
void addUnarySpecs(std::vector<KernelSpec> &table) {
  const KernelSignature floats{{in("x", kF32)}, {like("y", 0)}, {}};
  const KernelSignature numeric{{in("x", kNumeric)}, {like("y", 0)}, {}};
  table.push_back({"sqrt", true, floats});
  table.push_back({"neg", true, numeric});
  table.push_back({"exp", true, floats});
  table.push_back({"erf", true, floats});
  table.push_back({"tanh", true, floats});
  table.push_back({"sigmoid", true, floats});
  table.push_back({"relu", true, numeric});
}

} // namespace ingot::kernel_table
