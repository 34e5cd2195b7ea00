//===- IngotIndexOps.td - Coverage ops (indexing) ---------------*- tablegen -*-===//
//
// Included from IngotOps.td after IngotTensorOps.td, whose Ingot_TensorOp
// class these use: gathers and scatters by index, TopK, OneHot, NonZero
// and NonMaxSuppression.
// Kernel contracts: docs/kernels-tensor.md.
//
//===----------------------------------------------------------------------===//

def Ingot_GatherElementsOp : Ingot_TensorOp<"gather_elements"> {
  let summary = "pick elements along an axis by an index tensor";
  let description = [{
    ONNX `GatherElements`; the result has the indices' shape.

    ```mlir
    %g = ingot.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$data, Ingot_IntTensor:$indices,
                   I64Attr:$axis);
  let assemblyFormat = "$data `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_GatherNDOp : Ingot_TensorOp<"gather_nd"> {
  let summary = "gather slices of data addressed by index tuples";
  let description = [{
    ONNX `GatherND`: after `batch_dims` leading dims shared by data and
    indices, each tuple in the indices' last dim (of static length k)
    addresses dims [batch_dims, batch_dims + k) of data; the result is
    indices.shape[:-1] + data.shape[batch_dims + k:]. Negative entries
    count from the end of their dim.

    ```mlir
    %g = ingot.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<4x5x6xf32>, tensor<?x2xi64>) -> tensor<?x6xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$data, Ingot_I64Tensor:$indices,
                   I64Attr:$batch_dims);
  let assemblyFormat = "$data `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_ScatterNDOp : Ingot_TensorOp<"scatter_nd"> {
  let summary = "write slices of `updates` at index tuples";
  let description = [{
    ONNX `ScatterND`; `reduction` is `none`, `add`, `mul`, `max` or `min`.

    ```mlir
    %s = ingot.scatter_nd %d, %i, %u {reduction = "none"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$data, Ingot_I64Tensor:$indices,
                   Ingot_Tensor:$updates, StrAttr:$reduction);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_ScatterElementsOp : Ingot_TensorOp<"scatter_elements"> {
  let summary = "write `updates` elementwise at indices along an axis";
  let description = [{
    ONNX `ScatterElements`: data with each updates[i] written (or combined
    by `reduction`: `none`, `add`, `mul`, `max`, `min`) at i with its
    `axis` coordinate replaced by indices[i]; indices and updates share a
    shape of data's rank.

    ```mlir
    %s = ingot.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$data, Ingot_IntTensor:$indices,
                   Ingot_Tensor:$updates, I64Attr:$axis, StrAttr:$reduction);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_TopKOp : Ingot_TensorOp<"topk"> {
  let summary = "the k largest or smallest along an axis";
  let description = [{
    ONNX `TopK`; `select` picks the output: 0 = values (input's type),
    1 = indices (i64). Ties keep the lower index first. The importer emits
    one op per used output.

    ```mlir
    %v = ingot.topk %x, %k {axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64, select = 0 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_I64Tensor:$k, I64Attr:$axis,
                   I64Attr:$largest, I64Attr:$sorted, I64Attr:$select);
  let assemblyFormat = "$input `,` $k attr-dict `:` "
                       "functional-type(operands, results)";
}

def Ingot_OneHotOp : Ingot_TensorOp<"one_hot"> {
  let summary = "one-hot encoding";
  let description = [{
    ONNX `OneHot`: a new dim of size `depth` is inserted at `axis`
    (normalised to [0, rank]); `values` is [off, on]. Indices in
    [−depth, depth) select (negative ones count from the end), others
    give all-off rows. The depth is the `depth` attribute when known at
    compile time, else the one-element `depth_value` operand (truncated
    to an integer, as ONNX casts it), read when the plan runs; the new
    dim is then sized at run time.

    ```mlir
    %y = ingot.one_hot %i, %v {axis = 1 : i64, depth = 5 : i64} : (tensor<3xi64>, tensor<2xf32>) -> tensor<3x5xf32>
    %z = ingot.one_hot %i, %v, %d {axis = 1 : i64} : (tensor<3xi64>, tensor<2xf32>, tensor<1xf32>) -> tensor<3x?xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$indices, Ingot_Tensor:$values,
                   Optional<Ingot_Tensor>:$depth_value,
                   OptionalAttr<I64Attr>:$depth, I64Attr:$axis);
  let assemblyFormat = "$indices `,` $values (`,` $depth_value^)? attr-dict "
                       "`:` functional-type(operands, results)";
}

def Ingot_NonZeroOp : Ingot_TensorOp<"non_zero"> {
  let summary = "indices of the non-zero elements";
  let description = [{
    ONNX `NonZero`: [rank, n] i64 in row-major order; n depends on the data
    and is at most the input's element count.

    ```mlir
    %y = ingot.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Ingot_NonMaxSuppressionOp
    : Ingot_TensorOp<"non_max_suppression", [AttrSizedOperandSegments]> {
  let summary = "boxes kept per batch and class by greedy IoU suppression";
  let description = [{
    ONNX `NonMaxSuppression`: `boxes` [B, N, 4] (corners in either order
    when `center_point_box` is 0, centre and size when 1), `scores`
    [B, C, N]. Per batch and class, boxes scoring above `score_threshold`
    (when set) are taken by score, ties by index, and kept unless their IoU
    with a box already kept exceeds `iou_threshold`, up to
    `max_output_boxes_per_class`. The result is [n, 3] i64 rows (batch,
    class, box), n known at run time. A scalar known only at run time is an
    operand instead (`max_output` i64, `iou` and `score` f32, one element
    each), read in place of its attribute; the result is then bounded by
    B * C * N.

    ```mlir
    %y = ingot.non_max_suppression %b, %s {center_point_box = 0 : i64, iou_threshold = 5.000000e-01 : f32, max_output_boxes_per_class = 10 : i64} : (tensor<1x6x4xf32>, tensor<1x1x6xf32>) -> tensor<?x3xi64>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$boxes, Ingot_Tensor:$scores,
                   Optional<Ingot_Tensor>:$max_output,
                   Optional<Ingot_Tensor>:$iou, Optional<Ingot_Tensor>:$score,
                   I64Attr:$center_point_box,
                   I64Attr:$max_output_boxes_per_class,
                   F32Attr:$iou_threshold,
                   OptionalAttr<F32Attr>:$score_threshold);
  let assemblyFormat = "$boxes `,` $scores "
                       "(`max_output` `(` $max_output^ `)`)? "
                       "(`iou` `(` $iou^ `)`)? (`score` `(` $score^ `)`)? "
                       "attr-dict `:` functional-type(operands, results)";
}
