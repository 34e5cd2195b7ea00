//===- IngotShapeOps.td - Data movement and shape ops ------*- tablegen -*-===//
//
// Included from IngotOps.td: ops that move, reshape or describe data.
//
//===----------------------------------------------------------------------===//

def Ingot_TransposeOp : Ingot_Op<"transpose"> {
  let summary = "permute the dimensions";
  let description = [{
    ONNX `Transpose`; an empty `perm` reverses the dimensions.

    ```mlir
    %t = ingot.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_ReshapeOp : Ingot_Op<"reshape"> {
  let summary = "reinterpret the elements with a shape read at run time";
  let description = [{
    ONNX `Reshape`: `shape` may contain 0 (copy the input dim unless
    `allowzero`) and one -1 (inferred).

    ```mlir
    %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_I64Tensor:$shape,
                   I64Attr:$allowzero);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input `,` $shape attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

class Ingot_AxesReshapeOp<string mnemonic, string onnx>
    : Ingot_Op<mnemonic> {
  let summary = "ONNX " # onnx # " with constant axes";
  let description = [{
    ONNX `}] # onnx # [{` with the axes known at compile time.

    ```mlir
    %r = ingot.}] # mnemonic # [{ %x {axes = array<i64: 0>} : tensor<1x?xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_SqueezeOp : Ingot_AxesReshapeOp<"squeeze", "Squeeze">;
def Ingot_UnsqueezeOp : Ingot_AxesReshapeOp<"unsqueeze", "Unsqueeze">;

def Ingot_ConcatOp : Ingot_Op<"concat"> {
  let summary = "join tensors along an axis";
  let description = [{
    ONNX `Concat`.

    ```mlir
    %r = ingot.concat %a, %b {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Variadic<Ingot_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_GatherOp : Ingot_Op<"gather"> {
  let summary = "take slices along an axis by index";
  let description = [{
    ONNX `Gather`; negative indices count from the end. The result has
    the table's element type, except from a quantised table (an
    `ingot.param` with `#ingot.quant`), whose rows may be read as f32.

    ```mlir
    %e = ingot.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$data, Ingot_IntTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_ShapeOp : Ingot_Op<"shape"> {
  let summary = "the input's dimensions [start, end) as an i64 vector";
  let description = [{
    ONNX `Shape` (opset 15 start/end; `end` = INT64_MAX means to the end).
    Folds to a constant when those dimensions are static.

    ```mlir
    %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x?x64xf32> -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs Ingot_I64Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_ConstantOfShapeOp : Ingot_Op<"constant_of_shape"> {
  let summary = "a tensor of the given run-time shape filled with one value";
  let description = [{
    ONNX `ConstantOfShape`; the element type is the result's.

    ```mlir
    %z = ingot.constant_of_shape %s {value = 1.0 : f64} : tensor<2xi64> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Ingot_I64Tensor:$shape, F64Attr:$value);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$shape attr-dict `:` type($shape) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_TriluOp : Ingot_Op<"trilu"> {
  let summary = "keep the upper or lower triangle of the last two dims";
  let description = [{
    ONNX `Trilu`; `k` (optional i64 scalar) shifts the diagonal.

    ```mlir
    %m = ingot.trilu %x {upper = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Optional<Ingot_I64Tensor>:$k,
                   I64Attr:$upper);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input (`,` $k^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}
