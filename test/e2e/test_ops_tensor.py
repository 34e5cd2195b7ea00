"""The tensor-family ops (Flatten … NonZero), compiled by ingot and compared
with onnxruntime: f32 within the shared relative tolerance, integers exact.
This file: reshaping, slicing, padding, indexing and TopK, plus the
compile-time errors for unsupported attribute values; Conv, pooling, Resize,
DepthToSpace, OneHot and NonZero are in test_ops_spatial.py; shared helpers
in ops_case_lib.py.

Each case is a one-node model (Split and TopK have several outputs). Shape
operands (starts, pads, repeats, sizes) are initializers unless a case is
about run-time values; symbolic dims run at two sizes from one artifact.
"""
import numpy as np
import pytest

from ingot_testlib import (Model, assert_clean_failure, assert_close,
                           compile_model, make_model, node, save_model)
from ops_case_lib import (check_case,
                          BOOL, F32, I32, I64, f32, i64, idx_gen, one,
                          results_fixture, sym2)

CASES, KEYS = [], {}
# Data-dependent sizes (NonZero's count, a Slice or TopK whose parameters are
# run-time inputs) are bounded by ComputeBounds through
# graph::boundTensorResult (n <= numel, a slice <= its input dim).


def case(model, marks=()):
    assert KEYS.setdefault(model.key, model) is model, f"dup key {model.key}"
    CASES.append(pytest.param(model, id=model.key, marks=marks))


# -- Flatten ------------------------------------------------------------------
for key, shape, axis, sizes in [("axis1", [2, 3, 4], 1, ({},)),
                                ("axis0", [2, 3], 0, ({},)),
                                ("neg", [2, 3, 4, 5], -2, ({},)),
                                ("end", [3, 4], 2, ({},)),
                                ("sym", ["n", 3, 4], 1, sym2(2, 5))]:
    case(one(f"flatten_{key}", "Flatten", [("x", F32, shape)], opset=13,
             sizes=sizes, axis=axis))
case(one("flatten_int64", "Flatten", [("x", I64, [2, 2, 3])], opset=21,
         axis=2))

# -- Split --------------------------------------------------------------------
case(one("split_input", "Split", [("x", F32, [7, 4]), ("s", i64(2, 5))],
         opset=13, outputs=("a", "b"), axis=0))
case(one("split_equal_neg_axis", "Split", [("x", F32, [2, 6])], opset=13,
         outputs=("a", "b", "c"), axis=-1))
case(one("split_num_outputs_uneven", "Split", [("x", F32, [3, 7])], opset=18,
         outputs=("a", "b", "c"), axis=1, num_outputs=3))
case(one("split_dynamic_equal", "Split", [("x", F32, ["n", 4])], opset=13,
         outputs=("a", "b", "c"), axis=0, sizes=sym2(6, 9)))
case(one("split_dynamic_num_outputs", "Split", [("x", F32, [2, "n"])],
         opset=18, outputs=("a", "b"), axis=-1, num_outputs=2,
         sizes=sym2(5, 8)))
case(one("split_sym_other_dim", "Split", [("x", F32, ["n", 4]),
                                          ("s", i64(1, 3))],
         opset=18, outputs=("a", "b"), axis=1, sizes=sym2(2, 3)))


def partition(total):
    """Random sizes (zeros included) summing to `total`, one per output."""
    def gen(rng, dims):
        cuts = np.sort(rng.integers(0, total + 1, dims[0] - 1))
        return np.diff(np.concatenate([[0], cuts, [total]]))
    return gen


# Sizes fed at run time: each run splits at other places.
for key, shape, parts, axis, opset, sizes in [
        ("", [9, 4], 3, 0, 13, ({}, {}, {})),
        ("_sym", ["n", 6], 2, -1, 18, sym2(1, 3))]:
    outs = [f"y{i}" for i in range(parts)]
    case(Model(f"split_runtime_sizes{key}",
               [node("Split", ["x", "s"], outs, axis=axis)],
               [("x", F32, shape), ("s", I64, [parts])],
               [(o, F32, [None] * len(shape)) for o in outs], {}, opset,
               sizes, {"s": partition(shape[axis])}))

# -- Slice --------------------------------------------------------------------
for key, shape, st, en, ax, sp, sizes in [
        ("basic", [6, 5], [1, 0], [4, 3], None, None, ({},)),
        ("neg_idx", [6, 5], [-4], [-1], [1], None, ({},)),
        ("neg_step", [6, 5], [-1], [-100], [0], [-2], ({},)),
        ("clamp_big", [4, 5], [2], [2**62], [1], [1], ({},)),
        ("step3_axes_neg", [3, 10], [1], [10], [-1], [3], ({},)),
        ("empty", [4, 5], [3], [1], [0], [1], ({},)),
        ("sym_rows", ["n", 8], [0, 1], [2**62, 7], [0, 1], [1, 2],
         sym2(3, 6)),
        ("sym_last_k", ["n", 4], [-2], [2**62], [0], [1], sym2(3, 5))]:
    args = [("x", F32, shape), ("st", i64(*st)), ("en", i64(*en))]
    args += [("ax", i64(*ax))] if ax is not None else ([""] if sp else [])
    args += [("sp", i64(*sp))] if sp is not None else []
    case(one(f"slice_{key}", "Slice", args, opset=13, sizes=sizes))
case(one("slice_runtime_starts", "Slice", [
    ("x", F32, [6, 5]), ("st", I64, [2]), ("en", i64(100, -1)),
    ("ax", i64(0, -1))], opset=13,
    gen={"st": lambda r, s: np.array([1, -4], I64)}))
case(one("slice_int32_params", "Slice", [
    ("x", I64, [5, 4]), ("st", np.array([1], I32)), ("en", np.array([4], I32)),
    ("ax", np.array([0], I32))], opset=13))
# A shape vector sliced, then used as a Reshape target: folds at import.
case(Model("slice_shape_chain", [
    node("Shape", ["x"], ["s"]),
    node("Slice", ["s", "st", "en"], ["t"]),
    node("Concat", ["t", "m"], ["u"], axis=0),
    node("Reshape", ["x", "u"], ["y"])],
    [("x", F32, ["n", 3, 4])], [("y", F32, ["n", 12])],
    {"st": i64(0), "en": i64(1), "m": i64(12)}, 13, sym2(2, 3)))

# -- Expand, Tile -------------------------------------------------------------
for key, shape, target, sizes in [("col", [3, 1], [3, 4], ({},)),
                                  ("rank_up", [4], [2, 3, 4], ({},)),
                                  ("ones_keep", [2, 3], [1, 1], ({},)),
                                  ("sym", ["n", 1], [1, 5], sym2(2, 4)),
                                  ("sym_is_1_or_t", ["n", 1], [4, 6],
                                   sym2(1, 4))]:
    case(one(f"expand_{key}", "Expand", [("x", F32, shape),
                                         ("s", i64(*target))],
             opset=13, sizes=sizes))
case(one("expand_int64", "Expand", [("x", I64, [1, 3]), ("s", i64(2, 1, 1))],
         opset=13))
for key, shape, reps, sizes in [("2d", [2, 3], [2, 3], ({},)),
                                ("ones", [3, 2, 2], [1, 2, 1], ({},)),
                                ("zero", [2, 3], [0, 1], ({},)),
                                ("sym", ["n", 2], [3, 1], sym2(1, 4))]:
    case(one(f"tile_{key}", "Tile", [("x", F32, shape), ("r", i64(*reps))],
             opset=13, sizes=sizes))
case(one("tile_bool", "Tile", [("x", BOOL, [2, 2]), ("r", i64(2, 2))],
         opset=13, gen={"x": lambda r, s: r.integers(0, 2, s).astype(bool)}))

# -- Range --------------------------------------------------------------------
for key, dt, a, b, d in [("int_up", I64, 2, 11, 3), ("int_down", I32, 5, -4, -2),
                         ("f32", F32, 0.5, 3.0, 0.25),
                         ("f32_neg", F32, 1.0, -1.0, -0.3),
                         ("empty", I64, 3, 1, 1)]:
    case(Model(f"range_{key}", [node("Range", ["a", "b", "d"], ["r"]),
                                node("Cast", ["r"], ["c"], to=1),
                                node("Add", ["c", "x"], ["y"])],
               [("x", F32, [1])], ["r", "y"],
               {"a": np.array(a, dt), "b": np.array(b, dt),
                "d": np.array(d, dt)}, 13))
# Range over a run-time dim that folds through Shape/Gather.
case(Model("range_from_shape", [
    node("Shape", ["x"], ["s"]),
    node("Gather", ["s", "zero"], ["n"], axis=0),
    node("Range", ["z", "n", "one"], ["y"])],
    [("x", F32, [5, 2])], ["y"],
    {"zero": np.array(0, I64), "z": np.array(0, I64),
     "one": np.array(1, I64)}, 13))

# -- Pad ----------------------------------------------------------------------
for key, shape, pads, mode, sizes in [
        ("const", [3, 4], [1, 2, 0, 1], "constant", ({},)),
        ("edge", [3, 4], [2, 1, 1, 3], "edge", ({},)),
        ("reflect", [3, 4], [2, 3, 1, 2], "reflect", ({},)),
        ("crop", [4, 5], [-1, 1, 0, -2], "constant", ({},)),
        ("4d_reflect", [1, 2, 4, 4], [0, 0, 1, 1, 0, 0, 2, 1], "reflect",
         ({},)),
        ("sym", ["n", 3], [0, 1, 0, 2], "edge", sym2(2, 4))]:
    case(one(f"pad_{key}", "Pad", [("x", F32, shape), ("p", i64(*pads))],
             opset=13, sizes=sizes, mode=mode))
# Negative pads crop before the edge, reflection or wrap, as onnxruntime
# does (numpy's pad, the ONNX reference, takes no negative pads).
for key, shape, pads, mode in [
        ("wrap", [3, 4], [2, 3, 1, 2], "wrap"),
        ("3d_wrap_crop", [2, 3, 4], [1, -1, 3, 0, 2, -2], "wrap"),
        ("3d_edge_crop", [2, 3, 5], [1, -1, 3, 0, 2, -2], "edge"),
        ("3d_reflect_crop", [2, 4, 5], [1, -1, 2, 0, 1, -2], "reflect")]:
    case(one(f"pad_{key}", "Pad", [("x", F32, shape), ("p", i64(*pads))],
             opset=19, mode=mode))
case(one("pad_value", "Pad", [("x", F32, [2, 3]), ("p", i64(1, 1, 1, 1)),
                              ("v", np.array(2.5, F32))], opset=13))
case(one("pad_int64_value", "Pad", [("x", I64, [2, 3]), ("p", i64(0, 1, 2, 0)),
                                    ("v", np.array(-7, I64))], opset=13))
case(one("pad_axes_neg", "Pad", [("x", F32, [2, 3, 4]), ("p", i64(1, 2)),
                                  "", ("ax", i64(-1))], opset=18))

# -- GatherElements, ScatterND -----------------------------------------------
for key, dshape, ishape, axis, lo, hi, sizes in [
        ("axis0", [4, 3], [2, 3], 0, 0, 4, ({},)),
        ("axis1_neg_idx", [3, 5], [3, 7], 1, -5, 5, ({},)),
        ("axis_neg", [2, 3, 4], [2, 3, 2], -1, 0, 4, ({},)),
        ("sym", ["n", 6], ["n", 2], 1, 0, 6, sym2(2, 5))]:
    case(one(f"gather_elements_{key}", "GatherElements",
             [("x", F32, dshape), ("i", I64, ishape)], opset=13, sizes=sizes,
             gen={"i": idx_gen(lo, hi)}, axis=axis))
case(one("gather_elements_int32_idx", "GatherElements",
         [("x", I64, [3, 3]), ("i", I32, [3, 3])], opset=13,
         gen={"i": idx_gen(-3, 3, I32)}, axis=0))
for key, red, opset in [("none", None, 13), ("add", "add", 16),
                        ("mul", "mul", 16), ("max", "max", 18),
                        ("min", "min", 18)]:
    attrs = {"reduction": red} if red else {}
    case(one(f"scatter_nd_rows_{key}", "ScatterND",
             [("x", F32, [5, 3]), ("i", i64([0], [3], [4])),
              ("u", F32, [3, 3])], opset=opset, **attrs))
case(one("scatter_nd_elements", "ScatterND",
         [("x", F32, [2, 3, 4]), ("i", i64([0, 1, 2], [1, 2, 3])),
          ("u", F32, [2])], opset=13))
case(one("scatter_nd_int64", "ScatterND",
         [("x", I64, [4, 2]), ("i", i64([1], [2])), ("u", I64, [2, 2])],
         opset=13))

# ScatterElements: indices may repeat; both stacks apply updates in
# row-major order, so the last write (or the reduction's order) agrees.
for key, dshape, ishape, axis, lo, hi, red, opset, sizes in [
        ("axis0", [4, 3], [2, 3], 0, -4, 4, None, 13, ({},)),
        ("axis1_add", [3, 5], [3, 4], 1, 0, 5, "add", 16, ({},)),
        ("axis1_mul", [3, 5], [2, 4], 1, -5, 5, "mul", 16, ({},)),
        ("neg_axis_max", [2, 3, 4], [2, 2, 3], -1, 0, 4, "max", 18, ({},)),
        ("min", [3, 4], [3, 4], 0, 0, 3, "min", 18, ({},)),
        ("sym", ["n", 6], ["n", 2], 1, 0, 6, None, 13, sym2(2, 5))]:
    attrs = {"reduction": red} if red else {}
    case(one(f"scatter_elements_{key}", "ScatterElements",
             [("x", F32, dshape), ("i", I64, ishape), ("u", F32, ishape)],
             opset=opset, sizes=sizes, gen={"i": idx_gen(lo, hi)}, axis=axis,
             **attrs))
case(one("scatter_elements_int64_i32_idx", "ScatterElements",
         [("x", I64, [3, 4]), ("i", I32, [2, 4]), ("u", I64, [2, 4])],
         opset=13, gen={"i": idx_gen(-3, 3, I32)}, axis=0))
case(one("scatter_opset10", "Scatter",
         [("x", F32, [3, 3]), ("i", I64, [1, 3]), ("u", F32, [1, 3])],
         opset=10, gen={"i": idx_gen(0, 3)}, axis=0))

# -- GatherND -----------------------------------------------------------------
for key, dshape, ishape, lo, hi, batch_dims, sizes in [
        ("points", [4, 5, 6], [7, 3], -4, 4, 0, ({},)),
        ("rows", [4, 5, 6], [2, 3, 1], 0, 4, 0, ({},)),
        ("slices_sym", [5, 6, 3], ["n", 2], -5, 5, 0, sym2(1, 4)),
        ("batched", [2, 4, 3], [2, 5, 1], 0, 4, 1, ({},))]:
    case(one(f"gather_nd_{key}", "GatherND",
             [("x", F32, dshape), ("i", I64, ishape)], opset=13, sizes=sizes,
             gen={"i": idx_gen(lo, hi)}, batch_dims=batch_dims))
case(one("gather_nd_int64_data", "GatherND",
         [("x", I64, [3, 4]), ("i", i64([2, 1], [0, -1]))], opset=12))

# -- TopK ---------------------------------------------------------------------
for key, shape, k, attrs, sizes in [
        ("largest", [3, 8], 3, {}, ({},)),
        ("smallest_axis0", [6, 4], 2, {"axis": 0, "largest": 0}, ({},)),
        ("k_all", [2, 5], 5, {"axis": -1}, ({},)),
        ("3d_mid", [2, 6, 3], 4, {"axis": 1}, ({},)),
        ("sym_rows", ["n", 7], 2, {}, sym2(2, 5))]:
    case(one(f"topk_{key}", "TopK", [("x", F32, shape), ("k", i64(k))],
             opset=13, sizes=sizes, outputs=("v", "i"), **attrs))
case(one("topk_runtime_k", "TopK", [("x", F32, [3, 6]), ("k", I64, [1])],
         opset=13, outputs=("v", "i"),
         gen={"k": lambda r, s: np.array([4], I64)}))
case(one("topk_int64_ties", "TopK", [("x", I64, [4, 6]), ("k", i64(3))],
         opset=13, outputs=("v", "i"), gen={"x": idx_gen(0, 3)}))


# -----------------------------------------------------------------------------
results = results_fixture()


@pytest.mark.parametrize("model", CASES)
def test_op(model, results):
    check_case(results, model)



# -- Unsupported attribute values fail at compile time, naming the node -------
@pytest.mark.parametrize("op,args,attrs,opset,message", [
    ("Resize", [("x", F32, [1, 1, 2, 2]), "", ("s", f32(1, 1, 2, 2))],
     {"mode": "area"}, 13,
     "node 'resize_y' (Resize, opset 13): mode 'area' — supported: "
     "nearest, linear, cubic"),
    ("Pad", [("x", F32, [3]), ("p", i64(1, 1))], {"mode": "mirror"}, 19,
     "node 'pad_y' (Pad, opset 19): mode 'mirror' — supported: constant, "
     "edge, reflect, and wrap from opset 19"),
    ("Conv", [("x", F32, [1, 1, 2, 2, 2, 2]),
              ("w", np.ones([1, 1, 1, 1, 1, 1], F32))], {}, 13,
     "node 'conv_y' (Conv, opset 13): a rank-6 input — supported: 1-D, 2-D "
     "and 3-D (rank 3 to 5) inputs"),
    ("ScatterND", [("x", F32, [4]), ("i", i64([1])), ("u", F32, [1])],
     {"reduction": "max"}, 16,
     "(ScatterND, opset 16): reduction 'max' — supported: none, add, mul; "
     "max, min from opset 18"),
], ids=["resize_area", "pad_wrap", "conv_4d", "scatter_nd_max_opset16"])
def test_unsupported_attribute(op, args, attrs, opset, message, tmp_path):
    ins = [a for a in args if isinstance(a, tuple) and len(a) == 3]
    inits = {a[0]: a[1] for a in args if isinstance(a, tuple) and len(a) == 2}
    names = [a if isinstance(a, str) else a[0] for a in args]
    model = make_model([node(op, names, ["y"], **attrs)], ins,
                       [("y", F32, None)], inits,
                       opset, check=False)
    path = save_model(model, tmp_path / "model.onnx")
    proc = compile_model(path, tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert message in proc.stderr, proc.stderr
    assert not (tmp_path / "m.ingot").exists()
