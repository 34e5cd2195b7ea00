"""The tensor-family ops (Flatten … NonZero), compiled by ingot and compared
with onnxruntime: f32 within the shared relative tolerance, integers exact.

Each case is a one-node model (Split and TopK have several outputs). Shape
operands (starts, pads, repeats, sizes) are initializers unless a case is
about run-time values; symbolic dims run at two sizes from one artifact.
"""
import numpy as np
import pytest
from onnx import helper

from ingot_testlib import (Model, assert_clean_failure, assert_close,
                           compile_and_run, compile_model, make_model, node,
                           save_model)

F32, I64, I32, BOOL = np.float32, np.int64, np.int32, np.bool_


def i64(*v):
    return np.array(v, dtype=I64)


def f32(*v):
    return np.array(v, dtype=F32)


def one(key, op, args, opset=17, sizes=({},), gen=None, outputs=("y",),
        **attrs):
    """A single-node model. args in op order: (name, dtype, shape) graph
    inputs, (name, array) initializers, or "" for an absent optional."""
    ins = [a for a in args if isinstance(a, tuple) and len(a) == 3]
    inits = {a[0]: a[1] for a in args if isinstance(a, tuple) and len(a) == 2}
    names = [a if isinstance(a, str) else a[0] for a in args]
    return Model(key, [node(op, names, list(outputs), **attrs)], ins,
                 list(outputs), inits, opset, sizes, gen or {})


CASES, KEYS = [], {}
# Data-dependent sizes (NonZero's count, a Slice or TopK whose parameters are
# run-time inputs) are bounded by ComputeBounds through
# graph::boundTensorResult (n <= numel, a slice <= its input dim).


def case(model, marks=()):
    assert KEYS.setdefault(model.key, model) is model, f"dup key {model.key}"
    CASES.append(pytest.param(model, id=model.key, marks=marks))


def sym2(n1, n2, sym="n"):
    return ({sym: n1}, {sym: n2})


def signed(r, s):
    return r.uniform(-2, 2, s).astype(F32)


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
case(one("pad_value", "Pad", [("x", F32, [2, 3]), ("p", i64(1, 1, 1, 1)),
                              ("v", np.array(2.5, F32))], opset=13))
case(one("pad_int64_value", "Pad", [("x", I64, [2, 3]), ("p", i64(0, 1, 2, 0)),
                                    ("v", np.array(-7, I64))], opset=13))
case(one("pad_axes_neg", "Pad", [("x", F32, [2, 3, 4]), ("p", i64(1, 2)),
                                  "", ("ax", i64(-1))], opset=18))

# -- GatherElements, ScatterND -----------------------------------------------
def idx_gen(lo, hi, dt=I64):
    return lambda r, s: r.integers(lo, hi, s).astype(dt)


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

# -- Conv ---------------------------------------------------------------------
w_rng = np.random.default_rng(7)


def w(*shape):
    return w_rng.uniform(-1, 1, shape).astype(F32)


for key, xs, ws, bias, attrs, sizes in [
        ("3x3_pad", [1, 3, 8, 8], [4, 3, 3, 3], True, {"pads": [1, 1, 1, 1]},
         ({},)),
        ("stride2_nobias", [2, 2, 9, 7], [3, 2, 3, 3], False,
         {"strides": [2, 2]}, ({},)),
        ("dilated_asym_pads", [1, 2, 10, 9], [2, 2, 3, 2], True,
         {"dilations": [2, 1], "pads": [2, 0, 1, 1]}, ({},)),
        ("group2", [1, 4, 6, 6], [6, 2, 3, 3], True, {"group": 2}, ({},)),
        ("depthwise", [1, 3, 5, 5], [3, 1, 3, 3], True,
         {"group": 3, "pads": [1, 1, 1, 1]}, ({},)),
        ("1x1", [2, 8, 4, 4], [5, 8, 1, 1], True, {}, ({},)),
        ("same_upper", [1, 2, 7, 6], [3, 2, 3, 3], False,
         {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, ({},)),
        ("same_lower", [1, 2, 6, 6], [3, 2, 2, 2], True,
         {"auto_pad": "SAME_LOWER"}, ({},)),
        ("valid", [1, 2, 6, 5], [2, 2, 3, 3], True, {"auto_pad": "VALID"},
         ({},)),
        ("1d", [2, 3, 10], [4, 3, 3], True, {"pads": [1, 2],
                                             "strides": [2]}, ({},)),
        ("1d_group_dil", [1, 4, 12], [4, 2, 3], False,
         {"group": 2, "dilations": [3]}, ({},)),
        ("sym_batch", ["n", 3, 6, 6], [2, 3, 3, 3], True, {"pads": [1, 1, 1, 1]},
         sym2(1, 3)),
        ("sym_spatial", [1, 2, "h", "h"], [2, 2, 3, 3], True,
         {"auto_pad": "SAME_UPPER"}, ({"h": 5}, {"h": 8})),
        ("sym_channels", [1, "c", 5, 5], [2, 3, 3, 3], True, {},
         ({"c": 3},)),
        ("3d", [1, 2, 5, 6, 4], [3, 2, 3, 2, 3], True,
         {"pads": [1, 0, 1, 1, 1, 0], "strides": [2, 1, 1]}, ({},)),
        ("3d_group_same", [2, 4, 4, 4, 5], [4, 2, 2, 3, 1], False,
         {"group": 2, "auto_pad": "SAME_LOWER"}, ({},))]:
    args = [("x", F32, xs), ("w", w(*ws))]
    if bias:
        args.append(("b", w(ws[0])))
    case(one(f"conv_{key}", "Conv", args, opset=13,
             sizes=sizes, **attrs))

# -- Pooling ------------------------------------------------------------------
for op in ("MaxPool", "AveragePool"):
    for key, xs, attrs, sizes in [
            ("2x2_s2", [1, 2, 6, 6], {"kernel_shape": [2, 2],
                                      "strides": [2, 2]}, ({},)),
            ("3x3_pad", [2, 1, 5, 7], {"kernel_shape": [3, 3],
                                       "pads": [1, 1, 1, 1]}, ({},)),
            ("ceil", [1, 2, 7, 7], {"kernel_shape": [2, 2], "strides": [2, 2],
                                    "ceil_mode": 1}, ({},)),
            ("ceil_pad", [1, 1, 6, 6], {"kernel_shape": [3, 3],
                                        "strides": [2, 2], "ceil_mode": 1,
                                        "pads": [1, 1, 1, 1]}, ({},)),
            ("same_upper", [1, 2, 5, 6], {"kernel_shape": [3, 2],
                                          "strides": [2, 1],
                                          "auto_pad": "SAME_UPPER"}, ({},)),
            ("1d", [2, 3, 9], {"kernel_shape": [3], "strides": [2],
                               "pads": [1, 0]}, ({},)),
            ("sym", ["n", 2, 6, 6], {"kernel_shape": [3, 3]}, sym2(1, 2)),
            ("3d", [1, 2, 5, 4, 6], {"kernel_shape": [2, 3, 2],
                                     "strides": [2, 1, 2],
                                     "pads": [1, 1, 0, 0, 1, 1]}, ({},))]:
        case(one(f"{op.lower()}_{key}", op, [("x", F32, xs)], opset=13,
                 sizes=sizes, gen={"x": signed}, **attrs))
for key, attrs in [("include_pad", {"count_include_pad": 1,
                                    "pads": [1, 1, 1, 1]}),
                   ("include_pad_ceil", {"count_include_pad": 1,
                                         "pads": [1, 1, 1, 1],
                                         "strides": [2, 2], "ceil_mode": 1})]:
    case(one(f"averagepool_{key}", "AveragePool", [("x", F32, [1, 2, 6, 5])],
             opset=13, kernel_shape=[3, 3], **attrs))
case(one("maxpool_dilated", "MaxPool", [("x", F32, [1, 1, 8, 8])], opset=13,
         gen={"x": signed}, kernel_shape=[2, 2], dilations=[2, 2]))
for key, xs, attrs in [("2d_pads", [2, 3, 5, 6], {"kernel_shape": [3, 3],
                                                  "pads": [1, 1, 1, 1],
                                                  "strides": [2, 2]}),
                       ("1d", [1, 2, 9], {"kernel_shape": [3]}),
                       ("storage_order_1", [1, 2, 4, 6],
                        {"kernel_shape": [2, 2], "storage_order": 1})]:
    case(one(f"maxpool_indices_{key}", "MaxPool", [("x", F32, xs)], opset=13,
             gen={"x": signed}, outputs=("y", "i"), **attrs))
for key, xs, sizes in [("2d", [2, 3, 5, 4], ({},)), ("1d", [1, 4, 7], ({},)),
                       ("sym", ["n", 3, 4, 4], sym2(1, 3))]:
    case(one(f"global_average_pool_{key}", "GlobalAveragePool",
             [("x", F32, xs)], opset=13, sizes=sizes))

# -- Resize -------------------------------------------------------------------
for key, xs, scales, sizes_in, attrs in [
        ("nearest_x2", [1, 2, 3, 4], [1, 1, 2, 2], None,
         {"coordinate_transformation_mode": "asymmetric",
          "nearest_mode": "floor"}),
        ("nearest_default_x1_5", [1, 1, 4, 4], [1, 1, 1.5, 1.5], None, {}),
        ("nearest_half_pixel_ceil_down", [1, 2, 6, 6], [1, 1, 0.5, 0.75],
         None, {"nearest_mode": "ceil"}),
        ("nearest_align_prefer_ceil", [1, 1, 3, 5], None, [1, 1, 7, 4],
         {"coordinate_transformation_mode": "align_corners",
          "nearest_mode": "round_prefer_ceil"}),
        ("linear_half_pixel", [1, 2, 4, 4], [1, 1, 2, 2], None,
         {"mode": "linear"}),
        ("linear_align_sizes", [2, 1, 3, 5], None, [2, 1, 6, 4],
         {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
        ("linear_asym_down", [1, 3, 8, 6], [1, 1, 0.5, 0.5], None,
         {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}),
        ("linear_pytorch_half", [1, 1, 5, 3], None, [1, 1, 1, 6],
         {"mode": "linear",
          "coordinate_transformation_mode": "pytorch_half_pixel"})]:
    args = [("x", F32, xs), ""]
    if scales is not None:
        args.append(("s", np.array(scales, F32)))
    else:
        args += ["", ("z", i64(*sizes_in))]
    case(one(f"resize_{key}", "Resize", args, opset=13, **attrs))
case(one("resize_linear_half_pixel_symmetric", "Resize",
         [("x", F32, [1, 1, 4, 5]), "", ("s", f32(1, 1, 0.6, 1.7))],
         opset=19, mode="linear",
         coordinate_transformation_mode="half_pixel_symmetric"))
for policy in ("not_larger", "not_smaller"):
    case(one(f"resize_keep_aspect_{policy}", "Resize",
             [("x", F32, [1, 2, 4, 6]), "", "", ("z", i64(7, 5))], opset=18,
             axes=[2, 3], keep_aspect_ratio_policy=policy))
# Scales from a Constant node.
case(Model("resize_constant_scales", [
    node("Constant", [], ["s"], value=helper.make_tensor(
        "s", 1, [4], [1.0, 1.0, 2.0, 3.0])),
    node("Resize", ["x", "", "s"], ["y"], mode="linear")],
    [("x", F32, [1, 1, 3, 2])], ["y"], {}, 13))

# -- DepthToSpace, OneHot, NonZero -------------------------------------------
for mode in ("DCR", "CRD"):
    case(one(f"depth_to_space_{mode.lower()}", "DepthToSpace",
             [("x", F32, [2, 8, 2, 3])], opset=13, blocksize=2, mode=mode))
case(one("depth_to_space_b3_sym", "DepthToSpace", [("x", F32, ["n", 9, 2, 2])],
         opset=13, blocksize=3, sizes=sym2(1, 2)))
for key, ishape, dt, axis, depth, lo, hi, vals in [
        ("last", [4], I64, -1, 5, -5, 7, f32(0, 1)),
        ("axis0", [2, 3], I64, 0, 4, 0, 4, f32(-1, 3)),
        ("mid_int32", [2, 3], I32, 1, 6, -6, 6, f32(0.5, 2)),
        ("int64_values", [3], I64, -1, 3, 0, 3, i64(7, 9))]:
    case(one(f"one_hot_{key}", "OneHot",
             [("i", dt, ishape), ("d", np.array(depth, dt)), ("v", vals)],
             opset=13, gen={"i": idx_gen(lo, hi, dt)}, axis=axis))
for key, dt, shape in [("f32", F32, [3, 4]), ("int64_3d", I64, [2, 3, 2]),
                       ("bool", BOOL, [5])]:
    case(one(f"non_zero_{key}", "NonZero", [("x", dt, shape)], opset=13,
             gen={"x": lambda r, s: (r.integers(0, 2, s) *
                                     r.integers(1, 5, s))}))


# -----------------------------------------------------------------------------
_RESULTS = {}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    def get(model):
        if model.key not in _RESULTS:
            try:
                _RESULTS[model.key] = compile_and_run(
                    model, tmp_path_factory.mktemp(model.key))
            except Exception as e:  # noqa: BLE001 (reported per test id)
                _RESULTS[model.key] = e
        if isinstance(_RESULTS[model.key], Exception):
            raise _RESULTS[model.key]
        return _RESULTS[model.key]
    return get


@pytest.mark.parametrize("model", CASES)
def test_op(model, results):
    for label, got, expected in results(model):
        assert sorted(got) == sorted(expected), (
            f"outputs {sorted(got)}, expected {sorted(expected)}")
        for name in expected:
            assert_close(got[name], expected[name], what=f"{name} ({label})")


# -- Unsupported attribute values fail at compile time, naming the node -------
@pytest.mark.parametrize("op,args,attrs,opset,message", [
    ("Resize", [("x", F32, [1, 1, 2, 2]), "", ("s", f32(1, 1, 2, 2))],
     {"mode": "cubic"}, 13,
     "node 'resize_y' (Resize, opset 13): mode 'cubic' — supported: "
     "nearest, linear"),
    ("Pad", [("x", F32, [3]), ("p", i64(1, 1))], {"mode": "wrap"}, 19,
     "node 'pad_y' (Pad, opset 19): mode 'wrap' — supported: constant, "
     "edge, reflect"),
    ("Conv", [("x", F32, [1, 1, 2, 2, 2, 2]),
              ("w", np.ones([1, 1, 1, 1, 1, 1], F32))], {}, 13,
     "node 'conv_y' (Conv, opset 13): a rank-6 input — supported: 1-D, 2-D "
     "and 3-D (rank 3 to 5) inputs"),
    ("ScatterND", [("x", F32, [4]), ("i", i64([1])), ("u", F32, [1])],
     {"reduction": "max"}, 16,
     "(ScatterND, opset 16): reduction 'max' — supported: none, add, mul; "
     "max, min from opset 18"),
], ids=["resize_cubic", "pad_wrap", "conv_4d", "scatter_nd_max_opset16"])
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


def test_range_runtime_limit_fails_clearly(tmp_path):
    """A Range whose limit is a run-time input has no size bound: the
    compile fails naming the node and suggesting --shape, before any
    artifact is written."""
    model = make_model([node("Range", ["a", "b", "d"], ["y"])],
                       [("b", I64, [])], [("y", I64, [None])],
                       {"a": np.array(0, I64), "d": np.array(1, I64)}, 13,
                       check=False)
    path = save_model(model, tmp_path / "model.onnx")
    proc = compile_model(path, tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert "node 'range_y'" in proc.stderr, proc.stderr
    assert "depends on run-time data" in proc.stderr, proc.stderr
    assert not (tmp_path / "m.ingot").exists()
