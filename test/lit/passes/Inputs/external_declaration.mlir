// A module holding only an external function declaration (no body), as a
// runtime hook or an imported helper would be. Passes over functions must
// leave it alone. Used by propagate_shapes.mlir and lower_to_plan.mlir.
func.func private @external(tensor<?x64xf32>) -> tensor<?x64xf32>
