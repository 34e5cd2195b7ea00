"""Mod, BitShift and the Bitwise ops against onnxruntime, bit-exact, on
fresh random data: mixed signs and a zero-free divisor for Mod (the
divisor's sign with fmod = 0, the dividend's with fmod = 1, which floats
need), shifts of unsigned values by 0..width-1 (left shifts wrap to the
type), and broadcasting. Opset 28's signed shifts and float floor-mod are
checked against exact references written from the spec (onnxruntime
1.32's results agreed with them when compared by hand on 2026-12-03).
"""
import numpy as np
import pytest
from onnx import helper

from test_ops_quant import assert_same, rng_for, run_both
from ingot_testlib import compile_model, make_model, run_model, save_model


def nonzero(r, dtype, shape):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    v = r.integers(lo, hi, shape, dtype=dtype, endpoint=True)
    return np.where(v == 0, np.ones_like(v), v)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_integers(tmp_path, dtype, fmod):
    r = rng_for(f"mod{np.dtype(dtype).name}{fmod}")
    a = nonzero(r, dtype, (3, 7))
    b = nonzero(r, dtype, (7,))
    model = make_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)],
                       [("a", dtype, [3, 7])], ["y"], {"b": b}, opset=13)
    assert_same(*run_both(tmp_path, model, {"a": a}))


def test_mod_float_is_fmod(tmp_path):
    r = rng_for("modf")
    a = r.normal(0, 10, (4, 5)).astype(np.float32)
    b = r.uniform(0.5, 3, (4, 5)).astype(np.float32) * r.choice([-1, 1],
                                                                (4, 5))
    model = make_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)],
                       [("a", np.float32, [4, 5]), ("b", np.float32, [4, 5])],
                       ["y"], {}, opset=13)
    assert_same(*run_both(tmp_path, model, {"a": a, "b": b.astype(
        np.float32)}))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift(tmp_path, dtype, direction):
    r = rng_for(f"shift{np.dtype(dtype).name}{direction}")
    bits = np.dtype(dtype).itemsize * 8
    x = r.integers(0, np.iinfo(dtype).max, (5, 6), dtype=dtype,
                   endpoint=True)
    s = r.integers(0, bits, (6,), dtype=dtype)
    model = make_model(
        [helper.make_node("BitShift", ["x", "s"], ["y"], direction=direction)],
        [("x", dtype, [5, 6])], ["y"], {"s": s}, opset=13)
    assert_same(*run_both(tmp_path, model, {"x": x}))


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.int64])
def test_bitwise_ops(tmp_path, dtype):
    r = rng_for(f"bitwise{np.dtype(dtype).name}")
    info = np.iinfo(dtype)
    a = r.integers(info.min, info.max, (3, 8), dtype=dtype, endpoint=True)
    b = r.integers(info.min, info.max, (8,), dtype=dtype, endpoint=True)
    model = make_model(
        [helper.make_node("BitwiseAnd", ["a", "b"], ["and"]),
         helper.make_node("BitwiseOr", ["a", "b"], ["or"]),
         helper.make_node("BitwiseXor", ["a", "b"], ["xor"]),
         helper.make_node("BitwiseNot", ["a"], ["not"])],
        [("a", dtype, [3, 8])], ["and", "or", "xor", "not"], {"b": b},
        opset=18)
    assert_same(*run_both(tmp_path, model, {"a": a}))


# -- Opset 28: exact references from the spec ----------------------------------
def run_ingot(tmp_path, model, feed):
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    return run_model(artifact, feed, tmp_path)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift_signed_opset28(tmp_path, dtype, direction):
    """Signed types shift right arithmetically; shifts of the width or more,
    or negative ones, leave only the sign fill (-1 or 0)."""
    r = rng_for(f"sshift{np.dtype(dtype).name}{direction}")
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    x = r.integers(info.min, info.max, (5, 8), dtype=dtype, endpoint=True)
    s = np.concatenate([r.integers(0, bits, (5,)), [bits, bits + 3, -2]]
                       ).astype(dtype)
    model = make_model(
        [helper.make_node("BitShift", ["x", "s"], ["y"], direction=direction)],
        [("x", dtype, [5, 8])], [("y", dtype, [5, 8])], {"s": s}, opset=28)
    xs, ss = x.astype(object), s.astype(object)  # Python ints: no C limits
    if direction == "RIGHT":
        want = np.where((ss < 0) | (ss >= bits), np.where(xs < 0, -1, 0),
                        xs >> np.clip(ss, 0, bits - 1))
    else:
        shifted = (xs << np.clip(ss, 0, bits - 1)) & ((1 << bits) - 1)
        wrapped = np.where(shifted >= 1 << (bits - 1), shifted - (1 << bits),
                           shifted)
        want = np.where((ss < 0) | (ss >= bits), 0, wrapped)
    got = run_ingot(tmp_path, model, {"x": x})["y"]
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want.astype(dtype))


def test_mod_float_floor_opset28(tmp_path):
    """fmod = 0 on floats (opset 28): A - floor(A / B) * B, the divisor's
    sign, as numpy's mod; zeros take the divisor's sign, an infinite
    divisor of the other sign is returned. Refused before opset 28."""
    r = rng_for("modfloor")
    a = r.normal(0, 10, (6, 5)).astype(np.float32)
    b = (r.uniform(0.5, 3, (6, 5)) * r.choice([-1, 1], (6, 5))
         ).astype(np.float32)
    a[0, :4] = [0.0, -0.0, 2.5, -2.5]
    b[0, :4] = [-3.0, 3.0, -np.inf, np.inf]
    a[1, 0], b[1, 0] = 6.0, -3.0  # an exact multiple: -0.0, as numpy gives
    model = make_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=0)],
                       [("a", np.float32, [6, 5]), ("b", np.float32, [6, 5])],
                       ["y"], {}, opset=28)
    got = run_ingot(tmp_path, model, {"a": a, "b": b})["y"]
    want = np.mod(a.astype(np.float64), b.astype(np.float64))
    want[0, 2:4] = [-np.inf, np.inf]  # the spec returns y for x, y of two signs
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(np.signbit(got[0, :2]), [True, False])
    np.testing.assert_array_equal(np.signbit(got[1, 0]), True)
    old = make_model([helper.make_node("Mod", ["a", "b"], ["y"], name="m")],
                     [("a", np.float32, [2]), ("b", np.float32, [2])], ["y"],
                     {}, opset=13, check=False)
    proc = compile_model(save_model(old, tmp_path / "old.onnx"),
                         tmp_path / "old.ingot", check=False)
    assert proc.returncode == 1
    assert "fmod = 0 on float inputs at opset 13" in proc.stderr
