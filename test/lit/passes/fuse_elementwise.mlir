// RUN: ingot-opt %s --ingot-fuse-elementwise --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fuse-elementwise=max-ops=2 --split-input-file | FileCheck %s --check-prefix=MAXOPS
// RUN: ingot-opt %s --ingot-fuse-elementwise=max-inputs=2 --split-input-file | FileCheck %s --check-prefix=MAXIN
// RUN: ingot-opt %s --ingot-fuse-elementwise=reductions=false --split-input-file | FileCheck %s --check-prefix=NORED

// GELU as exporters write it: five ops, three scalar constants that become
// program constants, one input.
// CHECK-LABEL: func.func @gelu
// CHECK-SAME:    (%[[X:.+]]: tensor<?x64xf32>)
// CHECK-NOT:     ingot.constant
// CHECK:         %[[F:.+]] = ingot.fused_elementwise %[[X]] {args = array<i64: 0, -1, 0, 1, 2, -1, 1, -1, 3, 4, 0, 5, 2, -1, 6, 7>, constants = array<f64: 1.4142135381698608, 1.000000e+00, 5.000000e-01>, ops = "const div erf const add mul const mul"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT:    return %[[F]]
// max-ops=2: groups of two grow back from the result; the div is left over.
// MAXOPS-LABEL: func.func @gelu
// MAXOPS-SAME:    (%[[X:.+]]: tensor<?x64xf32>)
// MAXOPS-NOT:     ops = "const div erf const add mul const mul"
// MAXOPS:         %[[D:.+]] = ingot.div %[[X]]
// MAXOPS:         %[[A:.+]] = ingot.fused_elementwise %[[D]] {args = array<i64: 0, -1, 0, -1, 1, 2>, constants = array<f64: 1.000000e+00>, ops = "erf const add"}
// MAXOPS:         %[[F:.+]] = ingot.fused_elementwise %[[X]], %[[A]] {args = array<i64: 0, 1, 0, -1, 2, 3>, constants = array<f64: 5.000000e-01>, ops = "mul const mul"}
// MAXOPS-NEXT:    return %[[F]]
func.func @gelu(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c = ingot.constant dense<1.41421354> : tensor<f32>
  %one = ingot.constant dense<1.0> : tensor<f32>
  %half = ingot.constant dense<0.5> : tensor<f32>
  %0 = ingot.div %x, %c : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %1 = ingot.erf %0 : tensor<?x64xf32>
  %2 = ingot.add %1, %one : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %3 = ingot.mul %x, %2 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %4 = ingot.mul %3, %half : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  return %4 : tensor<?x64xf32>
}

// -----

// Scale, bias and activation with broadcast operands: they stay inputs.
// CHECK-LABEL: func.func @scale_bias_relu
// CHECK-SAME:    (%[[X:.+]]: tensor<?x64xf32>, %[[S:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK:         %[[F:.+]] = ingot.fused_elementwise %[[X]], %[[S]], %[[B]] {args = array<i64: 0, 1, 3, 2, 4, -1>, constants = array<f64>, ops = "mul add relu"} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT:    return %[[F]]
// max-inputs=2: taking the mul would make three inputs, so it stays.
// MAXIN-LABEL: func.func @scale_bias_relu
// MAXIN-SAME:    (%[[X:.+]]: tensor<?x64xf32>, %[[S:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// MAXIN-NOT:     ops = "mul add relu"
// MAXIN:         %[[M:.+]] = ingot.mul %[[X]], %[[S]]
// MAXIN:         %[[F:.+]] = ingot.fused_elementwise %[[M]], %[[B]] {args = array<i64: 0, 1, 2, -1>, constants = array<f64>, ops = "add relu"} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// MAXIN-NEXT:    return %[[F]]
func.func @scale_bias_relu(%x: tensor<?x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = ingot.mul %x, %s : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = ingot.add %0, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %2 = ingot.relu %1 : tensor<?x64xf32>
  return %2 : tensor<?x64xf32>
}

// -----

// The math families: alpha travels as a program constant.
// CHECK-LABEL: func.func @math_kinds
// CHECK:         ingot.fused_elementwise %{{.+}}, %{{.+}} {args = array<i64: 0, 1, 2, 0, 3, -1>, constants = array<f64: 0.10000000149011612>, ops = "max leaky_relu sigmoid"}
// CHECK-NOT:     ingot.binary_math
func.func @math_kinds(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = ingot.binary_math %x, %y {kind = "max"} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = ingot.unary_math %0 {kind = "leaky_relu", alpha = 0.1 : f32} : tensor<8x16xf32>
  %2 = ingot.sigmoid %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// Must not fire: a single op.
// CHECK-LABEL: func.func @single_op
// CHECK-NOT:     ingot.fused_elementwise
// CHECK:         ingot.relu
func.func @single_op(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = ingot.relu %x : tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Must not fire: integer tensors.
// CHECK-LABEL: func.func @integers
// CHECK-NOT:     ingot.fused_elementwise
// CHECK:         ingot.add
// CHECK:         ingot.mul
func.func @integers(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi64> {
  %0 = ingot.add %x, %y : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = ingot.mul %0, %y : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %1 : tensor<4xi64>
}

// -----

// An intermediate used outside splits the chain: the mul stays, the rest
// fuses with the mul's result as an input.
// CHECK-LABEL: func.func @used_outside
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf32>, %[[Y:.+]]: tensor<8xf32>)
// CHECK:         %[[M:.+]] = ingot.mul %[[X]], %[[Y]]
// CHECK:         %[[F:.+]] = ingot.fused_elementwise %[[M]], %[[Y]] {args = array<i64: 0, -1, 2, 1>, constants = array<f64>, ops = "exp add"}
// CHECK:         return %[[F]], %[[M]]
func.func @used_outside(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = ingot.mul %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = ingot.exp %0 : tensor<8xf32>
  %2 = ingot.add %1, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %2, %0 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Must not fire: the sqrt's result is smaller than the mul's, so fusing it
// would compute it once per broadcast element instead of once.
// CHECK-LABEL: func.func @smaller_intermediate
// CHECK-NOT:     ingot.fused_elementwise
// CHECK:         ingot.sqrt
// CHECK:         ingot.mul
func.func @smaller_intermediate(%x: tensor<?x64xf32>, %v: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = ingot.sqrt %v : tensor<64xf32>
  %1 = ingot.mul %x, %0 : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %1 : tensor<?x64xf32>
}

// -----

// LayerNorm written out: the centred value feeds both the variance and the
// division, so it stays; the square joins the mean over the last axis, and
// the eps add + sqrt fuse on the reduced shape.
// CHECK-LABEL: func.func @layer_norm_parts
// CHECK:         %[[C:.+]] = ingot.sub
// CHECK-NOT:     ingot.pow
// CHECK-NOT:     ingot.reduce_mean
// CHECK:         %[[V:.+]] = ingot.fused_elementwise %[[C]] {args = array<i64: 0, -1, 0, 1>, constants = array<f64: 2.000000e+00>, keepdims = 1 : i64, ops = "const pow", reduce = "mean"} : (tensor<?x64xf32>) -> tensor<?x1xf32>
// CHECK:         %[[D:.+]] = ingot.fused_elementwise %[[V]] {args = array<i64: 0, -1, 0, 1, 2, -1>, constants = array<f64: 9.9999997473787516E-6>, ops = "const add sqrt"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
// CHECK:         ingot.div %[[C]], %[[D]]
// reductions=false: the pow and the reduce_mean stay apart.
// NORED-LABEL: func.func @layer_norm_parts
// NORED-NOT:     reduce = "mean"
// NORED:         %[[P:.+]] = ingot.pow
// NORED:         %[[V:.+]] = ingot.reduce_mean %[[P]]
// NORED:         ingot.fused_elementwise %[[V]] {args = array<i64: 0, -1, 0, 1, 2, -1>, constants = array<f64: 9.9999997473787516E-6>, ops = "const add sqrt"}
func.func @layer_norm_parts(%x: tensor<?x64xf32>, %mean: tensor<?x1xf32>) -> tensor<?x64xf32> {
  %two = ingot.constant dense<2.0> : tensor<f32>
  %eps = ingot.constant dense<1.0e-5> : tensor<f32>
  %d = ingot.sub %x, %mean : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  %p = ingot.pow %d, %two : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %v = ingot.reduce_mean %p {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x64xf32> -> tensor<?x1xf32>
  %a = ingot.add %v, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %s = ingot.sqrt %a : tensor<?x1xf32>
  %y = ingot.div %d, %s : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// A one-element constant of higher rank than every input widens the
// result, so it stays a tensor input.
// CHECK-LABEL: func.func @constant_widens
// CHECK-SAME:    (%[[X:.+]]: tensor<64xf32>)
// CHECK:         %[[C:.+]] = ingot.constant
// CHECK:         ingot.fused_elementwise %[[X]], %[[C]] {args = array<i64: 0, 1, 2, -1>, constants = array<f64>, ops = "add relu"} : (tensor<64xf32>, tensor<1x1xf32>) -> tensor<1x64xf32>
func.func @constant_widens(%x: tensor<64xf32>) -> tensor<1x64xf32> {
  %c = ingot.constant dense<1.0> : tensor<1x1xf32>
  %0 = ingot.add %x, %c : (tensor<64xf32>, tensor<1x1xf32>) -> tensor<1x64xf32>
  %1 = ingot.relu %0 : tensor<1x64xf32>
  return %1 : tensor<1x64xf32>
}

// -----

// An intermediate read twice by one member is still internal.
// CHECK-LABEL: func.func @shared_operand_twice
// CHECK:         ingot.fused_elementwise %{{.+}} {args = array<i64: 0, -1, 1, 1, 2, -1>, constants = array<f64>, ops = "neg mul tanh"}
func.func @shared_operand_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = ingot.neg %x : tensor<8xf32>
  %1 = ingot.mul %0, %0 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = ingot.tanh %1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// A sum over the last axis joins the chain (keepdims = 0 drops the axis).
// CHECK-LABEL: func.func @row_sum
// CHECK:         ingot.fused_elementwise %{{.+}}, %{{.+}} {args = array<i64: 0, 1, 2, -1>, constants = array<f64>, keepdims = 0 : i64, ops = "sub exp", reduce = "sum"} : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NOT:     ingot.reduce
// reductions=false: the chain fuses on the full shape, the sum stays.
// NORED-LABEL: func.func @row_sum
// NORED-NOT:     reduce = "sum"
// NORED:         %[[F:.+]] = ingot.fused_elementwise %{{.+}}, %{{.+}} {args = array<i64: 0, 1, 2, -1>, constants = array<f64>, ops = "sub exp"} : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
// NORED-NEXT:    ingot.reduce %[[F]] {axes = array<i64: -1>, keepdims = 0 : i64, kind = "sum"}
func.func @row_sum(%x: tensor<4x16xf32>, %m: tensor<4x1xf32>) -> tensor<4xf32> {
  %0 = ingot.sub %x, %m : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %1 = ingot.exp %0 : tensor<4x16xf32>
  %2 = ingot.reduce %1 {kind = "sum", axes = array<i64: -1>, keepdims = 0 : i64} : (tensor<4x16xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Must not fire: a reduction over another axis than the last.
// CHECK-LABEL: func.func @reduce_first_axis
// CHECK-NOT:     ingot.fused_elementwise
// CHECK:         ingot.exp
// CHECK:         ingot.reduce_mean
func.func @reduce_first_axis(%x: tensor<4x16xf32>) -> tensor<1x16xf32> {
  %0 = ingot.exp %x : tensor<4x16xf32>
  %1 = ingot.reduce_mean %0 {axes = array<i64: 0>, keepdims = 1 : i64} : tensor<4x16xf32> -> tensor<1x16xf32>
  return %1 : tensor<1x16xf32>
}

// -----

// An i32 -> f32 cast (matmul_integer's result) joins the region as
// from_i32, reading the i32 tensor itself; a cast from another type does not.
// CHECK-LABEL: func.func @cast_from_i32
// CHECK-SAME:    (%[[Q:.+]]: tensor<8x16xi32>, %[[S:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NOT:     ingot.cast
// CHECK:         ingot.fused_elementwise %[[Q]], %[[S]], %[[B]] {{{.*}}ops = "from_i32 mul add"} : (tensor<8x16xi32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
func.func @cast_from_i32(%q: tensor<8x16xi32>, %s: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = ingot.cast %q : tensor<8x16xi32> -> tensor<8x16xf32>
  %1 = ingot.mul %0, %s : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %2 = ingot.add %1, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// Must not fire on the cast: only int32 has a conversion opcode, so an
// int64 tensor stays outside the region behind its cast.
// CHECK-LABEL: func.func @cast_from_i64
// CHECK:         ingot.cast
// CHECK:         ingot.fused_elementwise %{{.*}} {{{.*}}ops = "mul add"}
func.func @cast_from_i64(%q: tensor<8x16xi64>, %s: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = ingot.cast %q : tensor<8x16xi64> -> tensor<8x16xf32>
  %1 = ingot.mul %0, %s : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %2 = ingot.add %1, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// A gelu (ingot-raise-gelu's, from jax2tf's 14-op tanh form) after a
// bias add, feeding a max over the last axis (Magika's conv head): one
// kernel of two opcodes and the max.
// CHECK-LABEL: func.func @gelu_tanh_then_max
// CHECK:         ingot.fused_elementwise %arg0, %arg1 {{.*}}ops = "add gelu_tanh", reduce = "max"}
// CHECK-NOT:     ingot.gelu
func.func @gelu_tanh_then_max(%x: tensor<1x8x20xf32>, %b: tensor<1x8x1xf32>) -> tensor<1x8x1xf32> {
  %y = ingot.add %x, %b : (tensor<1x8x20xf32>, tensor<1x8x1xf32>) -> tensor<1x8x20xf32>
  %g = ingot.gelu %y {approximate = "tanh"} : tensor<1x8x20xf32>
  %m = ingot.reduce %g {axes = array<i64: -1>, keepdims = 1 : i64, kind = "max", noop_with_empty_axes = 0 : i64} : (tensor<1x8x20xf32>) -> tensor<1x8x1xf32>
  return %m : tensor<1x8x1xf32>
}
