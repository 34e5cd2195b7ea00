// RUN: ingot-opt %s --ingot-fuse-conv-activation --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fuse-conv-activation=silu=false --split-input-file | FileCheck %s --check-prefix=NOSILU
// RUN: ingot-opt %s --ingot-fuse-conv-activation=relu=false --split-input-file | FileCheck %s --check-prefix=NORELU
// RUN: ingot-opt %s --ingot-fuse-conv-activation=hard-swish=false --split-input-file | FileCheck %s --check-prefix=NOHSWISH
// RUN: ingot-opt %s --ingot-fuse-conv-activation=leaky-relu=false --split-input-file | FileCheck %s --check-prefix=NOLEAKY
// RUN: ingot-opt %s --ingot-fuse-conv-activation=clip=false --split-input-file | FileCheck %s --check-prefix=NOCLIP

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

// -----

// HardSwish as PaddleOCR exports it, y * min(max(y + 3, 0), 6) / 6, in both
// operand orders of the add, max, min and mul (the bits cannot change), with
// the 6 of the divisor a [1] tensor: one conv each.
// CHECK-LABEL: func.func @hard_swish
// CHECK: %[[A:.*]] = ingot.conv %arg0, %{{.*}}, %{{.*}} {activation = "hard_swish"
// CHECK: %[[B:.*]] = ingot.conv %[[A]], %{{.*}} {activation = "hard_swish"
// CHECK-NOT: ingot.binary_math
// CHECK-NOT: ingot.div
// CHECK: return %[[B]]
// hard-swish=false: the chains stay.
// NOHSWISH-LABEL: func.func @hard_swish
// NOHSWISH-NOT: activation
// NOHSWISH: ingot.div
func.func @hard_swish(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = ingot.param "c1.w" : tensor<4x3x3x3xf32>
  %b = ingot.param "c1.b" : tensor<4xf32>
  %w2 = ingot.param "c2.w" : tensor<4x4x1x1xf32>
  %three = ingot.constant dense<3.0> : tensor<1xf32>
  %zero = ingot.constant dense<0.0> : tensor<f32>
  %six = ingot.constant dense<6.0> : tensor<f32>
  %six1 = ingot.constant dense<6.0> : tensor<1xf32>
  %c = ingot.conv %x, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %p = ingot.add %c, %three : (tensor<1x4x8x8xf32>, tensor<1xf32>) -> tensor<1x4x8x8xf32>
  %lo = ingot.binary_math %p, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %hi = ingot.binary_math %lo, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %m = ingot.mul %c, %hi : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a = ingot.div %m, %six1 : (tensor<1x4x8x8xf32>, tensor<1xf32>) -> tensor<1x4x8x8xf32>
  %c2 = ingot.conv %a, %w2 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p2 = ingot.add %three, %c2 : (tensor<1xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %lo2 = ingot.binary_math %zero, %p2 {kind = "max"} : (tensor<f32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %hi2 = ingot.binary_math %six, %lo2 {kind = "min"} : (tensor<f32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %m2 = ingot.mul %hi2, %c2 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a2 = ingot.div %m2, %six : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  return %a2 : tensor<1x4x8x8xf32>
}

// -----

// Must not fire: a bound of 5 instead of 6, a shift of 2 instead of 3, a
// divisor of 5, the clip of another value than the conv, and the conv
// read a third time.
// CHECK-LABEL: func.func @not_hard_swish
// CHECK-NOT: activation
// CHECK: return
func.func @not_hard_swish(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %w = ingot.param "w" : tensor<4x4x1x1xf32>
  %two = ingot.constant dense<2.0> : tensor<f32>
  %three = ingot.constant dense<3.0> : tensor<f32>
  %zero = ingot.constant dense<0.0> : tensor<f32>
  %five = ingot.constant dense<5.0> : tensor<f32>
  %six = ingot.constant dense<6.0> : tensor<f32>
  %c1 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p1 = ingot.add %c1, %three : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %lo1 = ingot.binary_math %p1, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %hi1 = ingot.binary_math %lo1, %five {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %m1 = ingot.mul %c1, %hi1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a1 = ingot.div %m1, %six : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %c2 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p2 = ingot.add %c2, %two : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %lo2 = ingot.binary_math %p2, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %hi2 = ingot.binary_math %lo2, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %m2 = ingot.mul %c2, %hi2 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a2 = ingot.div %m2, %six : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %c3 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p3 = ingot.add %c3, %three : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %lo3 = ingot.binary_math %p3, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %hi3 = ingot.binary_math %lo3, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %m3 = ingot.mul %c3, %hi3 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a3 = ingot.div %m3, %five : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %c4 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p4 = ingot.add %x, %three : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %lo4 = ingot.binary_math %p4, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %hi4 = ingot.binary_math %lo4, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %m4 = ingot.mul %c4, %hi4 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a4 = ingot.div %m4, %six : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %c5 = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p5 = ingot.add %c5, %three : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %lo5 = ingot.binary_math %p5, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %hi5 = ingot.binary_math %lo5, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %m5 = ingot.mul %c5, %hi5 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a5 = ingot.div %m5, %six : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  return %a1, %a2, %a3, %a4, %a5, %c5 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// A raised gelu of a conv read once, in both forms; a conv also read by
// something else keeps its gelu apart.
// CHECK-LABEL: func.func @gelu
// CHECK: %[[A:.*]] = ingot.conv %arg0, %{{.*}} {activation = "gelu_tanh"
// CHECK: %[[B:.*]] = ingot.conv %[[A]], %{{.*}} {activation = "gelu"
// CHECK: %[[C:.*]] = ingot.conv %[[B]], %{{.*}} {auto_pad
// CHECK: ingot.gelu %[[C]]
// CHECK-NOT: ingot.gelu
func.func @gelu(%x: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %w = ingot.param "w" : tensor<4x4x1xf32>
  %c = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x8xf32>, tensor<4x4x1xf32>) -> tensor<1x4x8xf32>
  %g = ingot.gelu %c {approximate = "tanh"} : tensor<1x4x8xf32>
  %c2 = ingot.conv %g, %w {auto_pad = "NOTSET", dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x8xf32>, tensor<4x4x1xf32>) -> tensor<1x4x8xf32>
  %g2 = ingot.gelu %c2 {approximate = "none"} : tensor<1x4x8xf32>
  %c3 = ingot.conv %g2, %w {auto_pad = "NOTSET", dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x8xf32>, tensor<4x4x1xf32>) -> tensor<1x4x8xf32>
  %g3 = ingot.gelu %c3 {approximate = "none"} : tensor<1x4x8xf32>
  return %g3, %c3 : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// openWakeWord's tf2onnx export: LeakyRelu then Max by -0.4; and Clip
// 0..6 (ReLU6) as max then min. Each becomes attributes of one conv.
// CHECK-LABEL: func.func @leaky_relu_and_clip
// CHECK: %[[A:.*]] = ingot.conv %arg0, %{{.*}} {activation = "leaky_relu", activation_alpha = 2.000000e-01 : f32, auto_pad = "NOTSET", clip_min = -4.000000e-01 : f32
// CHECK: %[[B:.*]] = ingot.conv %[[A]], %{{.*}} {auto_pad = "NOTSET", clip_max = 6.000000e+00 : f32, clip_min = 0.000000e+00 : f32
// CHECK-NOT: ingot.unary_math
// CHECK-NOT: ingot.binary_math
// CHECK: return %[[B]]
// leaky-relu=false: the leaky_relu stays, so the max reads no conv.
// NOLEAKY-LABEL: func.func @leaky_relu_and_clip
// NOLEAKY: ingot.unary_math
// NOLEAKY: ingot.binary_math {{.*}}kind = "max"
// NOLEAKY: ingot.conv {{.*}}clip_max = 6.000000e+00 : f32, clip_min = 0.000000e+00 : f32
// clip=false: the leaky_relu fuses, the max and min stay.
// NOCLIP-LABEL: func.func @leaky_relu_and_clip
// NOCLIP: ingot.conv {{.*}}activation = "leaky_relu"
// NOCLIP-NOT: clip_min
// NOCLIP: ingot.binary_math {{.*}}kind = "max"
func.func @leaky_relu_and_clip(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = ingot.param "w" : tensor<4x4x1x1xf32>
  %floor = ingot.constant dense<-4.000000e-01> : tensor<f32>
  %zero = ingot.constant dense<0.000000e+00> : tensor<f32>
  %six = ingot.constant dense<6.000000e+00> : tensor<f32>
  %c = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %l = ingot.unary_math %c {kind = "leaky_relu", alpha = 2.000000e-01 : f32} : tensor<1x4x8x8xf32>
  %m = ingot.binary_math %l, %floor {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %c2 = ingot.conv %m, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %lo = ingot.binary_math %c2, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %hi = ingot.binary_math %lo, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  return %hi : tensor<1x4x8x8xf32>
}

// -----

// Must not fire: a max after a min (the kernel clamps in Clip's order),
// max(0, conv) (a tie keeps +0 where the kernel would keep the conv's
// -0), a bound that is a tensor, and a conv read twice.
// CHECK-LABEL: func.func @clip_not_fused
// CHECK: %[[A:.*]] = ingot.conv %arg0, %{{.*}} {auto_pad = "NOTSET", clip_max = 6.000000e+00 : f32, dilations
// CHECK: ingot.binary_math %[[A]], %{{.*}} {kind = "max"}
// CHECK: %[[B:.*]] = ingot.conv %arg0, %{{.*}} {auto_pad = "NOTSET", dilations
// CHECK: ingot.binary_math %{{.*}}, %[[B]] {kind = "max"}
// CHECK: %[[C:.*]] = ingot.conv %arg0, %{{.*}} {auto_pad = "NOTSET", dilations
// CHECK: ingot.binary_math %[[C]], %arg1 {kind = "max"}
// CHECK: %[[D:.*]] = ingot.conv %arg0, %{{.*}} {auto_pad = "NOTSET", dilations
// CHECK: ingot.binary_math %[[D]], %{{.*}} {kind = "min"}
// CHECK: ingot.add %{{.*}}, %[[D]]
func.func @clip_not_fused(%x: tensor<1x4x8x8xf32>, %t: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %w = ingot.param "w" : tensor<4x4x1x1xf32>
  %zero = ingot.constant dense<0.000000e+00> : tensor<f32>
  %six = ingot.constant dense<6.000000e+00> : tensor<f32>
  %a = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %a1 = ingot.binary_math %a, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %a2 = ingot.binary_math %a1, %zero {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %b = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %b1 = ingot.binary_math %zero, %b {kind = "max"} : (tensor<f32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %c1 = ingot.binary_math %c, %t {kind = "max"} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %d = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %d1 = ingot.binary_math %d, %six {kind = "min"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %d2 = ingot.add %d1, %d : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %a2, %b1, %c1, %d2 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}
