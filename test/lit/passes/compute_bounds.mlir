// RUN: ingot-opt %s --split-input-file --ingot-compute-bounds="max-dims=seq=128 default-max-dim=8" --verify-diagnostics | FileCheck %s
// RUN: not ingot-opt %s --split-input-file --ingot-compute-bounds="max-dims=seq" 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: not ingot-opt %s --split-input-file --ingot-compute-bounds="default-max-dim=0" 2>&1 | FileCheck %s --check-prefix=BADDEFAULT

// --ingot-compute-bounds gives every symbolic input dim its maximum (`seq`
// from max-dims = 128, any other symbol default-max-dim = 8), evaluates the
// shape rules and shape-vector values at those maxima, and records the
// bound of every dynamic result as `ingot.max_shape`.

// CHECK-LABEL: func.func @elementwise
// CHECK-SAME:    attributes {ingot.symbols = {seq = 128 : i64}}
// CHECK:         ingot.relu %{{.+}} {ingot.max_shape = array<i64: 128, 64>} : tensor<?x64xf32>
func.func @elementwise(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}) -> tensor<?x64xf32> {
  %y = ingot.relu %x : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// `batch` is not in max-dims and takes the default 8; both symbols are
// recorded. Bounds flow through matmul, a shape-driven reshape, a `-1`
// reshape and a concat that doubles its axis.
// CHECK-LABEL: func.func @matmul_reshape_concat
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32> {ingot.dims = ["batch", "seq", ""]}, %[[W:.+]]: tensor<64x256xf32>)
// CHECK-SAME:    attributes {ingot.symbols = {batch = 8 : i64, seq = 128 : i64}}
// CHECK:         %[[MM:.+]] = ingot.matmul %[[X]], %[[W]] {ingot.max_shape = array<i64: 8, 128, 256>}
// CHECK:         %[[S:.+]] = ingot.shape %[[X]] {end = 2 : i64, start = 0 : i64} : tensor<?x?x64xf32> -> tensor<2xi64>
// CHECK:         %[[H:.+]] = ingot.constant dense<[4, 16]> : tensor<2xi64>
// CHECK:         %[[T:.+]] = ingot.concat %[[S]], %[[H]] {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
// CHECK:         %[[HEADS:.+]] = ingot.reshape %[[X]], %[[T]] {allowzero = 0 : i64, ingot.max_shape = array<i64: 8, 128, 4, 16>}
// CHECK:         %[[FLAT:.+]] = ingot.reshape %[[X]], %{{.+}} {allowzero = 0 : i64, ingot.max_shape = array<i64: 1024, 64>}
// CHECK:         %[[CAT:.+]] = ingot.concat %[[FLAT]], %[[FLAT]] {axis = 0 : i64, ingot.max_shape = array<i64: 2048, 64>}
// CHECK:         return %[[MM]], %[[HEADS]], %[[CAT]], %[[T]]
func.func @matmul_reshape_concat(%x: tensor<?x?x64xf32> {ingot.dims = ["batch", "seq", ""]}, %w: tensor<64x256xf32>)
    -> (tensor<?x?x256xf32>, tensor<?x?x4x16xf32>, tensor<?x64xf32>, tensor<4xi64>) {
  %mm = ingot.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
  %s = ingot.shape %x {start = 0 : i64, end = 2 : i64} : tensor<?x?x64xf32> -> tensor<2xi64>
  %h = ingot.constant dense<[4, 16]> : tensor<2xi64>
  %t = ingot.concat %s, %h {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %heads = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  // 8 * 128 rows of 64.
  %f = ingot.constant dense<[-1, 64]> : tensor<2xi64>
  %flat = ingot.reshape %x, %f {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
  %cat = ingot.concat %flat, %flat {axis = 0 : i64} : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %mm, %heads, %cat, %t : tensor<?x?x256xf32>, tensor<?x?x4x16xf32>, tensor<?x64xf32>, tensor<4xi64>
}

// -----

// Static results get no bound (the exact attribute dicts below leave no
// room for one), shape vectors of static length included. A causal mask sized from seq is
// bounded by seq x seq.
// CHECK-LABEL: func.func @static_results_unannotated
// CHECK:         ingot.shape %{{.+}} {end = 1 : i64, start = 0 : i64} : tensor<?x64xf32> -> tensor<1xi64>
// CHECK:         ingot.concat %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
// CHECK:         ingot.constant_of_shape %{{.+}} {ingot.max_shape = array<i64: 128, 128>, value = 1.000000e+00 : f64} : tensor<2xi64> -> tensor<?x?xf32>
// CHECK:         ingot.trilu %{{.+}} {ingot.max_shape = array<i64: 128, 128>, upper = 1 : i64}
// CHECK:         ingot.matmul %{{.+}}, %{{.+}} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
// CHECK-NOT:     ingot.max_shape
// CHECK:         return
func.func @static_results_unannotated(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}, %y: tensor<4x64xf32>, %w: tensor<64x64xf32>)
    -> (tensor<?x?xf32>, tensor<4x64xf32>) {
  %s = ingot.shape %x {start = 0 : i64, end = 1 : i64} : tensor<?x64xf32> -> tensor<1xi64>
  %ss = ingot.concat %s, %s {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %ones = ingot.constant_of_shape %ss {value = 1.0 : f64} : tensor<2xi64> -> tensor<?x?xf32>
  %mask = ingot.trilu %ones {upper = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %m = ingot.matmul %y, %w : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  return %mask, %m : tensor<?x?xf32>, tensor<4x64xf32>
}

// -----

// A graph without symbolic dims records an empty symbol table.
// CHECK-LABEL: func.func @fully_static
// CHECK-SAME:    attributes {ingot.symbols = {}}
// CHECK-NOT:     ingot.max_shape
// CHECK:         return
func.func @fully_static(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %y = ingot.relu %x : tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// expected-error @+1 {{input 0 dim 0 is dynamic but has no symbol name}}
func.func @dynamic_dim_without_symbol(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %y = ingot.relu %x : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// An empty name is no name.
// expected-error @+1 {{input 1 dim 1 is dynamic but has no symbol name}}
func.func @dynamic_dim_with_empty_symbol(%x: tensor<?xf32> {ingot.dims = ["seq"]}, %y: tensor<4x?xf32> {ingot.dims = ["", ""]}) -> tensor<4x?xf32> {
  %r = ingot.relu %y : tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// -----

// The Reshape target is a run-time input: the element count still bounds
// each dim (64 / 2 = 32 here), as long as the product of those bounds
// overestimates the count by at most 1024x (32x here).
// CHECK-LABEL: func.func @reshape_from_runtime_data
// CHECK:         ingot.reshape {{.*}} {allowzero = 0 : i64, ingot.max_shape = array<i64: 32, 32, 2>}
func.func @reshape_from_runtime_data(%x: tensor<4x16xf32>, %s: tensor<3xi64>) -> tensor<?x?x2xf32> {
  %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<4x16xf32>, tensor<3xi64>) -> tensor<?x?x2xf32>
  return %r : tensor<?x?x2xf32>
}

// -----

// 128 * 64 = 8192 elements into two run-time dims: bounds of 8192 each
// would reserve 8192x the tensor, so the dims stay -1 (sized at run time).
// CHECK-LABEL: func.func @reshape_from_runtime_data_unbounded
// CHECK:         ingot.reshape {{.*}} {allowzero = 0 : i64, ingot.max_shape = array<i64: -1, -1>}
func.func @reshape_from_runtime_data_unbounded(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<?x64xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A ConstantOfShape whose shape is a run-time input has no bound at all:
// its dims stay -1 (sized at run time), and so do those of what reads it.
// CHECK-LABEL: func.func @constant_of_shape_from_runtime_data
// CHECK:         ingot.constant_of_shape %{{.+}} {ingot.max_shape = array<i64: -1, -1>
// CHECK:         ingot.relu %{{.+}} {ingot.max_shape = array<i64: -1, -1>}
func.func @constant_of_shape_from_runtime_data(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = ingot.constant_of_shape %s {value = 0.0 : f64} : tensor<2xi64> -> tensor<?x?xf32>
  %y = ingot.relu %r : tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// At seq = 128 the static target no longer fits: the model is only valid
// for seq = 1. The pass warns, naming the bounds and the flags, and leaves
// the check to the runtime (the result is static: no bound needed).
// CHECK-LABEL: func.func @static_target_invalid_at_maximum
// CHECK:         ingot.reshape %{{.+}} {allowzero = 0 : i64} :
func.func @static_target_invalid_at_maximum(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}) -> tensor<1x64xf32> {
  %t = ingot.constant dense<[1, 64]> : tensor<2xi64>
  // expected-warning @+1 {{'ingot.reshape' op at the symbols' maxima (seq=128): cannot reshape [128,64] to [1,64]: element counts differ (8192 vs 64); if the model only runs at some sizes, bound its symbols with --max-dim SYMBOL=N or pin inputs with --shape; its result is sized at run time}}
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x64xf32>, tensor<2xi64>) -> tensor<1x64xf32>
  return %r : tensor<1x64xf32>
}

// -----

// Two symbols that only agree at run time (seq = 128, other = 8 here): the
// sum cannot be bounded, so it and what reads it are sized at run time.
// CHECK-LABEL: func.func @broadcast_only_valid_at_run_time
// CHECK:         ingot.add %{{.+}} {ingot.max_shape = array<i64: -1>}
// CHECK:         ingot.relu %{{.+}} {ingot.max_shape = array<i64: -1>}
func.func @broadcast_only_valid_at_run_time(%a: tensor<?xf32> {ingot.dims = ["seq"]}, %b: tensor<?xf32> {ingot.dims = ["other"]}) -> tensor<?xf32> {
  // expected-warning @+1 {{cannot broadcast}}
  %s = ingot.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %y = ingot.relu %s : tensor<?xf32>
  return %y : tensor<?xf32>
}

// A malformed max-dims entry fails every function, naming the entry.
// BADOPT: error: bad max-dims entry 'seq': expected SYMBOL=N with N >= 1

// max-dims bounds must be >= 1, and so must the default bound; a zero (or
// negative) default-max-dim must be rejected rather than produce
// `ingot.max_shape = array<i64: 0, 64>`.
// BADDEFAULT: error: {{.*}}default-max-dim

// -----

// NonZero's count is data: it is bounded by the input's element count at
// the symbols' maxima (seq = 128 here, so 128 * 4 = 512).
// CHECK-LABEL: func.func @non_zero_bounded_by_numel
// CHECK:         ingot.non_zero %{{.+}} {ingot.max_shape = array<i64: 2, 512>}
func.func @non_zero_bounded_by_numel(%x: tensor<?x4xf32> {ingot.dims = ["seq", ""]}) -> tensor<2x?xi64> {
  %y = ingot.non_zero %x : tensor<?x4xf32> -> tensor<2x?xi64>
  return %y : tensor<2x?xi64>
}

// -----

// Reduce axes that come at run time: with keepdims each result dim is at
// most its input dim (at least 1: a reduced empty dim keeps a 1); without,
// the rank is fixed by the axes' static count and each dim is at most the
// largest input dim.
// CHECK-LABEL: func.func @reduce_runtime_axes
// CHECK:         ingot.reduce %{{.+}}, %{{.+}} {axes = array<i64>, ingot.max_shape = array<i64: 128, 1, 6>, keepdims = 1 : i64, kind = "sum", noop_with_empty_axes = 0 : i64}
// CHECK:         ingot.reduce %{{.+}}, %{{.+}} {axes = array<i64>, ingot.max_shape = array<i64: 128, 128>, keepdims = 0 : i64, kind = "mean", noop_with_empty_axes = 0 : i64}
func.func @reduce_runtime_axes(%x: tensor<?x0x6xf32> {ingot.dims = ["seq", "", ""]}, %a: tensor<2xi64>, %b: tensor<1xi64>)
    -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %k = ingot.reduce %x, %a {kind = "sum", axes = array<i64>, keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<?x0x6xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
  %d = ingot.reduce %x, %b {kind = "mean", axes = array<i64>, keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<?x0x6xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return %k, %d : tensor<?x?x?xf32>, tensor<?x?xf32>
}

// -----

// A kernel dim known only at run time bounds the output as a 1-wide window
// would (the largest output any kernel gives): h ≤ 8 with pads 1+1 gives
// 10, not the 3 an 8-wide kernel would.
// CHECK-LABEL: func.func @conv_run_time_kernel
// CHECK:         ingot.conv %{{.+}}, %{{.+}} {{{.*}}ingot.max_shape = array<i64: 1, 2, 10, 4>
func.func @conv_run_time_kernel(%x: tensor<1x4x?x8xf32> {ingot.dims = ["", "", "h", ""]}, %w: tensor<2x4x?x3xf32> {ingot.dims = ["", "", "k", ""]}) -> tensor<1x2x?x4xf32> {
  %y = ingot.conv %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 1, 2>} : (tensor<1x4x?x8xf32>, tensor<2x4x?x3xf32>) -> tensor<1x2x?x4xf32>
  return %y : tensor<1x2x?x4xf32>
}
