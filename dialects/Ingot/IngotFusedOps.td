//===- IngotFusedOps.td - Ops made by fusion passes ---------*- tablegen -*-===//
//
// Included from IngotOps.td. Ops that only passes create: the importers
// never emit them.
//
//===----------------------------------------------------------------------===//

def Ingot_FusedElementwiseOp : Ingot_Op<"fused_elementwise"> {
  let summary = "a chain of elementwise ops computed in one pass over memory";
  let description = [{
    Made by `ingot-fuse-elementwise` from connected elementwise ops (add,
    sub, mul, div, pow, the unary kernels, the float kinds of `unary_math`,
    `binary_math` max/min) whose intermediate results nobody else reads.
    The result is the numpy broadcast of the f32 `inputs`; each element is
    computed by a small program, interpreted by the runtime's
    `fused_elementwise` kernel over tiles of the output that stay in L1
    (docs/kernels.md). No code is generated for it: the interpreter is the
    design, and every opcode computes exactly what the unfused kernel does.

    The program (format/include/ingot/FusedProgram.h):
    - `ops`: space-separated opcodes, one per instruction: `add sub mul div
      pow max min` (two values), `neg exp log sqrt tanh sigmoid erf relu abs
      reciprocal softplus mish sin cos floor ceil round sign gelu
      gelu_tanh` (one value),
      `leaky_relu elu hard_sigmoid` (one value and constants), `const`.
    - `args`: two entries per instruction. A value ref below the number of
      inputs names an input; ref `n + i` names instruction i's result,
      which must come earlier. Unary opcodes have -1 second. `const k`
      reads `constants[k]`; `leaky_relu`/`elu` take alpha =
      `constants[args[1]]`, `hard_sigmoid` alpha and beta from there.
    - `constants`: the program's scalars (one-element constants of the
      graph become these instead of inputs).
    The result is the last instruction's. With `reduce` (`mean`, `sum` or
    `max`) and `keepdims`, that result is reduced over its last axis as
    `reduce_mean` / `reduce` would (the same summation order), so a chain
    that feeds a row reduction never writes its rows to memory.

    Before (GELU as the ONNX exporters write it):
    ```mlir
    %c = ingot.constant dense<1.41421354> : tensor<f32>
    %one = ingot.constant dense<1.0> : tensor<f32>
    %half = ingot.constant dense<0.5> : tensor<f32>
    %0 = ingot.div %x, %c : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
    %1 = ingot.erf %0 : tensor<?x64xf32>
    %2 = ingot.add %1, %one : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
    %3 = ingot.mul %x, %2 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %4 = ingot.mul %3, %half : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
    ```
    After:
    ```mlir
    %4 = ingot.fused_elementwise %x {
        ops = "const div erf const add mul const mul",
        args = array<i64: 0, -1, 0, 1, 2, -1, 1, -1, 3, 4, 0, 5, 2, -1, 6, 7>,
        constants = array<f64: 1.4142135381698608, 1.0, 5.0e-01>}
        : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
    A variance, (x - mean)² averaged over the last axis:
    ```mlir
    %v = ingot.fused_elementwise %x, %mean {ops = "sub const pow",
        args = array<i64: 0, 1, 0, -1, 2, 3>, constants = array<f64: 2.0>,
        reduce = "mean", keepdims = 1 : i64}
        : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Variadic<Ingot_Tensor>:$inputs, StrAttr:$ops,
                   DenseI64ArrayAttr:$args, DenseF64ArrayAttr:$constants,
                   OptionalAttr<StrAttr>:$reduce,
                   OptionalAttr<I64Attr>:$keepdims);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Ingot_AttentionOp : Ingot_Op<"attention"> {
  let summary = "softmax(q·kᵀ·scale + mask)·v per head on [batch, seq, heads, dim]";
  let description = [{
    Made by `ingot-fuse-attention` from the matmul → scale → add mask →
    softmax → matmul chain that encoder exports write per head. `query`
    is [B, Sq, H, D], `key` [B, Sk, H, D], `value` [B, Sk, H, Dv] (the
    layout a linear's output has once reshaped into heads, so the
    exporter's transposes go); the result is [B, Sq, H, Dv]. The optional
    f32 `mask` is added to the scaled scores, broadcasting numpy-style to
    [B, H, Sq, Sk] (BERT's is [B, 1, 1, Sk]). The runtime's `attention`
    kernel computes each query row's scores, softmax and weighted sum
    while they are in L1, instead of writing [B, H, Sq, Sk] scores and
    transposing q, k, v and the result.

    ```mlir
    %o = ingot.attention %q, %k, %v, %mask {scale = 0.17677669529663687 : f64}
        : (tensor<?x?x12x32xf32>, tensor<?x?x12x32xf32>, tensor<?x?x12x32xf32>,
           tensor<?x1x1x?xf32>) -> tensor<?x?x12x32xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$query, Ingot_Tensor:$key,
                   Ingot_Tensor:$value, Optional<Ingot_Tensor>:$mask,
                   F64Attr:$scale);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value (`,` $mask^)? attr-dict "
                       "`:` functional-type(operands, results)";
  let hasVerifier = 1;
}
