// RUN: ingot-opt %s --split-input-file --verify-diagnostics | ingot-opt --split-input-file | FileCheck %s
// RUN: ingot-opt %s --split-input-file --verify-diagnostics --mlir-print-op-generic | ingot-opt --split-input-file | FileCheck %s

// Round trips of ingot.if, ingot.yield and ingot.fail (custom and generic
// form). Regions read outer values directly; a result may be less static
// than what a branch yields.

// CHECK-LABEL: func.func @branches
// CHECK:         %[[R:.+]]:2 = ingot.if %{{.+}} : tensor<i1> -> tensor<?x4xf32>, tensor<i64> {
// CHECK:           %[[A:.+]] = ingot.relu %{{.+}} : tensor<3x4xf32>
// CHECK:           ingot.yield %[[A]], %{{.+}} : tensor<3x4xf32>, tensor<i64>
// CHECK:         } else {
// CHECK:           ingot.yield %{{.+}}, %{{.+}} : tensor<2x4xf32>, tensor<i64>
// CHECK:         }
func.func @branches(%c: tensor<i1>, %x: tensor<3x4xf32>, %y: tensor<2x4xf32>,
                    %n: tensor<i64>) -> (tensor<?x4xf32>, tensor<i64>) {
  %r:2 = ingot.if %c : tensor<i1> -> tensor<?x4xf32>, tensor<i64> {
    %a = ingot.relu %x : tensor<3x4xf32>
    ingot.yield %a, %n : tensor<3x4xf32>, tensor<i64>
  } else {
    ingot.yield %y, %n : tensor<2x4xf32>, tensor<i64>
  }
  return %r#0, %r#1 : tensor<?x4xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @failing_branch
// CHECK:         %[[F:.+]] = ingot.fail {message = "cannot reshape"} : tensor<3xf32>
// CHECK:         ingot.yield %[[F]] : tensor<3xf32>
func.func @failing_branch(%c: tensor<1xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = ingot.if %c : tensor<1xi1> -> tensor<3xf32> {
    ingot.yield %x : tensor<3xf32>
  } else {
    %f = ingot.fail {message = "cannot reshape"} : tensor<3xf32>
    ingot.yield %f : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
