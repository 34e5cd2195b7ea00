// RUN: ingot-opt %s --split-input-file --ingot-canonicalize | FileCheck %s

// Folding of small integer tensors that are data movement, not shape
// reads: ConstantOfShape, Slice of any rank and Transpose fold when every
// value they read is known (their value rules are in TrackedValues.cpp).
// The shape-vector folders are in ingot_folding.mlir.

// PyTorch's F.pad export: ConstantOfShape zeros joined to the pads, viewed
// as [rank, 2], read backwards (Slice with step -1), transposed and
// flattened. Every step has known values, so the chain is one constant.
// CHECK-LABEL: func.func @torch_pad_vector
// CHECK-NOT:     ingot.constant_of_shape
// CHECK-NOT:     ingot.slice
// CHECK-NOT:     ingot.transpose
// CHECK:         %[[P:.+]] = ingot.constant dense<[0, 2, 0, 3]> : tensor<4xi64>
// CHECK-NEXT:    return %[[P]]
func.func @torch_pad_vector() -> tensor<4xi64> {
  %pads = ingot.constant dense<[2, 3]> : tensor<2xi64>
  %n = ingot.constant dense<2> : tensor<1xi64>
  %zeros = ingot.constant_of_shape %n {value = 0.0 : f64} : tensor<1xi64> -> tensor<2xi64>
  %all = ingot.concat %pads, %zeros {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %pairs_shape = ingot.constant dense<[-1, 2]> : tensor<2xi64>
  %pairs = ingot.reshape %all, %pairs_shape {allowzero = 0 : i64} : (tensor<4xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %start = ingot.constant dense<-1> : tensor<1xi64>
  %end = ingot.constant dense<-9223372036854775807> : tensor<1xi64>
  %axis = ingot.constant dense<0> : tensor<1xi64>
  %step = ingot.constant dense<-1> : tensor<1xi64>
  %rev = ingot.slice %pairs, %start, %end, %axis, %step : (tensor<2x2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xi64>
  %t = ingot.transpose %rev {perm = array<i64: 1, 0>} : tensor<2x2xi64> -> tensor<2x2xi64>
  %flat_shape = ingot.constant dense<-1> : tensor<1xi64>
  %flat = ingot.reshape %t, %flat_shape {allowzero = 0 : i64} : (tensor<2x2xi64>, tensor<1xi64>) -> tensor<4xi64>
  return %flat : tensor<4xi64>
}

// -----

// NEGATIVE: a slice of run-time data stays a run-time slice.
// CHECK-LABEL: func.func @slice_of_input
// CHECK:         ingot.slice
func.func @slice_of_input(%x: tensor<2x2xi64>) -> tensor<2x2xi64> {
  %start = ingot.constant dense<-1> : tensor<1xi64>
  %end = ingot.constant dense<-9223372036854775807> : tensor<1xi64>
  %axis = ingot.constant dense<0> : tensor<1xi64>
  %step = ingot.constant dense<-1> : tensor<1xi64>
  %rev = ingot.slice %x, %start, %end, %axis, %step : (tensor<2x2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xi64>
  return %rev : tensor<2x2xi64>
}

// -----

// NEGATIVE: a float tensor is data, not a shape vector: no constant.
// CHECK-LABEL: func.func @constant_of_shape_float
// CHECK:         ingot.constant_of_shape
func.func @constant_of_shape_float() -> tensor<2xf32> {
  %n = ingot.constant dense<2> : tensor<1xi64>
  %z = ingot.constant_of_shape %n {value = 0.0 : f64} : tensor<1xi64> -> tensor<2xf32>
  return %z : tensor<2xf32>
}

// -----

// PyTorch's expand(-1, ...) export: the target's -1 entries are found with
// Equal and replaced by the input's dims with Where (bools are tracked as
// 0/1), and a Max clamps a size: all fold.
// CHECK-LABEL: func.func @torch_expand_shape
// CHECK-NOT:     ingot.compare
// CHECK-NOT:     ingot.where
// CHECK-NOT:     ingot.binary_math
// CHECK:         %[[S:.+]] = ingot.constant dense<[2, 7, 4]> : tensor<3xi64>
// CHECK-NEXT:    return %[[S]]
func.func @torch_expand_shape() -> tensor<3xi64> {
  %target = ingot.constant dense<[2, -1, 4]> : tensor<3xi64>
  %minus1 = ingot.constant dense<-1> : tensor<i64>
  %is_free = ingot.compare %target, %minus1 {kind = "equal"} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %dims = ingot.constant dense<[1, 7, 3]> : tensor<3xi64>
  %picked = ingot.where %is_free, %dims, %target : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %one = ingot.constant dense<1> : tensor<i64>
  %clamped = ingot.binary_math %picked, %one {kind = "max"} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return %clamped : tensor<3xi64>
}

// -----

// Mod of known values folds with the divisor's sign (padding arithmetic
// such as (k - n % k) % k); a zero divisor is left to run time.
// CHECK-LABEL: func.func @mod_of_known_values
// CHECK:         %[[C:.+]] = ingot.constant dense<[1, 2, 0, -1]> : tensor<4xi64>
// CHECK:         %[[Z:.+]] = ingot.binary_math {{.+}} {kind = "mod"}
// CHECK:         return %[[C]], %[[Z]]
func.func @mod_of_known_values() -> (tensor<4xi64>, tensor<2xi64>) {
  %a = ingot.constant dense<[7, -7, 6, 7]> : tensor<4xi64>
  %b = ingot.constant dense<[3, 3, 3, -4]> : tensor<4xi64>
  %m = ingot.binary_math %a, %b {kind = "mod"} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %c = ingot.constant dense<[5, 6]> : tensor<2xi64>
  %zero = ingot.constant dense<[0, 4]> : tensor<2xi64>
  %z = ingot.binary_math %c, %zero {kind = "mod"} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %m, %z : tensor<4xi64>, tensor<2xi64>
}
