// RUN: ingot-opt %s --split-input-file --ingot-canonicalize | FileCheck %s

// The folders of the ingot dialect, one per block, each with the case where
// it must not fire. Shape computations fold to `ingot.constant` when every
// dim they read is static; data-movement ops that restate their input fold
// away.

// CHECK-LABEL: func.func @shape_of_static_tensor
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8xf32>)
// CHECK-NEXT:    %[[S:.+]] = ingot.constant dense<[2, 8]> : tensor<2xi64>
// CHECK-NEXT:    return %[[S]]
func.func @shape_of_static_tensor(%x: tensor<2x8xf32>) -> tensor<2xi64> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<2x8xf32> -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// Only dims [start, end) are read: the static trailing dim folds although
// dim 0 is dynamic.
// CHECK-LABEL: func.func @shape_slice_of_static_dims
// CHECK-NOT:     ingot.shape
// CHECK:         %[[S:.+]] = ingot.constant dense<64> : tensor<1xi64>
// CHECK-NEXT:    return %[[S]]
func.func @shape_slice_of_static_dims(%x: tensor<?x8x64xf32>) -> tensor<1xi64> {
  %s = ingot.shape %x {start = -1 : i64, end = 9223372036854775807 : i64} : tensor<?x8x64xf32> -> tensor<1xi64>
  return %s : tensor<1xi64>
}

// -----

// NEGATIVE: a dynamic dim has no value to fold to.
// CHECK-LABEL: func.func @shape_of_dynamic_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<?x8xf32>)
// CHECK-NOT:     ingot.constant
// CHECK:         %[[S:.+]] = ingot.shape %[[X]] {end = 9223372036854775807 : i64, start = 0 : i64} : tensor<?x8xf32> -> tensor<2xi64>
// CHECK-NEXT:    return %[[S]]
func.func @shape_of_dynamic_dim(%x: tensor<?x8xf32>) -> tensor<2xi64> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x8xf32> -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// The attention-head split: Shape -> Gather(batch, seq) -> Concat(heads,
// head_dim) becomes one constant target; the Reshape itself stays (it moves
// data) and reads that constant.
// CHECK-LABEL: func.func @shape_chain_to_reshape
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8x64xf32>)
// CHECK-NOT:     ingot.shape
// CHECK-NOT:     ingot.gather
// CHECK-NOT:     ingot.concat
// CHECK:         %[[T:.+]] = ingot.constant dense<[2, 8, 4, 16]> : tensor<4xi64>
// CHECK-NEXT:    %[[R:.+]] = ingot.reshape %[[X]], %[[T]] {allowzero = 0 : i64} : (tensor<2x8x64xf32>, tensor<4xi64>) -> tensor<2x8x4x16xf32>
// CHECK-NEXT:    return %[[R]]
func.func @shape_chain_to_reshape(%x: tensor<2x8x64xf32>) -> tensor<2x8x4x16xf32> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<2x8x64xf32> -> tensor<3xi64>
  %i = ingot.constant dense<[0, 1]> : tensor<2xi64>
  %bs = ingot.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %h = ingot.constant dense<[4, 16]> : tensor<2xi64>
  %t = ingot.concat %bs, %h {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<2x8x64xf32>, tensor<4xi64>) -> tensor<2x8x4x16xf32>
  return %r : tensor<2x8x4x16xf32>
}

// -----

// NEGATIVE: the same chain on a dynamic batch/seq keeps every shape op.
// CHECK-LABEL: func.func @shape_chain_on_dynamic_dims
// CHECK:         %[[S:.+]] = ingot.shape
// CHECK:         %[[G:.+]] = ingot.gather %[[S]]
// CHECK:         %[[T:.+]] = ingot.concat %[[G]]
// CHECK:         ingot.reshape %{{.+}}, %[[T]]
func.func @shape_chain_on_dynamic_dims(%x: tensor<?x?x64xf32>) -> tensor<?x?x4x16xf32> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x?x64xf32> -> tensor<3xi64>
  %i = ingot.constant dense<[0, 1]> : tensor<2xi64>
  %bs = ingot.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %h = ingot.constant dense<[4, 16]> : tensor<2xi64>
  %t = ingot.concat %bs, %h {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %r : tensor<?x?x4x16xf32>
}

// -----

// Gather picks entries of a static shape vector: negative indices count
// from the end, i32 indices work, and 2-D indices give a 2-D result.
// CHECK-LABEL: func.func @gather_of_shape_entries
// CHECK-NOT:     ingot.gather
// CHECK-DAG:     %[[LAST:.+]] = ingot.constant dense<64> : tensor<i64>
// CHECK-DAG:     %[[PAIR:.+]] = ingot.constant dense<[2, 64]> : tensor<2xi64>
// CHECK-DAG:     %[[GRID:.+]] = ingot.constant dense<{{\[\[}}2, 8], [64, 2]]> : tensor<2x2xi64>
// CHECK:         return %[[LAST]], %[[PAIR]], %[[GRID]]
func.func @gather_of_shape_entries(%x: tensor<2x8x64xf32>) -> (tensor<i64>, tensor<2xi64>, tensor<2x2xi64>) {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<2x8x64xf32> -> tensor<3xi64>
  %i = ingot.constant dense<-1> : tensor<i64>
  %last = ingot.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %j = ingot.constant dense<[-3, 2]> : tensor<2xi32>
  %pair = ingot.gather %s, %j {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi32>) -> tensor<2xi64>
  %k = ingot.constant dense<[[0, 1], [2, 0]]> : tensor<2x2xi64>
  %grid = ingot.gather %s, %k {axis = 0 : i64} : (tensor<3xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %last, %pair, %grid : tensor<i64>, tensor<2xi64>, tensor<2x2xi64>
}

// -----

// NEGATIVE: an out-of-range index is the runtime's error to report, and a
// dynamic entry has no value.
// CHECK-LABEL: func.func @gather_not_folded
// CHECK:         %[[OOR:.+]] = ingot.gather %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK:         %[[S:.+]] = ingot.shape
// CHECK:         %[[DYN:.+]] = ingot.gather %[[S]], %{{.+}} {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK:         return %[[OOR]], %[[DYN]]
func.func @gather_not_folded(%y: tensor<?x8xf32>) -> (tensor<1xi64>, tensor<1xi64>) {
  %c = ingot.constant dense<[2, 8, 64]> : tensor<3xi64>
  %three = ingot.constant dense<[3]> : tensor<1xi64>
  %oor = ingot.gather %c, %three {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %s = ingot.shape %y {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x8xf32> -> tensor<2xi64>
  %zero = ingot.constant dense<[0]> : tensor<1xi64>
  %dyn = ingot.gather %s, %zero {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %oor, %dyn : tensor<1xi64>, tensor<1xi64>
}

// -----

// Integer arithmetic on constant shape vectors, elementwise or against a
// scalar; the results are checked by hand.
// CHECK-LABEL: func.func @integer_arithmetic
// CHECK-NOT:     ingot.add
// CHECK-NOT:     ingot.sub
// CHECK-NOT:     ingot.mul
// CHECK-NOT:     ingot.div
// CHECK-DAG:     %[[ADD:.+]] = ingot.constant dense<[17, -5]> : tensor<2xi64>
// CHECK-DAG:     %[[SUB:.+]] = ingot.constant dense<[11, -8]> : tensor<2xi64>
// CHECK-DAG:     %[[MUL:.+]] = ingot.constant dense<[60, -14]> : tensor<2xi64>
// CHECK-DAG:     %[[DIV:.+]] = ingot.constant dense<[2, 3]> : tensor<2xi32>
// CHECK:         return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]]
func.func @integer_arithmetic() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi32>) {
  %a = ingot.constant dense<[12, -7]> : tensor<2xi64>
  %b = ingot.constant dense<[5, 2]> : tensor<2xi64>
  %one = ingot.constant dense<1> : tensor<i64>
  // [12+5, -7+2]
  %add = ingot.add %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // [12-1, -7-1]: a scalar broadcasts.
  %sub = ingot.sub %a, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  // [12*5, -7*2]
  %mul = ingot.mul %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %c = ingot.constant dense<[6, 10]> : tensor<2xi32>
  %d = ingot.constant dense<3> : tensor<i32>
  // [6/3, 10/3] truncates.
  %div = ingot.div %c, %d : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  return %add, %sub, %mul, %div : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi32>
}

// -----

// A sequence-length computation: seq - 1 where seq is a static dim.
// CHECK-LABEL: func.func @seq_minus_one
// CHECK-NEXT:    %[[R:.+]] = ingot.constant dense<15> : tensor<1xi64>
// CHECK-NEXT:    return %[[R]]
func.func @seq_minus_one(%x: tensor<1x16x64xf32>) -> tensor<1xi64> {
  %s = ingot.shape %x {start = 1 : i64, end = 2 : i64} : tensor<1x16x64xf32> -> tensor<1xi64>
  %one = ingot.constant dense<1> : tensor<1xi64>
  %r = ingot.sub %s, %one : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %r : tensor<1xi64>
}

// -----

// NEGATIVE: division by zero is left for the runtime to report.
// CHECK-LABEL: func.func @integer_division_by_zero
// CHECK:         %[[R:.+]] = ingot.div
// CHECK-NEXT:    return %[[R]]
func.func @integer_division_by_zero() -> tensor<2xi64> {
  %a = ingot.constant dense<[12, 7]> : tensor<2xi64>
  %b = ingot.constant dense<[0, 2]> : tensor<2xi64>
  %r = ingot.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// NEGATIVE: float arithmetic is data, not a shape computation.
// CHECK-LABEL: func.func @float_arithmetic
// CHECK-DAG:     %[[A:.+]] = ingot.constant dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[B:.+]] = ingot.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK:         %[[ADD:.+]] = ingot.add %[[A]], %[[B]]
// CHECK:         %[[MUL:.+]] = ingot.mul %[[ADD]], %[[B]]
// CHECK:         return %[[MUL]]
func.func @float_arithmetic() -> tensor<2xf32> {
  %a = ingot.constant dense<[1.5, 2.0]> : tensor<2xf32>
  %b = ingot.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %add = ingot.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %mul = ingot.mul %add, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %mul : tensor<2xf32>
}

// -----

// NEGATIVE: an integer add whose operand is a run-time value.
// CHECK-LABEL: func.func @integer_arithmetic_on_argument
// CHECK-SAME:    (%[[S:.+]]: tensor<2xi64>)
// CHECK:         %[[ONE:.+]] = ingot.constant dense<1> : tensor<i64>
// CHECK-NEXT:    %[[R:.+]] = ingot.add %[[S]], %[[ONE]]
// CHECK-NEXT:    return %[[R]]
func.func @integer_arithmetic_on_argument(%s: tensor<2xi64>) -> tensor<2xi64> {
  %one = ingot.constant dense<1> : tensor<i64>
  %r = ingot.add %s, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Identity transposes vanish, dynamic dims included; a rank-1 reversal is
// the identity too.
// CHECK-LABEL: func.func @identity_transpose
// CHECK-SAME:    (%[[X:.+]]: tensor<?x8xf32>, %[[V:.+]]: tensor<5xf32>)
// CHECK-NOT:     ingot.transpose
// CHECK:         return %[[X]], %[[V]]
func.func @identity_transpose(%x: tensor<?x8xf32>, %v: tensor<5xf32>) -> (tensor<?x8xf32>, tensor<5xf32>) {
  %t = ingot.transpose %x {perm = array<i64: 0, 1>} : tensor<?x8xf32> -> tensor<?x8xf32>
  %r = ingot.transpose %v {perm = array<i64>} : tensor<5xf32> -> tensor<5xf32>
  return %t, %r : tensor<?x8xf32>, tensor<5xf32>
}

// -----

// NEGATIVE: real permutations stay, including a reversal (empty perm) of a
// square matrix whose type does not change.
// CHECK-LABEL: func.func @non_identity_transpose
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8xf32>, %[[Y:.+]]: tensor<4x4xf32>)
// CHECK:         %[[T:.+]] = ingot.transpose %[[X]] {perm = array<i64: 1, 0>} : tensor<2x8xf32> -> tensor<8x2xf32>
// CHECK:         %[[R:.+]] = ingot.transpose %[[Y]] {perm = array<i64>} : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK:         return %[[T]], %[[R]]
func.func @non_identity_transpose(%x: tensor<2x8xf32>, %y: tensor<4x4xf32>) -> (tensor<8x2xf32>, tensor<4x4xf32>) {
  %t = ingot.transpose %x {perm = array<i64: 1, 0>} : tensor<2x8xf32> -> tensor<8x2xf32>
  %r = ingot.transpose %y {perm = array<i64>} : tensor<4x4xf32> -> tensor<4x4xf32>
  return %t, %r : tensor<8x2xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @cast_to_same_type
// CHECK-SAME:    (%[[X:.+]]: tensor<?x8xf32>)
// CHECK-NOT:     ingot.cast
// CHECK:         return %[[X]]
func.func @cast_to_same_type(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = ingot.cast %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// NEGATIVE: a cast that converts stays; a float constant is not tracked, so
// casting it to integers does not fold either.
// CHECK-LABEL: func.func @cast_that_converts
// CHECK-SAME:    (%[[X:.+]]: tensor<?x8xf32>)
// CHECK:         %[[F:.+]] = ingot.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK:         %[[C:.+]] = ingot.cast %[[X]] : tensor<?x8xf32> -> tensor<?x8xf16>
// CHECK:         %[[I:.+]] = ingot.cast %[[F]] : tensor<2xf32> -> tensor<2xi64>
// CHECK:         return %[[C]], %[[I]]
func.func @cast_that_converts(%x: tensor<?x8xf32>) -> (tensor<?x8xf16>, tensor<2xi64>) {
  %c = ingot.cast %x : tensor<?x8xf32> -> tensor<?x8xf16>
  %f = ingot.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %i = ingot.cast %f : tensor<2xf32> -> tensor<2xi64>
  return %c, %i : tensor<?x8xf16>, tensor<2xi64>
}

// -----

// An integer cast of a shape vector folds to a constant of the new type.
// CHECK-LABEL: func.func @integer_cast_of_constant
// CHECK-NEXT:    %[[C:.+]] = ingot.constant dense<[4, 16]> : tensor<2xi32>
// CHECK-NEXT:    return %[[C]]
func.func @integer_cast_of_constant() -> tensor<2xi32> {
  %a = ingot.constant dense<[4, 16]> : tensor<2xi64>
  %c = ingot.cast %a : tensor<2xi64> -> tensor<2xi32>
  return %c : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @reshape_to_identical_static_type
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8xf32>, %[[S:.+]]: tensor<2xi64>)
// CHECK-NOT:     ingot.reshape
// CHECK:         return %[[X]], %[[X]]
func.func @reshape_to_identical_static_type(%x: tensor<2x8xf32>, %s: tensor<2xi64>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %c = ingot.constant dense<[2, 8]> : tensor<2xi64>
  %r0 = ingot.reshape %x, %c {allowzero = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  // The result type alone proves the reshape is a no-op.
  %r1 = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  return %r0, %r1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// NEGATIVE: with two dynamic dims the same type does not mean the same
// shape (2x8 may become 4x4), and a reshape to a different static type
// stays.
// CHECK-LABEL: func.func @reshape_not_removed
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?xf32>, %[[S:.+]]: tensor<2xi64>, %[[Y:.+]]: tensor<2x8xf32>)
// CHECK:         %[[R0:.+]] = ingot.reshape %[[X]], %[[S]] {allowzero = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK:         %[[R1:.+]] = ingot.reshape %[[Y]], %{{.+}} {allowzero = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<4x4xf32>
// CHECK:         return %[[R0]], %[[R1]]
func.func @reshape_not_removed(%x: tensor<?x?xf32>, %s: tensor<2xi64>, %y: tensor<2x8xf32>) -> (tensor<?x?xf32>, tensor<4x4xf32>) {
  %r0 = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %c = ingot.constant dense<[4, 4]> : tensor<2xi64>
  %r1 = ingot.reshape %y, %c {allowzero = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  return %r0, %r1 : tensor<?x?xf32>, tensor<4x4xf32>
}

// -----

// Unsqueeze/squeeze/reshape of constant shape vectors fold to constants of
// the new shape.
// CHECK-LABEL: func.func @unsqueeze_squeeze_of_constants
// CHECK-NOT:     ingot.unsqueeze
// CHECK-NOT:     ingot.squeeze
// CHECK-DAG:     %[[U:.+]] = ingot.constant dense<{{\[\[}}4, 5]]> : tensor<1x2xi64>
// CHECK-DAG:     %[[S:.+]] = ingot.constant dense<7> : tensor<i64>
// CHECK-DAG:     %[[R:.+]] = ingot.constant dense<{{\[\[}}4], [5]]> : tensor<2x1xi64>
// CHECK:         return %[[U]], %[[S]], %[[R]]
func.func @unsqueeze_squeeze_of_constants() -> (tensor<1x2xi64>, tensor<i64>, tensor<2x1xi64>) {
  %a = ingot.constant dense<[4, 5]> : tensor<2xi64>
  %u = ingot.unsqueeze %a {axes = array<i64: 0>} : tensor<2xi64> -> tensor<1x2xi64>
  %k = ingot.constant dense<[7]> : tensor<1xi64>
  %s = ingot.squeeze %k {axes = array<i64: 0>} : tensor<1xi64> -> tensor<i64>
  %t = ingot.constant dense<[2, 1]> : tensor<2xi64>
  %r = ingot.reshape %a, %t {allowzero = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
  return %u, %s, %r : tensor<1x2xi64>, tensor<i64>, tensor<2x1xi64>
}

// -----

// A single-input concat is its input.
// CHECK-LABEL: func.func @concat_of_one
// CHECK-SAME:    (%[[X:.+]]: tensor<?x8xf32>)
// CHECK-NOT:     ingot.concat
// CHECK:         return %[[X]]
func.func @concat_of_one(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = ingot.concat %x {axis = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// Ops whose results are unused are erased, weights and shape ops included;
// only the returned value's producer survives.
// CHECK-LABEL: func.func @dead_ops_erased
// CHECK-SAME:    (%[[X:.+]]: tensor<?x8xf32>)
// CHECK-NEXT:    %[[R:.+]] = ingot.tanh %[[X]] : tensor<?x8xf32>
// CHECK-NEXT:    return %[[R]]
func.func @dead_ops_erased(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %a = ingot.relu %x : tensor<?x8xf32>
  %b = ingot.exp %a : tensor<?x8xf32>
  %w = ingot.param "w" : tensor<8x8xf32>
  %m = ingot.matmul %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x8xf32> -> tensor<2xi64>
  %r = ingot.tanh %x : tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// gather(shape(x), [1]) reads only a static dim of a partly dynamic tensor.
// CHECK-LABEL: func.func @gather_static_dim_of_dynamic_shape
// CHECK:         %[[C:.+]] = ingot.constant dense<8> : tensor<1xi64>
// CHECK-NOT:     ingot.gather
// CHECK:         return %[[C]]
func.func @gather_static_dim_of_dynamic_shape(%x: tensor<?x8x64xf32>) -> tensor<1xi64> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x8x64xf32> -> tensor<3xi64>
  %i = ingot.constant dense<[1]> : tensor<1xi64>
  %g = ingot.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %g : tensor<1xi64>
}
