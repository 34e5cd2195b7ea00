// RUN: ingot-opt %s --ingot-fuse-conv-activation --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fuse-conv-activation=silu=false --split-input-file | FileCheck %s --check-prefix=NOSILU
// RUN: ingot-opt %s --ingot-fuse-conv-activation=relu=false --split-input-file | FileCheck %s --check-prefix=NORELU

// YOLO's Conv -> Sigmoid -> Mul (SiLU) and a ResNet-style Conv -> Relu
// become one conv each.
// CHECK-LABEL: func.func @silu_and_relu
// CHECK: %[[A:.*]] = ingot.conv %arg0, %{{.*}}, %{{.*}} {activation = "silu"
// CHECK: %[[B:.*]] = ingot.conv %[[A]], %{{.*}} {activation = "relu"
// CHECK-NOT: ingot.sigmoid
// CHECK-NOT: ingot.mul
// CHECK-NOT: ingot.relu
// CHECK: return %[[B]]
// silu=false: the relu still fuses, the sigmoid and mul stay.
// NOSILU-LABEL: func.func @silu_and_relu
// NOSILU: %[[C:.*]] = ingot.conv %arg0
// NOSILU-NOT: activation = "silu"
// NOSILU: ingot.sigmoid %[[C]]
// NOSILU: ingot.mul
// NOSILU: ingot.conv {{.*}}activation = "relu"
// relu=false: the silu still fuses, the relu stays.
// NORELU-LABEL: func.func @silu_and_relu
// NORELU: ingot.conv {{.*}}activation = "silu"
// NORELU: %[[D:.*]] = ingot.conv
// NORELU-NOT: activation = "relu"
// NORELU: ingot.relu %[[D]]
func.func @silu_and_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = ingot.param "c1.w" : tensor<4x3x3x3xf32>
  %b = ingot.param "c1.b" : tensor<4xf32>
  %w2 = ingot.param "c2.w" : tensor<4x4x1x1xf32>
  %c = ingot.conv %x, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %s = ingot.sigmoid %c : tensor<1x4x8x8xf32>
  %a = ingot.mul %c, %s : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c2 = ingot.conv %a, %w2 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = ingot.relu %c2 : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// -----

// Must not fire: the conv's result is read before the activation too (a
// residual branch), the sigmoid is of something else, the mul's other
// operand is not the sigmoid of the conv, or the conv already has one.
// CHECK-LABEL: func.func @not_fused
// CHECK: %[[C:.*]] = ingot.conv %arg0
// CHECK-NOT: activation
// CHECK: ingot.relu %[[C]]
// CHECK: ingot.add
// CHECK: %[[E:.*]] = ingot.conv
// CHECK: ingot.sigmoid %arg0
// CHECK: ingot.mul %[[E]]
// CHECK: %[[G:.*]] = ingot.conv {{.*}}activation = "relu"
// CHECK: ingot.relu %[[G]]
func.func @not_fused(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %w = ingot.param "w" : tensor<4x4x1x1xf32>
  %c = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = ingot.relu %c : tensor<1x4x8x8xf32>
  %sum = ingot.add %r, %c : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %e = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %s = ingot.sigmoid %x : tensor<1x4x8x8xf32>
  %m = ingot.mul %e, %s : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %g = ingot.conv %x, %w {activation = "relu", auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %gr = ingot.relu %g : tensor<1x4x8x8xf32>
  return %sum, %m, %gr : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}
