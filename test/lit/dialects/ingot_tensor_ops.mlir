// RUN: ingot-opt %s --split-input-file | ingot-opt --split-input-file | FileCheck %s
// RUN: ingot-opt %s --split-input-file --mlir-print-op-generic | ingot-opt --split-input-file | FileCheck %s

// Round trips of the tensor-family ops (IngotTensorOps.td). Their verifier
// errors are in ingot_tensor_invalid.mlir.

// CHECK-LABEL: func.func @flatten
// CHECK: ingot.flatten %{{.*}} {axis = 1 : i64} : tensor<?x3x4xf32> -> tensor<?x12xf32>
func.func @flatten(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %f = ingot.flatten %x {axis = 1 : i64} : tensor<?x3x4xf32> -> tensor<?x12xf32>
  return %f : tensor<?x12xf32>
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK: ingot.slice %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x?xf32>
func.func @slice(%x: tensor<8x?xf32>) -> tensor<3x?xf32> {
  %st = ingot.constant dense<-1> : tensor<1xi64>
  %en = ingot.constant dense<-8> : tensor<1xi64>
  %ax = ingot.constant dense<0> : tensor<1xi64>
  %sp = ingot.constant dense<-3> : tensor<1xi64>
  %s = ingot.slice %x, %st, %en, %ax, %sp : (tensor<8x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x?xf32>
  return %s : tensor<3x?xf32>
}

// -----

// CHECK-LABEL: func.func @expand_tile
// CHECK: ingot.expand %{{.*}}, %{{.*}} : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<3x4xf32>
// CHECK: ingot.tile %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
func.func @expand_tile(%x: tensor<3x1xf32>) -> tensor<6x4xf32> {
  %s = ingot.constant dense<[1, 4]> : tensor<2xi64>
  %e = ingot.expand %x, %s : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  %r = ingot.constant dense<[2, 1]> : tensor<2xi64>
  %t = ingot.tile %e, %r : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %t : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @range
// CHECK: ingot.range %{{.*}}, %{{.*}}, %{{.*}} {count = -1 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
func.func @range(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>) -> tensor<?xf32> {
  %r = ingot.range %a, %b, %c {count = -1 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @pad
// CHECK: ingot.pad %{{.*}}, %{{.*}}, %{{.*}} {mode = "reflect"} : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<5x8xf32>
func.func @pad(%x: tensor<3x4xf32>, %v: tensor<f32>) -> tensor<5x8xf32> {
  %p = ingot.constant dense<[1, 2, 1, 2]> : tensor<4xi64>
  %y = ingot.pad %x, %p, %v {mode = "reflect"} : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// -----

// CHECK-LABEL: func.func @pad_wrap
// CHECK: ingot.pad %{{.*}}, %{{.*}}, %{{.*}} {mode = "wrap"} : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<6x5xf32>
func.func @pad_wrap(%x: tensor<3x4xf32>, %v: tensor<f32>) -> tensor<6x5xf32> {
  %p = ingot.constant dense<[2, 0, 1, 1]> : tensor<4xi64>
  %y = ingot.pad %x, %p, %v {mode = "wrap"} : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<6x5xf32>
  return %y : tensor<6x5xf32>
}

// -----

// CHECK-LABEL: func.func @indexing
// CHECK: ingot.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
// CHECK: ingot.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "add"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
func.func @indexing(%x: tensor<?x4xf32>, %i: tensor<?x2xi64>, %d: tensor<4x3xf32>, %j: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> (tensor<?x2xf32>, tensor<4x3xf32>) {
  %g = ingot.gather_elements %x, %i {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  %s = ingot.scatter_nd %d, %j, %u {reduction = "add"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %g, %s : tensor<?x2xf32>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_elements
// CHECK: ingot.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "max"} : (tensor<?x4xf32>, tensor<?x2xi32>, tensor<?x2xf32>) -> tensor<?x4xf32>
func.func @scatter_elements(%d: tensor<?x4xf32>, %i: tensor<?x2xi32>, %u: tensor<?x2xf32>) -> tensor<?x4xf32> {
  %s = ingot.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "max"} : (tensor<?x4xf32>, tensor<?x2xi32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @topk
// CHECK: ingot.topk %{{.*}}, %{{.*}} {axis = 1 : i64, largest = 1 : i64, select = 0 : i64, sorted = 1 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> tensor<3x2xf32>
// CHECK: ingot.topk %{{.*}}, %{{.*}} {axis = 1 : i64, largest = 0 : i64, select = 1 : i64, sorted = 1 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> tensor<3x2xi64>
func.func @topk(%x: tensor<3x8xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %k = ingot.constant dense<2> : tensor<1xi64>
  %v = ingot.topk %x, %k {axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64, select = 0 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  %i = ingot.topk %x, %k {axis = 1 : i64, largest = 0 : i64, sorted = 1 : i64, select = 1 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> tensor<3x2xi64>
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// CHECK-LABEL: func.func @conv
// CHECK: ingot.conv %{{.*}}, %{{.*}}, %{{.*}} {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
// CHECK: ingot.conv %{{.*}}, %{{.*}} {auto_pad = "SAME_UPPER", dilations = array<i64: 2>, group = 2 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x?xf32>, tensor<6x2x3xf32>) -> tensor<1x6x?xf32>
func.func @conv(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %x1: tensor<1x4x?xf32>, %w1: tensor<6x2x3xf32>) -> (tensor<?x4x4x4xf32>, tensor<1x6x?xf32>) {
  %y = ingot.conv %x, %w, %b {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  %z = ingot.conv %x1, %w1 {auto_pad = "SAME_UPPER", dilations = array<i64: 2>, group = 2 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x?xf32>, tensor<6x2x3xf32>) -> tensor<1x6x?xf32>
  return %y, %z : tensor<?x4x4x4xf32>, tensor<1x6x?xf32>
}

// -----

// 2 * (5 - 1) + 1 + 2 * (3 - 1) + 1 - 1 - 0 = 13 rows; 3 * (4 - 1) + 0 +
// (2 - 1) + 1 - 0 - 2 = 9 columns; M = 2 per group x 2 groups.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: ingot.conv_transpose %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 2, 1>, group = 2 : i64, output_padding = array<i64: 1, 0>, pads = array<i64: 1, 0, 0, 2>, strides = array<i64: 2, 3>} : (tensor<?x4x5x4xf32>, tensor<4x2x3x2xf32>, tensor<4xf32>) -> tensor<?x4x13x9xf32>
func.func @conv_transpose(%x: tensor<?x4x5x4xf32>, %w: tensor<4x2x3x2xf32>, %b: tensor<4xf32>) -> tensor<?x4x13x9xf32> {
  %y = ingot.conv_transpose %x, %w, %b {dilations = array<i64: 2, 1>, group = 2 : i64, output_padding = array<i64: 1, 0>, pads = array<i64: 1, 0, 0, 2>, strides = array<i64: 2, 3>} : (tensor<?x4x5x4xf32>, tensor<4x2x3x2xf32>, tensor<4xf32>) -> tensor<?x4x13x9xf32>
  return %y : tensor<?x4x13x9xf32>
}

// -----

// CHECK-LABEL: func.func @pools
// CHECK: ingot.max_pool %{{.*}} {{.*}}ceil_mode = 1 : i64{{.*}} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xf32>
// CHECK: ingot.average_pool %{{.*}} {{.*}}count_include_pad = 1 : i64{{.*}} : tensor<1x3x7x7xf32> -> tensor<1x3x7x7xf32>
// CHECK: ingot.global_average_pool %{{.*}} : tensor<1x3x7x7xf32> -> tensor<1x3x1x1xf32>
// CHECK: ingot.max_pool %{{.*}} {{.*}}select = 1 : i64{{.*}} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xi64>
// CHECK: ingot.max_pool %{{.*}} : tensor<1x2x4x6x6xf32> -> tensor<1x2x2x3x3xf32>
func.func @pools(%x: tensor<1x3x7x7xf32>, %v: tensor<1x2x4x6x6xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x7x7xf32>, tensor<1x3x1x1xf32>, tensor<1x3x4x4xi64>, tensor<1x2x2x3x3xf32>) {
  %m = ingot.max_pool %x {auto_pad = "NOTSET", ceil_mode = 1 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xf32>
  %a = ingot.average_pool %x {auto_pad = "SAME_LOWER", ceil_mode = 0 : i64, count_include_pad = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x3x7x7xf32> -> tensor<1x3x7x7xf32>
  %g = ingot.global_average_pool %x : tensor<1x3x7x7xf32> -> tensor<1x3x1x1xf32>
  %i = ingot.max_pool %x {auto_pad = "NOTSET", ceil_mode = 1 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, select = 1 : i64, strides = array<i64: 2, 2>} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xi64>
  %p = ingot.max_pool %v {auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1, 1>, kernel_shape = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 2, 2, 2>} : tensor<1x2x4x6x6xf32> -> tensor<1x2x2x3x3xf32>
  return %m, %a, %g, %i, %p : tensor<1x3x4x4xf32>, tensor<1x3x7x7xf32>, tensor<1x3x1x1xf32>, tensor<1x3x4x4xi64>, tensor<1x2x2x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @resize_d2s
// CHECK: ingot.resize %{{.*}} {{.*}}mode = "linear"{{.*}} : tensor<1x3x4x4xf32> -> tensor<1x3x8x6xf32>
// CHECK: ingot.depth_to_space %{{.*}} {blocksize = 2 : i64, mode = "CRD"} : tensor<1x12x8x6xf32> -> tensor<1x3x16x12xf32>
func.func @resize_d2s(%x: tensor<1x3x4x4xf32>, %y: tensor<1x12x8x6xf32>) -> (tensor<1x3x8x6xf32>, tensor<1x3x16x12xf32>) {
  %r = ingot.resize %x {coordinate_transformation_mode = "half_pixel", mode = "linear", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 1.5>, sizes = array<i64>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x6xf32>
  %d = ingot.depth_to_space %y {blocksize = 2 : i64, mode = "CRD"} : tensor<1x12x8x6xf32> -> tensor<1x3x16x12xf32>
  return %r, %d : tensor<1x3x8x6xf32>, tensor<1x3x16x12xf32>
}

// -----

// CHECK-LABEL: func.func @space_to_depth
// CHECK: ingot.space_to_depth %{{.*}} {blocksize = 2 : i64, mode = "DCR"} : tensor<?x3x8x6xf32> -> tensor<?x12x4x3xf32>
func.func @space_to_depth(%x: tensor<?x3x8x6xf32>) -> tensor<?x12x4x3xf32> {
  %d = ingot.space_to_depth %x {blocksize = 2 : i64, mode = "DCR"} : tensor<?x3x8x6xf32> -> tensor<?x12x4x3xf32>
  return %d : tensor<?x12x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @one_hot_non_zero
// CHECK: ingot.one_hot %{{.*}}, %{{.*}} {axis = 1 : i64, depth = 5 : i64} : (tensor<?xi64>, tensor<2xf32>) -> tensor<?x5xf32>
// CHECK: ingot.non_zero %{{.*}} : tensor<3x4xf32> -> tensor<2x?xi64>
func.func @one_hot_non_zero(%i: tensor<?xi64>, %v: tensor<2xf32>, %x: tensor<3x4xf32>) -> (tensor<?x5xf32>, tensor<2x?xi64>) {
  %o = ingot.one_hot %i, %v {axis = 1 : i64, depth = 5 : i64} : (tensor<?xi64>, tensor<2xf32>) -> tensor<?x5xf32>
  %n = ingot.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>
  return %o, %n : tensor<?x5xf32>, tensor<2x?xi64>
}

// -----

// non_max_suppression with its scalars as attributes, and with all three
// as run-time operands (then read in place of the attributes).
// CHECK-LABEL: func.func @non_max_suppression
// CHECK: ingot.non_max_suppression %{{.*}}, %{{.*}} {center_point_box = 0 : i64, iou_threshold = 5.000000e-01 : f32, max_output_boxes_per_class = 10 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
// CHECK: ingot.non_max_suppression %{{.*}}, %{{.*}} max_output(%{{.*}}) iou(%{{.*}}) score(%{{.*}}) {center_point_box = 1 : i64, iou_threshold = 0.000000e+00 : f32, max_output_boxes_per_class = 0 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<f32>) -> tensor<?x3xi64>
// CHECK: ingot.non_max_suppression %{{.*}}, %{{.*}} iou(%{{.*}}) {center_point_box = 0 : i64, iou_threshold = 0.000000e+00 : f32, max_output_boxes_per_class = 3 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xf32>) -> tensor<?x3xi64>
func.func @non_max_suppression(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %m: tensor<1xi64>, %i: tensor<1xf32>, %t: tensor<f32>) -> (tensor<?x3xi64>, tensor<?x3xi64>, tensor<?x3xi64>) {
  %a = ingot.non_max_suppression %b, %s {center_point_box = 0 : i64, iou_threshold = 0.5 : f32, max_output_boxes_per_class = 10 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
  %r = ingot.non_max_suppression %b, %s max_output(%m) iou(%i) score(%t) {center_point_box = 1 : i64, iou_threshold = 0.0 : f32, max_output_boxes_per_class = 0 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<f32>) -> tensor<?x3xi64>
  %o = ingot.non_max_suppression %b, %s iou(%i) {center_point_box = 0 : i64, iou_threshold = 0.0 : f32, max_output_boxes_per_class = 3 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  return %a, %r, %o : tensor<?x3xi64>, tensor<?x3xi64>, tensor<?x3xi64>
}

// -----

// Tuples of 2 address dims 0-1; with batch_dims = 1 the first dim is
// shared and tuples of 1 address dim 1.
// CHECK-LABEL: func.func @gather_nd
// CHECK: ingot.gather_nd %{{.*}}, %{{.*}} {batch_dims = 0 : i64} : (tensor<4x5x6xf32>, tensor<?x2xi64>) -> tensor<?x6xf32>
// CHECK: ingot.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<4x5x6xf32>, tensor<4x3x1xi64>) -> tensor<4x3x6xf32>
func.func @gather_nd(%x: tensor<4x5x6xf32>, %i: tensor<?x2xi64>, %j: tensor<4x3x1xi64>) -> (tensor<?x6xf32>, tensor<4x3x6xf32>) {
  %0 = ingot.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<4x5x6xf32>, tensor<?x2xi64>) -> tensor<?x6xf32>
  %1 = ingot.gather_nd %x, %j {batch_dims = 1 : i64} : (tensor<4x5x6xf32>, tensor<4x3x1xi64>) -> tensor<4x3x6xf32>
  return %0, %1 : tensor<?x6xf32>, tensor<4x3x6xf32>
}

// -----

// Cubic carries Keys' coefficient and exclude_outside.
// CHECK-LABEL: func.func @resize_cubic
// CHECK: ingot.resize %{{.*}} {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = 1 : i64, mode = "cubic", nearest_mode = "floor", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 1.500000e+00>, sizes = array<i64>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x6xf32>
func.func @resize_cubic(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x6xf32> {
  %r = ingot.resize %x {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.5 : f64, exclude_outside = 1 : i64, mode = "cubic", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 1.5>, sizes = array<i64>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x6xf32>
  return %r : tensor<1x3x8x6xf32>
}

// -----

// Scales or sizes known only at run time are one operand, an entry per
// axis; the resized dims are dynamic unless tracked sizes fix them.
// CHECK-LABEL: func.func @resize_run_time
// CHECK: ingot.resize %{{.*}} scales %{{.*}} : tensor<2xf32> {axes = array<i64: 2, 3>{{.*}}} : tensor<1x3x4x4xf32> -> tensor<1x3x?x?xf32>
// CHECK: ingot.resize %{{.*}} sizes %{{.*}} : tensor<1xi64> {axes = array<i64: 3>, {{.*}}keep_aspect_ratio_policy = "not_larger"{{.*}}} : tensor<1x3x4x4xf32> -> tensor<1x3x4x?xf32>
func.func @resize_run_time(%x: tensor<1x3x4x4xf32>, %s: tensor<2xf32>, %n: tensor<1xi64>) -> (tensor<1x3x?x?xf32>, tensor<1x3x4x?xf32>) {
  %a = ingot.resize %x scales %s : tensor<2xf32> {axes = array<i64: 2, 3>, coordinate_transformation_mode = "half_pixel", mode = "linear", nearest_mode = "floor", scales = array<f64>, sizes = array<i64>} : tensor<1x3x4x4xf32> -> tensor<1x3x?x?xf32>
  %b = ingot.resize %x sizes %n : tensor<1xi64> {axes = array<i64: 3>, coordinate_transformation_mode = "half_pixel", keep_aspect_ratio_policy = "not_larger", mode = "nearest", nearest_mode = "floor", scales = array<f64>, sizes = array<i64>} : tensor<1x3x4x4xf32> -> tensor<1x3x4x?xf32>
  return %a, %b : tensor<1x3x?x?xf32>, tensor<1x3x4x?xf32>
}

// -----

// A weight whose dims are only known at run time: kernel_shape gives the
// spatial dims, so the result's spatial dims are static.
// CHECK-LABEL: func.func @conv_kernel_shape_for_dynamic_weight
// CHECK: ingot.conv {{.*}}kernel_shape = array<i64: 3, 3>{{.*}} -> tensor<1x?x9x4xf32>
func.func @conv_kernel_shape_for_dynamic_weight(%x: tensor<1x4x9x8xf32>, %w: tensor<?x?x?x?xf32>) -> tensor<1x?x9x4xf32> {
  %y = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 1, 2>} : (tensor<1x4x9x8xf32>, tensor<?x?x?x?xf32>) -> tensor<1x?x9x4xf32>
  return %y : tensor<1x?x9x4xf32>
}

// -----

// Without kernel_shape, kernel dims only known at run time leave the
// matching output dims to run time too; the others stay static.
// CHECK-LABEL: func.func @conv_run_time_kernel_dims
// CHECK: ingot.conv {{.*}} : (tensor<1x4x9x8xf32>, tensor<2x4x?x3xf32>) -> tensor<1x2x?x4xf32>
func.func @conv_run_time_kernel_dims(%x: tensor<1x4x9x8xf32>, %w: tensor<2x4x?x3xf32>) -> tensor<1x2x?x4xf32> {
  %y = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 1, 2>} : (tensor<1x4x9x8xf32>, tensor<2x4x?x3xf32>) -> tensor<1x2x?x4xf32>
  return %y : tensor<1x2x?x4xf32>
}

// -----

// output_shape fixes the spatial dims whatever the pads; SAME_UPPER gives
// in·stride (7·2 = 14 < the pad-free 15) and never more than pad-free
// (a 1-wide kernel with stride 3: 3·(5−1)+1 = 13 < 15).
// CHECK-LABEL: func.func @conv_transpose_derived_pads
// CHECK: ingot.conv_transpose {{.*}}output_shape = array<i64: 9, 12>{{.*}} -> tensor<?x4x9x12xf32>
// CHECK: ingot.conv_transpose {{.*}}auto_pad = "SAME_UPPER"{{.*}} -> tensor<1x2x14x13xf32>
func.func @conv_transpose_derived_pads(%x: tensor<?x4x5x4xf32>, %w: tensor<4x2x3x2xf32>, %x1: tensor<1x2x7x5xf32>, %w1: tensor<2x2x3x1xf32>) -> (tensor<?x4x9x12xf32>, tensor<1x2x14x13xf32>) {
  %y = ingot.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, output_shape = array<i64: 9, 12>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 3>} : (tensor<?x4x5x4xf32>, tensor<4x2x3x2xf32>) -> tensor<?x4x9x12xf32>
  %z = ingot.conv_transpose %x1, %w1 {auto_pad = "SAME_UPPER", dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 3>} : (tensor<1x2x7x5xf32>, tensor<2x2x3x1xf32>) -> tensor<1x2x14x13xf32>
  return %y, %z : tensor<?x4x9x12xf32>, tensor<1x2x14x13xf32>
}

// -----

// A depth fed at run time: the new dim is sized when the plan runs.
// CHECK-LABEL: func.func @one_hot_run_time_depth
// CHECK: ingot.one_hot %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<3xi64>, tensor<2xf32>, tensor<1xf32>) -> tensor<?x3xf32>
func.func @one_hot_run_time_depth(%i: tensor<3xi64>, %v: tensor<2xf32>, %d: tensor<1xf32>) -> tensor<?x3xf32> {
  %o = ingot.one_hot %i, %v, %d {axis = 0 : i64} : (tensor<3xi64>, tensor<2xf32>, tensor<1xf32>) -> tensor<?x3xf32>
  return %o : tensor<?x3xf32>
}

// -----

// tf_crop_and_resize reads its roi (starts then ends per dim) at run time.
// CHECK-LABEL: func.func @resize_crop
// CHECK: ingot.resize %{{.*}} roi %{{.*}} : tensor<8xf32> {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 2.500000e+00 : f64
func.func @resize_crop(%x: tensor<1x1x4x4xf32>, %r: tensor<8xf32>) -> tensor<1x1x3x3xf32> {
  %y = ingot.resize %x roi %r : tensor<8xf32> {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 2.5 : f64, mode = "linear", nearest_mode = "floor", scales = array<f64>, sizes = array<i64: 1, 1, 3, 3>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

// select = 3: Y's rows, then Y_h, then Y_c, stacked along dim 0.
// CHECK-LABEL: func.func @lstm_all
// CHECK: ingot.lstm {{.*}} select = 3 : i64} : {{.*}} -> tensor<7x2x2x4xf32>
// CHECK-LABEL: func.func @gru_all_dynamic
// CHECK: -> tensor<?x1x2x4xf32>
func.func @lstm_all(%x: tensor<5x2x3xf32>, %w: tensor<2x16x3xf32>, %r: tensor<2x16x4xf32>) -> tensor<7x2x2x4xf32> {
  %y = ingot.lstm %x, %w, %r {direction = "bidirectional", hidden_size = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, select = 3 : i64} : (tensor<5x2x3xf32>, tensor<2x16x3xf32>, tensor<2x16x4xf32>) -> tensor<7x2x2x4xf32>
  return %y : tensor<7x2x2x4xf32>
}
func.func @gru_all_dynamic(%x: tensor<?x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) -> tensor<?x1x2x4xf32> {
  %y = ingot.gru %x, %w, %r {direction = "forward", hidden_size = 4 : i64, linear_before_reset = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, select = 2 : i64} : (tensor<?x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>) -> tensor<?x1x2x4xf32>
  return %y : tensor<?x1x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @gru
// CHECK: ingot.gru %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} initial_h %{{.*}} {direction = "bidirectional", hidden_size = 4 : i64, linear_before_reset = 1 : i64, select = 1 : i64} : (tensor<?x2x3xf32>, tensor<2x12x3xf32>, tensor<2x12x4xf32>, tensor<2x24xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
func.func @gru(%x: tensor<?x2x3xf32>, %w: tensor<2x12x3xf32>, %r: tensor<2x12x4xf32>, %b: tensor<2x24xf32>, %h: tensor<2x2x4xf32>) -> tensor<2x2x4xf32> {
  %y = ingot.gru %x, %w, %r, %b initial_h %h {direction = "bidirectional", hidden_size = 4 : i64, linear_before_reset = 1 : i64, select = 1 : i64} : (tensor<?x2x3xf32>, tensor<2x12x3xf32>, tensor<2x12x4xf32>, tensor<2x24xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  return %y : tensor<2x2x4xf32>
}
