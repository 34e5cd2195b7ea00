// RUN: ingot-opt %s --ingot-raise-layer-norm --split-input-file | FileCheck %s

// A PyTorch opset-11 export's layer norm (pow form, gamma then beta) and
// the same with d · d, gamma on the left and no beta. x is also returned:
// it may have readers of its own.
// CHECK-LABEL: func.func @decomposed_layer_norm
// CHECK-DAG: %[[A:.*]] = ingot.layer_norm %arg0, %arg1, %arg2 {axis = -1 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-DAG: %[[B:.*]] = ingot.layer_norm %arg0, %arg1 {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: ingot.reduce_mean
// CHECK-NOT: ingot.sqrt
// CHECK-NOT: ingot.div
// CHECK: return %[[A]], %[[B]], %arg0
func.func @decomposed_layer_norm(%x: tensor<?x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) {
  %two = ingot.constant dense<2.0> : tensor<f32>
  %eps = ingot.constant dense<1.0e-12> : tensor<f32>
  %eps5 = ingot.constant dense<1.0e-5> : tensor<f32>
  %m = ingot.reduce_mean %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
  %d = ingot.sub %x, %m : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  %p = ingot.pow %d, %two : (tensor<?x8x64xf32>, tensor<f32>) -> tensor<?x8x64xf32>
  %v = ingot.reduce_mean %p {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
  %a = ingot.add %v, %eps : (tensor<?x8x1xf32>, tensor<f32>) -> tensor<?x8x1xf32>
  %s = ingot.sqrt %a : tensor<?x8x1xf32>
  %n = ingot.div %d, %s : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  %y0 = ingot.mul %n, %g : (tensor<?x8x64xf32>, tensor<64xf32>) -> tensor<?x8x64xf32>
  %y = ingot.add %y0, %b : (tensor<?x8x64xf32>, tensor<64xf32>) -> tensor<?x8x64xf32>
  // d · d, eps on the left of its add, gamma on the left, no beta.
  %m2 = ingot.reduce_mean %x {axes = array<i64: 2>, keepdims = 1 : i64} : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
  %d2 = ingot.sub %x, %m2 : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  %q2 = ingot.mul %d2, %d2 : (tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  %v2 = ingot.reduce_mean %q2 {axes = array<i64: 2>, keepdims = 1 : i64} : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
  %a2 = ingot.add %eps5, %v2 : (tensor<f32>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
  %s2 = ingot.sqrt %a2 : tensor<?x8x1xf32>
  %n2 = ingot.div %d2, %s2 : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  %z = ingot.mul %g, %n2 : (tensor<64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  return %y, %z, %x : tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>
}

// -----

// Must not fire: the means over another axis than the last; a difference
// that is also returned (the rewrite would have to keep it); a gamma that
// is not [C] (broadcasting over rows, which layer_norm's scale cannot);
// an unscaled norm (no gamma multiply); and a division of a difference
// whose subtrahend is no mean at all.
// CHECK-LABEL: func.func @not_a_last_axis_layer_norm
// CHECK-NOT: ingot.layer_norm
// CHECK: return
func.func @not_a_last_axis_layer_norm(%x: tensor<4x8x64xf32>, %g: tensor<64xf32>, %gr: tensor<4x1x64xf32>) -> (tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>) {
  %two = ingot.constant dense<2.0> : tensor<f32>
  %eps = ingot.constant dense<1.0e-12> : tensor<f32>
  // Over axis 1.
  %m = ingot.reduce_mean %x {axes = array<i64: 1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x1x64xf32>
  %d = ingot.sub %x, %m : (tensor<4x8x64xf32>, tensor<4x1x64xf32>) -> tensor<4x8x64xf32>
  %p = ingot.pow %d, %two : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32>
  %v = ingot.reduce_mean %p {axes = array<i64: 1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x1x64xf32>
  %a = ingot.add %v, %eps : (tensor<4x1x64xf32>, tensor<f32>) -> tensor<4x1x64xf32>
  %s = ingot.sqrt %a : tensor<4x1x64xf32>
  %n = ingot.div %d, %s : (tensor<4x8x64xf32>, tensor<4x1x64xf32>) -> tensor<4x8x64xf32>
  %y = ingot.mul %n, %g : (tensor<4x8x64xf32>, tensor<64xf32>) -> tensor<4x8x64xf32>
  // The last axis, but its difference is returned too.
  %m2 = ingot.reduce_mean %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x8x1xf32>
  %d2 = ingot.sub %x, %m2 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %p2 = ingot.pow %d2, %two : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32>
  %v2 = ingot.reduce_mean %p2 {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x8x1xf32>
  %a2 = ingot.add %v2, %eps : (tensor<4x8x1xf32>, tensor<f32>) -> tensor<4x8x1xf32>
  %s2 = ingot.sqrt %a2 : tensor<4x8x1xf32>
  %n2 = ingot.div %d2, %s2 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %y2 = ingot.mul %n2, %g : (tensor<4x8x64xf32>, tensor<64xf32>) -> tensor<4x8x64xf32>
  // A per-batch gamma [4, 1, 64].
  %m3 = ingot.reduce_mean %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x8x1xf32>
  %d3 = ingot.sub %x, %m3 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %p3 = ingot.pow %d3, %two : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32>
  %v3 = ingot.reduce_mean %p3 {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x8x1xf32>
  %a3 = ingot.add %v3, %eps : (tensor<4x8x1xf32>, tensor<f32>) -> tensor<4x8x1xf32>
  %s3 = ingot.sqrt %a3 : tensor<4x8x1xf32>
  %n3 = ingot.div %d3, %s3 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %y3 = ingot.mul %n3, %gr : (tensor<4x8x64xf32>, tensor<4x1x64xf32>) -> tensor<4x8x64xf32>
  // No gamma: the division is the result.
  %m4 = ingot.reduce_mean %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x8x1xf32>
  %d4 = ingot.sub %x, %m4 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %p4 = ingot.pow %d4, %two : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32>
  %v4 = ingot.reduce_mean %p4 {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<4x8x64xf32> -> tensor<4x8x1xf32>
  %a4 = ingot.add %v4, %eps : (tensor<4x8x1xf32>, tensor<f32>) -> tensor<4x8x1xf32>
  %s4 = ingot.sqrt %a4 : tensor<4x8x1xf32>
  %n4 = ingot.div %d4, %s4 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  // x - g, not x - mean(x).
  %d5 = ingot.sub %x, %g : (tensor<4x8x64xf32>, tensor<64xf32>) -> tensor<4x8x64xf32>
  %n5 = ingot.div %d5, %s4 : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %y5 = ingot.mul %n5, %g : (tensor<4x8x64xf32>, tensor<64xf32>) -> tensor<4x8x64xf32>
  return %y, %y2, %d2, %y3, %n4, %y5 : tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>
}
