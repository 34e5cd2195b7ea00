// RUN: ingot-opt %s --split-input-file --ingot-compute-bounds="max-dims=seq=16" | FileCheck %s --check-prefix=BOUNDS
// RUN: ingot-opt %s --split-input-file --ingot-compute-bounds="max-dims=seq=16" --ingot-lower-to-plan --verify-diagnostics | FileCheck %s

// An ingot.if with a run-time condition: --ingot-compute-bounds bounds each
// result by the larger of the two branches' values (ingot.result_bounds),
// and --ingot-lower-to-plan flattens it into one step list:
//   skip_unless cond {steps = then steps + copies + 1}
//   then steps, copies into the result buffers
//   skip {steps = else steps + copies}
//   else steps, copies into the same buffers.

// BOUNDS-LABEL: func.func @pick
// BOUNDS:         ingot.if
// BOUNDS:         } {ingot.result_bounds = [array<i64: 16, 4>, array<i64: 3>]}

// CHECK-LABEL: func.func @pick
// CHECK-SAME:    (%[[C:.+]]: memref<i1>, %[[X:.+]]: memref<?x4xf32> {{.*}}, %[[Y:.+]]: memref<2x4xf32>, %[[N:.+]]: memref<3xi64>)
// CHECK:         %[[R0:.+]] = plan.alloc {max_shape = array<i64: 16, 4>} : memref<?x4xf32>
// CHECK:         %[[R1:.+]] = plan.alloc {max_shape = array<i64: 3>} : memref<3xi64>
// CHECK:         plan.kernel "skip_unless" ins(%[[C]] : memref<i1>) outs( : ) {args = {steps = 4 : i64}, origin = "pick"}
// CHECK:         plan.kernel "relu" ins(%[[X]] : memref<?x4xf32>) outs(%[[A:.+]] : memref<?x4xf32>)
// CHECK:         plan.kernel "copy" ins(%[[A]] : memref<?x4xf32>) outs(%[[R0]] : memref<?x4xf32>)
// CHECK:         plan.kernel "copy" ins(%[[N]] : memref<3xi64>) outs(%[[R1]] : memref<3xi64>)
// CHECK:         plan.kernel "skip" outs( : ) {args = {steps = 3 : i64}, origin = "pick"}
// CHECK:         plan.kernel "neg" ins(%[[N]] : memref<3xi64>) outs(%[[B:.+]] : memref<3xi64>)
// CHECK:         plan.kernel "copy" ins(%[[Y]] : memref<2x4xf32>) outs(%[[R0]] : memref<?x4xf32>)
// CHECK:         plan.kernel "copy" ins(%[[B]] : memref<3xi64>) outs(%[[R1]] : memref<3xi64>)
// CHECK:         return %[[R0]], %[[R1]]
func.func @pick(%c: tensor<i1>, %x: tensor<?x4xf32> {ingot.dims = ["seq", ""]},
                %y: tensor<2x4xf32>, %n: tensor<3xi64>)
    -> (tensor<?x4xf32>, tensor<3xi64>) {
  %r:2 = ingot.if %c : tensor<i1> -> tensor<?x4xf32>, tensor<3xi64> {
    %a = ingot.relu %x : tensor<?x4xf32>
    ingot.yield %a, %n : tensor<?x4xf32>, tensor<3xi64>
  } else {
    %b = ingot.neg %n : tensor<3xi64>
    ingot.yield %y, %b : tensor<2x4xf32>, tensor<3xi64>
  } loc("pick")
  return %r#0, %r#1 : tensor<?x4xf32>, tensor<3xi64>
}

// -----

// A failing branch lowers to a `fail` step (with a warning); its results
// are buffers sized at run time that no step writes.

// CHECK-LABEL: func.func @one_branch_fails
// CHECK:         plan.kernel "skip_unless"
// CHECK:         plan.kernel "copy"
// CHECK:         plan.kernel "skip" outs( : ) {args = {steps = 2 : i64}
// CHECK:         %[[F:.+]] = plan.alloc {max_shape = array<i64: -1>} : memref<?xf32>
// CHECK-NEXT:    plan.kernel "fail" outs( : ) {args = {message = "cannot reshape [3] to [2]"}
// CHECK-NEXT:    plan.kernel "copy" ins(%[[F]] : memref<?xf32>)
func.func @one_branch_fails(%c: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = ingot.if %c : tensor<i1> -> tensor<3xf32> {
    ingot.yield %x : tensor<3xf32>
  } else {
    // expected-warning @+1 {{an If branch cannot run at the compiled shapes (cannot reshape [3] to [2]); runs that take it will fail}}
    %f = ingot.fail {message = "cannot reshape [3] to [2]"} : tensor<3xf32>
    ingot.yield %f : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
