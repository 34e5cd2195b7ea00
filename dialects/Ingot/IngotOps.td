//===- IngotOps.td - The ingot graph dialect ---------------*- tablegen -*-===//
//
// Tensor-level ops with ONNX semantics (opset 13+) and numpy broadcasting.
// Dimensions may be dynamic (`?`); their names live on the function
// arguments (`ingot.dims`). Weights are `ingot.param` references into the
// compile session's weight source, never dense attributes. Each compute op
// lowers one-to-one to a `plan.kernel` of the same name (docs/kernels.md).
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_OPS
#define INGOT_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Ingot_Dialect : Dialect {
  let name = "ingot";
  let summary = "Graph-level tensor ops for models compiled by ingot";
  let description = [{
    Ops on ranked tensors whose dimensions may be symbolic. Weights are
    referenced by name (`ingot.param`), so the IR of a 7B model stays small
    and passes never copy weight bytes.
  }];
  let cppNamespace = "::ingot::graph";
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
}

def Ingot_QuantAttr : AttrDef<Ingot_Dialect, "Quant"> {
  let mnemonic = "quant";
  let summary = "the block format a weight is stored in";
  let description = [{
    A quantised weight: its [N, K] values are stored row by row in blocks
    of `group` values along K (the last block of a row is shorter when K
    is not a multiple), each block holding an f16 scale `d` and the values:
    `q8` int8 (d·q), `q4` int4 (d·(q − 8)), `q4m` int4 with an f16 minimum
    m (d·q + m), `f8e4m3` fp8 e4m3 (d·v). With group 32, q8/q4/q4m blocks
    are llama.cpp's Q8_0/Q4_0/Q4_1 byte for byte
    (format/include/ingot/Quant.h has the exact layout).

    ```mlir
    %w = ingot.param "proj.weight@q4g32" {quant = #ingot.quant<"q4", group = 32>} : tensor<64x576xf32>
    ```
    The param's type stays the logical (dequantised) tensor type, so every
    shape rule holds unchanged; only the artifact stores the blocks.
  }];
  let parameters = (ins StringRefParameter<"q8, q4, q4m or f8e4m3">:$format,
                        "int64_t":$group);
  let assemblyFormat = "`<` $format `,` `group` `=` $group `>`";
  let genVerifyDecl = 1;
}

class Ingot_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ingot_Dialect, mnemonic, !listconcat(traits, [Pure])>;

// ONNX's float8/float4 and 4-/2-bit integer types travel through data
// movement and cast only (the importer refuses them elsewhere).
def Ingot_Tensor : RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I16, I8,
                                     UI64, UI32, UI16, UI8, I1, F8E4M3FN,
                                     F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1FN,
                                     I<4>, UI<4>, I<2>, UI<2>]>;
def Ingot_IntTensor : RankedTensorOf<[I64, I32]>;
def Ingot_I64Tensor : RankedTensorOf<[I64]>;
def Ingot_BoolTensor : RankedTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Sources of values
//===----------------------------------------------------------------------===//

def Ingot_ParamOp : Ingot_Op<"param"> {
  let summary = "a weight tensor read from the model's weight source";
  let description = [{
    Names a tensor in the weight source (an ONNX initializer, an external
    data file, a safetensors entry). The bytes stay in the source until the
    artifact writer streams them. Passes that change weights record how
    instead of doing it: `parts` concatenates several source tensors along
    `concat_axis` (merged projections) and a `layout` other than
    "row-major" is a packed layout the artifact writer produces (see
    docs/artifact-format.md).

    ```mlir
    %w = ingot.param "layers.0.q_proj.weight" : tensor<64x64xf32>
    %qk = ingot.param "q+k" {parts = ["q.weight", "k.weight"]} : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<StrArrayAttr>:$parts,
                   DefaultValuedAttr<I64Attr, "0">:$concat_axis,
                   DefaultValuedAttr<StrAttr, "\"row-major\"">:$layout,
                   OptionalAttr<Ingot_QuantAttr>:$quant);
  let results = (outs Ingot_Tensor:$result);
  let builders = [
    OpBuilder<(ins "mlir::Type":$type, "mlir::StringAttr":$name), [{
      build($_builder, $_state, type, name, /*parts=*/nullptr,
            $_builder.getI64IntegerAttr(0),
            $_builder.getStringAttr("row-major"), /*quant=*/nullptr);
    }]>
  ];
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Ingot_ConstantOp : Ingot_Op<"constant",
    [ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "a small constant (shape vectors, scalars)";
  let description = [{
    Holds a small dense value inline, such as a Reshape target or an axis.
    Anything larger than 4096 elements must be an `ingot.param`.

    ```mlir
    %shape = ingot.constant dense<[2, 8, 64]> : tensor<3xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Ingot_BinaryOp<string mnemonic, string onnx, list<Trait> traits = []>
    : Ingot_Op<mnemonic, traits> {
  let summary = "elementwise " # onnx # " with numpy broadcasting";
  let description = [{
    ONNX `}] # onnx # [{`: the operands broadcast against each other.

    ```mlir
    %r = ingot.}] # mnemonic # [{ %a, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$lhs, Ingot_Tensor:$rhs);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_AddOp : Ingot_BinaryOp<"add", "Add"> { let hasFolder = 1; }
def Ingot_SubOp : Ingot_BinaryOp<"sub", "Sub"> { let hasFolder = 1; }
def Ingot_MulOp : Ingot_BinaryOp<"mul", "Mul"> { let hasFolder = 1; }
def Ingot_DivOp : Ingot_BinaryOp<"div", "Div"> { let hasFolder = 1; }
def Ingot_PowOp : Ingot_BinaryOp<"pow", "Pow">;

class Ingot_UnaryOp<string mnemonic, string onnx>
    : Ingot_Op<mnemonic, [SameOperandsAndResultType]> {
  let summary = "elementwise " # onnx;
  let description = [{
    ONNX `}] # onnx # [{` applied to every element.

    ```mlir
    %r = ingot.}] # mnemonic # [{ %x : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Ingot_SqrtOp : Ingot_UnaryOp<"sqrt", "Sqrt">;
def Ingot_NegOp : Ingot_UnaryOp<"neg", "Neg">;
def Ingot_ExpOp : Ingot_UnaryOp<"exp", "Exp">;
def Ingot_ErfOp : Ingot_UnaryOp<"erf", "Erf">;
def Ingot_TanhOp : Ingot_UnaryOp<"tanh", "Tanh">;
def Ingot_SigmoidOp : Ingot_UnaryOp<"sigmoid", "Sigmoid">;
def Ingot_ReluOp : Ingot_UnaryOp<"relu", "Relu">;

def Ingot_WhereOp : Ingot_Op<"where"> {
  let summary = "select between two tensors by a boolean condition";
  let description = [{
    ONNX `Where`: three-way broadcasting of condition, x and y.

    ```mlir
    %r = ingot.where %c, %x, %y : (tensor<?x?xi1>, tensor<f32>, tensor<1x?x?xf32>) -> tensor<1x?x?xf32>
    ```
  }];
  let arguments = (ins Ingot_BoolTensor:$condition, Ingot_Tensor:$x,
                   Ingot_Tensor:$y);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$condition `,` $x `,` $y attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ingot_CastOp : Ingot_Op<"cast"> {
  let summary = "convert every element to the result's element type";
  let description = [{
    ONNX `Cast`. Float to integer truncates toward zero; to bool is `!= 0`.
    To float8 and float4 rounds to nearest even; `saturate` (absent: 1)
    says whether a value past the largest finite one becomes it (1) or
    infinity / NaN (0), as ONNX's attribute of that name.

    ```mlir
    %r = ingot.cast %x : tensor<?x4xf32> -> tensor<?x4xi64>
    %s = ingot.cast %x {saturate = 0 : i64} : tensor<4xf32> -> tensor<4xf8E5M2>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, OptionalAttr<I64Attr>:$saturate);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Contractions and normalisation
//===----------------------------------------------------------------------===//

def Ingot_MatMulOp : Ingot_Op<"matmul"> {
  let summary = "numpy matrix product";
  let description = [{
    ONNX `MatMul`: batched, with 1-D promotion and batch broadcasting.

    ```mlir
    %r = ingot.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$lhs, Ingot_Tensor:$rhs);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_MatMulIntegerOp
    : Ingot_Op<"matmul_integer", [AttrSizedOperandSegments]> {
  let summary = "exact int32 product of uint8/int8 matrices minus zero points";
  let description = [{
    ONNX `MatMulInteger`: (lhs - lhs_zero_point) x (rhs - rhs_zero_point)
    in int32. lhs is [..., M, K] and rhs a 2-D [K, N] weight, each ui8 or
    i8; lhs_zero_point is one value of lhs's type, rhs_zero_point one value
    or one per column [N] of rhs's type. Absent zero points are 0.

    With `scale` (f32, one value or [N]) the result is f32: each int32
    product converted, times its column's scale, plus `bias` ([N], when
    given), then `activation` ("gelu", "gelu_tanh", "relu" or "silu", as
    linear's) - onnxruntime's MatMulIntegerToFloat, fused by
    ingot-fuse-matmul-integer-epilogue from the cast, mul and add an
    int8 export writes after every MatMulInteger.

    ```mlir
    %y = ingot.matmul_integer %a, %w lhs_zp %azp rhs_zp %wzp : (tensor<?x64xui8>, tensor<64x32xi8>, tensor<ui8>, tensor<32xi8>) -> tensor<?x32xi32>
    %f = ingot.matmul_integer %a, %w lhs_zp %azp scale %s bias %b {activation = "gelu"} : (tensor<?x64xui8>, tensor<64x32xi8>, tensor<ui8>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$lhs, Ingot_Tensor:$rhs,
                   Optional<Ingot_Tensor>:$lhs_zero_point,
                   Optional<Ingot_Tensor>:$rhs_zero_point,
                   Optional<Ingot_Tensor>:$scale,
                   Optional<Ingot_Tensor>:$bias,
                   OptionalAttr<StrAttr>:$activation);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs (`lhs_zp` $lhs_zero_point^)? "
                       "(`rhs_zp` $rhs_zero_point^)? (`scale` $scale^)? "
                       "(`bias` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_DynamicQuantizeLinearOp : Ingot_Op<"dynamic_quantize_linear"> {
  let summary = "uint8 quantisation with a scale and zero point from the range";
  let description = [{
    ONNX `DynamicQuantizeLinear`, the activation quantiser in front of
    MatMulInteger: with lo = min(x, 0) and hi = max(x, 0) over the whole
    tensor, scale = (hi - lo) / 255 (1 when hi = lo), zero_point =
    saturate(round(-lo / scale)) and y = saturate(round(x / scale) +
    zero_point), rounding half to even. One kernel rather than the dozen
    reductions and elementwise ops it otherwise takes.

    ```mlir
    %y, %scale, %zp = ingot.dynamic_quantize_linear %x : (tensor<?x384xf32>) -> (tensor<?x384xui8>, tensor<f32>, tensor<ui8>)
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input);
  let results = (outs Ingot_Tensor:$result, Ingot_Tensor:$scale,
                      Ingot_Tensor:$zero_point);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_ConvIntegerOp
    : Ingot_Op<"conv_integer", [AttrSizedOperandSegments]> {
  let summary = "exact int32 convolution of uint8/int8 tensors minus zero points";
  let description = [{
    ONNX `ConvInteger`: ingot.conv's window (NC[D]HW, grouped, same
    attributes) over (input - input_zero_point) and (weight -
    weight_zero_point) in int32. The padding holds the input's zero point,
    so it contributes 0. input_zero_point is one value of the input's type;
    weight_zero_point one value or one per output channel [M].

    ```mlir
    %y = ingot.conv_integer %x, %w x_zp %xzp {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<ui8>) -> tensor<1x4x8x8xi32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_Tensor:$weight,
                   Optional<Ingot_Tensor>:$input_zero_point,
                   Optional<Ingot_Tensor>:$weight_zero_point,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group,
                   StrAttr:$auto_pad,
                   OptionalAttr<DenseI64ArrayAttr>:$kernel_shape);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input `,` $weight (`x_zp` $input_zero_point^)? "
                       "(`w_zp` $weight_zero_point^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_GemmOp : Ingot_Op<"gemm"> {
  let summary = "alpha * op(A) * op(B) + beta * C on 2-D tensors";
  let description = [{
    ONNX `Gemm`. `c` is optional and broadcasts to the (M, N) result.

    ```mlir
    %r = ingot.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64}
        : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$a, Ingot_Tensor:$b,
                   Optional<Ingot_Tensor>:$c, F32Attr:$alpha, F32Attr:$beta,
                   I64Attr:$transA, I64Attr:$transB);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_SoftmaxOp : Ingot_Op<"softmax", [SameOperandsAndResultType]> {
  let summary = "softmax along one axis";
  let description = [{
    ONNX `Softmax` (opset 13 semantics): normalises along `axis`.

    ```mlir
    %p = ingot.softmax %s {axis = -1 : i64} : tensor<?x4x?x?xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, I64Attr:$axis);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Ingot_LayerNormOp : Ingot_Op<"layer_norm"> {
  let summary = "layer normalisation over the trailing dims from `axis`";
  let description = [{
    ONNX `LayerNormalization` (output Y only): normalise over dims
    [axis, rank), then scale and optionally shift.

    ```mlir
    %y = ingot.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32}
        : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_Tensor:$scale,
                   Optional<Ingot_Tensor>:$bias, I64Attr:$axis,
                   F32Attr:$epsilon);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_ReduceMeanOp : Ingot_Op<"reduce_mean"> {
  let summary = "mean over the given axes (all when empty)";
  let description = [{
    ONNX `ReduceMean` with constant axes.

    ```mlir
    %m = ingot.reduce_mean %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x64xf32> -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, DenseI64ArrayAttr:$axes,
                   I64Attr:$keepdims);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

include "dialects/Ingot/IngotShapeOps.td"
include "dialects/Ingot/IngotLlmOps.td"
include "dialects/Ingot/IngotMathOps.td"
include "dialects/Ingot/IngotTensorOps.td"
include "dialects/Ingot/IngotIndexOps.td"
include "dialects/Ingot/IngotFusedOps.td"
include "dialects/Ingot/IngotControlOps.td"

#endif // INGOT_OPS
