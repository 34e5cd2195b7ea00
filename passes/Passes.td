//===- Passes.td - ingot's compiler passes -----------------*- tablegen -*-===//
#ifndef INGOT_PASSES
#define INGOT_PASSES

include "mlir/Pass/PassBase.td"

def PropagateShapes : Pass<"ingot-propagate-shapes", "mlir::func::FuncOp"> {
  let summary = "Refine result types from the ops' shape rules";
  let description = [{
    Walks the graph in order and re-infers every result type from its
    operands, keeping the most precise dims of the old and inferred types.
    Static dims found after folding (e.g. a Reshape whose target became a
    constant) flow to every user; the function's result types follow.

    Before:
    ```mlir
    %s = ingot.constant dense<[2, 32]> : tensor<2xi64>
    %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
    After:
    ```mlir
    %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<64xf32>, tensor<2xi64>) -> tensor<2x32xf32>
    ```
  }];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def Canonicalize : Pass<"ingot-canonicalize", "mlir::func::FuncOp"> {
  let summary = "Fold shape computations and remove dead or no-op ops";
  let description = [{
    Applies the ingot ops' folders greedily: Shape/Gather/Concat/arithmetic
    chains over static dims become constants, identity transposes, casts and
    reshapes disappear, and ops whose results are unused are erased.

    Before:
    ```mlir
    %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<2x8xf32> -> tensor<2xi64>
    ```
    After:
    ```mlir
    %s = ingot.constant dense<[2, 8]> : tensor<2xi64>
    ```
  }];
  let options = [
    Option<"maxIterations", "max-iterations", "int64_t", /*default=*/"10",
           "Rounds of the greedy rewriter before giving up">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def ComputeBounds : Pass<"ingot-compute-bounds", "mlir::func::FuncOp"> {
  let summary = "Bound every dynamic dim by evaluating shapes at the symbols' maxima";
  let description = [{
    Each symbolic input dim (named by the argument's `ingot.dims`) takes its
    maximum (`max-dims`, else `default-max-dim`); the ops' shape rules and
    shape-vector values are then evaluated concretely and every result with a
    dynamic dim gets `ingot.max_shape`. The function records the bounds it
    used as `ingot.symbols`. A size that depends on tensor values rather
    than shapes (Range, Tile, Resize with run-time scales) has no bound:
    its dims stay -1 in `ingot.max_shape` and the runtime allocates that
    result when its kernel runs; with `run-time-sizes=false` (targets whose
    plans must be fully static) such a result is an error naming the op.

    Before:
    ```mlir
    func.func @f(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}) -> tensor<?x64xf32> {
      %y = ingot.relu %x : tensor<?x64xf32>
    ```
    After (`max-dims=seq=128`):
    ```mlir
    func.func @f(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}) -> tensor<?x64xf32>
        attributes {ingot.symbols = {seq = 128 : i64}} {
      %y = ingot.relu %x {ingot.max_shape = array<i64: 128, 64>} : tensor<?x64xf32>
    ```
  }];
  let options = [
    ListOption<"maxDims", "max-dims", "std::string",
               "Upper bounds of symbolic dims, as SYMBOL=N">,
    Option<"defaultMaxDim", "default-max-dim", "int64_t", /*default=*/"512",
           "Upper bound of a symbolic dim not named in max-dims">,
    Option<"runTimeSizes", "run-time-sizes", "bool", /*default=*/"true",
           "Let a result whose size depends on tensor values be sized at "
           "run time (-1 dims in ingot.max_shape) instead of failing">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def LowerToPlan : Pass<"ingot-lower-to-plan", "mlir::ModuleOp"> {
  let summary = "Lower the graph to buffers and kernel steps";
  let description = [{
    Replaces each graph function by a plan function over memrefs: inputs
    become arguments, `ingot.param`/`ingot.constant` become `plan.param` /
    `plan.constant`, and every compute op becomes a `plan.alloc` for its
    result (bounded by `ingot.max_shape`) and one `plan.kernel` named after
    the op, with the op's attributes as static arguments.

    Before:
    ```mlir
    %y = ingot.relu %x {ingot.max_shape = array<i64: 128, 64>} : tensor<?x64xf32>
    ```
    After:
    ```mlir
    %0 = plan.alloc {max_shape = array<i64: 128, 64>} : memref<?x64xf32>
    plan.kernel "relu" ins(%x : memref<?x64xf32>) outs(%0 : memref<?x64xf32>) {args = {}, origin = "relu0"}
    ```
  }];
  let dependentDialects = ["ingot::plan::PlanDialect",
                           "mlir::func::FuncDialect"];
}

def PlanMemory : Pass<"ingot-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Place every arena buffer by liveness, reusing memory in place";
  let description = [{
    Computes each `plan.alloc`'s live range over the kernel sequence, lets
    an elementwise or reshaping kernel write over an input that dies there,
    places a concat's inputs at their offsets inside its output where each
    is one contiguous run of it (static shapes, 1s before the axis), and
    assigns offsets greedily (largest first, lowest fitting offset).
    Records `plan.arena_bytes`, the liveness lower bound
    `plan.arena_lower_bound_bytes` (peak of simultaneously live bytes) and
    `plan.arena_naive_bytes` (no reuse) on the function.

    Before:
    ```mlir
    %0 = plan.alloc {max_shape = array<i64: 128, 64>} : memref<?x64xf32>
    ```
    After:
    ```mlir
    %0 = plan.alloc {max_shape = array<i64: 128, 64>, offset = 0 : i64} : memref<?x64xf32>
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer">,
    Option<"inPlace", "in-place", "bool", /*default=*/"true",
           "Let in-place kernels write over an input that dies at that step">,
    Option<"concatInPlace", "concat-in-place", "bool", /*default=*/"true",
           "Place a concat's inputs inside its output where each is one "
           "contiguous run of it, so their producers write there and the "
           "concat copies nothing">,
    ListOption<"keepApart", "keep-apart", "std::string",
               "Kernels whose outputs never take an input's memory, although "
               "the kernel table allows it (a GPU target's kernel for the "
               "aliased form may be serial)">,
  ];
}

// The passes of phases `fused`, `quantized` and `laid-out`, the conv
// rewrites of `fused` apart.
include "FusionPasses.td"
include "ConvFusionPasses.td"
include "QuantFusionPasses.td"

#endif // INGOT_PASSES
