// Lowered without --ingot-compute-bounds (see lower_to_plan.mlir): a
// dynamic result has no ingot.max_shape to size its buffer with. A static
// result before it needs none and lowers.
func.func @needs_bounds(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}, %s: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<?x64xf32>) {
  %r = ingot.relu %s : tensor<4x64xf32>
  // expected-error @+1 {{'ingot.relu' op has a dynamic result but no ingot.max_shape; run ingot-compute-bounds first}}
  %y = ingot.relu %x : tensor<?x64xf32>
  return %r, %y : tensor<4x64xf32>, tensor<?x64xf32>
}
