"""ONNX's narrow element types — float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz),
float4e2m1, int4, uint4, int2, uint2 and bfloat16 — as graph inputs and
outputs through Cast, against ml_dtypes, which onnx's reference Cast uses
(onnx.reference.ops.op_cast): to a float8 type, `saturate` 1 clips to the
largest finite value first, 0 lets the value round to infinity or NaN;
float4 and the narrow integers use ml_dtypes' own conversion. Every
conversion rounds once, so results must be bit-exact. Inputs are fresh
random values over each type's whole range, past it, and the specials
(NaN, ±inf, ±0, ties between two representable values).
"""
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto

from ingot_testlib import compile_model, make_model, node, ort_run, \
    run_model, save_model

RNG_SEED = 20261205

NARROW = {
    "float8_e4m3fn": TensorProto.FLOAT8E4M3FN,
    "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
    "float8_e5m2": TensorProto.FLOAT8E5M2,
    "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ,
    "float4_e2m1fn": TensorProto.FLOAT4E2M1,
    "int4": TensorProto.INT4,
    "uint4": TensorProto.UINT4,
    "int2": TensorProto.INT2,
    "uint2": TensorProto.UINT2,
    "bfloat16": TensorProto.BFLOAT16,
}
FLOAT8 = [n for n in NARROW if n.startswith("float8")]


def reference_cast(x, name, saturate):
    """onnx's reference Cast (op_cast.cast_to) for these targets."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    if name in FLOAT8 and saturate:
        info = ml_dtypes.finfo(dtype)
        return np.clip(x, info.min, info.max).astype(dtype)
    return x.astype(dtype)


def interesting_floats(rng, name, n=4096):
    """Random values over the type's range and past it, its ties, and the
    specials."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    top = float(ml_dtypes.finfo(dtype).max) if dtype.kind in "fV" and \
        "int" not in name else float(ml_dtypes.iinfo(dtype).max)
    wide = rng.uniform(-2 * top, 2 * top, n)
    tiny = rng.standard_normal(n) * 2.0 ** rng.integers(-12, 2, n)
    # Every representable value and the midpoints between neighbours.
    codes = np.arange(256, dtype=np.uint8)[: 1 << (8 * dtype.itemsize)]
    grid = np.unique(codes.view(dtype).astype(np.float64)) \
        if dtype.itemsize == 1 else np.array([1.0])
    grid = grid[np.isfinite(grid)]
    ties = (grid[1:] + grid[:-1]) / 2
    specials = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30]
    return np.concatenate([wide, tiny, grid, ties, specials]).astype(np.float32)


def cast_model(src, dst, n, saturate=None):
    attrs = {"to": dst}
    if saturate is not None:
        attrs["saturate"] = saturate
    np_of = onnx.helper.tensor_dtype_to_np_dtype
    return make_model([node("Cast", ["x"], ["y"], **attrs)],
                      [("x", np_of(src), [n])], [("y", np_of(dst), [n])],
                      opset=23, check=False)


def compile_run(tmp_path, model, feed):
    tmp_path.mkdir(parents=True, exist_ok=True)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    return run_model(artifact, feed, tmp_path)["y"]


def as_bits(a):
    return np.ascontiguousarray(a).view(np.uint8 if a.dtype.itemsize == 1
                                        else np.uint16)


@pytest.mark.parametrize("name", list(NARROW))
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_float32_to_narrow(tmp_path, name, saturate):
    if saturate == 0 and name not in FLOAT8:
        pytest.skip("saturate only concerns float8 targets")
    rng = np.random.default_rng(RNG_SEED + len(name) + saturate)
    x = interesting_floats(rng, name)
    got = compile_run(tmp_path, cast_model(TensorProto.FLOAT, NARROW[name],
                                           x.size, saturate), {"x": x})
    want = reference_cast(x, name, saturate)
    bad = np.flatnonzero(as_bits(got) != as_bits(want))
    assert bad.size == 0, (
        f"{bad.size} of {x.size} differ; first: x={x[bad[0]]!r} "
        f"got {as_bits(got)[bad[0]]:#x} want {as_bits(want)[bad[0]]:#x}")


@pytest.mark.parametrize("name", list(NARROW))
@pytest.mark.parametrize("target", [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_cast_narrow_to_wider(tmp_path, name, target):
    """Every code of the type (as an input read from raw .npy values)."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    if dtype.itemsize == 1:
        bits = 8 if name.startswith("float8") else 4 if "4" in name else 2
        x = np.arange(1 << bits, dtype=np.uint8).view(dtype)
    else:
        rng = np.random.default_rng(RNG_SEED)
        x = rng.standard_normal(4096).astype(dtype)
    got = compile_run(tmp_path, cast_model(NARROW[name], target, x.size),
                      {"x": x})
    want = x.astype(onnx.helper.tensor_dtype_to_np_dtype(target))
    np.testing.assert_array_equal(got, want)  # NaN equals NaN here


def test_raw_input_of_another_type_is_refused(tmp_path):
    """A raw 1-byte .npy fed to a float8 input is typed by the model; fed
    to a bfloat16 input it is refused, naming the input and both types."""
    model = cast_model(TensorProto.BFLOAT16, TensorProto.FLOAT, 4)
    tmp_path.mkdir(parents=True, exist_ok=True)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    x = np.zeros(4, np.uint8).view(ml_dtypes.float8_e4m3fn) + 1
    proc = run_model(artifact, {"x": x}, tmp_path, check=False)
    assert proc.returncode == 1
    assert "input 'x'" in proc.stderr and "bfloat16" in proc.stderr, \
        proc.stderr


def test_saturate_outside_0_1_is_refused(tmp_path):
    model = cast_model(TensorProto.FLOAT, TensorProto.FLOAT8E4M3FN, 4, 2)
    tmp_path.mkdir(parents=True, exist_ok=True)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert proc.returncode == 1
    assert "saturate 2" in proc.stderr, proc.stderr


# QuantizeLinear to and DequantizeLinear from the narrow types, per axis
# (axis 1 of [3, C, 32]): the reference is onnx's definition computed in
# numpy — x / scale in float32, then round half to even, add the zero point
# and clip for the integers; a cast (saturating for float8, as `saturate`
# 1 says) for float8 and float4, whose zero point is 0 or, for float4,
# added before the cast. One rounding each way: bit-exact.
QUANT_C = 4
INT_RANGES = {"int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1),
              "uint2": (0, 3)}
QUANT_TARGETS = [n for n in NARROW if n != "bfloat16"]


def quant_model(op, name, with_zp):
    narrow = (NARROW[name], [1, QUANT_C, 32])
    wide = (TensorProto.FLOAT, [1, QUANT_C, 32])
    x, y = (wide, narrow) if op == "QuantizeLinear" else (narrow, wide)
    inputs = [("x", onnx.helper.tensor_dtype_to_np_dtype(x[0]), x[1]),
              ("s", np.float32, [QUANT_C])]
    if with_zp:
        inputs.append(("zp", onnx.helper.tensor_dtype_to_np_dtype(
            NARROW[name]), [QUANT_C]))
    return make_model([node(op, [i[0] for i in inputs], ["y"], axis=1)],
                      inputs, [("y", onnx.helper.tensor_dtype_to_np_dtype(
                          y[0]), y[1])], opset=25, check=False)


def random_zero_point(rng, name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    if name in INT_RANGES:
        lo, hi = INT_RANGES[name]
        return rng.integers(lo, hi + 1, QUANT_C).astype(dtype)
    if name.startswith("float4"):
        return rng.choice([-1.0, 0.0, 0.5, 2.0], QUANT_C).astype(dtype)
    return np.zeros(QUANT_C, dtype)  # float8: 0 by definition


@pytest.mark.parametrize("name", QUANT_TARGETS)
def test_quantize_linear_to_narrow(tmp_path, name):
    rng = np.random.default_rng(RNG_SEED + 7 * len(name))
    dtype = np.dtype(getattr(ml_dtypes, name))
    scale = rng.uniform(0.05, 2.0, QUANT_C).astype(np.float32)
    zp = random_zero_point(rng, name)
    top = float(ml_dtypes.finfo(dtype).max) if name not in INT_RANGES \
        else 2.0 * max(abs(v) for v in INT_RANGES[name])
    x = (rng.uniform(-1.5, 1.5, (1, QUANT_C, 32)) * top *
         scale[None, :, None]).astype(np.float32)
    x[0, :, :4] = (np.array([0.5, 1.5, -2.5, 3.5], np.float32) *
                   scale[:, None])  # ties of the integer rounding
    got = compile_run(tmp_path, quant_model("QuantizeLinear", name, True),
                      {"x": x, "s": scale, "zp": zp})
    q = x / scale[None, :, None]
    if name in INT_RANGES:
        want = np.clip(np.rint(q).astype(np.int32) +
                       zp.astype(np.int32)[None, :, None],
                       *INT_RANGES[name]).astype(dtype)
    elif name.startswith("float4"):
        want = (q + zp.astype(np.float32)[None, :, None]).astype(dtype)
    else:
        want = reference_cast(q, name, saturate=1)
    bad = np.flatnonzero(as_bits(got) != as_bits(want))
    assert bad.size == 0, (f"{bad.size} of {x.size} differ; first at "
                           f"{bad[0]}: x={x.flat[bad[0]]!r}")


@pytest.mark.parametrize("name", QUANT_TARGETS)
def test_dequantize_linear_from_narrow(tmp_path, name):
    """Every code of the type on each channel."""
    rng = np.random.default_rng(RNG_SEED + 11 * len(name))
    dtype = np.dtype(getattr(ml_dtypes, name))
    bits = 8 if name.startswith("float8") else 4 if "4" in name else 2
    codes = np.resize(np.arange(1 << bits, dtype=np.uint8), 32)
    x = np.broadcast_to(codes, (1, QUANT_C, 32)).copy().view(dtype)
    scale = rng.uniform(0.05, 2.0, QUANT_C).astype(np.float32)
    with_zp = name in INT_RANGES  # a float zero point is 0 or ignored
    feed = {"x": x, "s": scale}
    if with_zp:
        feed["zp"] = random_zero_point(rng, name)
    got = compile_run(tmp_path, quant_model("DequantizeLinear", name,
                                            with_zp), feed)
    wide = x.astype(np.float32)
    if with_zp:
        wide = wide - feed["zp"].astype(np.float32)[None, :, None]
    want = wide * scale[None, :, None]
    np.testing.assert_array_equal(got, want)  # NaN equals NaN here


def test_float8_zero_point_other_than_0_is_refused(tmp_path):
    zp = onnx.helper.make_tensor("zp", TensorProto.FLOAT8E4M3FN, [], [1.0])
    model = make_model([node("QuantizeLinear", ["x", "s", "zp"], ["y"])],
                       [("x", np.float32, [4])],
                       [("y", ml_dtypes.float8_e4m3fn, [4])],
                       [("s", np.float32(0.5)), zp], opset=25, check=False)
    tmp_path.mkdir(parents=True, exist_ok=True)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert proc.returncode == 1
    assert "float8 zero point that is not 0" in proc.stderr, proc.stderr


# Narrow-type initializers: onnx packs int4/uint4/float4 two values per
# byte and int2/uint2 four (first value in the low bits, the last byte
# padded), in raw_data or in int32_data; float8 is one byte per value.


def test_int4_blocked_weights_through_dequantize_and_matmul(tmp_path):
    """onnxruntime's QDQ form of a 4-bit weight: int4 [K, N] with a scale
    and zero point per 32 rows, DequantizeLinear, MatMul. Against
    onnxruntime and numpy in float64; K = 80 leaves a ragged last block
    of 16 rows. The products sum 80 float32 terms: 1e-5 of the largest
    output covers their rounding."""
    rng = np.random.default_rng(RNG_SEED + 41)
    k, n, block = 80, 24, 32
    blocks = (k + block - 1) // block
    w = rng.integers(-8, 8, (k, n)).astype(ml_dtypes.int4)
    zp = rng.integers(-2, 3, (blocks, n)).astype(ml_dtypes.int4)
    scale = rng.uniform(0.01, 0.1, (blocks, n)).astype(np.float32)
    x = rng.standard_normal((3, k)).astype(np.float32)
    model = make_model(
        [node("DequantizeLinear", ["w", "s", "zp"], ["wf"], axis=0,
              block_size=block),
         node("MatMul", ["x", "wf"], ["y"])],
        [("x", np.float32, [3, k])], [("y", np.float32, [3, n])],
        [onnx.numpy_helper.from_array(w, "w"),
         onnx.numpy_helper.from_array(zp, "zp"), ("s", scale)], opset=21,
        check=False)
    got = compile_run(tmp_path, model, {"x": x})
    rows = np.arange(k) // block
    wf = (w.astype(np.float64) - zp.astype(np.float64)[rows]) * \
        scale.astype(np.float64)[rows]
    want = x.astype(np.float64) @ wf
    top = np.abs(want).max()
    assert np.abs(got - want).max() <= 1e-5 * top
    ort = ort_run(model, {"x": x})["y"]
    assert np.abs(got - ort).max() <= 1e-5 * top


@pytest.mark.parametrize("name", QUANT_TARGETS)
@pytest.mark.parametrize("form", ["raw_data", "int32_data"])
def test_narrow_initializer_of_odd_length(tmp_path, name, form):
    """A 3x5 initializer (15 values: the packed last byte is padded) read
    back through DequantizeLinear with scale 1: every value exact."""
    rng = np.random.default_rng(RNG_SEED + len(name) + len(form))
    dtype = np.dtype(getattr(ml_dtypes, name))
    bits = 8 if name.startswith("float8") else 4 if "4" in name else 2
    codes = rng.integers(0, 1 << bits, 15).astype(np.uint8)
    w = codes.view(dtype).reshape(3, 5)
    if name.startswith("float8"):
        w = np.where(np.isnan(w.astype(np.float32)), dtype.type(1.0), w)
    if form == "raw_data":
        tensor = onnx.numpy_helper.from_array(w, "w")
    else:
        tensor = onnx.helper.make_tensor("w", NARROW[name], [3, 5],
                                         w.astype(np.float32).ravel())
    model = make_model([node("DequantizeLinear", ["w", "s"], ["y"])], [],
                       [("y", np.float32, [3, 5])],
                       [tensor, ("s", np.float32(1.0))], opset=25,
                       check=False)
    got = compile_run(tmp_path, model, {})
    np.testing.assert_array_equal(got, w.astype(np.float32))
