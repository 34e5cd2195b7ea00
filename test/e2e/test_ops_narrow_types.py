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

from ingot_testlib import compile_model, make_model, node, run_model, \
    save_model

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
