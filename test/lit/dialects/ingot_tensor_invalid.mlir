// RUN: ingot-opt %s --split-input-file --verify-diagnostics

// Verifier errors of the tensor-family ops (IngotTensorOps.td).

func.func @slice_wrong_length(%x: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %st = ingot.constant dense<0> : tensor<1xi64>
  %en = ingot.constant dense<3> : tensor<1xi64>
  %ax = ingot.constant dense<0> : tensor<1xi64>
  %sp = ingot.constant dense<1> : tensor<1xi64>
  // expected-error @+1 {{'ingot.slice' op result shape [4,6] does not match the inferred [3,6]}}
  %s = ingot.slice %x, %st, %en, %ax, %sp : (tensor<8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x6xf32>
  return %s : tensor<4x6xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<8xf32>) -> tensor<?xf32> {
  %st = ingot.constant dense<0> : tensor<1xi64>
  %ax = ingot.constant dense<0> : tensor<1xi64>
  %sp = ingot.constant dense<0> : tensor<1xi64>
  // expected-error @+1 {{'ingot.slice' op slice step must not be 0}}
  %s = ingot.slice %x, %st, %st, %ax, %sp : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}

// -----

func.func @pad_bad_mode(%x: tensor<3xf32>, %v: tensor<f32>) -> tensor<5xf32> {
  %p = ingot.constant dense<[1, 1]> : tensor<2xi64>
  // expected-error @+1 {{'ingot.pad' op mode 'mirror' is not supported}}
  %y = ingot.pad %x, %p, %v {mode = "mirror"} : (tensor<3xf32>, tensor<2xi64>, tensor<f32>) -> tensor<5xf32>
  return %y : tensor<5xf32>
}

// -----

func.func @expand_incompatible(%x: tensor<3xf32>) -> tensor<4xf32> {
  %s = ingot.constant dense<[4]> : tensor<1xi64>
  // expected-error @+1 {{'ingot.expand' op cannot broadcast shapes [3] [4]}}
  %e = ingot.expand %x, %s : (tensor<3xf32>, tensor<1xi64>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x3x4x4xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'ingot.conv_transpose' op channels do not match}}
  %y = ingot.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @conv_transpose_auto_pad(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{auto_pad must be SAME_UPPER or SAME_LOWER when given}}
  %y = ingot.conv_transpose %x, %w {auto_pad = "VALID", dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @conv_transpose_output_shape_rank(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{strides/dilations/output_padding/pads/output_shape do not match the spatial rank}}
  %y = ingot.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, output_shape = array<i64: 8>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x10x10xf32> {
  // expected-error @+1 {{0 <= output_padding < max(stride, dilation)}}
  %y = ingot.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x10x10xf32>
  return %y : tensor<1x2x10x10xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'ingot.conv' op channels do not match}}
  %y = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @resize_run_time_scales_without_axes(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // expected-error @+1 {{'ingot.resize' op run-time scales or sizes need one entry per axis of 'axes'}}
  %r = ingot.resize %x scales %s : tensor<4xf32> {coordinate_transformation_mode = "half_pixel", mode = "nearest", nearest_mode = "floor", scales = array<f64>, sizes = array<i64>} : tensor<1x1x2x2xf32> -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// -----

func.func @resize_run_time_and_attribute_scales(%x: tensor<1x1x2x2xf32>, %s: tensor<2xf32>) -> tensor<1x1x?x?xf32> {
  // expected-error @+1 {{'ingot.resize' op has run-time scales or sizes and attribute ones}}
  %r = ingot.resize %x scales %s : tensor<2xf32> {axes = array<i64: 2, 3>, coordinate_transformation_mode = "half_pixel", mode = "nearest", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64>} : tensor<1x1x2x2xf32> -> tensor<1x1x?x?xf32>
  return %r : tensor<1x1x?x?xf32>
}

// -----

func.func @resize_run_time_axis_out_of_rank(%x: tensor<1x1x2x2xf32>, %s: tensor<1xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'ingot.resize' op axis 4 is outside rank 4}}
  %r = ingot.resize %x scales %s : tensor<1xf32> {axes = array<i64: 4>, coordinate_transformation_mode = "half_pixel", mode = "nearest", nearest_mode = "floor", scales = array<f64>, sizes = array<i64>} : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xf32>
  return %r : tensor<1x1x2x2xf32>
}

// -----

func.func @resize_lanczos(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'ingot.resize' op mode 'lanczos' is not supported}}
  %r = ingot.resize %x {coordinate_transformation_mode = "half_pixel", mode = "lanczos", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return %r : tensor<1x1x4x4xf32>
}

// -----

func.func @topk_indices_type(%x: tensor<3x8xf32>) -> tensor<3x2xi32> {
  %k = ingot.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{'ingot.topk' op select must be 0 (values) or 1 (i64 indices)}}
  %i = ingot.topk %x, %k {axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64, select = 1 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> tensor<3x2xi32>
  return %i : tensor<3x2xi32>
}

// -----

func.func @scatter_elements_reduction(%d: tensor<3x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'ingot.scatter_elements' op reduction 'mean' is not supported}}
  %s = ingot.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "mean"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  return %s : tensor<3x4xf32>
}

// -----

func.func @scatter_elements_updates_shape(%d: tensor<3x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{indices and updates must share a shape of the data's rank}}
  %s = ingot.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "none"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x3xf32>) -> tensor<3x4xf32>
  return %s : tensor<3x4xf32>
}

// -----

func.func @space_to_depth_height(%x: tensor<1x2x5x4xf32>) -> tensor<1x8x2x2xf32> {
  // expected-error @+1 {{'ingot.space_to_depth' op expects [N, C, H, W] with H and W divisible by blocksize}}
  %d = ingot.space_to_depth %x {blocksize = 2 : i64, mode = "DCR"} : tensor<1x2x5x4xf32> -> tensor<1x8x2x2xf32>
  return %d : tensor<1x8x2x2xf32>
}

// -----

func.func @depth_to_space_channels(%x: tensor<1x6x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'ingot.depth_to_space' op expects [N, C, H, W] with C divisible by blocksize^2}}
  %d = ingot.depth_to_space %x {blocksize = 2 : i64, mode = "DCR"} : tensor<1x6x2x2xf32> -> tensor<1x1x4x4xf32>
  return %d : tensor<1x1x4x4xf32>
}

// -----

func.func @non_zero_type(%x: tensor<3xf32>) -> tensor<1x?xi32> {
  // expected-error @+1 {{'ingot.non_zero' op result must be i64}}
  %n = ingot.non_zero %x : tensor<3xf32> -> tensor<1x?xi32>
  return %n : tensor<1x?xi32>
}

// -----

func.func @average_pool_select(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xi64> {
  // expected-error @+1 {{'ingot.average_pool' op select must be 0, or 1/2 with an i64 result on max_pool}}
  %y = ingot.average_pool %x {auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, select = 1 : i64, strides = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xi64>
  return %y : tensor<1x1x2x2xi64>
}

// -----

func.func @pool_rank6(%x: tensor<1x1x2x2x2x2xf32>) -> tensor<1x1x1x1x1x1xf32> {
  // expected-error @+1 {{'ingot.max_pool' op expects a rank-3 to rank-5 input with one kernel dim per spatial dim, got rank 6 and 4 kernel dims}}
  %y = ingot.max_pool %x {auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1, 1, 1>, kernel_shape = array<i64: 2, 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x1x2x2x2x2xf32> -> tensor<1x1x1x1x1x1xf32>
  return %y : tensor<1x1x1x1x1x1xf32>
}

// -----

func.func @gather_nd_tuple_too_long(%x: tensor<4x5xf32>, %i: tensor<2x3xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'ingot.gather_nd' op batch_dims 0 and index tuples of 3 do not fit data [4,5]}}
  %g = ingot.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<4x5xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  return %g : tensor<2xf32>
}

// -----

func.func @lstm_stacked_rows(%x: tensor<3x1x2xf32>, %w: tensor<1x16x2xf32>, %r: tensor<1x16x4xf32>) -> tensor<3x1x1x4xf32> {
  // expected-error @+1 {{'ingot.lstm' op result shape [3,1,1,4] does not match the inferred [5,1,1,4]}}
  %y = ingot.lstm %x, %w, %r {direction = "forward", hidden_size = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, select = 3 : i64} : (tensor<3x1x2xf32>, tensor<1x16x2xf32>, tensor<1x16x4xf32>) -> tensor<3x1x1x4xf32>
  return %y : tensor<3x1x1x4xf32>
}

// -----

func.func @gru_select(%x: tensor<3x1x2xf32>, %w: tensor<1x12x2xf32>, %r: tensor<1x12x4xf32>) -> tensor<1x1x4xf32> {
  // expected-error @+1 {{'ingot.gru' op select must be 0 (Y), 1 (Y_h) or 2 (both)}}
  %y = ingot.gru %x, %w, %r {direction = "forward", hidden_size = 4 : i64, linear_before_reset = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, select = 3 : i64} : (tensor<3x1x2xf32>, tensor<1x12x2xf32>, tensor<1x12x4xf32>) -> tensor<1x1x4xf32>
  return %y : tensor<1x1x4xf32>
}

// -----

func.func @gru_weight_rows(%x: tensor<3x1x2xf32>, %w: tensor<1x16x2xf32>, %r: tensor<1x12x4xf32>) -> tensor<1x1x4xf32> {
  // expected-error @+1 {{w [dirs, 3H, input]}}
  %y = ingot.gru %x, %w, %r {direction = "forward", hidden_size = 4 : i64, linear_before_reset = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, select = 1 : i64} : (tensor<3x1x2xf32>, tensor<1x16x2xf32>, tensor<1x12x4xf32>) -> tensor<1x1x4xf32>
  return %y : tensor<1x1x4xf32>
}

// -----

func.func @conv_kernel_shape_disagrees_with_weight(%x: tensor<1x4x9x8xf32>, %w: tensor<2x4x3x?xf32>) -> tensor<1x2x9x4xf32> {
  // expected-error @+1 {{'ingot.conv' op kernel_shape does not match the weight's dims}}
  %y = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 1, 2>} : (tensor<1x4x9x8xf32>, tensor<2x4x3x?xf32>) -> tensor<1x2x9x4xf32>
  return %y : tensor<1x2x9x4xf32>
}

// -----

func.func @non_max_suppression_iou(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>) -> tensor<?x3xi64> {
  // expected-error @+1 {{'ingot.non_max_suppression' op iou_threshold must be in [0, 1]}}
  %y = ingot.non_max_suppression %b, %s {center_point_box = 0 : i64, iou_threshold = 1.5 : f32, max_output_boxes_per_class = 1 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
  return %y : tensor<?x3xi64>
}

// -----

func.func @non_max_suppression_max_output_type(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %m: tensor<1xf32>) -> tensor<?x3xi64> {
  // expected-error @+1 {{'ingot.non_max_suppression' op max_output must be one i64 element}}
  %y = ingot.non_max_suppression %b, %s max_output(%m) {center_point_box = 0 : i64, iou_threshold = 0.5 : f32, max_output_boxes_per_class = 0 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  return %y : tensor<?x3xi64>
}

// -----

func.func @non_max_suppression_score_elements(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %t: tensor<2xf32>) -> tensor<?x3xi64> {
  // expected-error @+1 {{'ingot.non_max_suppression' op score must be one f32 element}}
  %y = ingot.non_max_suppression %b, %s score(%t) {center_point_box = 0 : i64, iou_threshold = 0.5 : f32, max_output_boxes_per_class = 2 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<2xf32>) -> tensor<?x3xi64>
  return %y : tensor<?x3xi64>
}

// -----

func.func @conv_activation(%x: tensor<1x4x4x4xf32>, %w: tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{activation 'tanh' is not supported}}
  %y = ingot.conv %x, %w {activation = "tanh", auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

func.func @one_hot_depth_twice(%i: tensor<3xi64>, %v: tensor<2xf32>, %d: tensor<1xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{one_hot needs exactly one of the depth attribute and operand}}
  %o = ingot.one_hot %i, %v, %d {axis = 1 : i64, depth = 4 : i64} : (tensor<3xi64>, tensor<2xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  return %o : tensor<3x4xf32>
}

// -----

func.func @one_hot_no_depth(%i: tensor<3xi64>, %v: tensor<2xf32>) -> tensor<3x?xf32> {
  // expected-error @+1 {{one_hot needs exactly one of the depth attribute and operand}}
  %o = ingot.one_hot %i, %v {axis = 1 : i64} : (tensor<3xi64>, tensor<2xf32>) -> tensor<3x?xf32>
  return %o : tensor<3x?xf32>
}

// -----

func.func @resize_crop_without_roi(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{takes a roi exactly with tf_crop_and_resize}}
  %y = ingot.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", mode = "linear", nearest_mode = "floor", scales = array<f64>, sizes = array<i64: 1, 1, 3, 3>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

func.func @resize_roi_length(%x: tensor<1x1x4x4xf32>, %r: tensor<4xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{roi must be f32 with 2 entries per dim}}
  %y = ingot.resize %x roi %r : tensor<4xf32> {coordinate_transformation_mode = "tf_crop_and_resize", mode = "linear", nearest_mode = "floor", scales = array<f64>, sizes = array<i64: 1, 1, 3, 3>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

func.func @conv_leaky_relu_without_alpha(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'ingot.conv' op activation_alpha goes with leaky_relu alone}}
  %y = ingot.conv %x, %w {activation = "leaky_relu", auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_alpha_without_leaky_relu(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'ingot.conv' op activation_alpha goes with leaky_relu alone}}
  %y = ingot.conv %x, %w {activation = "relu", activation_alpha = 0.2 : f32, auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_residual_of_another_shape(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %r: tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'ingot.conv' op residual must have the result's type 'tensor<1x4x8x8xf32>', got 'tensor<1x4x1x1xf32>'}}
  %y = ingot.conv %x, %w residual %r {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_nan_clip(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'ingot.conv' op clip bounds must be numbers}}
  %y = ingot.conv %x, %w {auto_pad = "NOTSET", clip_min = 0x7FC00000 : f32, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
