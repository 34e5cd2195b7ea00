// RUN: ingot-opt %s --ingot-fold-conv-input-affine --split-input-file | FileCheck %s

// PP-LCNetV3's learnable affine, x * s + b with [1] constants, in front of
// an unpadded 1x1 conv with a bias: the conv reads x, its weight is W * s
// and its bias gains b times each output channel's weight sum.
// CHECK-LABEL: func.func @affine_into_pointwise
// CHECK-DAG: %[[W:.*]] = ingot.param "w"
// CHECK-DAG: %[[B:.*]] = ingot.param "b"
// CHECK-DAG: %[[SUM:.*]] = ingot.reduce %[[W]] {axes = array<i64: 1, 2, 3>, keepdims = 0 : i64, kind = "sum"} : (tensor<8x4x1x1xf32>) -> tensor<8xf32>
// CHECK-DAG: %[[MOVED:.*]] = ingot.mul %[[SUM]], %{{.*}} : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
// CHECK-DAG: %[[B2:.*]] = ingot.add %[[B]], %[[MOVED]] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-DAG: %[[W2:.*]] = ingot.mul %[[W]], %{{.*}} : (tensor<8x4x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<8x4x1x1xf32>
// CHECK: %[[Y:.*]] = ingot.conv %arg0, %[[W2]], %[[B2]]
// CHECK-NOT: tensor<1x4x6x6xf32>, tensor<1xf32>
// CHECK: return %[[Y]]
func.func @affine_into_pointwise(%x: tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %w = ingot.param "w" : tensor<8x4x1x1xf32>
  %b = ingot.param "b" : tensor<8xf32>
  %s = ingot.constant dense<1.25> : tensor<1xf32>
  %t = ingot.constant dense<0.5> : tensor<1xf32>
  %m = ingot.mul %s, %x : (tensor<1xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %a = ingot.add %m, %t : (tensor<1x4x6x6xf32>, tensor<1xf32>) -> tensor<1x4x6x6xf32>
  %y = ingot.conv %a, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}

// -----

// A shift alone before an unpadded 3x3 conv without a bias (auto_pad
// VALID): the moved shift becomes the bias; a scale alone scales W only.
// CHECK-LABEL: func.func @shift_or_scale_alone
// CHECK: %[[SUM:.*]] = ingot.reduce
// CHECK: %[[MOVED:.*]] = ingot.mul %[[SUM]]
// CHECK: %[[Y:.*]] = ingot.conv %arg0, %{{.*}}, %[[MOVED]] {auto_pad = "VALID"
// CHECK: %[[W2:.*]] = ingot.mul %{{.*}}, %{{.*}} : (tensor<2x3x3x3xf32>, tensor<1x1x1x1xf32>)
// CHECK: %[[Z:.*]] = ingot.conv %arg0, %[[W2]] {
// CHECK: return %[[Y]], %[[Z]]
func.func @shift_or_scale_alone(%x: tensor<1x3x6x6xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = ingot.param "w" : tensor<2x3x3x3xf32>
  %t = ingot.constant dense<-1.0> : tensor<f32>
  %a = ingot.add %x, %t : (tensor<1x3x6x6xf32>, tensor<f32>) -> tensor<1x3x6x6xf32>
  %y = ingot.conv %a, %w {auto_pad = "VALID", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
  %s = ingot.constant dense<2.0> : tensor<1xf32>
  %m = ingot.mul %x, %s : (tensor<1x3x6x6xf32>, tensor<1xf32>) -> tensor<1x3x6x6xf32>
  %z = ingot.conv %m, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
  return %y, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Must not fire: a padded conv (it pads x * s + b with zeros, not with b),
// auto_pad SAME_UPPER, a per-channel shift, a shift computed per run (an
// argument), and an affine whose result is also returned.
// CHECK-LABEL: func.func @must_not_fold
// CHECK-NOT: ingot.reduce
// CHECK-COUNT-5: ingot.conv %{{[0-9]+}}
// CHECK: return
func.func @must_not_fold(%x: tensor<1x3x6x6xf32>, %g: tensor<1xf32>) -> (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x3x6x6xf32>) {
  %w = ingot.param "w" : tensor<2x3x3x3xf32>
  %w1 = ingot.param "w1" : tensor<2x3x1x1xf32>
  %t = ingot.constant dense<0.5> : tensor<1xf32>
  %tc = ingot.constant dense<[[[0.5]], [[1.5]], [[2.5]]]> : tensor<3x1x1xf32>
  %a1 = ingot.add %x, %t : (tensor<1x3x6x6xf32>, tensor<1xf32>) -> tensor<1x3x6x6xf32>
  %y1 = ingot.conv %a1, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  %a2 = ingot.add %x, %t : (tensor<1x3x6x6xf32>, tensor<1xf32>) -> tensor<1x3x6x6xf32>
  %y2 = ingot.conv %a2, %w {auto_pad = "SAME_UPPER", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  %a3 = ingot.add %x, %tc : (tensor<1x3x6x6xf32>, tensor<3x1x1xf32>) -> tensor<1x3x6x6xf32>
  %y3 = ingot.conv %a3, %w1 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x6x6xf32>
  %a4 = ingot.add %x, %g : (tensor<1x3x6x6xf32>, tensor<1xf32>) -> tensor<1x3x6x6xf32>
  %y4 = ingot.conv %a4, %w1 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x6x6xf32>
  %a5 = ingot.add %x, %t : (tensor<1x3x6x6xf32>, tensor<1xf32>) -> tensor<1x3x6x6xf32>
  %y5 = ingot.conv %a5, %w1 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x6x6xf32>
  return %y1, %y2, %y3, %y4, %y5, %a5 : tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x3x6x6xf32>
}
