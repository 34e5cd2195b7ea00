//===- IngotMathOps.td - Coverage ops (math) -----------------*- tablegen -*-===//
//
// Included from IngotOps.td. The wider ONNX math/reduction set, kept small
// with a `kind` string per family: one op (and one kernel) per family
// instead of one per ONNX op type. Normalisations (BatchNormalization,
// InstanceNormalization, RMSNormalization, the com.microsoft layer norms),
// Clip and Einsum are composed of existing ops at import.
//
//===----------------------------------------------------------------------===//

def Ingot_UnaryMathOp : Ingot_Op<"unary_math", [SameOperandsAndResultType]> {
  let summary = "elementwise unary math selected by `kind`";
  let description = [{
    `kind` is one of: `reciprocal`, `log`, `abs`, `softplus`, `mish`, `sin`,
    `cos`, `floor`, `ceil`, `round` (half to even), `sign`, `hard_sigmoid`
    (max(0, min(1, alpha·x + beta))), `leaky_relu` (x < 0 ? alpha·x : x),
    `elu` (x < 0 ? alpha·(eˣ − 1) : x), `not` (bool). Float kinds take f32;
    `abs` and `sign` also take i64/i32; `not` takes i1. `alpha`/`beta` are
    only meaningful (and required) for the kinds that name them.

    ```mlir
    %y = ingot.unary_math %x {kind = "leaky_relu", alpha = 0.01 : f32} : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, StrAttr:$kind,
                   OptionalAttr<F32Attr>:$alpha, OptionalAttr<F32Attr>:$beta);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Ingot_BinaryMathOp : Ingot_Op<"binary_math"> {
  let summary = "elementwise max/min/mod/bitwise/and/or with numpy broadcasting";
  let description = [{
    `kind` is `max`, `min` (f32, i64, i32; NaN propagates); `and`, `or`
    (i1); `mod` (the divisor's sign, ONNX Mod), `fmod` (the dividend's
    sign; also f32), `shift_left`, `shift_right` (logical), `bitwise_and`,
    `bitwise_or`, `bitwise_xor` (i64, i32; an integer division by zero
    gives 0). Operands and result share the element type. Variadic ONNX
    Max/Min become a chain of these.

    ```mlir
    %y = ingot.binary_math %a, %b {kind = "max"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$lhs, Ingot_Tensor:$rhs, StrAttr:$kind);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_CompareOp : Ingot_Op<"compare"> {
  let summary = "elementwise comparison to a bool tensor, numpy broadcasting";
  let description = [{
    `kind` is `equal`, `less`, `less_equal`, `greater` or `greater_equal`.
    Operands share an element type (f32, i64, i32; i1 for `equal`); the
    result is i1.

    ```mlir
    %m = ingot.compare %a, %b {kind = "less"} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xi1>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$lhs, Ingot_Tensor:$rhs, StrAttr:$kind);
  let results = (outs Ingot_BoolTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_ReduceOp : Ingot_Op<"reduce"> {
  let summary = "reduction over axes selected by `kind`";
  let description = [{
    `kind` is `sum`, `max`, `min`, `prod` (f32, i64, i32; `max`/`min` also
    i1), or `l2`, `sum_square`, `log_sum_exp` (f32), or `mean` (f32; only
    with run-time axes, where ReduceMean has no ingot.reduce_mean). Axes are the `axes` attribute when
    known at compile time; otherwise the optional i64 `axes_input` operand,
    read at run time (the attribute is then empty, and
    `noop_with_empty_axes = 1` makes an empty operand an identity). Empty
    axes reduce every axis. Reducing an empty range gives the identity
    (0, 1, −inf/+inf for max/min, −inf for log_sum_exp).

    ```mlir
    %s = ingot.reduce %x {kind = "sum", axes = array<i64: -1>, keepdims = 0 : i64} : (tensor<?x64xf32>) -> tensor<?xf32>
    %t = ingot.reduce %x, %axes {kind = "max", axes = array<i64>, keepdims = 1 : i64} : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Optional<Ingot_I64Tensor>:$axes_input,
                   StrAttr:$kind, DenseI64ArrayAttr:$axes, I64Attr:$keepdims,
                   OptionalAttr<I64Attr>:$noop_with_empty_axes);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input (`,` $axes_input^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_ArgReduceOp : Ingot_Op<"arg_reduce"> {
  let summary = "index of the largest/smallest element along one axis";
  let description = [{
    ONNX ArgMax (`kind = "max"`) / ArgMin (`kind = "min"`): i64 indices;
    ties pick the first index, or the last with `select_last_index = 1`.

    ```mlir
    %i = ingot.arg_reduce %x {kind = "max", axis = -1 : i64, keepdims = 1 : i64, select_last_index = 0 : i64} : tensor<?x8xf32> -> tensor<?x1xi64>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, StrAttr:$kind, I64Attr:$axis,
                   I64Attr:$keepdims, I64Attr:$select_last_index);
  let results = (outs Ingot_I64Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Ingot_LogSoftmaxOp : Ingot_Op<"log_softmax", [SameOperandsAndResultType]> {
  let summary = "log of softmax along one axis";
  let description = [{
    ONNX `LogSoftmax` (opset 13 semantics), computed as
    x − max − log(Σ exp(x − max)) so it stays finite for large inputs.

    ```mlir
    %y = ingot.log_softmax %x {axis = -1 : i64} : tensor<?x10xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, I64Attr:$axis);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Ingot_CumSumOp : Ingot_Op<"cumsum"> {
  let summary = "cumulative sum along one axis";
  let description = [{
    ONNX `CumSum`; `exclusive` leaves out the element itself, `reverse` sums
    from the end. f32, i64, i32. The axis is the `axis` attribute when known
    at compile time, else the scalar integer `axis_input` operand, read at
    run time (the result shape does not depend on it); exactly one is given.

    ```mlir
    %y = ingot.cumsum %x {axis = 1 : i64, exclusive = 0 : i64, reverse = 1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %z = ingot.cumsum %x, %a {exclusive = 1 : i64, reverse = 0 : i64} : (tensor<?x8xf32>, tensor<i32>) -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Optional<Ingot_IntTensor>:$axis_input,
                   OptionalAttr<I64Attr>:$axis, I64Attr:$exclusive,
                   I64Attr:$reverse);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input (`,` $axis_input^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}
