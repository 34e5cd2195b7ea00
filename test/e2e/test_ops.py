"""Every supported ONNX op, compiled by ingot and compared with onnxruntime.

Each case is one small model; symbolic dims (dim_param) are run at two sizes
from one artifact, and a few odd-sized larger shapes reach the bodies and
tails of vectorised kernels. Cases that differ only in the op (binary,
unary) share one model with one output per op, so there is one compile per
shape while each op still gets its own test id. Inputs are fresh random
values from a seed derived from the model's key; they are never zero (except
where zeros are the point) and positive where the op needs it.
"""
import numpy as np
import pytest
from onnx import helper, numpy_helper

from ingot_testlib import Model, node, rand
from ops_case_lib import check_case, results_fixture

F32, I64, I32, BOOL = np.float32, np.int64, np.int32, np.bool_


def i64(*v):
    return np.array(v, dtype=I64)


def one(key, op, args, opset=17, sizes=({},), gen=None, **attrs):
    """A single-node model. args in op order: (name, dtype, shape) graph
    inputs, (name, array) initializers, or "" for an absent optional."""
    ins = [a for a in args if isinstance(a, tuple) and len(a) == 3]
    inits = {a[0]: a[1] for a in args if isinstance(a, tuple) and len(a) == 2}
    names = [a if isinstance(a, str) else a[0] for a in args]
    return Model(key, [node(op, names, ["y"], **attrs)], ins, ["y"], inits,
                 opset, sizes, gen or {})


CASES, KEYS = [], {}


def case(model, outputs=None, label=None):
    assert KEYS.setdefault(model.key, model) is model, f"dup key {model.key}"
    CASES.append(pytest.param(model, outputs, id=label or model.key))


def per_output(model, labels):
    """One test id per output of a shared model: labels[i] names output i."""
    for out, label in zip(model.outputs, labels):
        case(model, [out], f"{label}-{model.key}")


def sym2(n1, n2, sym="n"):
    return ({sym: n1}, {sym: n2})


# -- Add Sub Mul Div (f32, one model per shape pair) --------------------------
BINARY = ["Add", "Sub", "Mul", "Div"]
for key, sa, sb, sizes in [
        ("same", [3, 5], [3, 5], ({},)),
        ("bcast_vec", [2, 3, 4], [4], ({},)),
        ("bcast_both", [2, 1, 4], [3, 1], ({},)),
        ("scalar_lhs", [], [2, 5], ({},)),
        ("sym", ["n", 4], [1, 4], sym2(2, 7)),
        ("large_odd_bcast", [7, 37, 19], [37, 1], ({},))]:
    per_output(Model(f"f32_{key}", [node(op, ["a", "b"], [f"y_{op}"])
                                    for op in BINARY],
                     [("a", F32, sa), ("b", F32, sb)],
                     [f"y_{op}" for op in BINARY], opset=14, sizes=sizes),
               BINARY)
# Integer arithmetic; Div truncates toward zero (inputs have both signs).
for dt, opset in [(I64, 23), (I32, 13)]:
    per_output(Model(f"{np.dtype(dt).name}_bcast",
                     [node(op, ["a", "b"], [f"y_{op}"]) for op in BINARY],
                     [("a", dt, [3, 4]), ("b", dt, [4])],
                     [f"y_{op}" for op in BINARY], opset=opset,
                     gen={"a": lambda r, s: rand(r, s, I64) * 5}), BINARY)

# -- Pow: float and integer exponents -----------------------------------------
base = {"a": lambda r, s: rand(r, s, F32, 0.5, 2.0, positive=True)}
case(one("pow_f32_exponent", "Pow", [("a", F32, [3, 4]), ("b", F32, [3, 4])],
         gen={**base, "b": lambda r, s: r.uniform(-2, 2, s)}))
case(one("pow_scalar_exponent_bcast", "Pow",
         [("a", F32, [2, 3, 4]), ("b", np.array(0.5, F32))], gen=base))
for dt in (I64, I32):  # integer powers of negative bases are well defined
    case(one(f"pow_{np.dtype(dt).name}_exponent", "Pow",
             [("a", F32, [2, 5]), ("b", dt, [5])], opset=15,
             gen={"b": lambda r, s: r.integers(-3, 4, s)}))
# Integer bases: integer exponents multiply out exactly, float exponents
# go through pow and truncate. Results stay below 2^53 (20^11 ~ 2e14), where
# onnxruntime's double pow is exact too.
for dt in (I64, I32):
    name = np.dtype(dt).name
    hi = 20 if dt == I64 else 7
    case(one(f"pow_{name}_base_int_exponent", "Pow",
             [("a", dt, [3, 4]), ("b", dt, [4])], opset=15,
             gen={"a": lambda r, s, hi=hi: r.integers(-hi, hi + 1, s),
                  "b": lambda r, s: r.integers(0, 12, s)}))
    case(one(f"pow_{name}_base_f32_exponent", "Pow",
             [("a", dt, [2, 5]), ("b", F32, [5])], opset=15,
             gen={"a": lambda r, s: r.integers(0, 30, s),
                  "b": lambda r, s: r.uniform(0, 3, s)}))

# -- Unary f32 (one model per shape, one input per op) ------------------------
UNARY = {"Sqrt": lambda r, s: rand(r, s, F32, 0.01, 9.0, positive=True),
         "Neg": None, "Exp": lambda r, s: r.uniform(-4, 4, s),
         "Erf": lambda r, s: r.uniform(-3, 3, s), "Tanh": lambda r, s:
         r.uniform(-4, 4, s), "Sigmoid": lambda r, s: r.uniform(-8, 8, s),
         "Relu": None}
for key, shape, sizes in [("2d", [4, 6], ({},)),
                          ("sym3d", ["n", 3, 5], sym2(1, 4)),
                          ("large_odd", [5, 67, 3], ({},))]:
    per_output(Model(f"f32_{key}", [node(op, [f"x_{op}"], [f"y_{op}"])
                                    for op in UNARY],
                     [(f"x_{op}", F32, shape) for op in UNARY],
                     [f"y_{op}" for op in UNARY], opset=13, sizes=sizes,
                     gen={f"x_{k}": g for k, g in UNARY.items() if g}), UNARY)
# (onnxruntime has no int64 Relu kernel, so int64 is checked for Neg only.)
# Saturation and overflow: exp to inf and 0, tanh/sigmoid/erf flat at +-1.
EXTREME = ["Exp", "Tanh", "Sigmoid", "Erf"]
per_output(Model("f32_extremes", [node(op, [f"x_{op}"], [f"y_{op}"])
                                  for op in EXTREME],
                 [(f"x_{op}", F32, [4, 50]) for op in EXTREME],
                 [f"y_{op}" for op in EXTREME], opset=13,
                 gen={f"x_{op}": lambda r, s: r.uniform(-100, 100, s)
                      for op in EXTREME}), EXTREME)
for dt, ops in [(I64, ["Neg"]), (I32, ["Neg", "Relu"])]:
    per_output(Model(np.dtype(dt).name, [node(op, ["x"], [f"y_{op}"])
                                         for op in ops],
                     [("x", dt, [3, 4])], [f"y_{op}" for op in ops],
                     opset=14), ops)

# -- MatMul -------------------------------------------------------------------
for key, sa, sb, sizes in [
        ("2d", [3, 4], [4, 5], ({},)), ("vec_lhs", [4], [4, 5], ({},)),
        ("vec_rhs", [3, 4], [4], ({},)), ("vec_both", [7], [7], ({},)),
        ("vec_lhs_batched_rhs", [4], [2, 4, 5], ({},)),
        ("batched", [2, 3, 4], [2, 4, 5], ({},)),
        ("batch_bcast", [2, 1, 3, 4], [5, 4, 6], ({},)),
        # Big enough for vector/tiled kernel bodies, odd for their tails.
        ("large_odd", [37, 67], [67, 53], ({},)),
        ("batched_large_odd", [3, 33, 129], [129, 17], ({},)),
        ("sym", ["b", "m", 8], [8, 3], ({"b": 1, "m": 5}, {"b": 3, "m": 2}))]:
    case(one(f"matmul_{key}", "MatMul", [("a", F32, sa), ("b", F32, sb)],
             sizes=sizes))
case(one("matmul_3d_weight", "MatMul",
         [("a", F32, [2, 3, 16]), ("w", np.linspace(-1, 1, 16 * 5, dtype=F32)
                                   .reshape(16, 5))]))

# -- Gemm ---------------------------------------------------------------------
A, B = ("a", F32, [3, 4]), ("b", F32, [4, 5])
for key, args, attrs in [
        ("no_c", [A, B], {}),
        ("transA_c_vec", [("a", F32, [4, 3]), B, ("c", F32, [5])],
         {"transA": 1}),
        ("transB_c_full", [A, ("b", F32, [5, 4]), ("c", F32, [3, 5])],
         {"transB": 1}),
        ("transAB_alpha_beta_c_col", [("a", F32, [4, 3]), ("b", F32, [5, 4]),
                                      ("c", F32, [3, 1])],
         {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}),
        ("c_scalar_beta", [A, B, ("c", F32, [])], {"beta": -1.5}),
        ("c_row", [A, B, ("c", F32, [1, 5])], {"alpha": 1.25}),
        ("large_odd_transB", [("a", F32, [65, 70]), ("b", F32, [31, 70]),
                              ("c", F32, [31])], {"transB": 1})]:
    case(one(f"gemm_{key}", "Gemm", args, opset=13, **attrs))
case(one("gemm_linear_sym", "Gemm",
         [("a", F32, ["m", 4]), ("w", np.arange(24, dtype=F32).reshape(6, 4)
                                 / 24), ("c", np.arange(6, dtype=F32) - 3)],
         opset=13, sizes=sym2(1, 9, "m"), transB=1))

# -- Softmax ------------------------------------------------------------------
for key, shape, attrs, sizes, gen in [
        ("default_axis", [3, 7], {}, ({},), None),
        ("axis1_of_3d", [2, 5, 3], {"axis": 1}, ({},), None),
        ("axis0", [4, 3], {"axis": 0}, ({},), None),
        ("axis_neg2_4d", [2, 3, 4, 5], {"axis": -2}, ({},), None),
        ("long_axis", [3, 301], {"axis": 1}, ({},), None),
        ("sym_large_logits", ["n", 6], {"axis": -1}, sym2(1, 5),
         {"x": lambda r, s: r.uniform(-100, 100, s)})]:
    case(one(f"softmax_{key}", "Softmax", [("x", F32, shape)], opset=13,
             sizes=sizes, gen=gen, **attrs))

# -- LayerNormalization -------------------------------------------------------
g8, b8 = np.linspace(0.5, 1.5, 8, dtype=F32), np.linspace(-1, 1, 8, dtype=F32)
for key, args, attrs, sizes in [
        ("last_bias", [("x", F32, [2, 3, 8]), ("g", g8), ("b", b8)], {},
         ({},)),
        ("last_no_bias", [("x", F32, [2, 3, 8]), ("g", g8)], {}, ({},)),
        ("axis1_bias", [("x", F32, [2, 3, 4]), ("g", F32, [3, 4]),
                        ("b", F32, [3, 4])], {"axis": 1}, ({},)),
        ("axis1_no_bias", [("x", F32, [2, 3, 4]), ("g", F32, [3, 4])],
         {"axis": 1}, ({},)),
        ("epsilon_0.1", [("x", F32, [4, 16]), ("g", F32, [16])],
         {"epsilon": 0.1}, ({},)),
        ("wide_odd", [("x", F32, [2, 5, 129]), ("g", F32, [129]),
                      ("b", F32, [129])], {}, ({},)),
        ("sym", [("x", F32, ["b", "s", 8]), ("g", g8), ("b", b8)],
         {"axis": -1}, ({"b": 1, "s": 1}, {"b": 2, "s": 5}))]:
    case(one(f"layernorm_{key}", "LayerNormalization", args, sizes=sizes,
             **attrs))

# -- ReduceMean: axes as attribute (opset 13) and as input (opset 18) ---------
for key, shape, attrs, sizes in [
        ("keepdims1", [3, 4, 5], {"axes": [1], "keepdims": 1}, ({},)),
        ("keepdims0_neg_axis", [3, 4, 5], {"axes": [-1], "keepdims": 0},
         ({},)),
        ("two_axes", [3, 4, 5], {"axes": [0, 2]}, ({},)),
        ("all_axes_keepdims0", [3, 4], {"keepdims": 0}, ({},)),
        ("long_axis", [6, 257], {"axes": [-1], "keepdims": 0}, ({},))]:
    case(one(f"reducemean13_{key}", "ReduceMean", [("x", F32, shape)],
             opset=13, sizes=sizes, **attrs))
for key, shape, axes, keep, sizes in [
        ("keepdims1_neg_axis", [3, 4, 5], [-1], 1, ({},)),
        ("keepdims0_sym", ["n", 4, 6], [1, 2], 0, sym2(2, 5)),
        ("no_axes_input", [3, 4], None, 1, ({},))]:
    args = [("x", F32, shape)] + ([("axes", i64(*axes))] if axes else [])
    case(one(f"reducemean18_{key}", "ReduceMean", args, opset=18,
             sizes=sizes, keepdims=keep))

# -- Transpose ----------------------------------------------------------------
for key, dt, shape, perm, sizes in [
        ("default_2d", F32, [3, 5], None, ({},)),
        ("perm_021", F32, [2, 3, 4], [0, 2, 1], ({},)),
        ("heads_0213", F32, [2, 5, 4, 3], [0, 2, 1, 3], ({},)),
        ("large_odd_0213", F32, [2, 33, 5, 17], [0, 2, 1, 3], ({},)),
        ("sym_201", F32, ["b", 3, "s"], [2, 0, 1],
         ({"b": 1, "s": 4}, {"b": 2, "s": 3})),
        ("int64_default", I64, [2, 3], None, ({},))]:
    attrs = {"perm": perm} if perm else {}
    case(one(f"transpose_{key}", "Transpose", [("x", dt, shape)], opset=23,
             sizes=sizes, **attrs))

# -- Reshape ------------------------------------------------------------------
for key, shape, target, attrs, sizes in [
        ("zero_copies_sym_dim", ["n", 6], [0, 2, 3], {}, sym2(2, 5)),
        ("minus1", [2, 3, 4], [-1, 4], {}, ({},)),
        ("zero_and_minus1", [2, 3, 4], [0, -1], {}, ({},)),
        ("allowzero_no_zeros", [2, 3, 4], [4, 6], {"allowzero": 1}, ({},)),
        ("allowzero_empty", [0, 4], [4, 0], {"allowzero": 1}, ({},))]:
    case(one(f"reshape_{key}", "Reshape",
             [("x", F32, shape), ("shape", i64(*target))], opset=21,
             sizes=sizes, **attrs))
case(one("reshape_shape_from_input", "Reshape",
         [("x", F32, [2, 3, 4]), ("shape", I64, [2])], opset=14,
         gen={"shape": lambda r, s: i64(6, 4)}))

# -- Squeeze / Unsqueeze (axes as input, opset 13+) ---------------------------
for key, shape, axes, sizes in [
        ("axis1", [3, 1, 4], [1], ({},)), ("neg_axis", [3, 4, 1], [-1], ({},)),
        ("two_axes", [1, 3, 1, 4], [0, -2], ({},)),
        ("no_axes", [1, 3, 1], None, ({},)),
        ("sym", ["n", 1, 4], [1], sym2(2, 3))]:
    args = [("x", F32, shape)] + ([("axes", i64(*axes))] if axes else [])
    case(one(f"squeeze_{key}", "Squeeze", args, opset=13, sizes=sizes))
for key, shape, axes, sizes in [
        ("front", [3, 4], [0], ({},)), ("neg_axis", [3, 4], [-1], ({},)),
        ("two_axes", [3, 4], [1, 3], ({},)),
        ("sym_both_ends", ["n"], [0, -1], sym2(1, 6))]:
    case(one(f"unsqueeze_{key}", "Unsqueeze",
             [("x", F32, shape), ("axes", i64(*axes))], opset=21,
             sizes=sizes))

# -- Concat -------------------------------------------------------------------
for key, dt, shapes, axis, sizes in [
        ("three_axis_neg1", F32, [[2, 3, 1], [2, 3, 4], [2, 3, 2]], -1, ({},)),
        ("three_axis0", F32, [[1, 4], [3, 4], [2, 4]], 0, ({},)),
        ("three_axis_neg2", F32, [[2, 1, 3], [2, 4, 3], [2, 2, 3]], -2, ({},)),
        ("sym", F32, [["n", 2], ["n", 3], ["n", 1]], 1, sym2(1, 4)),
        ("int64", I64, [[2], [3], [1]], 0, ({},))]:
    case(one(f"concat_{key}", "Concat",
             [(f"x{i}", dt, s) for i, s in enumerate(shapes)], opset=13,
             sizes=sizes, axis=axis))
case(one("concat_with_weight", "Concat",
         [("x", F32, [2, 3]), ("w", np.full((1, 3), 0.25, F32))], axis=0))

# -- Gather -------------------------------------------------------------------
idx = lambda n: lambda r, s: r.integers(-n, n, s)  # noqa: E731 (neg. wrap)
for key, data, idt, ishape, axis, sizes, gen in [
        ("axis0_neg_indices", ("x", F32, [5, 3]), I64, [4], 0, ({},), 5),
        ("axis1_2d_indices", ("x", F32, [2, 6, 3]), I64, [2, 2], 1, ({},), 6),
        ("int32_indices_axis_neg1", ("x", F32, [4, 5]), I32, [3], -1, ({},),
         5),
        ("scalar_index", ("x", F32, [4, 5]), I64, [], 0, ({},), 4),
        ("embedding_sym", ("table", np.linspace(-2, 2, 80, dtype=F32)
                           .reshape(10, 8)), I64, ["b", "s"], 0,
         ({"b": 1, "s": 3}, {"b": 2, "s": 7}), 10),
        ("int64_data", ("x", I64, [5]), I64, [2], 0, ({},), 5)]:
    case(one(f"gather_{key}", "Gather", [data, ("i", idt, ishape)],
             sizes=sizes, gen={"i": idx(gen)}, axis=axis))

# -- Where --------------------------------------------------------------------
for key, dt, sc, sx, sy, sizes in [
        ("same", F32, [3, 4], [3, 4], [3, 4], ({},)),
        ("three_way_bcast", F32, [4], [3, 1], [], ({},)),
        ("int64", I64, [2, 3], [2, 3], [1], ({},)),
        ("sym", F32, ["n", 1], ["n", 5], [5], sym2(2, 3))]:
    case(one(f"where_{key}", "Where",
             [("c", BOOL, sc), ("a", dt, sx), ("b", dt, sy)], opset=16,
             sizes=sizes))

# -- Cast ---------------------------------------------------------------------
def with_zeros(r, s):  # zeros are the point of Cast to bool
    return np.where(r.random(s) < 0.3, 0, r.uniform(-50, 50, s))



for src, dst in [(F32, I64), (F32, I32), (F32, BOOL), (I64, F32), (I32, F32),
                 (BOOL, F32), (BOOL, I64), (I64, I32)]:
    to = np.dtype(dst)
    case(one(f"cast_{np.dtype(src).name}_to_{to.name}", "Cast",
             [("x", src, [3, 7])], opset=13 if dst is I32 else 23,
             gen={"x": with_zeros} if src is F32 else None,
             to=int(helper.np_dtype_to_tensor_dtype(to))))

# -- Shape (start/end, opset 15) ----------------------------------------------
SHAPES = [("full", {}), ("start1", {"start": 1}), ("end_neg1", {"end": -1}),
          ("start_neg2", {"start": -2}), ("clamped", {"start": -9, "end": 9})]
per_output(Model("shape_sym", [node("Shape", ["x"], [f"y_{k}"], **a)
                         for k, a in SHAPES], [("x", F32, ["b", "s", 4])],
                 [f"y_{k}" for k, _ in SHAPES], opset=15,
                 sizes=({"b": 1, "s": 3}, {"b": 2, "s": 6})),
           [k for k, _ in SHAPES])
case(one("shape_static", "Shape", [("x", F32, [2, 3, 4])], opset=15))

# -- ConstantOfShape fed by a Shape chain -------------------------------------
def cos_value(v):
    return numpy_helper.from_array(np.array([v]))



case(Model("constantofshape_f32_plus_x", [
    node("Shape", ["x"], ["s"]),
    node("ConstantOfShape", ["s"], ["c"], value=cos_value(F32(1.5))),
    node("Add", ["x", "c"], ["y"])], [("x", F32, ["n", 4])], ["y"],
    sizes=sym2(2, 5)))
case(Model("constantofshape_int64_from_shape_slice", [
    node("Shape", ["x"], ["s"], start=1),
    node("ConstantOfShape", ["s"], ["y"], value=cos_value(I64(7)))],
    [("x", F32, [2, "n", 3])], ["y"], sizes=sym2(1, 4)))
case(Model("constantofshape_default_zeros", [
    node("Shape", ["x"], ["s"]), node("ConstantOfShape", ["s"], ["y"])],
    [("x", F32, ["n", 3])], ["y"], sizes=sym2(2, 3)))

# -- Constant -----------------------------------------------------------------
case(Model("constant_tensor_add", [
    node("Constant", [], ["k"], value=numpy_helper.from_array(
        np.linspace(-1, 1, 6, dtype=F32).reshape(2, 3))),
    node("Add", ["x", "k"], ["y"])], [("x", F32, [2, 3])], ["y"]))
case(Model("constant_value_float_mul", [
    node("Constant", [], ["k"], value_float=2.5),
    node("Mul", ["x", "k"], ["y"])], [("x", F32, [4])], ["y"]))
case(Model("constant_value_ints_as_shape", [
    node("Constant", [], ["k"], value_ints=[3, -1]),
    node("Reshape", ["x", "k"], ["y"])], [("x", F32, [2, 3, 2])], ["y"]))
case(Model("constant_value_int_add_int64", [
    node("Constant", [], ["k"], value_int=3),
    node("Add", ["x", "k"], ["y"])], [("x", I64, [5])], ["y"]))

# -- Trilu --------------------------------------------------------------------
for key, dt, shape, k, upper, sizes in [
        ("upper", F32, [4, 5], None, 1, ({},)),
        ("lower", F32, [5, 4], None, 0, ({},)),
        ("upper_k1", F32, [4, 4], 1, 1, ({},)),
        ("lower_k_neg1", F32, [4, 6], -1, 0, ({},)),
        ("upper_k_neg9_keeps_all", F32, [3, 4], -9, 1, ({},)),
        ("batched_sym", F32, ["n", 3, 3], 0, 1, sym2(1, 3)),
        ("lower_int64", I64, [3, 3], None, 0, ({},))]:
    args = [("x", dt, shape)] + ([("k", np.array(k, I64))] if k is not None
                                 else [])
    case(one(f"trilu_{key}", "Trilu", args, opset=14, sizes=sizes,
             upper=upper))

# -- Identity -----------------------------------------------------------------
case(one("identity_f32", "Identity", [("x", F32, [3, 4])], opset=14))
case(one("identity_int64_sym", "Identity", [("x", I64, ["n", 2])], opset=21,
         sizes=sym2(1, 5)))


# -----------------------------------------------------------------------------
results = results_fixture()  # ops_case_lib: one run per model


@pytest.mark.parametrize("model,outputs", CASES)
def test_op(model, outputs, results):
    check_case(results, model, outputs)
