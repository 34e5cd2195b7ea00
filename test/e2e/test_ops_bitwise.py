"""Mod, BitShift and the Bitwise ops against onnxruntime, bit-exact, on
fresh random data: mixed signs and a zero-free divisor for Mod (the
divisor's sign with fmod = 0, the dividend's with fmod = 1, which floats
need), shifts of unsigned values by 0..width-1 (left shifts wrap to the
type), and broadcasting.
"""
import numpy as np
import pytest
from onnx import helper

from test_ops_quant import assert_same, rng_for, run_both
from ingot_testlib import make_model


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
