"""Tensors of the dtypes ingot's kernels widen — int8, int16, uint8..uint64,
float16, float64 (bfloat16 has no numpy dtype to feed) — as graph inputs,
outputs and initializers (raw and typed fields), through Cast and data
movement (kept as they are) and through arithmetic (computed widened, results cast back). numpy is the
reference: onnxruntime lacks kernels for several of these (int8 Add, uint16
Less...). Integer results must be bit-exact, including wrap-around;
float64 is computed in float32, so 1e-6 relative to the largest value
bounds a few f32 roundings.
"""
import numpy as np
import onnx
import pytest

from ingot_testlib import compile_model, make_model, node, run_model, \
    save_model
from ops_case_lib import compile_error

RNG_SEED = 20261202


def random_of(rng, dtype, shape, lo=None, hi=None):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.uniform(-4, 4, shape).astype(dtype)
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = min(info.max, 2**62) if hi is None else hi
    return rng.integers(lo, hi, shape, dtype=dtype, endpoint=True)


def compile_run(tmp_path, nodes, inputs, outputs, feed, inits=None,
                opset=17):
    model = make_model(nodes, inputs, outputs, inits or {}, opset)
    tmp_path.mkdir(parents=True, exist_ok=True)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    return run_model(artifact, feed, tmp_path)


def check(got, want, what):
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype.kind == "f":
        scale = max(float(np.abs(want.astype(np.float64)).max()), 1e-30)
        err = float(np.abs(got.astype(np.float64) - want).max()) / scale
        tol = 1e-3 if want.dtype == np.float16 else 1e-6
        assert err <= tol, (what, err)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def trunc_div(a, b):
    """C (and onnxruntime) integer division: rounds toward zero."""
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) *
            q).astype(a.dtype)


INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64]
BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
}


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_integer_arithmetic_wraps(tmp_path, op, dtype):
    """Computed widened, cast back: sums and products wrap modulo 2^bits."""
    rng = np.random.default_rng(RNG_SEED)
    a, b = random_of(rng, dtype, (3, 7)), random_of(rng, dtype, (7,))
    with np.errstate(over="ignore"):
        want = BINARY[op](a, b)
    got = compile_run(tmp_path, [node(op, ["a", "b"], ["y"])],
                      [("a", dtype, [3, 7]), ("b", dtype, [7])], ["y"],
                      {"a": a, "b": b})
    check(got["y"], want, op)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16,
                                   np.uint32],
                         ids=lambda t: np.dtype(t).name)
def test_integer_division_and_order(tmp_path, dtype):
    rng = np.random.default_rng(RNG_SEED + 1)
    a = random_of(rng, dtype, (4, 5))
    b = random_of(rng, dtype, (4, 5), lo=1, hi=50)
    nodes = [node("Div", ["a", "b"], ["q"]), node("Less", ["a", "b"], ["lt"]),
             node("GreaterOrEqual", ["a", "b"], ["ge"]),
             node("Max", ["a", "b"], ["mx"]), node("Min", ["a", "b"], ["mn"]),
             node("ArgMax", ["a"], ["am"], axis=1)]
    got = compile_run(tmp_path, nodes, [("a", dtype, [4, 5]),
                                        ("b", dtype, [4, 5])],
                      ["q", "lt", "ge", "mx", "mn", "am"], {"a": a, "b": b})
    check(got["q"], trunc_div(a, b), "Div")
    check(got["lt"], a < b, "Less")
    check(got["ge"], a >= b, "GreaterOrEqual")
    check(got["mx"], np.maximum(a, b), "Max")
    check(got["mn"], np.minimum(a, b), "Min")
    check(got["am"], np.argmax(a, axis=1, keepdims=True).astype(np.int64),
          "ArgMax")


def test_uint64_bit_exact_ops_run_and_division_is_refused(tmp_path):
    rng = np.random.default_rng(RNG_SEED + 2)
    # Values past 2^63 too: sums and equality are the same bits as int64.
    a = rng.integers(0, 2**64 - 1, (6,), dtype=np.uint64, endpoint=True)
    b = a.copy()
    b[::2] = rng.integers(0, 2**64 - 1, (3,), dtype=np.uint64)
    nodes = [node("Add", ["a", "b"], ["s"]), node("Equal", ["a", "b"], ["e"]),
             node("ReduceSum", ["a"], ["r"], keepdims=0)]
    got = compile_run(tmp_path / "ok", nodes, [("a", np.uint64, [6]),
                                               ("b", np.uint64, [6])],
                      ["s", "e", "r"], {"a": a, "b": b}, opset=11)
    with np.errstate(over="ignore"):
        check(got["s"], a + b, "Add")
        check(got["r"], np.sum(a, dtype=np.uint64), "ReduceSum")
    check(got["e"], a == b, "Equal")
    model = make_model([node("Div", ["a", "b"], ["y"])],
                       [("a", np.uint64, [6]), ("b", np.uint64, [6])], ["y"])
    err = compile_error(tmp_path, model)
    assert "'a' is uint64" in err and "Div" in err, err


def test_uint64_ordering_ops_see_the_sign_bit_flipped(tmp_path):
    """Values on both sides of 2^63 (where int64 would read them as
    negative) compare, pick and reduce as unsigned."""
    rng = np.random.default_rng(RNG_SEED + 3)
    a = rng.integers(0, 2**64 - 1, (4, 6), dtype=np.uint64, endpoint=True)
    b = rng.integers(0, 2**64 - 1, (4, 6), dtype=np.uint64, endpoint=True)
    a[0, :3] = [0, 2**63 - 1, 2**63]
    b[0, :3] = [2**64 - 1, 2**63, 2**63 - 1]
    b[1, :2] = a[1, :2]  # ties
    ops = {"lt": ("Less", np.less), "le": ("LessOrEqual", np.less_equal),
           "gt": ("Greater", np.greater),
           "ge": ("GreaterOrEqual", np.greater_equal),
           "mx": ("Max", np.maximum), "mn": ("Min", np.minimum)}
    nodes = [node(op, ["a", "b"], [out]) for out, (op, _) in ops.items()]
    nodes += [node("ReduceMax", ["a"], ["rmax"], axes=[1], keepdims=0),
              node("ReduceMin", ["a"], ["rmin"], axes=[1], keepdims=0),
              node("ArgMax", ["a"], ["amax"], axis=1, keepdims=0)]
    outs = list(ops) + ["rmax", "rmin", "amax"]
    got = compile_run(tmp_path, nodes, [("a", np.uint64, [4, 6]),
                                        ("b", np.uint64, [4, 6])],
                      outs, {"a": a, "b": b}, opset=13)
    for out, (op, ref) in ops.items():
        check(got[out], ref(a, b), op)
    check(got["rmax"], a.max(axis=1), "ReduceMax")
    check(got["rmin"], a.min(axis=1), "ReduceMin")
    check(got["amax"], a.argmax(axis=1).astype(np.int64), "ArgMax")


@pytest.mark.parametrize("dtype", [np.float16, np.float64],
                         ids=lambda t: np.dtype(t).name)
def test_float_types_compute_and_keep_their_dtype(tmp_path, dtype):
    rng = np.random.default_rng(RNG_SEED + 3)
    a, b = random_of(rng, dtype, (3, 4)), random_of(rng, dtype, (3, 4))
    nodes = [node("Max", ["a", "b"], ["mx"]), node("Mul", ["a", "b"], ["m"]),
             node("CumSum", ["a", "axis"], ["cs"]),
             node("Abs", ["a"], ["m2"]), node("Sqrt", ["m2"], ["sq"])]
    got = compile_run(tmp_path, nodes, [("a", dtype, [3, 4]),
                                        ("b", dtype, [3, 4])],
                      ["mx", "m", "cs", "sq"], {"a": a, "b": b},
                      inits={"axis": np.array(1, np.int64)})
    check(got["mx"], np.maximum(a, b), "Max")
    check(got["m"], (a.astype(np.float64) * b).astype(dtype), "Mul")
    check(got["cs"], np.cumsum(a.astype(np.float64), axis=1).astype(dtype),
          "CumSum")
    check(got["sq"], np.sqrt(np.abs(a.astype(np.float64))).astype(dtype),
          "Sqrt")


CAST_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
              np.int64, np.uint64, np.float16, np.float32, np.float64,
              np.bool_]


@pytest.mark.parametrize("dtype", CAST_TYPES, ids=lambda t: np.dtype(t).name)
def test_cast_to_and_from_float32_and_int64(tmp_path, dtype):
    """Values chosen inside both types' ranges, so every cast is exact."""
    rng = np.random.default_rng(RNG_SEED + 4)
    lo = 0 if np.dtype(dtype).kind in "ub" else -100
    hi = 1 if dtype == np.bool_ else 100
    x = rng.integers(lo, hi, (2, 9), endpoint=True).astype(np.float32)
    to = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [node("Cast", ["x"], ["t"], to=to),
             node("Cast", ["t"], ["f"], to=onnx.TensorProto.FLOAT),
             node("Cast", ["t"], ["i"], to=onnx.TensorProto.INT64)]
    got = compile_run(tmp_path, nodes, [("x", np.float32, [2, 9])],
                      ["t", "f", "i"], {"x": x})
    check(got["t"], x.astype(dtype), "Cast to")
    check(got["f"], x.astype(dtype).astype(np.float32), "Cast back")
    check(got["i"], x.astype(dtype).astype(np.int64), "Cast to int64")


def test_data_movement_keeps_narrow_types(tmp_path):
    rng = np.random.default_rng(RNG_SEED + 5)
    u16 = random_of(rng, np.uint16, (3, 4, 5))
    u8 = random_of(rng, np.uint8, (10, 3))
    i16 = random_of(rng, np.int16, (2, 3))
    f16 = random_of(rng, np.float16, (6, 4))
    ids = np.array([[7, 0], [9, 9]], np.int64)
    nodes = [node("Transpose", ["u16"], ["t"], perm=[2, 0, 1]),
             node("Gather", ["table", "ids"], ["g"], axis=0),
             node("Concat", ["i16", "w16"], ["c"], axis=0),
             node("Slice", ["f16", "st", "en"], ["s"]),
             node("Reshape", ["u16", "shape"], ["r"])]
    w16 = random_of(rng, np.int16, (4, 3))
    got = compile_run(
        tmp_path, nodes,
        [("u16", np.uint16, [3, 4, 5]), ("ids", np.int64, [2, 2]),
         ("i16", np.int16, [2, 3]), ("f16", np.float16, [6, 4])],
        ["t", "g", "c", "s", "r"],
        {"u16": u16, "ids": ids, "i16": i16, "f16": f16},
        inits={"table": u8, "w16": w16, "st": np.array([1, 1], np.int64),
               "en": np.array([5, 3], np.int64),
               "shape": np.array([12, 5], np.int64)})
    check(got["t"], u16.transpose(2, 0, 1), "Transpose")
    check(got["g"], u8[ids], "Gather")
    check(got["c"], np.concatenate([i16, w16]), "Concat")
    check(got["s"], f16[1:5, 1:3], "Slice")
    check(got["r"], u16.reshape(12, 5), "Reshape")


def typed_field_tensor(name, array):
    """A TensorProto that holds its values in the typed field (int32_data,
    uint64_data, double_data) as older exporters write them, not raw_data."""
    dt = onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
    # make_tensor stores float16 values as their bits in int32_data.
    return onnx.helper.make_tensor(name, dt, array.shape,
                                   array.flatten().tolist(), raw=False)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16,
                                   np.uint32, np.uint64, np.float16,
                                   np.float64],
                         ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("field", ["raw", "typed"])
def test_initializers_of_every_dtype(tmp_path, dtype, field):
    """A weight larger than an inlined constant, read from either field."""
    rng = np.random.default_rng(RNG_SEED + 6)
    w = random_of(rng, dtype, (40, 3))
    x = random_of(rng, dtype, (40, 3))
    init = (onnx.numpy_helper.from_array(w, "w") if field == "raw"
            else typed_field_tensor("w", w))
    got = compile_run(tmp_path, [node("Identity", ["w"], ["wo"]),
                                 node("Equal", ["x", "w"], ["e"])],
                      [("x", dtype, [40, 3])], ["wo", "e"], {"x": x},
                      inits=[init], opset=19)
    check(got["wo"], w, "weight")
    check(got["e"], x == w, "Equal")
