// RUN: ingot-opt %s --split-input-file | ingot-opt --split-input-file | FileCheck %s
// RUN: ingot-opt %s --split-input-file --mlir-print-op-generic | ingot-opt --split-input-file | FileCheck %s

// Round trip (custom and generic form) of every plan op: buffers
// (arguments, weights, constants, arena slices) and the kernel steps over
// them.

// CHECK-LABEL: func.func @sources
// CHECK:         %[[W:.+]] = plan.param "layers.0.q_proj.weight" : memref<64x64xf32>
// CHECK:         %[[S:.+]] = plan.constant dense<[1, 8, 64]> : tensor<3xi64> -> memref<3xi64>
// CHECK:         %[[F:.+]] = plan.constant dense<-1.000000e+00> : tensor<f32> -> memref<f32>
// CHECK:         return %[[W]], %[[S]], %[[F]]
func.func @sources() -> (memref<64x64xf32>, memref<3xi64>, memref<f32>) {
  %w = plan.param "layers.0.q_proj.weight" : memref<64x64xf32>
  %s = plan.constant dense<[1, 8, 64]> : tensor<3xi64> -> memref<3xi64>
  %f = plan.constant dense<-1.0> : tensor<f32> -> memref<f32>
  return %w, %s, %f : memref<64x64xf32>, memref<3xi64>, memref<f32>
}

// -----

// Before memory planning an alloc has only its bound; after, an offset too.
// CHECK-LABEL: func.func @alloc
// CHECK:         %[[A:.+]] = plan.alloc {max_shape = array<i64: 4, 128, 64>} : memref<?x?x64xf32>
// CHECK:         %[[B:.+]] = plan.alloc {max_shape = array<i64: 4, 128, 64>, offset = 131072 : i64} : memref<?x?x64xf32>
// CHECK:         %[[C:.+]] = plan.alloc {max_shape = array<i64: 2, 3>, offset = 0 : i64} : memref<2x3xi1>
// CHECK:         return %[[A]], %[[B]], %[[C]]
func.func @alloc() -> (memref<?x?x64xf32>, memref<?x?x64xf32>, memref<2x3xi1>) {
  %a = plan.alloc {max_shape = array<i64: 4, 128, 64>} : memref<?x?x64xf32>
  %b = plan.alloc {max_shape = array<i64: 4, 128, 64>, offset = 131072 : i64} : memref<?x?x64xf32>
  %c = plan.alloc {max_shape = array<i64: 2, 3>, offset = 0 : i64} : memref<2x3xi1>
  return %a, %b, %c : memref<?x?x64xf32>, memref<?x?x64xf32>, memref<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @kernels
// CHECK-SAME:    (%[[X:.+]]: memref<?x64xf32> {plan.dims = ["seq", ""], plan.name = "x"})
// CHECK:         %[[NONE:.+]] = plan.none
// CHECK:         %[[W:.+]] = plan.param "fc.weight" : memref<32x64xf32>
// CHECK:         %[[T:.+]] = plan.alloc {max_shape = array<i64: 128, 32>} : memref<?x32xf32>
// CHECK:         plan.kernel "gemm" ins(%[[X]], %[[W]], %[[NONE]] : memref<?x64xf32>, memref<32x64xf32>, none) outs(%[[T]] : memref<?x32xf32>) {args = {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transA = 0 : i64, transB = 1 : i64}, origin = "fc1"}
// CHECK:         %[[R:.+]] = plan.alloc {max_shape = array<i64: 128, 32>} : memref<?x32xf32>
// CHECK:         plan.kernel "relu" ins(%[[T]] : memref<?x32xf32>) outs(%[[R]] : memref<?x32xf32>) {args = {}, origin = "relu1"}
// CHECK:         return %[[R]]
func.func @kernels(%x: memref<?x64xf32> {plan.dims = ["seq", ""], plan.name = "x"}) -> memref<?x32xf32> {
  %none = plan.none
  %w = plan.param "fc.weight" : memref<32x64xf32>
  %t = plan.alloc {max_shape = array<i64: 128, 32>} : memref<?x32xf32>
  plan.kernel "gemm" ins(%x, %w, %none : memref<?x64xf32>, memref<32x64xf32>, none) outs(%t : memref<?x32xf32>)
      {args = {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64}, origin = "fc1"}
  %r = plan.alloc {max_shape = array<i64: 128, 32>} : memref<?x32xf32>
  plan.kernel "relu" ins(%t : memref<?x32xf32>) outs(%r : memref<?x32xf32>) {args = {}, origin = "relu1"}
  return %r : memref<?x32xf32>
}

// -----

// A kernel with no inputs prints without `ins`: `outs` follows the name.
// CHECK-LABEL: func.func @kernel_without_ins
// CHECK:         %[[Z:.+]] = plan.alloc {max_shape = array<i64: 2, 3>} : memref<2x3xf32>
// CHECK:         plan.kernel "constant_of_shape" outs(%[[Z]] : memref<2x3xf32>) {args = {value = 0.000000e+00 : f64}, origin = "zeros"}
// CHECK:         return %[[Z]]
func.func @kernel_without_ins() -> memref<2x3xf32> {
  %z = plan.alloc {max_shape = array<i64: 2, 3>} : memref<2x3xf32>
  plan.kernel "constant_of_shape" outs(%z : memref<2x3xf32>) {args = {value = 0.0 : f64}, origin = "zeros"}
  return %z : memref<2x3xf32>
}
