// RUN: ingot-opt %s --ingot-fold-conv-batch-norm --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fold-conv-batch-norm=bias=false --split-input-file | FileCheck %s --check-prefix=NOBIAS

// BatchNormalization as the importer writes it (sub mean, mul factor, add
// B, each [M, 1, 1]) after a conv without bias: one conv whose weight is
// W times the factor per row and whose bias is (0 - mean) * factor + B.
// CHECK-LABEL: func.func @batch_norm
// CHECK-DAG: %[[W:.*]] = ingot.param "w"
// CHECK-DAG: %[[F:.*]] = ingot.param "f"
// CHECK-DAG: %[[NEG:.*]] = ingot.neg
// CHECK-DAG: %[[W2:.*]] = ingot.mul %[[W]], %{{.*}} : (tensor<8x3x3x3xf32>, tensor<8x1x1x1xf32>) -> tensor<8x3x3x3xf32>
// CHECK-DAG: %[[B2:.*]] = ingot.mul %[[NEG]], %{{.*}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-DAG: %[[B3:.*]] = ingot.add %[[B2]], %{{.*}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK: %[[Y:.*]] = ingot.conv %arg0, %[[W2]], %[[B3]]
// CHECK-NOT: ingot.sub
// CHECK: return %[[Y]]
// bias=false: the sub and mul fold, the add of B stays after the conv.
// NOBIAS-LABEL: func.func @batch_norm
// NOBIAS: %[[Y:.*]] = ingot.conv
// NOBIAS: %[[A:.*]] = ingot.add %[[Y]]
// NOBIAS: return %[[A]]
func.func @batch_norm(%x: tensor<1x3x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = ingot.param "w" : tensor<8x3x3x3xf32>
  %mean = ingot.param "mean" : tensor<8x1x1xf32>
  %f = ingot.param "f" : tensor<8x1x1xf32>
  %b = ingot.param "b" : tensor<8x1x1xf32>
  %y = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32>
  %s = ingot.sub %y, %mean : (tensor<1x8x16x16xf32>, tensor<8x1x1xf32>) -> tensor<1x8x16x16xf32>
  %m = ingot.mul %s, %f : (tensor<1x8x16x16xf32>, tensor<8x1x1xf32>) -> tensor<1x8x16x16xf32>
  %a = ingot.add %m, %b : (tensor<1x8x16x16xf32>, tensor<8x1x1xf32>) -> tensor<1x8x16x16xf32>
  return %a : tensor<1x8x16x16xf32>
}

// -----

// A factor on the left, a conv with a bias, a rank-4 [1, M, 1, 1] operand
// and a grouped conv: the bias is scaled with the weight.
// CHECK-LABEL: func.func @left_factor_with_bias
// CHECK: %[[B2:.*]] = ingot.mul %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: ingot.conv %arg0, %{{.*}}, %[[B2]] {{.*}}group = 2
// CHECK-NOT: ingot.mul {{.*}}tensor<1x4x5x5xf32>
func.func @left_factor_with_bias(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = ingot.param "w" : tensor<4x2x1x1xf32>
  %b = ingot.param "b" : tensor<4xf32>
  %f = ingot.param "f" : tensor<1x4x1x1xf32>
  %y = ingot.conv %x, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %m = ingot.mul %f, %y : (tensor<1x4x1x1xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  return %m : tensor<1x4x5x5xf32>
}

// -----

// One-element scale and shift (PaddleOCR's learnable affine, [1]): the
// scale reaches every row of the weight; a mul of a conv without bias
// leaves it without one, and the shift then becomes it (1 * c, per
// channel).
// CHECK-LABEL: func.func @scalar_affine
// CHECK-DAG: %[[S:.*]] = ingot.constant dense<1.500000e+00> : tensor<1xf32>
// CHECK-DAG: %[[ONES:.*]] = ingot.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[SV:.*]] = ingot.mul %[[ONES]], %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[W2:.*]] = ingot.mul %{{.*}}, %{{.*}} : (tensor<4x3x1x1xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x1x1xf32>
// CHECK-DAG: %[[TV:.*]] = ingot.mul %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
// CHECK: %[[Y:.*]] = ingot.conv %arg0, %[[W2]], %[[TV]]
// CHECK-NOT: tensor<1x4x4x4xf32>, tensor<1xf32>
// CHECK: return %[[Y]]
func.func @scalar_affine(%x: tensor<1x3x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = ingot.param "w" : tensor<4x3x1x1xf32>
  %s = ingot.constant dense<1.5> : tensor<1xf32>
  %t = ingot.constant dense<-0.25> : tensor<1xf32>
  %c = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %m = ingot.mul %s, %c : (tensor<1xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %a = ingot.add %m, %t : (tensor<1x4x4x4xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>
  return %a : tensor<1x4x4x4xf32>
}

// -----

// Must not fire: a per-run operand (a function argument), an operand
// varying along a spatial axis, a conv read twice, a conv with an
// activation already, and mean - conv (sub with the conv on the right).
// CHECK-LABEL: func.func @must_not_fold
// CHECK-NOT: ingot.reshape
// CHECK-NOT: ingot.neg
// CHECK: ingot.sub {{.*}} : (tensor<4x1x1xf32>, tensor<1x4x4x4xf32>)
func.func @must_not_fold(%x: tensor<1x3x4x4xf32>, %g: tensor<4x1x1xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %w = ingot.param "w" : tensor<4x3x1x1xf32>
  %f = ingot.param "f" : tensor<4x1x1xf32>
  %sp = ingot.param "sp" : tensor<4x4x4xf32>
  %c1 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %r1 = ingot.mul %c1, %g : (tensor<1x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %c2 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %r2 = ingot.add %c2, %sp : (tensor<1x4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c3 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %r3 = ingot.mul %c3, %c3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c4 = ingot.conv %x, %w {activation = "relu", auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %r4 = ingot.mul %c4, %f : (tensor<1x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %c5 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %r5 = ingot.sub %f, %c5 : (tensor<4x1x1xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r1, %r2, %r3, %r4, %r5 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
