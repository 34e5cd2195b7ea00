// RUN: ingot-opt %s --split-input-file --verify-diagnostics | ingot-opt --split-input-file | FileCheck %s
// RUN: ingot-opt %s --split-input-file --verify-diagnostics --mlir-print-op-generic | ingot-opt --split-input-file | FileCheck %s

// Round trips of ingot.fused_elementwise (custom and generic form).

// CHECK-LABEL: func.func @gelu
// CHECK-SAME:    (%[[X:.+]]: tensor<?x64xf32>)
// CHECK:         ingot.fused_elementwise %[[X]] {args = array<i64: 0, -1, 0, 1, 2, -1, 1, -1, 3, 4, 0, 5, 2, -1, 6, 7>, constants = array<f64: 1.4142135381698608, 1.000000e+00, 5.000000e-01>, ops = "const div erf const add mul const mul"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
func.func @gelu(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = ingot.fused_elementwise %x {ops = "const div erf const add mul const mul", args = array<i64: 0, -1, 0, 1, 2, -1, 1, -1, 3, 4, 0, 5, 2, -1, 6, 7>, constants = array<f64: 1.4142135381698608, 1.0, 0.5>} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_inputs
// CHECK-SAME:    (%[[X:.+]]: tensor<?x1x64xf32>, %[[S:.+]]: tensor<4x1xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK:         ingot.fused_elementwise %[[X]], %[[S]], %[[B]] {args = array<i64: 0, 1, 3, 2, 4, 0>, constants = array<f64: 2.000000e-01>, ops = "mul add leaky_relu"} : (tensor<?x1x64xf32>, tensor<4x1xf32>, tensor<64xf32>) -> tensor<?x4x64xf32>
func.func @broadcast_inputs(%x: tensor<?x1x64xf32>, %s: tensor<4x1xf32>, %b: tensor<64xf32>) -> tensor<?x4x64xf32> {
  %0 = ingot.fused_elementwise %x, %s, %b {ops = "mul add leaky_relu", args = array<i64: 0, 1, 3, 2, 4, 0>, constants = array<f64: 0.2>} : (tensor<?x1x64xf32>, tensor<4x1xf32>, tensor<64xf32>) -> tensor<?x4x64xf32>
  return %0 : tensor<?x4x64xf32>
}

// -----

// CHECK-LABEL: func.func @variance
// CHECK:         ingot.fused_elementwise %{{.+}}, %{{.+}} {args = array<i64: 0, 1, 0, -1, 2, 3>, constants = array<f64: 2.000000e+00>, keepdims = 1 : i64, ops = "sub const pow", reduce = "mean"} : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
func.func @variance(%x: tensor<?x64xf32>, %m: tensor<?x1xf32>) -> tensor<?x1xf32> {
  %0 = ingot.fused_elementwise %x, %m {ops = "sub const pow", args = array<i64: 0, 1, 0, -1, 2, 3>, constants = array<f64: 2.0>, reduce = "mean", keepdims = 1 : i64} : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}
