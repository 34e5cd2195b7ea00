"""ONNX ops that the importer writes as a few graph ops (OnnxComposite.cpp)
against onnxruntime on fresh random data: PRelu, HardSwish, Selu, Celu,
ThresholdedRelu, Softsign, Shrink, Sum, Mean, Xor, ReduceL1 and
ReduceLogSum, with their default and explicit attributes, broadcasting and
a float16 input (widened to float32 and back).

Tolerance: f32 expressions of a few ops each, against onnxruntime's own
f32 kernels: 1e-5 relative to the output's largest value (exp and the
divisions round differently by a few ulp); float16 outputs 1e-3.
"""
import numpy as np
import pytest
from onnx import helper

from ingot_testlib import assert_close, make_model
from test_ops_quant import rng_for, run_both

F32 = np.float32


def unary_cases():
    for op, attrs, opset in [
            ("HardSwish", {}, 14),
            ("Selu", {}, 13), ("Selu", {"alpha": 1.2, "gamma": 0.7}, 13),
            ("Celu", {}, 13), ("Celu", {"alpha": 2.5}, 13),
            ("ThresholdedRelu", {}, 13), ("ThresholdedRelu", {"alpha": -0.5}, 13),
            ("Softsign", {}, 13),
            ("Shrink", {}, 13), ("Shrink", {"lambd": 1.5, "bias": 0.3}, 13)]:
        key = op + "".join(f"_{k}{v}" for k, v in attrs.items())
        yield pytest.param(op, attrs, opset, id=key)


@pytest.mark.parametrize("op,attrs,opset", unary_cases())
def test_unary(tmp_path, op, attrs, opset):
    r = rng_for(f"composite{op}{sorted(attrs.items())}")
    x = r.normal(0, 3, (4, 33)).astype(F32)
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                       [("x", F32, [4, 33])], ["y"], opset=opset)
    got, want = run_both(tmp_path, model, {"x": x})
    assert_close(got["y"], want["y"], rtol=1e-5)


@pytest.mark.parametrize("slope_shape", [[1], [3, 1, 1], [3, 5, 6]])
def test_prelu_broadcasts_slope(tmp_path, slope_shape):
    r = rng_for(f"prelu{slope_shape}")
    x = r.normal(0, 2, (2, 3, 5, 6)).astype(F32)
    slope = r.uniform(-0.5, 0.5, slope_shape).astype(F32)
    model = make_model([helper.make_node("PRelu", ["x", "s"], ["y"])],
                       [("x", F32, [2, 3, 5, 6])], ["y"], {"s": slope},
                       opset=16)
    got, want = run_both(tmp_path, model, {"x": x})
    assert_close(got["y"], want["y"], rtol=1e-6)


def test_prelu_int_and_shrink_int(tmp_path):
    r = rng_for("prelu_int")
    x = r.integers(-50, 50, (3, 7)).astype(np.int32)
    model = make_model(
        [helper.make_node("PRelu", ["x", "s"], ["p"]),
         helper.make_node("Shrink", ["x"], ["s2"], lambd=3.0, bias=2.0)],
        [("x", np.int32, [3, 7])], ["p", "s2"],
        {"s": np.array([2, -3, 0, 1, 4, -1, 5], np.int32)}, opset=16)
    got, want = run_both(tmp_path, model, {"x": x})
    for name in ("p", "s2"):
        np.testing.assert_array_equal(got[name], want[name])


@pytest.mark.parametrize("op", ["Sum", "Mean"])
@pytest.mark.parametrize("count", [1, 3])
def test_sum_mean_broadcast(tmp_path, op, count):
    r = rng_for(f"{op}{count}")
    shapes = [[2, 4, 5], [4, 1], [5]][:count]
    feed = {f"x{i}": r.normal(0, 1, s).astype(F32)
            for i, s in enumerate(shapes)}
    model = make_model([helper.make_node(op, list(feed), ["y"])],
                       [(k, F32, list(v.shape)) for k, v in feed.items()],
                       ["y"], opset=13)
    got, want = run_both(tmp_path, model, feed)
    assert_close(got["y"], want["y"], rtol=1e-6)


def test_sum_float16(tmp_path):
    r = rng_for("sum16")
    a = r.normal(0, 1, (3, 8)).astype(np.float16)
    b = r.normal(0, 1, (8,)).astype(np.float16)
    model = make_model([helper.make_node("Sum", ["a", "b"], ["y"])],
                       [("a", np.float16, [3, 8]), ("b", np.float16, [8])],
                       ["y"], opset=13)
    got, want = run_both(tmp_path, model, {"a": a, "b": b})
    assert got["y"].dtype == np.float16
    assert_close(got["y"], want["y"], rtol=1e-3)


def test_xor(tmp_path):
    r = rng_for("xor")
    a = r.integers(0, 2, (4, 6)).astype(bool)
    b = r.integers(0, 2, (6,)).astype(bool)
    model = make_model([helper.make_node("Xor", ["a", "b"], ["y"])],
                       [("a", bool, [4, 6]), ("b", bool, [6])], ["y"],
                       opset=13)
    got, want = run_both(tmp_path, model, {"a": a, "b": b})
    np.testing.assert_array_equal(got["y"], want["y"])


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceLogSum"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_l1_logsum(tmp_path, op, keepdims):
    r = rng_for(f"{op}{keepdims}")
    x = r.uniform(0.1, 2, (3, 4, 5)).astype(F32)
    if op == "ReduceL1":
        x *= r.choice([-1, 1], x.shape).astype(F32)
    model = make_model(
        [helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)],
        [("x", F32, [3, 4, 5])], ["y"], {"axes": np.array([0, 2], np.int64)},
        opset=18)
    got, want = run_both(tmp_path, model, {"x": x})
    assert_close(got["y"], want["y"], rtol=1e-6)
