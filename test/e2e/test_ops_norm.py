"""The reducing and normalising part of the math family
(docs/kernels-math.md) compiled by ingot and compared with onnxruntime:
reductions, ArgMax/Min, LogSoftmax, CumSum, Dropout, the normalisations
(including the com.microsoft ones LLM exporters emit) and Einsum, plus the
compile-time errors for what is not supported. The elementwise ops are in
test_ops_math.py; shared helpers in ops_case_lib.py.

Same conventions as test_ops.py: one small model per case, symbolic dims run
at two sizes from one artifact, ops that differ only in the op share one
model with one output per op (one test id each).
"""
import numpy as np
import pytest
from onnx import helper

from ingot_testlib import (Model, assert_close, compile_model, make_model,
                           node, ort_run, rand, run_model, save_model,
                           seed_for)
from ops_case_lib import (check_case,
                          BOOL, F32, I32, I64, compile_error, i64, ms_model,
                          one, results_fixture, sym2, uniform)

CASES, KEYS = [], {}


def case(model, outputs=None, label=None):
    assert KEYS.setdefault(model.key, model) is model, f"dup key {model.key}"
    CASES.append(pytest.param(model, outputs, id=label or model.key))


def per_output(model, labels):
    """One test id per output; outputs may be names or typed triples."""
    for out, label in zip(model.outputs, labels):
        name = out[0] if isinstance(out, tuple) else out
        case(model, [name], f"{label}-{model.key}")


# -- Reductions ---------------------------------------------------------------
REDUCE = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
          "ReduceSumSquare", "ReduceLogSumExp"]
positive = {"x": lambda r, s: rand(r, s, F32, 0.5, 1.5, positive=True)}
for key, shape, axes, keep, sizes in [
        ("last_keep", [3, 5], [-1], 1, ({},)),
        ("first_drop", [4, 3, 2], [0], 0, ({},)),
        ("two_neg_axes", [2, 3, 4], [-3, -1], 0, ({},)),
        ("all", [3, 4], None, 1, ({},)),
        ("sym_middle", [2, "n", 4], [1], 0, sym2(1, 6)),
        ("large_odd", [7, 37, 19], [1], 1, ({},))]:
    for opset in (13, 18):
        nodes, inits = [], {}
        for op in REDUCE:
            attrs = {"keepdims": keep}
            ins = ["x"]
            if axes is not None:
                if opset >= 18 or op == "ReduceSum":
                    ins.append("axes")
                    inits["axes"] = np.array(axes, I64)
                else:
                    attrs["axes"] = axes
            nodes.append(node(op, ins, [f"y_{op}"], **attrs))
        per_output(Model(f"reduce_{key}_op{opset}", nodes,
                         [("x", F32, shape)], [f"y_{op}" for op in REDUCE],
                         inits, opset, sizes, positive), REDUCE)
# noop_with_empty_axes: identity when no axes are given.
case(one("reducesum_noop_empty", "ReduceSum", [("x", F32, [3, 4])], opset=13,
         noop_with_empty_axes=1))
case(one("reducemax_noop_empty", "ReduceMax", [("x", F32, [3, 4])], opset=18,
         noop_with_empty_axes=1))
# Bool ReduceMax/ReduceMin (opset 20): any / all.
per_output(Model("reduce_bool", [node(op, ["x", "axes"], [f"y_{op}"],
                                      keepdims=0)
                                 for op in ("ReduceMax", "ReduceMin")],
                 [("x", BOOL, [3, 4, 2])], ["y_ReduceMax", "y_ReduceMin"],
                 {"axes": i64(-2)}, opset=20), ["ReduceMax", "ReduceMin"])
for dt in (I64, I32):
    per_output(Model(f"reduce_{np.dtype(dt).name}",
                     [node(op, ["x", "axes"], [f"y_{op}"], keepdims=0)
                      for op in ("ReduceSum", "ReduceMax", "ReduceMin",
                                 "ReduceProd")],
                     [("x", dt, [3, 4])],
                     [f"y_{op}" for op in ("ReduceSum", "ReduceMax",
                                           "ReduceMin", "ReduceProd")],
                     {"axes": i64(1)}, opset=18),
               ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"])


def random_axes(rank):
    """k distinct axes of a rank-`rank` input, negative half the time: k is
    the axes input's length, so each run reduces other axes."""
    def gen(rng, dims):
        picked = rng.permutation(rank)[:dims[0]]
        return picked - rank * rng.integers(0, 2)
    return gen


# Axes fed as a graph input, read by the kernel at run time (the result is
# sized by its bound): keepdims with a symbolic count of axes, and without
# keepdims at a static count; ReduceMean too. Two runs, other axes each.
RUNTIME_REDUCE = REDUCE + ["ReduceMean"]
for key, keep, axes_shape, sizes in [
        ("keep_sym_count", 1, ["k"], ({"k": 1}, {"k": 2})),
        ("keep_no_axes", 1, ["k"], ({"k": 0}, {"k": 3})),
        ("drop_two", 0, [2], ({}, {}))]:
    per_output(Model(f"reduce_runtime_axes_{key}",
                     [node(op, ["x", "axes"], [f"y_{op}"], keepdims=keep)
                      for op in RUNTIME_REDUCE],
                     [("x", F32, [3, 4, 5]), ("axes", I64, axes_shape)],
                     [(f"y_{op}", F32, [None] * (3 if keep else 1))
                      for op in RUNTIME_REDUCE], {}, 18, sizes,
                     {**positive, "axes": random_axes(3)}), RUNTIME_REDUCE)

# -- ArgMax / ArgMin ----------------------------------------------------------
ties = {"x": lambda r, s: r.integers(-2, 3, s)}
for op in ("ArgMax", "ArgMin"):
    for key, dt, shape, attrs, sizes, gen in [
            ("default", F32, [3, 4], {}, ({},), None),
            ("neg_axis_drop", F32, [2, 3, 5], {"axis": -1, "keepdims": 0},
             ({},), None),
            ("ties_first", I64, [4, 6], {"axis": 1}, ({},), ties),
            ("ties_last", I64, [4, 6], {"axis": 1, "select_last_index": 1},
             ({},), ties),
            ("sym", F32, ["n", 7], {"axis": 1}, sym2(2, 3), None),
            ("int32_axis0", I32, [5, 3], {"axis": 0, "keepdims": 0}, ({},),
             ties)]:
        case(one(f"{op.lower()}_{key}", op, [("x", dt, shape)], opset=13,
                 sizes=sizes, gen=gen, **attrs))

# -- LogSoftmax ---------------------------------------------------------------
for key, shape, axis, sizes in [("last", [3, 10], -1, ({},)),
                                ("middle", [2, 5, 3], 1, ({},)),
                                ("sym", ["n", 4, 6], -2, sym2(1, 3))]:
    case(one(f"logsoftmax_{key}", "LogSoftmax", [("x", F32, shape)],
             opset=13, sizes=sizes, gen={"x": uniform(-20, 20)}, axis=axis))

# -- CumSum -------------------------------------------------------------------
for key, dt, shape, axis, attrs, sizes in [
        ("axis1", F32, [3, 5], 1, {}, ({},)),
        ("neg_axis_exclusive", F32, [2, 4, 3], -2, {"exclusive": 1}, ({},)),
        ("reverse", F32, [6], 0, {"reverse": 1}, ({},)),
        ("exclusive_reverse_sym", F32, ["n", 4], 0,
         {"exclusive": 1, "reverse": 1}, sym2(2, 5)),
        ("int64", I64, [3, 4], 1, {}, ({},)),
        ("int32_axis_as_int32", I32, [4, 2], 0, {}, ({},))]:
    axis_t = np.array(axis, I32 if "axis_as_int32" in key else I64)
    case(one(f"cumsum_{key}", "CumSum", [("x", dt, shape), ("axis", axis_t)],
             opset=14, sizes=sizes, **attrs))

# The axis as a graph input, read at run time.
for key, dt, shape, axis, sizes in [("f32", F32, [3, 5], -1, ({},)),
                                    ("int64_sym", I64, ["n", 4], 0,
                                     sym2(2, 3))]:
    case(Model(f"cumsum_runtime_axis_{key}",
               [node("CumSum", ["x", "axis"], ["y"], exclusive=1)],
               [("x", dt, shape), ("axis", I64, [])], ["y"], opset=14,
               sizes=sizes,
               gen={"axis": lambda r, s, a=axis: np.array(a, I64)}))

# -- Dropout (inference) ------------------------------------------------------
case(one("dropout_identity", "Dropout", [("x", F32, ["n", 4])], opset=13,
         sizes=sym2(2, 3)))
case(one("dropout_with_mask", "Dropout", [("x", F32, [3, 4]),
                                          ("r", np.array(0.3, F32))],
         opset=13, outputs=("y", "mask")))
case(one("dropout_training_false", "Dropout",
         [("x", F32, [2, 5]), "", ("t", np.array(False))], opset=13))

# -- Normalisations -----------------------------------------------------------
def chan(c, lo=-1.0, hi=1.0, seed=0):
    return np.random.default_rng(seed + c).uniform(lo, hi, c).astype(F32)


for key, shape, sizes in [("nchw", [2, 3, 4, 5], ({},)),
                          ("nc", [4, 3], ({},)),
                          ("ncl_sym", ["n", 3, 7], sym2(1, 3))]:
    case(one(f"batchnorm_{key}", "BatchNormalization",
             [("x", F32, shape), ("s", chan(3)), ("b", chan(3, seed=1)),
              ("m", chan(3, seed=2)), ("v", chan(3, 0.5, 2.0, seed=3))],
             opset=15, sizes=sizes, epsilon=1e-3))
for key, shape, sizes in [("ncl", [2, 3, 8], ({},)),
                          ("nchw_sym", ["n", 3, 4, 5], sym2(1, 2))]:
    case(one(f"instancenorm_{key}", "InstanceNormalization",
             [("x", F32, shape), ("s", chan(3)), ("b", chan(3, seed=1))],
             opset=13, sizes=sizes))
for key, shape, axis, scale, sizes in [
        ("last", ["n", 16], -1, [16], sym2(2, 5)),
        ("two_dims", [2, 3, 4], 1, [3, 4], ({},)),
        ("bcast_scale", [2, 3, 4], -2, [1, 4], ({},))]:
    case(one(f"rmsnorm_{key}", "RMSNormalization",
             [("x", F32, shape),
              ("s", np.random.default_rng(5).uniform(0.5, 1.5, scale)
               .astype(F32))], opset=23, sizes=sizes, axis=axis,
             epsilon=1e-5))
# LayerNormalization's Mean and InvStdDev outputs, each read by the graph.
for key, shape, axis, sizes in [("last_sym", ["n", 24], -1, sym2(1, 3)),
                                ("two_dims", [2, 3, 5], 1, ({},))]:
    scale = np.random.default_rng(6).uniform(0.5, 1.5, shape[axis:])
    case(one(f"layernorm_stats_{key}", "LayerNormalization",
             [("x", F32, shape), ("s", scale.astype(F32))], opset=17,
             sizes=sizes, outputs=("y", "mean", "inv_std"), axis=axis,
             epsilon=1e-3))

# -- Einsum -------------------------------------------------------------------
for key, eq, shapes, sizes in [
        ("batched_matmul", "bij,bjk->bik", [[2, 3, 4], [2, 4, 5]], ({},)),
        ("attention_scores", "bhid,bhjd->bhij",
         [[1, 2, "s", 8], [1, 2, "s", 8]], ({"s": 3}, {"s": 6})),
        ("matmul", "ij,jk->ik", [[3, 4], [4, 2]], ({},)),
        ("rowwise_dot", "bi,bi->b", [["n", 6], ["n", 6]], sym2(1, 4)),
        ("transpose", "ij->ji", [[3, 5]], ({},)),
        ("implicit_output", "ij,jk", [[2, 3], [3, 4]], ({},)),
        ("row_sum", "ij->i", [[4, 5]], ({},)),
        ("outer", "i,j->ij", [[3], [4]], ({},)),
        ("output_transposed", "bij,bjk->bki", [[2, 3, 4], [2, 4, 5]], ({},)),
        ("sum_out_one_side", "ijk,jl->il", [[2, 3, 4], [3, 5]], ({},))]:
    case(one(f"einsum_{key}", "Einsum",
             [(f"x{i}", F32, s) for i, s in enumerate(shapes)], opset=13,
             sizes=sizes, equation=eq))


# -----------------------------------------------------------------------------
results = results_fixture()


@pytest.mark.parametrize("model,outputs", CASES)
def test_math_op(model, outputs, results):
    check_case(results, model, outputs)



# -- com.microsoft layer norms ------------------------------------------------
def ref_layer_norm(x, g, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    y = (x - m) / np.sqrt(v + eps) * g
    return y + b if b is not None else y


def ref_rms(x, g, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


H = 16
GAMMA = np.random.default_rng(1).uniform(0.5, 1.5, H).astype(F32)
BETA = np.random.default_rng(2).uniform(-0.5, 0.5, H).astype(F32)
BIAS = np.random.default_rng(3).uniform(-0.5, 0.5, H).astype(F32)


@pytest.mark.parametrize("with_bias,with_sum", [(False, False), (True, True)])
def test_skip_layer_norm(tmp_path, with_bias, with_sum):
    ins = ["x", "skip", "gamma", "beta"] + (["bias"] if with_bias else [])
    outs = ["y", "", "", "sum"] if with_sum else ["y"]
    n = helper.make_node("SkipLayerNormalization", ins, outs, name="sln",
                         domain="com.microsoft", epsilon=1e-5)
    inits = {"gamma": GAMMA, "beta": BETA}
    if with_bias:
        inits["bias"] = BIAS
    out_vi = [("y", F32, ["b", "s", H])] + (
        [("sum", F32, ["b", "s", H])] if with_sum else [])
    model = ms_model([n], [("x", F32, ["b", "s", H]),
                           ("skip", F32, ["b", "s", H])], out_vi, inits)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    rng = np.random.default_rng(seed_for("skip_layer_norm"))
    for b, s in [(1, 3), (2, 5)]:
        feed = {"x": rng.uniform(-2, 2, (b, s, H)).astype(F32),
                "skip": rng.uniform(-2, 2, (b, s, H)).astype(F32)}
        got = run_model(artifact, feed, tmp_path)
        want = ort_run(model, feed)
        assert_close(got["y"], want["y"], what="y")
        total = feed["x"] + feed["skip"] + (BIAS if with_bias else 0)
        assert_close(got["y"], ref_layer_norm(
            total.astype(np.float64), GAMMA, BETA, 1e-5).astype(F32),
            what="y vs numpy")
        if with_sum:
            assert_close(got["sum"], want["sum"], what="sum")


@pytest.mark.parametrize("domain", ["com.microsoft", ""])
def test_simplified_layer_norm(tmp_path, domain):
    n = helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"],
                         ["y"], name="rms", domain=domain, epsilon=1e-6)
    model = ms_model([n], [("x", F32, ["s", H])], [("y", F32, ["s", H])],
                     {"gamma": GAMMA}, domain or None)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    rng = np.random.default_rng(seed_for("simplified_" + domain))
    for s in (1, 7):
        x = rng.uniform(-2, 2, (s, H)).astype(F32)
        got = run_model(artifact, {"x": x}, tmp_path)
        assert_close(got["y"], ref_rms(x.astype(np.float64), GAMMA,
                                       1e-6).astype(F32))
        if domain == "":  # onnxruntime runs it in the default domain
            assert_close(got["y"], ort_run(model, {"x": x})["y"],
                         what="y vs onnxruntime")


# -- Errors: node, op type, opset and what is supported -----------------------
def test_batchnorm_training_mode_rejected(tmp_path):
    c = np.ones(3, F32)
    model = make_model([node("BatchNormalization", ["x", "s", "b", "m", "v"],
                             ["y"], name="bn", training_mode=1)],
                       [("x", F32, [2, 3, 4])], [("y", F32, [2, 3, 4])],
                       {"s": c, "b": c, "m": c, "v": c}, opset=15,
                       check=False)
    err = compile_error(tmp_path, model)
    for part in ("node 'bn'", "BatchNormalization", "opset 15",
                 "training_mode = 1", "supported: training_mode = 0"):
        assert part in err, err


def test_einsum_ellipsis_rejected(tmp_path):
    model = make_model([node("Einsum", ["a", "b"], ["y"], name="es",
                             equation="...ij,...jk->...ik")],
                       [("a", F32, [2, 3, 4]), ("b", F32, [2, 4, 5])], ["y"],
                       opset=13)
    err = compile_error(tmp_path, model)
    for part in ("node 'es'", "Einsum", "opset 13", "ellipsis",
                 "supported:", "bhid,bhjd->bhij"):
        assert part in err, err


def test_einsum_multi_letter_contraction_rejected(tmp_path):
    model = make_model([node("Einsum", ["a", "b"], ["y"], name="es2",
                             equation="ijk,jkl->il")],
                       [("a", F32, [2, 3, 4]), ("b", F32, [3, 4, 5])], ["y"],
                       opset=13)
    err = compile_error(tmp_path, model)
    assert "2 contracted" in err and "supported:" in err, err


def test_reduce_axes_of_unknown_count_without_keepdims_rejected(tmp_path):
    # The result's rank would depend on how many axes come at run time.
    model = make_model([node("ReduceSum", ["x", "axes"], ["y"], name="rs",
                             keepdims=0)],
                       [("x", F32, [3, 4]), ("axes", I64, ["k"])],
                       [("y", F32, [None])], opset=18)
    err = compile_error(tmp_path, model)
    for part in ("node 'rs'", "ReduceSum", "opset 18", "axes operand of "
                 "static length"):
        assert part in err, err


def test_unsupported_dtype_named(tmp_path):
    # int64 is a dtype ingot handles, but not for Log (nor does ONNX).
    model = make_model([node("Log", ["x"], ["y"], name="lg")],
                       [("x", I64, [3])], [("y", I64, [3])], opset=13,
                       check=False)
    err = compile_error(tmp_path, model)
    for part in ("node 'lg'", "Log", "opset 13", "int64", "float32"):
        assert part in err, err


def test_unknown_domain_named(tmp_path):
    n = helper.make_node("FancyOp", ["x"], ["y"], name="f", domain="org.acme")
    model = ms_model([n], [("x", F32, [3])], [("y", F32, [3])], {},
                     "org.acme")
    err = compile_error(tmp_path, model)
    for part in ("node 'f'", "FancyOp", "org.acme", "com.microsoft"):
        assert part in err, err


def test_unknown_op_of_known_domain(tmp_path):
    n = helper.make_node("FastGelu", ["x"], ["y"], name="fg",
                         domain="com.microsoft")
    model = ms_model([n], [("x", F32, [3])], [("y", F32, [3])], {})
    err = compile_error(tmp_path, model)
    assert "FastGelu" in err and "com.microsoft" in err, err
