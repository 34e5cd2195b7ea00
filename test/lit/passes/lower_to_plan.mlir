// RUN: ingot-opt %s --split-input-file --ingot-compute-bounds="max-dims=seq=128" --ingot-lower-to-plan | FileCheck %s
// RUN: ingot-opt %s --split-input-file --ingot-compute-bounds="max-dims=seq=128" --ingot-lower-to-plan | FileCheck %s --check-prefix=NOGRAPH
// RUN: ingot-opt %S/Inputs/lower_to_plan_missing_bound.mlir --ingot-lower-to-plan --verify-diagnostics
// RUN: ingot-opt %S/Inputs/external_declaration.mlir --ingot-lower-to-plan | FileCheck %s --check-prefix=DECL

// --ingot-lower-to-plan turns each graph function into a plan function over
// memrefs: arguments stay arguments, weights become plan.param, constants
// plan.constant, and every compute op a plan.alloc bounded by its
// ingot.max_shape plus one plan.kernel named after the op. The third RUN
// lowers without --ingot-compute-bounds: Inputs/lower_to_plan_missing_bound.mlir
// expects the error for a dynamic result that has no bound.

// Nothing of the graph dialect is left: no ingot op, no ingot.* attribute
// (an `origin` string may still name an op, hence the quote).
// NOGRAPH-NOT: {{[^"]ingot\.}}

// Attributes `ingot.X` on arguments, results and the function become
// `plan.X`. The kernel's `args` are the op's attributes; its `origin` is the
// node name from a NameLoc, the first location of a FusedLoc, or else the
// op name.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    (%[[X:.+]]: memref<?x64xf32> {plan.dims = ["seq", ""], plan.name = "x"})
// CHECK-SAME:    -> (memref<?x32xf32> {plan.name = "logits"}, memref<4x4xf32> {plan.name = "static"})
// CHECK-SAME:    attributes {plan.symbols = {seq = 128 : i64}}
// CHECK:         %[[W:.+]] = plan.param "fc.weight" : memref<32x64xf32>
// CHECK:         %[[B:.+]] = plan.param "fc.bias" : memref<32xf32>
// CHECK:         %[[G:.+]] = plan.param "ln.weight" : memref<64xf32>
// CHECK:         %[[LB:.+]] = plan.param "ln.bias" : memref<64xf32>
// CHECK:         %[[N:.+]] = plan.alloc {max_shape = array<i64: 128, 64>} : memref<?x64xf32>
// CHECK-NEXT:    plan.kernel "layer_norm" ins(%[[X]], %[[G]], %[[LB]] : memref<?x64xf32>, memref<64xf32>, memref<64xf32>) outs(%[[N]] : memref<?x64xf32>)
// CHECK-SAME:      {args = {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}, origin = "ln_1"}
// CHECK:         %[[H:.+]] = plan.alloc {max_shape = array<i64: 128, 32>} : memref<?x32xf32>
// CHECK-NEXT:    plan.kernel "gemm" ins(%[[N]], %[[W]], %[[B]] : memref<?x64xf32>, memref<32x64xf32>, memref<32xf32>) outs(%[[H]] : memref<?x32xf32>)
// CHECK-SAME:      {args = {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transA = 0 : i64, transB = 1 : i64}, origin = "fc_1"}
// CHECK:         %[[S:.+]] = plan.constant dense<[-1, 32]> : tensor<2xi64> -> memref<2xi64>
// CHECK-NEXT:    %[[R:.+]] = plan.alloc {max_shape = array<i64: 128, 32>} : memref<?x32xf32>
// CHECK-NEXT:    plan.kernel "reshape" ins(%[[H]], %[[S]] : memref<?x32xf32>, memref<2xi64>) outs(%[[R]] : memref<?x32xf32>) {args = {allowzero = 0 : i64}, origin = "reshape_1"}
// CHECK-NEXT:    %[[Y:.+]] = plan.alloc {max_shape = array<i64: 128, 32>} : memref<?x32xf32>
// CHECK-NEXT:    plan.kernel "relu" ins(%[[R]] : memref<?x32xf32>) outs(%[[Y]] : memref<?x32xf32>) {args = {}, origin = "ingot.relu"}
// A static result is bounded by its own type.
// CHECK-NEXT:    %[[T:.+]] = plan.param "table" : memref<4x4xf32>
// CHECK-NEXT:    %[[E:.+]] = plan.alloc {max_shape = array<i64: 4, 4>} : memref<4x4xf32>
// CHECK-NEXT:    plan.kernel "exp" ins(%[[T]] : memref<4x4xf32>) outs(%[[E]] : memref<4x4xf32>) {args = {}, origin = "exp_1"}
// CHECK-NEXT:    return %[[Y]], %[[E]] : memref<?x32xf32>, memref<4x4xf32>
func.func @mlp(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""], ingot.name = "x"})
    -> (tensor<?x32xf32> {ingot.name = "logits"}, tensor<4x4xf32> {ingot.name = "static"}) {
  %w = ingot.param "fc.weight" : tensor<32x64xf32>
  %b = ingot.param "fc.bias" : tensor<32xf32>
  %g = ingot.param "ln.weight" : tensor<64xf32>
  %lb = ingot.param "ln.bias" : tensor<64xf32>
  %n = ingot.layer_norm %x, %g, %lb {axis = -1 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32> loc("ln_1")
  %h = ingot.gemm %n, %w, %b {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64}
      : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32> loc("fc_1")
  %s = ingot.constant dense<[-1, 32]> : tensor<2xi64>
  %r = ingot.reshape %h, %s {allowzero = 0 : i64} : (tensor<?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32> loc(fused["reshape_1", "onnx::Reshape_7"])
  %y = ingot.relu %r : tensor<?x32xf32>
  %c = ingot.param "table" : tensor<4x4xf32>
  %e = ingot.exp %c : tensor<4x4xf32> loc("exp_1")
  return %y, %e : tensor<?x32xf32>, tensor<4x4xf32>
}

// -----

// Absent optional operands at the end are left off (gemm without c,
// layer_norm without bias, trilu without k); one before a present operand
// (linear's bias, with a residual) is one shared plan.none, created first in
// the body.
// CHECK-LABEL: func.func @optional_operands
// CHECK-SAME:    (%[[X:.+]]: memref<?x64xf32> {plan.dims = ["seq", ""]}, %[[M:.+]]: memref<?x?xf32> {plan.dims = ["seq", "seq"]})
// CHECK-NEXT:    %[[NONE:.+]] = plan.none
// CHECK-NOT:     plan.none
// CHECK:         %[[W:.+]] = plan.param "fc.weight" : memref<32x64xf32>
// CHECK:         %[[G:.+]] = plan.param "ln.weight" : memref<64xf32>
// CHECK:         %[[K:.+]] = plan.constant dense<1> : tensor<i64> -> memref<i64>
// CHECK:         plan.kernel "gemm" ins(%[[X]], %[[W]] : memref<?x64xf32>, memref<32x64xf32>) outs({{.+}}) {{.*}}origin = "fc_no_bias"
// CHECK:         plan.kernel "layer_norm" ins(%[[X]], %[[G]] : memref<?x64xf32>, memref<64xf32>) outs({{.+}}) {{.*}}origin = "ln_no_bias"
// CHECK:         %[[U:.+]] = plan.alloc {max_shape = array<i64: 128, 128>} : memref<?x?xf32>
// CHECK-NEXT:    plan.kernel "trilu" ins(%[[M]] : memref<?x?xf32>) outs(%[[U]] : memref<?x?xf32>) {args = {upper = 1 : i64}, origin = "triu"}
// CHECK:         plan.kernel "trilu" ins(%[[M]], %[[K]] : memref<?x?xf32>, memref<i64>) outs({{.+}}) {args = {upper = 0 : i64}, origin = "tril_k"}
// CHECK:         plan.kernel "linear" ins(%[[X]], %[[L:.+]], %[[NONE]], %[[X]] : memref<?x64xf32>, memref<64x64xf32>, none, memref<?x64xf32>) outs({{.+}}) {{.*}}origin = "fc_residual"
// CHECK-NOT:     plan.none
// CHECK:         return
func.func @optional_operands(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}, %m: tensor<?x?xf32> {ingot.dims = ["seq", "seq"]})
    -> (tensor<?x32xf32>, tensor<?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x64xf32>) {
  %w = ingot.param "fc.weight" : tensor<32x64xf32>
  %g = ingot.param "ln.weight" : tensor<64xf32>
  %k = ingot.constant dense<1> : tensor<i64>
  %h = ingot.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64}
      : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32> loc("fc_no_bias")
  %n = ingot.layer_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32> loc("ln_no_bias")
  %u = ingot.trilu %m {upper = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32> loc("triu")
  %l = ingot.trilu %m, %k {upper = 0 : i64} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32> loc("tril_k")
  %lw = ingot.param "fc2.weight" : tensor<64x64xf32>
  %r = ingot.linear %x, %lw residual %x {w_layout = "nk"}
      : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32> loc("fc_residual")
  return %h, %n, %u, %l, %r : tensor<?x32xf32>, tensor<?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x64xf32>
}

// -----

// NEGATIVE: with every optional operand present no plan.none is created.
// CHECK-LABEL: func.func @no_padding_needed
// CHECK-NOT:     plan.none
// CHECK:         return
func.func @no_padding_needed(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<2xf32>) -> tensor<4x2xf32> {
  %r = ingot.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 0 : i64}
      : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Shape ops lower like any other kernel; an input returned unchanged stays
// the argument.
// CHECK-LABEL: func.func @shape_kernels_and_passthrough
// CHECK-SAME:    (%[[X:.+]]: memref<?x64xf32> {plan.dims = ["seq", ""]})
// CHECK:         %[[S:.+]] = plan.alloc {max_shape = array<i64: 2>} : memref<2xi64>
// CHECK-NEXT:    plan.kernel "shape" ins(%[[X]] : memref<?x64xf32>) outs(%[[S]] : memref<2xi64>) {args = {end = 9223372036854775807 : i64, start = 0 : i64}, origin = "shape_1"}
// CHECK-NEXT:    %[[Z:.+]] = plan.alloc {max_shape = array<i64: 128, 64>} : memref<?x?xf32>
// CHECK-NEXT:    plan.kernel "constant_of_shape" ins(%[[S]] : memref<2xi64>) outs(%[[Z]] : memref<?x?xf32>) {args = {value = 0.000000e+00 : f64}, origin = "zeros"}
// CHECK-NEXT:    return %[[X]], %[[Z]] : memref<?x64xf32>, memref<?x?xf32>
func.func @shape_kernels_and_passthrough(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}) -> (tensor<?x64xf32>, tensor<?x?xf32>) {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x64xf32> -> tensor<2xi64> loc("shape_1")
  %z = ingot.constant_of_shape %s {value = 0.0 : f64} : tensor<2xi64> -> tensor<?x?xf32> loc("zeros")
  return %x, %z : tensor<?x64xf32>, tensor<?x?xf32>
}

// A function without a body has nothing to lower and must survive the pass.
// DECL: func.func private @external

// -----

// A quantised param carries its block format and group into the plan; its
// memref keeps the logical shape and element type.
// CHECK-LABEL: func.func @quantised_param
// CHECK:         plan.param "w@q4g32" {group = 32 : i64, parts = ["w"], quant = "q4"} : memref<16x64xf32>
func.func @quantised_param(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}) -> tensor<?x16xf32> {
  %w = ingot.param "w@q4g32" {parts = ["w"], quant = #ingot.quant<"q4", group = 32>} : tensor<16x64xf32>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// conv_integer with a weight zero point but none for the input: the absent
// operand is a plan.none in its place, so the kernel still finds the
// weight's zero point at index 3; the result is i32.
// CHECK-LABEL: func.func @conv_integer_weight_zero_point_only
// CHECK:         %[[NONE:.+]] = plan.none
// CHECK:         plan.kernel "conv_integer" ins(%{{.+}}, %{{.+}}, %[[NONE]], %{{.+}} : memref<1x3x8x8xui8>, memref<4x3x3x3xi8>, none, memref<4xi8>) outs(%{{.+}} : memref<1x4x6x6xi32>)
// CHECK-SAME:      group = 1 : i64
func.func @conv_integer_weight_zero_point_only(%x: tensor<1x3x8x8xui8>) -> tensor<1x4x6x6xi32> {
  %w = ingot.param "w" : tensor<4x3x3x3xi8>
  %wzp = ingot.param "wzp" : tensor<4xi8>
  %r = ingot.conv_integer %x, %w w_zp %wzp {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<4xi8>) -> tensor<1x4x6x6xi32>
  return %r : tensor<1x4x6x6xi32>
}
