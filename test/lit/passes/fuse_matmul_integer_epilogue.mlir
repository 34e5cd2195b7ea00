// RUN: ingot-opt %s --ingot-fuse-matmul-integer-epilogue --split-input-file | FileCheck %s

// quantize_dynamic's dequantisation after MatMulInteger: cast, a per-column
// scale, the bias on the left of its add and a GELU; a one-value scale
// with no bias and a ReLU; and a scale alone.
// CHECK-LABEL: func.func @dequantizing_chains
// CHECK: %[[G:.*]] = ingot.matmul_integer %arg0, %arg1 lhs_zp %arg2 scale %arg3 bias %arg4 {activation = "gelu"} : (tensor<?x16xui8>, tensor<16x8xi8>, tensor<ui8>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK: %[[R:.*]] = ingot.matmul_integer %arg0, %arg1 scale %arg5 {activation = "relu"} : (tensor<?x16xui8>, tensor<16x8xi8>, tensor<f32>) -> tensor<?x8xf32>
// CHECK: %[[S:.*]] = ingot.matmul_integer %arg0, %arg1 scale %arg3 : (tensor<?x16xui8>, tensor<16x8xi8>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NOT: ingot.cast
// CHECK: return %[[G]], %[[R]], %[[S]]
func.func @dequantizing_chains(%a: tensor<?x16xui8>, %w: tensor<16x8xi8>, %azp: tensor<ui8>, %s: tensor<8xf32>, %b: tensor<8xf32>, %s1: tensor<f32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %p = ingot.matmul_integer %a, %w lhs_zp %azp : (tensor<?x16xui8>, tensor<16x8xi8>, tensor<ui8>) -> tensor<?x8xi32>
  %c = ingot.cast %p : tensor<?x8xi32> -> tensor<?x8xf32>
  %m = ingot.mul %c, %s : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %y = ingot.add %b, %m : (tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %g = ingot.gelu %y {approximate = "none"} : tensor<?x8xf32>
  %p2 = ingot.matmul_integer %a, %w : (tensor<?x16xui8>, tensor<16x8xi8>) -> tensor<?x8xi32>
  %c2 = ingot.cast %p2 : tensor<?x8xi32> -> tensor<?x8xf32>
  %m2 = ingot.mul %s1, %c2 : (tensor<f32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %r2 = ingot.relu %m2 : tensor<?x8xf32>
  %p3 = ingot.matmul_integer %a, %w : (tensor<?x16xui8>, tensor<16x8xi8>) -> tensor<?x8xi32>
  %c3 = ingot.cast %p3 : tensor<?x8xi32> -> tensor<?x8xf32>
  %m3 = ingot.mul %c3, %s : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %g, %r2, %m3 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Must not fire: the int32 product read twice; a scale per row, which
// broadcasts along the other axis; a cast to f16; a product returned
// before its multiply (the cast is then not its only reader).
// CHECK-LABEL: func.func @not_a_dequantizing_chain
// CHECK-NOT: scale
// CHECK: return
func.func @not_a_dequantizing_chain(%a: tensor<4x16xui8>, %w: tensor<16x8xi8>, %s: tensor<8xf32>, %rows: tensor<4x1xf32>, %h: tensor<8xf16>) -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %p = ingot.matmul_integer %a, %w : (tensor<4x16xui8>, tensor<16x8xi8>) -> tensor<4x8xi32>
  %c = ingot.cast %p : tensor<4x8xi32> -> tensor<4x8xf32>
  %m = ingot.mul %c, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %p2 = ingot.matmul_integer %a, %w : (tensor<4x16xui8>, tensor<16x8xi8>) -> tensor<4x8xi32>
  %c2 = ingot.cast %p2 : tensor<4x8xi32> -> tensor<4x8xf32>
  %m2 = ingot.mul %c2, %rows : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %p3 = ingot.matmul_integer %a, %w : (tensor<4x16xui8>, tensor<16x8xi8>) -> tensor<4x8xi32>
  %c3 = ingot.cast %p3 : tensor<4x8xi32> -> tensor<4x8xf16>
  %m3 = ingot.mul %c3, %h : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %p4 = ingot.matmul_integer %a, %w : (tensor<4x16xui8>, tensor<16x8xi8>) -> tensor<4x8xi32>
  %c4 = ingot.cast %p4 : tensor<4x8xi32> -> tensor<4x8xf32>
  %m4 = ingot.mul %c4, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %m, %p, %m2, %m3, %m4, %c4 : tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf32>
}
