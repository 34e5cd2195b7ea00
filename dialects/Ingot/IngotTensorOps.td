//===- IngotTensorOps.td - Coverage ops (tensor) -----------------*- tablegen -*-===//
//
// Included from IngotOps.td. Data movement, convolution, recurrence, pooling
// and resizing ops of the wider ONNX set (indexing: IngotIndexOps.td). Each has one result (the plan
// lowering maps one op to one kernel step): multi-output ONNX ops become
// several of these at import (Split -> slices, TopK -> values + indices).
// Kernel contracts: docs/kernels-tensor.md.
//
//===----------------------------------------------------------------------===//

class Ingot_TensorOp<string mnemonic, list<Trait> traits = []>
    : Ingot_Op<mnemonic, traits> {
  let results = (outs Ingot_Tensor:$result);
  let hasVerifier = 1;
}

def Ingot_FlattenOp : Ingot_TensorOp<"flatten"> {
  let summary = "collapse to 2-D around an axis";
  let description = [{
    ONNX `Flatten`: dims [0, axis) and [axis, rank) each multiply into one;
    `axis` is normalised to [0, rank].

    ```mlir
    %f = ingot.flatten %x {axis = 1 : i64} : tensor<?x3x4xf32> -> tensor<?x12xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, I64Attr:$axis);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Ingot_SliceOp : Ingot_TensorOp<"slice"> {
  let summary = "strided slice with run-time starts/ends/axes/steps";
  let description = [{
    ONNX `Slice` (opset 13): negative starts/ends count from the end, are
    clamped, and steps may be negative. The importer always supplies `axes`
    and `steps`. Dims of a slice whose parameters are not known at compile
    time are dynamic.

    ```mlir
    %s = ingot.slice %x, %st, %en, %ax, %sp : (tensor<8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x6xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_IntTensor:$starts,
                   Ingot_IntTensor:$ends, Ingot_IntTensor:$axes,
                   Ingot_IntTensor:$steps);
  let assemblyFormat = "$input `,` $starts `,` $ends `,` $axes `,` $steps "
                       "attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Ingot_ExpandOp : Ingot_TensorOp<"expand"> {
  let summary = "broadcast to a run-time shape";
  let description = [{
    ONNX `Expand`: the result is the numpy broadcast of the input's shape
    and `shape`.

    ```mlir
    %e = ingot.expand %x, %s : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_I64Tensor:$shape);
  let assemblyFormat = "$input `,` $shape attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_TileOp : Ingot_TensorOp<"tile"> {
  let summary = "repeat the input along each dim";
  let description = [{
    ONNX `Tile`: dim i of the result is input dim i times `repeats[i]`.

    ```mlir
    %t = ingot.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_I64Tensor:$repeats);
  let assemblyFormat = "$input `,` $repeats attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_RangeOp : Ingot_TensorOp<"range"> {
  let summary = "arithmetic sequence from scalar start, limit, delta";
  let description = [{
    ONNX `Range`: max(ceil((limit − start) / delta), 0) elements. `count`
    is that length when the importer could evaluate it (constant inputs),
    else −1; then integer inputs whose values are tracked still fix it.

    ```mlir
    %r = ingot.range %a, %b, %c {count = 5 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$start, Ingot_Tensor:$limit,
                   Ingot_Tensor:$delta, I64Attr:$count);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_PadOp : Ingot_TensorOp<"pad"> {
  let summary = "pad every dim (constant, edge or reflect)";
  let description = [{
    ONNX `Pad`: `pads` holds the r begin pads then the r end pads
    over all dims (the importer expands `axes`); negative pads crop.
    `value` is a scalar of the input's type used by `constant` mode.

    ```mlir
    %p = ingot.pad %x, %pads, %v {mode = "reflect"} : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<5x8xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_I64Tensor:$pads,
                   Ingot_Tensor:$value, StrAttr:$mode);
  let assemblyFormat = "$input `,` $pads `,` $value attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_ConvOp : Ingot_TensorOp<"conv", [AttrSizedOperandSegments]> {
  let summary = "1-D/2-D/3-D grouped convolution (NC[D]HW)";
  let description = [{
    ONNX `Conv`: x is [N, C, spatial…], w is [M, C/group, k…]. `pads` holds
    begins then ends; `auto_pad` is `NOTSET`, `VALID`, `SAME_UPPER` or
    `SAME_LOWER` (then `pads` is ignored and computed from the input).
    `kernel_shape`, when present, gives the spatial dims of a weight whose
    type leaves them dynamic (a weight fed as a graph input); the kernel
    checks the real weight against it. `activation` (`relu`, `silu`,
    `gelu`, `gelu_tanh`, `hard_swish` (linear's functions) or `leaky_relu`
    with its `activation_alpha`, set by --ingot-fuse-conv-activation) is
    applied after the bias, then `clip_min` and `clip_max` (ONNX Max and
    Min by a constant, in that order, NaN kept), to each block of output
    positions while it is in cache. `residual` (the result's type, set by
    --ingot-fuse-conv-activation from an Add of the conv's result) is added
    last: y = clip(activation(conv + bias)) + residual.

    ```mlir
    %y = ingot.conv %x, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x8x8xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_Tensor:$weight,
                   Optional<Ingot_Tensor>:$bias,
                   Optional<Ingot_Tensor>:$residual, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   I64Attr:$group, StrAttr:$auto_pad,
                   OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                   OptionalAttr<StrAttr>:$activation,
                   OptionalAttr<F32Attr>:$activation_alpha,
                   OptionalAttr<F32Attr>:$clip_min,
                   OptionalAttr<F32Attr>:$clip_max);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? "
                       "(`residual` $residual^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_ConvTransposeOp : Ingot_TensorOp<"conv_transpose"> {
  let summary = "1-D/2-D/3-D grouped transposed convolution (NC[D]HW)";
  let description = [{
    ONNX `ConvTranspose`: x is [N, C, spatial…], w is [C, M/group, k…];
    with explicit pads each spatial output dim is
    stride·(in − 1) + output_padding + dilation·(k − 1) + 1 − pad_begin −
    pad_end. `pads` holds begins then ends. An `output_shape` (spatial
    dims) or `auto_pad` SAME_UPPER/SAME_LOWER (target in·stride unless
    `output_shape` says otherwise) replace the pads: the padding that cuts
    the pad-free output to the target, half at the begin and the odd one at
    the end for SAME_UPPER, at the begin otherwise, as onnxruntime derives
    them. A target larger than the pad-free output takes no padding: an
    `output_shape` is then zero-filled at the end, a SAME_* output keeps the
    pad-free size.
    The pads so follow the run-time input size.

    ```mlir
    %y = ingot.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x8x5x5xf32>, tensor<8x4x2x2xf32>) -> tensor<1x4x10x10xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_Tensor:$weight,
                   Optional<Ingot_Tensor>:$bias, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$output_padding, I64Attr:$group,
                   OptionalAttr<DenseI64ArrayAttr>:$output_shape,
                   OptionalAttr<StrAttr>:$auto_pad);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_LstmOp : Ingot_TensorOp<"lstm", [AttrSizedOperandSegments]> {
  let summary = "ONNX LSTM (layout 0, default activations)";
  let description = [{
    x is [seq, batch, input]; w [dirs, 4H, input], r [dirs, 4H, H] and
    b [dirs, 8H] hold the gates in ONNX's i, o, f, c order; initial_h and
    initial_c are [dirs, batch, H] (zeros when absent). `direction` is
    "forward", "reverse" or "bidirectional" (dirs 1, 1, 2). The gates use
    sigmoid, tanh, tanh. `select` picks the result: 0 Y [seq, dirs, batch,
    H], 1 Y_h or 2 Y_c [dirs, batch, H], or 3 all three stacked along dim 0
    as [seq + 2, dirs, batch, H] (Y's rows, then Y_h, then Y_c): an ONNX
    node with several used outputs becomes one op selecting 3 and slices
    of it, so the recurrence runs once.

    ```mlir
    %y = ingot.lstm %x, %w, %r, %b {direction = "forward", hidden_size = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0>, select = 0 : i64} : (tensor<?x1x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>) -> tensor<?x1x1x4xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_Tensor:$weight,
                   Ingot_Tensor:$recurrence, Optional<Ingot_Tensor>:$bias,
                   Optional<Ingot_Tensor>:$initial_h,
                   Optional<Ingot_Tensor>:$initial_c, I64Attr:$hidden_size,
                   StrAttr:$direction, I64Attr:$select);
  let assemblyFormat = "$input `,` $weight `,` $recurrence (`,` $bias^)? "
                       "(`initial_h` $initial_h^)? (`initial_c` $initial_c^)? "
                       "attr-dict `:` functional-type(operands, results)";
}

def Ingot_GruOp : Ingot_TensorOp<"gru", [AttrSizedOperandSegments]> {
  let summary = "ONNX GRU (layout 0, default activations)";
  let description = [{
    x is [seq, batch, input]; w [dirs, 3H, input], r [dirs, 3H, H] and
    b [dirs, 6H] hold the gates in ONNX's z, r, h order; initial_h is
    [dirs, batch, H] (zeros when absent). `direction` as for `ingot.lstm`;
    `linear_before_reset` 1 applies the reset gate after the candidate's
    recurrent product. `select` picks the result: 0 Y [seq, dirs, batch,
    H], 1 Y_h [dirs, batch, H], or 2 both stacked along dim 0 as
    [seq + 1, dirs, batch, H].

    ```mlir
    %y = ingot.gru %x, %w, %r, %b {direction = "forward", hidden_size = 4 : i64, linear_before_reset = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, select = 0 : i64} : (tensor<?x1x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>) -> tensor<?x1x1x4xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_Tensor:$weight,
                   Ingot_Tensor:$recurrence, Optional<Ingot_Tensor>:$bias,
                   Optional<Ingot_Tensor>:$initial_h, I64Attr:$hidden_size,
                   StrAttr:$direction, I64Attr:$linear_before_reset,
                   I64Attr:$select);
  let assemblyFormat = "$input `,` $weight `,` $recurrence (`,` $bias^)? "
                       "(`initial_h` $initial_h^)? "
                       "attr-dict `:` functional-type(operands, results)";
}

class Ingot_PoolOp<string mnemonic, string onnx> : Ingot_TensorOp<mnemonic> {
  let summary = "ONNX " # onnx # " over 1-D/2-D/3-D windows (NC[D]HW)";
  let description = [{
    ONNX `}] # onnx # [{`; `pads` holds begins then ends, `auto_pad` as for
    `ingot.conv`; `ceil_mode` rounds the output size up (windows that
    start in the end padding are dropped). `select` 1 or 2 (max_pool only)
    returns the i64 argmax as a flat input index instead of the values
    (ONNX MaxPool's `Indices`; 2: spatial dims in column-major order,
    storage_order 1).

    ```mlir
    %y = ingot.}] # mnemonic # [{ %x {auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, StrAttr:$auto_pad,
                   I64Attr:$ceil_mode, I64Attr:$count_include_pad,
                   DefaultValuedAttr<I64Attr, "0">:$select);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Ingot_MaxPoolOp : Ingot_PoolOp<"max_pool", "MaxPool">;
def Ingot_AveragePoolOp : Ingot_PoolOp<"average_pool", "AveragePool">;

def Ingot_GlobalAveragePoolOp : Ingot_TensorOp<"global_average_pool"> {
  let summary = "mean over all spatial dims";
  let description = [{
    ONNX `GlobalAveragePool`: [N, C, d…] -> [N, C, 1…].

    ```mlir
    %y = ingot.global_average_pool %x : tensor<?x3x8x8xf32> -> tensor<?x3x1x1xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Ingot_ResizeOp : Ingot_TensorOp<"resize", [AttrSizedOperandSegments]> {
  let summary = "nearest, linear or cubic resize by scales or sizes";
  let description = [{
    ONNX `Resize` with compile-time scales or sizes, one per dim (`sizes`
    empty: dim i is floor(in_i · scales[i]); a `sizes` entry −1 keeps the
    input dim; both given, as keep_aspect_ratio_policy makes them: sizes
    fix the output, scales the coordinate mapping). `mode` is `nearest`,
    `linear` or `cubic` (4 taps per dim weighted by Keys' kernel with
    `cubic_coeff_a`, default −0.75; `exclude_outside = 1` drops taps outside
    the input and renormalises); `coordinate_transformation_mode` is `half_pixel`,
    `pytorch_half_pixel`, `align_corners`, `asymmetric` or
    `half_pixel_symmetric`; `nearest_mode`
    is `round_prefer_floor`, `round_prefer_ceil`, `floor` or `ceil`.

    Scales or sizes known only at run time come as one operand
    (`scales_input` f32 or `sizes_input` i64) with an entry per dim of
    `axes`; the attributes `scales` and `sizes` are then empty and the
    kernel applies `keep_aspect_ratio_policy` to run-time sizes.

    `tf_crop_and_resize` maps output index o of a dim of length L from
    L_in to start·(L_in − 1) + o·(end − start)·(L_in − 1)/(L − 1), start
    and end from `roi_input` (f32, starts of every dim then ends); an
    output whose coordinate falls outside [0, L_in − 1] along any dim is
    `extrapolation_value` (default 0). `antialias = 1` (linear or cubic)
    widens the filter by 1 / scale when downsampling, weights normalised,
    one 1-D pass per resized dim.

    ```mlir
    %y = ingot.resize %x {coordinate_transformation_mode = "asymmetric", mode = "nearest", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
    %z = ingot.resize %x scales %s : tensor<2xf32> {axes = array<i64: 2, 3>, coordinate_transformation_mode = "half_pixel", mode = "linear", nearest_mode = "floor", scales = array<f64>, sizes = array<i64>} : tensor<1x3x4x4xf32> -> tensor<1x3x?x?xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input,
                   Optional<Ingot_Tensor>:$scales_input,
                   Optional<Ingot_I64Tensor>:$sizes_input,
                   Optional<Ingot_Tensor>:$roi_input,
                   DenseF64ArrayAttr:$scales,
                   DenseI64ArrayAttr:$sizes, StrAttr:$mode,
                   StrAttr:$coordinate_transformation_mode,
                   StrAttr:$nearest_mode, OptionalAttr<F64Attr>:$cubic_coeff_a,
                   OptionalAttr<I64Attr>:$exclude_outside,
                   OptionalAttr<DenseI64ArrayAttr>:$axes,
                   OptionalAttr<StrAttr>:$keep_aspect_ratio_policy,
                   OptionalAttr<F64Attr>:$extrapolation_value,
                   OptionalAttr<I64Attr>:$antialias);
  let assemblyFormat = [{
    $input (`scales` $scales_input^ `:` type($scales_input))?
    (`sizes` $sizes_input^ `:` type($sizes_input))?
    (`roi` $roi_input^ `:` type($roi_input))? attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Ingot_DepthToSpaceOp : Ingot_TensorOp<"depth_to_space"> {
  let summary = "move channel blocks into spatial blocks";
  let description = [{
    ONNX `DepthToSpace` on [N, C, H, W]; `mode` is `DCR` or `CRD`.

    ```mlir
    %y = ingot.depth_to_space %x {blocksize = 2 : i64, mode = "DCR"} : tensor<1x8x2x3xf32> -> tensor<1x2x4x6xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, I64Attr:$blocksize, StrAttr:$mode);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Ingot_SpaceToDepthOp : Ingot_TensorOp<"space_to_depth"> {
  let summary = "move spatial blocks into channel blocks";
  let description = [{
    ONNX `SpaceToDepth` on [N, C, H, W], the inverse of `depth_to_space`
    with the same `mode` (`DCR`, or `CRD` from opset 28).

    ```mlir
    %y = ingot.space_to_depth %x {blocksize = 2 : i64, mode = "DCR"} : tensor<1x2x4x6xf32> -> tensor<1x8x2x3xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, I64Attr:$blocksize, StrAttr:$mode);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}
