// RUN: ingot-opt %s --ingot-fuse-conv-activation --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fuse-conv-activation=residual=false --split-input-file | FileCheck %s --check-prefix=NORES

// YOLOv8's bottleneck: x + silu(conv(x)), the add's operands either way
// round. The SiLU fuses first, then the add becomes the conv's residual.
// CHECK-LABEL: func.func @bottleneck
// CHECK: %[[A:.*]] = ingot.conv %arg0, %{{.*}}, %{{.*}} residual %arg0 {activation = "silu"
// CHECK: %[[B:.*]] = ingot.conv %[[A]], %{{.*}} residual %[[A]] {
// CHECK-NOT: ingot.add
// CHECK: return %[[B]]
// residual=false: the activation still fuses, the adds stay.
// NORES-LABEL: func.func @bottleneck
// NORES: %[[C:.*]] = ingot.conv %arg0, %{{.*}}, %{{.*}} {activation = "silu"
// NORES: ingot.add %arg0, %[[C]]
// NORES: ingot.add
func.func @bottleneck(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = ingot.param "c1.w" : tensor<4x4x3x3xf32>
  %b = ingot.param "c1.b" : tensor<4xf32>
  %w2 = ingot.param "c2.w" : tensor<4x4x1x1xf32>
  %c = ingot.conv %x, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %s = ingot.sigmoid %c : tensor<1x4x8x8xf32>
  %a = ingot.mul %c, %s : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = ingot.add %x, %a : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c2 = ingot.conv %y, %w2 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %z = ingot.add %c2, %y : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %z : tensor<1x4x8x8xf32>
}

// -----

// ResNet's relu(conv(x) + x): the add fuses, the relu after it stays an op
// (the conv applies its activation before the residual).
// CHECK-LABEL: func.func @relu_after_add
// CHECK: %[[R:.*]] = ingot.conv %arg0, %{{.*}}, %{{.*}} residual %arg0 {
// CHECK-NOT: activation
// CHECK: ingot.relu %[[R]]
func.func @relu_after_add(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = ingot.param "c1.w" : tensor<4x4x3x3xf32>
  %b = ingot.param "c1.b" : tensor<4xf32>
  %c = ingot.conv %x, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %y = ingot.add %c, %x : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = ingot.relu %y : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// -----

// Must not fire: the conv is read by something else too, the add
// broadcasts a bias-like tensor, or adds the conv to itself.
// CHECK-LABEL: func.func @not_residual
// CHECK-NOT: residual
// CHECK: ingot.add
// CHECK: ingot.add
// CHECK: ingot.add
func.func @not_residual(%x: tensor<1x4x8x8xf32>, %v: tensor<1x4x1x1xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %w = ingot.param "c1.w" : tensor<4x4x3x3xf32>
  %c = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %y = ingot.add %c, %x : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c2 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %y2 = ingot.add %c2, %v : (tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %c3 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %y3 = ingot.add %c3, %c3 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %y, %c, %y2, %y3 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}
