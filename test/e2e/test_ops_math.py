"""The elementwise part of the math family (docs/kernels-math.md) compiled
by ingot and compared with onnxruntime: unary math, Gelu, Max/Min, Clip,
logic and comparisons. Reductions, ArgMax/Min, LogSoftmax, CumSum, Dropout,
the normalisations, Einsum and the compile-time errors are in
test_ops_norm.py; shared helpers in ops_case_lib.py.

Same conventions as test_ops.py: one small model per case, symbolic dims run
at two sizes from one artifact, ops that differ only in the op share one
model with one output per op (one test id each).
"""
import numpy as np
import pytest

from ingot_testlib import Model, node, rand
from ops_case_lib import (check_case,
                          BOOL, F32, I32, I64, one, results_fixture, sym2,
                          uniform)

CASES, KEYS = [], {}


def case(model, outputs=None, label=None):
    assert KEYS.setdefault(model.key, model) is model, f"dup key {model.key}"
    CASES.append(pytest.param(model, outputs, id=label or model.key))


def per_output(model, labels):
    """One test id per output; outputs may be names or typed triples."""
    for out, label in zip(model.outputs, labels):
        name = out[0] if isinstance(out, tuple) else out
        case(model, [name], f"{label}-{model.key}")


# -- Unary f32 (one model per shape, one input per op) ------------------------
UNARY = {"Reciprocal": None, "Log": lambda r, s: rand(r, s, F32, 0.01, 9,
                                                     positive=True),
         "Abs": None, "Softplus": uniform(-10, 10), "Mish": uniform(-6, 6),
         "Sin": uniform(-7, 7), "Cos": uniform(-7, 7),
         "Floor": uniform(-5, 5), "Ceil": uniform(-5, 5),
         # halves included: Round is half to even
         "Round": lambda r, s: np.round(r.uniform(-5, 5, s) * 2) / 2,
         "Sign": uniform(-3, 3), "HardSigmoid": uniform(-5, 5),
         "LeakyRelu": None, "Elu": uniform(-4, 4)}
for key, shape, sizes in [("2d", [4, 6], ({},)),
                          ("sym3d", ["n", 3, 5], sym2(1, 4)),
                          ("large_odd", [5, 67, 3], ({},))]:
    per_output(Model(f"unary_{key}", [node(op, [f"x_{op}"], [f"y_{op}"])
                                      for op in UNARY],
                     [(f"x_{op}", F32, shape) for op in UNARY],
                     [f"y_{op}" for op in UNARY], opset=18, sizes=sizes,
                     gen={f"x_{k}": g for k, g in UNARY.items() if g}), UNARY)
PARAM = [("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
         ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7})]
per_output(Model("unary_attrs", [node(op, ["x"], [f"y_{op}"], **a)
                                 for op, a in PARAM],
                 [("x", F32, [3, 8])], [f"y_{op}" for op, _ in PARAM],
                 opset=13, gen={"x": uniform(-4, 4)}), [p for p, _ in PARAM])
for dt in (I64, I32):
    per_output(Model(f"unary_{np.dtype(dt).name}",
                     [node(op, ["x"], [f"y_{op}"]) for op in ("Abs", "Sign")],
                     [("x", dt, [3, 5])], ["y_Abs", "y_Sign"], opset=14),
               ["Abs", "Sign"])

# -- Gelu (opset 20) ----------------------------------------------------------
for approx in ("none", "tanh"):
    case(one(f"gelu_{approx}", "Gelu", [("x", F32, ["n", 16])], opset=20,
             sizes=sym2(2, 5), gen={"x": uniform(-5, 5)}, approximate=approx))

# -- Max / Min (variadic, broadcasting) ---------------------------------------
for op in ("Max", "Min"):
    case(one(f"{op.lower()}_three_bcast", op, [("a", F32, [2, 3, 4]),
                                               ("b", F32, [4]),
                                               ("c", F32, [3, 1])]))
    case(one(f"{op.lower()}_one_input", op, [("a", F32, [3, 2])]))
    case(one(f"{op.lower()}_sym", op, [("a", F32, ["n", 5]),
                                       ("b", F32, [1, 5])], sizes=sym2(1, 6)))
    case(one(f"{op.lower()}_int64", op, [("a", I64, [2, 3]),
                                         ("b", I64, [3])], opset=13))
    case(one(f"{op.lower()}_int32", op, [("a", I32, [4]), ("b", I32, [1])]))

# -- Clip ---------------------------------------------------------------------
for key, args in [("both", [("lo", np.array(-0.5, F32)),
                            ("hi", np.array(0.8, F32))]),
                  ("min_only", [("lo", np.array(0.1, F32))]),
                  ("max_only", ["", ("hi", np.array(0.0, F32))]),
                  ("none", [])]:
    case(one(f"clip_{key}", "Clip", [("x", F32, ["n", 7])] + args,
             sizes=sym2(3, 4)))
case(one("clip_int64", "Clip", [("x", I64, [3, 4]), ("lo", np.array(-3, I64)),
                                ("hi", np.array(4, I64))], opset=13))

# -- IsNaN, IsInf --------------------------------------------------------------
def with_specials(r, s):
    """Normals with NaN, +inf and -inf sprinkled in."""
    x = r.standard_normal(s).astype(F32)
    flat = x.reshape(-1)
    picks = r.choice(flat.size, 6, replace=False)
    flat[picks] = [np.nan, np.inf, -np.inf, np.nan, np.inf, -np.inf]
    return x


case(one("is_nan", "IsNaN", [("x", F32, ["n", 5])], opset=13,
         sizes=sym2(2, 4), gen={"x": with_specials}))
for key, attrs in [("both", {}), ("positive", {"detect_negative": 0}),
                   ("negative", {"detect_positive": 0}),
                   ("neither", {"detect_negative": 0, "detect_positive": 0})]:
    case(one(f"is_inf_{key}", "IsInf", [("x", F32, [3, 6])], opset=10,
             gen={"x": with_specials}, **attrs))

# -- Logic and comparisons ----------------------------------------------------
case(one("not", "Not", [("x", BOOL, ["n", 3])], sizes=sym2(2, 5)))
for op in ("And", "Or"):
    case(one(f"{op.lower()}_bcast", op, [("a", BOOL, [2, 3, 4]),
                                         ("b", BOOL, [3, 1])]))
CMP = ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]
small_ints = {"a": lambda r, s: r.integers(-2, 3, s),
              "b": lambda r, s: r.integers(-2, 3, s)}
for key, dt, sa, sb, sizes, gen in [
        ("f32_bcast", F32, [2, 3, 4], [4], ({},), None),
        ("f32_sym", F32, ["n", 3], [1], sym2(2, 5), None),
        ("int64_ties", I64, [3, 4], [3, 1], ({},), small_ints),
        ("int32_ties", I32, [5], [5], ({},), small_ints)]:
    per_output(Model(f"cmp_{key}", [node(op, ["a", "b"], [f"y_{op}"])
                                    for op in CMP],
                     [("a", dt, sa), ("b", dt, sb)], [f"y_{op}" for op in CMP],
                     opset=19, sizes=sizes, gen=gen or {}), CMP)
# Equal with ties in float (copied values) and on bools.
case(one("equal_f32_ties", "Equal", [("a", F32, [6]), ("b", F32, [6])],
         gen={"a": lambda r, s: np.round(r.uniform(-2, 2, s)),
              "b": lambda r, s: np.round(r.uniform(-2, 2, s))}))
case(one("equal_bool", "Equal", [("a", BOOL, [3, 4]), ("b", BOOL, [4])],
         opset=19))


# -----------------------------------------------------------------------------
results = results_fixture()


@pytest.mark.parametrize("model,outputs", CASES)
def test_math_op(model, outputs, results):
    check_case(results, model, outputs)

