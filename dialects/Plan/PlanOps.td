//===- PlanOps.td - The plan dialect -----------------------*- tablegen -*-===//
//
// The executable form of a model: buffers (inputs, weights, arena slices)
// and the ordered sequence of kernel invocations over them. One `plan.kernel`
// is one step of the runtime's plan; the artifact writer serialises this IR
// into the manifest without further decisions.
//
//===----------------------------------------------------------------------===//
#ifndef PLAN_OPS
#define PLAN_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Plan_Dialect : Dialect {
  let name = "plan";
  let summary = "Buffers and kernel steps of a compiled model";
  let description = [{
    Buffers are memrefs whose dynamic dims are bounded by `max_shape`;
    `plan.alloc` slices of one activation arena receive their `offset` from
    the memory planner.
  }];
  let cppNamespace = "::ingot::plan";
}

class Plan_Op<string mnemonic, list<Trait> traits = []>
    : Op<Plan_Dialect, mnemonic, traits>;

def Plan_ParamOp : Plan_Op<"param", [Pure]> {
  let summary = "a weight tensor of the artifact's weight section";
  let description = [{
    ```mlir
    %w = plan.param "layers.0.q_proj.weight" : memref<64x64xf32>
    ```
    `parts`, `concat_axis` and `layout` are those of the `ingot.param` it
    came from: how the artifact writer produces the bytes. A quantised
    param (`#ingot.quant`) carries its block format as `quant` ("q8",
    "q4", "q4m", "f8e4m3") and `group`; its memref type stays the logical
    one.
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<StrArrayAttr>:$parts,
                   DefaultValuedAttr<I64Attr, "0">:$concat_axis,
                   DefaultValuedAttr<StrAttr, "\"row-major\"">:$layout,
                   OptionalAttr<StrAttr>:$quant,
                   DefaultValuedAttr<I64Attr, "0">:$group);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Plan_ConstantOp : Plan_Op<"constant", [Pure]> {
  let summary = "a small constant stored with the weights";
  let description = [{
    ```mlir
    %s = plan.constant dense<[1, 8, 64]> : tensor<3xi64> -> memref<3xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$value attr-dict `->` type($result)";
  let hasVerifier = 1;
}

def Plan_AllocOp : Plan_Op<"alloc"> {
  let summary = "a slice of the activation arena";
  let description = [{
    `max_shape` bounds every dynamic dim; `offset` is set by the memory
    planner (`ingot-plan-memory`). A -1 in `max_shape` marks a dim set by
    tensor values (no compiled bound): such a buffer is sized at run time,
    outside the arena, and never gets an offset.

    ```mlir
    %t = plan.alloc {max_shape = array<i64: 4, 128, 64>, offset = 0 : i64} : memref<?x?x64xf32>
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$max_shape,
                   OptionalAttr<I64Attr>:$offset);
  let results = (outs MemRefOf<[AnyInteger, AnyFloat]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes this buffer may need: product(max_shape) * element size; 0
    /// when it is sized at run time.
    uint64_t getMaxBytes();
    /// Whether a dim has no compiled bound (a -1 in max_shape).
    bool isSizedAtRunTime();
  }];
}

def Plan_NoneOp : Plan_Op<"none", [Pure]> {
  let summary = "marks an absent optional kernel operand";
  let description = [{
    ```mlir
    %none = plan.none
    ```
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

def Plan_KernelOp : Plan_Op<"kernel", [AttrSizedOperandSegments]> {
  let summary = "one kernel invocation: reads `ins`, writes `outs`";
  let description = [{
    Names a runtime kernel (docs/kernels.md) and its static arguments.
    `origin` names the source node for diagnostics.

    ```mlir
    plan.kernel "matmul" ins(%x, %w : memref<?x64xf32>, memref<64x32xf32>)
        outs(%t : memref<?x32xf32>) {args = {}, origin = "fc1"}
    ```
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyType>:$ins,
                   Variadic<AnyMemRef>:$outs, DictionaryAttr:$args,
                   StrAttr:$origin);
  let assemblyFormat = [{
    $kernel (`ins` `(` $ins^ `:` type($ins) `)`)?
    `outs` `(` $outs `:` type($outs) `)` attr-dict
  }];
  let hasVerifier = 1;
}

#endif // PLAN_OPS
