//===- ConvFusionPasses.td - conv folds and fusions -----*- tablegen -*-===//
//
// The fusion phase's passes that rewrite convolutions (TensorFlow's 1-D
// convs, BatchNormalization and scalar affines folded into the weights,
// activations fused), apart from FusionPasses.td for size; Passes.td
// includes both, so one `-gen-pass-decls` run declares every pass.
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_CONV_FUSION_PASSES
#define INGOT_CONV_FUSION_PASSES

include "mlir/Pass/PassBase.td"

def SqueezeConv : Pass<"ingot-squeeze-conv", "mlir::func::FuncOp"> {
  let summary = "Run a conv whose unit dims are squeezed away without them";
  let description = [{
    `squeeze(conv(x, w))` over spatial dims where x and w are 1 and the
    conv pads nothing (TensorFlow's 1-D conv: [N, C, L, 1] by a [k, 1]
    kernel, then a squeeze) becomes a conv of the squeezed x and w, with
    those dims' strides, dilations and pads dropped. The conv then feeds
    its bias add and activation directly, so they fold and fuse into it.

    Before:
    ```mlir
    %c = ingot.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, ...} : (tensor<1x256x512x1xf32>, tensor<512x256x5x1xf32>) -> tensor<1x512x508x1xf32>
    %s = ingot.squeeze %c {axes = array<i64: 3>} : tensor<1x512x508x1xf32> -> tensor<1x512x508xf32>
    ```
    After:
    ```mlir
    %x1 = ingot.squeeze %x {axes = array<i64: 3>} : tensor<1x256x512x1xf32> -> tensor<1x256x512xf32>
    %w1 = ingot.squeeze %w {axes = array<i64: 3>} : tensor<512x256x5x1xf32> -> tensor<512x256x5xf32>
    %s = ingot.conv %x1, %w1 {pads = array<i64: 0, 0>, strides = array<i64: 1>, ...} : (tensor<1x256x512xf32>, tensor<512x256x5xf32>) -> tensor<1x512x508xf32>
    ```
  }];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FoldConvBatchNorm : Pass<"ingot-fold-conv-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold per-channel sub/mul/add of weights into the producing conv";
  let description = [{
    A conv read only by an `add`, `sub` or `mul` whose other operand is
    computed from weights alone and holds one value per output channel
    (BatchNormalization as imported: sub mean, mul scale / sqrt(var + eps),
    add B) becomes a conv with new weights W · f (row m scaled by f[m])
    and bias (b − mean) · f + B, written as ops on the weights. Those read
    weights only, so the runtime computes them on the first run and keeps
    them: later runs do no BN work at all. A conv that already has an
    activation, or a value that varies per run, is left alone.

    Before:
    ```mlir
    %y = ingot.conv %x, %w {...} : (...) -> tensor<1x8x16x16xf32>
    %s = ingot.sub %y, %mean : (tensor<1x8x16x16xf32>, tensor<8x1x1xf32>) -> tensor<1x8x16x16xf32>
    %z = ingot.mul %s, %f : (tensor<1x8x16x16xf32>, tensor<8x1x1xf32>) -> tensor<1x8x16x16xf32>
    ```
    After:
    ```mlir
    %nm = ingot.neg %mean8 : tensor<8xf32>
    %w2 = ingot.mul %w, %f8111 : (...) -> tensor<8x3x3x3xf32>
    %b2 = ingot.mul %nm, %f8 : (...) -> tensor<8xf32>
    %z = ingot.conv %x, %w2, %b2 {...} : (...) -> tensor<1x8x16x16xf32>
    ```
  }];
  let options = [
    Option<"bias", "bias", "bool", /*default=*/"true",
           "Fold adds into the bias (sub and mul always fold)">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FuseConvActivation : Pass<"ingot-fuse-conv-activation", "mlir::func::FuncOp"> {
  let summary = "Fuse activations and constant clips into the producing conv";
  let description = [{
    A `relu` of a conv used once, `mul(y, sigmoid(y))` with y a conv
    read only by those two (SiLU, as YOLO exports write it), or
    `div(mul(y, min(max(add(y, 3), 0), 6)), 6)` with y read only by the
    add and the mul (HardSwish, as PaddleOCR exports write it), or the
    `gelu` or `leaky_relu` of a conv used once, becomes the conv's
    `activation`. A `max` then a `min` of a conv (with or without an
    activation) by a scalar constant, as Clip imports, become its
    `clip_min` and `clip_max`. An `add` of a conv read only there and a
    tensor of the same type becomes the conv's `residual`, added after the
    activation and clip (an activation after the add stays an op). The
    conv kernel adds its bias and applies the activation, clip and
    residual to each block of output positions right after computing it,
    instead of one more pass over memory per op.

    Before:
    ```mlir
    %y = ingot.conv %x, %w, %b {...} : (...) -> tensor<1x16x80x80xf32>
    %s = ingot.sigmoid %y : tensor<1x16x80x80xf32>
    %a = ingot.mul %y, %s : (...) -> tensor<1x16x80x80xf32>
    ```
    After:
    ```mlir
    %a = ingot.conv %x, %w, %b {activation = "silu", ...} : (...) -> tensor<1x16x80x80xf32>
    ```
  }];
  let options = [
    Option<"relu", "relu", "bool", /*default=*/"true", "Fuse relu">,
    Option<"silu", "silu", "bool", /*default=*/"true",
           "Fuse mul(y, sigmoid(y))">,
    Option<"hardSwish", "hard-swish", "bool", /*default=*/"true",
           "Fuse y * clip(y + 3, 0, 6) / 6">,
    Option<"gelu", "gelu", "bool", /*default=*/"true",
           "Fuse gelu (erf or tanh)">,
    Option<"leakyRelu", "leaky-relu", "bool", /*default=*/"true",
           "Fuse leaky_relu">,
    Option<"clip", "clip", "bool", /*default=*/"true",
           "Fuse max and min by a scalar constant">,
    Option<"residual", "residual", "bool", /*default=*/"true",
           "Fuse an add of a same-typed tensor after the activation">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FoldConvInputAffine : Pass<"ingot-fold-conv-input-affine", "mlir::func::FuncOp"> {
  let summary = "Fold a scalar x * s + b into the unpadded conv that reads it";
  let description = [{
    An unpadded conv is linear in its input, so conv(W, x·s + b) =
    conv(W·s, x) + b·ΣW[m] for each output channel m. A conv whose input is
    `add(mul(x, s), b)`, `mul(x, s)` or `add(x, b)` with one-element f32
    constants, each op read only by the next, reads x instead, with the
    weights scaled and b times each output channel's weight sum added to
    the bias, written as ops on the weights (computed once, on the first
    run). PaddleOCR's PP-LCNetV3 ends each activation with such an affine.
    A padded conv is left alone: it pads with zeros, not with b.

    Before:
    ```mlir
    %m = ingot.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1xf32>) -> tensor<1x8x4x4xf32>
    %a = ingot.add %m, %b : (tensor<1x8x4x4xf32>, tensor<1xf32>) -> tensor<1x8x4x4xf32>
    %y = ingot.conv %a, %w {pads = array<i64: 0, 0, 0, 0>, ...} : (...) -> tensor<1x16x4x4xf32>
    ```
    After:
    ```mlir
    %sum = ingot.reduce %w {axes = array<i64: 1, 2, 3>, keepdims = 0 : i64, kind = "sum"} : (tensor<16x8x1x1xf32>) -> tensor<16xf32>
    %bias = ingot.mul %sum, %b1 : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
    %w2 = ingot.mul %w, %s1111 : (tensor<16x8x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<16x8x1x1xf32>
    %y = ingot.conv %x, %w2, %bias {pads = array<i64: 0, 0, 0, 0>, ...} : (...) -> tensor<1x16x4x4xf32>
    ```
  }];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

#endif // INGOT_CONV_FUSION_PASSES
