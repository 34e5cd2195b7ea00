//===- IngotControlOps.td - Branches of the graph -----------*- tablegen -*-===//
//
// Included from IngotOps.td. ONNX `If` whose condition is only known at
// run time: both branches are compiled, one runs.
//
//===----------------------------------------------------------------------===//

def Ingot_IfOp : Op<Ingot_Dialect, "if", [RecursiveMemoryEffects,
                                          NoRegionArguments]> {
  let summary = "run one of two regions, chosen by a one-element boolean";
  let description = [{
    ONNX `If` whose condition is not known at compile time (an `If` whose
    condition the importer can evaluate is replaced by its branch). Each
    region ends in `ingot.yield` with one value per result; the regions
    read values of the enclosing function directly (ONNX subgraphs see
    outer names). A result's type is the join of what the two branches
    yield: a dim on which they differ is dynamic.

    Lowered to steps (passes/LowerToPlan.cpp): `skip_unless` on the
    condition, the then-branch, `copy` steps into the result buffers,
    `skip` over the else-branch, the else-branch and its copies.

    ```mlir
    %r = ingot.if %c : tensor<i1> -> tensor<?x4xf32> {
      %a = ingot.relu %x : tensor<3x4xf32>
      ingot.yield %a : tensor<3x4xf32>
    } else {
      ingot.yield %y : tensor<5x4xf32>
    }
    ```
  }];
  let arguments = (ins Ingot_BoolTensor:$condition);
  let results = (outs Variadic<Ingot_Tensor>:$results);
  let regions = (region SizedRegion<1>:$thenRegion,
                        SizedRegion<1>:$elseRegion);
  let assemblyFormat = "$condition `:` type($condition) (`->` type($results)^)? "
                       "$thenRegion `else` $elseRegion attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ingot.yield ending the then (0) or else (1) region.
    YieldOp yieldOf(unsigned region);
  }];
}

def Ingot_YieldOp : Op<Ingot_Dialect, "yield", [Pure, Terminator,
                                                HasParent<"IfOp">]> {
  let summary = "the values a branch of `ingot.if` produces";
  let description = [{
    ```mlir
    ingot.yield %a, %b : tensor<3x4xf32>, tensor<i64>
    ```
  }];
  let arguments = (ins Variadic<Ingot_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Ingot_FailOp : Op<Ingot_Dialect, "fail", [Pure]> {
  let summary = "a branch that cannot run: fails the run with `message`";
  let description = [{
    Stands for an `If` branch the importer could not convert at the
    compiled input shapes (silero-vad's 8 kHz branch cannot run on a
    16 kHz chunk) when the condition is only known at run time: the other
    branch still runs, and taking this one fails the run naming why.
    Its results only feed the branch's `ingot.yield`.

    ```mlir
    %r = ingot.fail {message = "node 'lstm': expects x [seq, batch, input]"} : tensor<?x4xf32>
    ```
  }];
  let arguments = (ins StrAttr:$message);
  let results = (outs Variadic<Ingot_Tensor>:$results);
  let assemblyFormat = "attr-dict (`:` type($results)^)?";
}
