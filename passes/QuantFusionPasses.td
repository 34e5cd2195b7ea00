//===- QuantFusionPasses.td - fusions of 8-bit exports -----*- tablegen -*-===//
//
// The fusion phase's passes for graphs onnxruntime's quantisers wrote,
// apart from FusionPasses.td for size; Passes.td includes it.
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_QUANT_FUSION_PASSES
#define INGOT_QUANT_FUSION_PASSES

include "mlir/Pass/PassBase.td"

def FuseMatMulIntegerEpilogue
    : Pass<"ingot-fuse-matmul-integer-epilogue", "mlir::func::FuncOp"> {
  let summary = "Fold the dequantising cast, scale, bias and activation into matmul_integer";
  let description = [{
    onnxruntime's quantize_dynamic follows every MatMulInteger with a cast
    to f32, a multiply by the activation's scale times the weight's
    (one value or one per column) and the layer's bias add; a GELU or ReLU
    may follow. When each op is the only reader of the one before, the
    scale is f32 with one value or [N], the bias f32 [N] (N the weight's
    columns) and nothing broadcasts the product to another shape, the
    chain becomes one `ingot.matmul_integer` with `scale`, `bias` and
    `activation` and an f32 result: its kernel converts the int32 tiles
    in registers instead of writing them and reading them back. The
    multiply and add stay two roundings, so the result is the chain's,
    bit for bit.

    Before:
    ```mlir
    %p = ingot.matmul_integer %a, %w lhs_zp %azp : (tensor<?x64xui8>, tensor<64x32xi8>, tensor<ui8>) -> tensor<?x32xi32>
    %c = ingot.cast %p : tensor<?x32xi32> -> tensor<?x32xf32>
    %m = ingot.mul %c, %s : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
    %y = ingot.add %b, %m : (tensor<32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
    %g = ingot.gelu %y {approximate = "none"} : tensor<?x32xf32>
    ```
    After:
    ```mlir
    %g = ingot.matmul_integer %a, %w lhs_zp %azp scale %s bias %b {activation = "gelu"} : (tensor<?x64xui8>, tensor<64x32xi8>, tensor<ui8>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
    ```
  }];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

#endif // INGOT_QUANT_FUSION_PASSES
