"""Ops and forms of opsets 24-28 (claimed since the importer's newest opset
went from 23 to the 28 of the test venv's onnx), and CastLike (15), which
the importer lacked. The opset-24+ cases compare with float64 numpy
references written from the spec (onnxruntime 1.32 has no TopK(24) kernel;
its Swish, SpaceToDepth CRD and the rest agreed with ingot when compared by
hand on 2026-12-03); CastLike at opset 15 compares with onnxruntime.

Tolerances: Swish is x * sigmoid(alpha x) in f32 against float64; the
sigmoid kernel is within a few ulp, so 1e-6 relative to the largest value.
"""
import numpy as np
import pytest
from onnx import helper

from ingot_testlib import (compile_model, make_model, ort_run, run_model,
                           save_model)
from test_ops_quant import rng_for


def run_ingot(tmp_path, model, feed):
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    return run_model(artifact, feed, tmp_path)


@pytest.mark.parametrize("alpha", [None, 0.5])
def test_swish(tmp_path, alpha):
    r = rng_for(f"swish{alpha}")
    x = r.normal(0, 4, (3, 17)).astype(np.float32)
    attrs = {} if alpha is None else {"alpha": alpha}
    model = make_model([helper.make_node("Swish", ["x"], ["y"], **attrs)],
                       [("x", np.float32, [3, 17])], ["y"], opset=24)
    got = run_ingot(tmp_path, model, {"x": x})["y"]
    a, xd = 1.0 if alpha is None else alpha, x.astype(np.float64)
    want = xd / (1 + np.exp(-a * xd))
    assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()


@pytest.mark.parametrize("like", [np.int32, np.float16, np.uint8])
def test_castlike_matches_onnxruntime(tmp_path, like):
    r = rng_for(f"castlike{np.dtype(like).name}")
    x = r.uniform(0, 100, (4, 6)).astype(np.float32)
    model = make_model([helper.make_node("CastLike", ["x", "l"], ["y"])],
                       [("x", np.float32, [4, 6])], ["y"],
                       {"l": np.zeros((2,), like)}, opset=15)
    got = run_ingot(tmp_path, model, {"x": x})["y"]
    want = ort_run(model, {"x": x})["y"]
    assert got.dtype == want.dtype == like
    np.testing.assert_array_equal(got, want)


def test_castlike_opset25_and_saturate(tmp_path):
    x = np.array([[1.9, -2.7, 300.0]], np.float32)
    model = make_model([helper.make_node("CastLike", ["x", "l"], ["y"])],
                       [("x", np.float32, [1, 3])],
                       [("y", np.int64, [1, 3])],
                       {"l": np.zeros((1,), np.int64)}, opset=25)
    got = run_ingot(tmp_path, model, {"x": x})["y"]
    np.testing.assert_array_equal(got, x.astype(np.int64))
    bad = make_model([helper.make_node("CastLike", ["x", "l"], ["y"],
                                       name="cl", saturate=0)],
                     [("x", np.float32, [1, 3])], [("y", np.int64, [1, 3])],
                     {"l": np.zeros((1,), np.int64)}, opset=25)
    proc = compile_model(save_model(bad, tmp_path / "bad.onnx"),
                         tmp_path / "bad.ingot", check=False)
    assert proc.returncode == 1 and "saturate 0" in proc.stderr, proc.stderr


def test_topk_uint64_orders_above_2_63(tmp_path):
    """uint64 values past 2^63 order as unsigned (computed as int64 with
    the sign bit flipped), and come back unchanged."""
    r = rng_for("topk_u64")
    x = r.integers(0, 2**64 - 1, (3, 9), dtype=np.uint64, endpoint=True)
    x[0, :3] = [2**63, 2**63 - 1, 2**64 - 1]
    model = make_model(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
        [("x", np.uint64, [3, 9])], ["v", "i"],
        {"k": np.array([4], np.int64)}, opset=24)
    got = run_ingot(tmp_path, model, {"x": x})
    order = np.argsort(-x.astype(np.float64), axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(got["v"], np.take_along_axis(x, order, 1))
    np.testing.assert_array_equal(got["i"], order)


def test_range_16bit_stash_type(tmp_path):
    """Opset 27's stash_type: 1 (the default) is how ingot computes a
    float16 Range (in float32); 0 is refused by name."""
    def model(**attrs):
        return make_model(
            [helper.make_node("Range", ["s", "l", "d"], ["y"], name="rg",
                              **attrs)],
            [], [("y", np.float16, [None])],
            {"s": np.array(1.5, np.float16), "l": np.array(9, np.float16),
             "d": np.array(0.75, np.float16)}, opset=27)
    got = run_ingot(tmp_path, model(), {})["y"]
    np.testing.assert_array_equal(got, np.arange(1.5, 9, 0.75,
                                                 dtype=np.float32)
                                  .astype(np.float16))
    proc = compile_model(save_model(model(stash_type=0), tmp_path / "b.onnx"),
                         tmp_path / "b.ingot", check=False)
    assert proc.returncode == 1, proc.stderr
    assert "'rg'" in proc.stderr and "stash_type = 0" in proc.stderr


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_modes_opset28(tmp_path, mode):
    """Opset 28's mode: DCR (the old order) or CRD; against numpy's
    reshape/transpose of the spec, and DepthToSpace of the same mode
    undoing it."""
    r = rng_for(f"s2d{mode}")
    x = r.normal(0, 1, (2, 3, 4, 6)).astype(np.float32)
    model = make_model(
        [helper.make_node("SpaceToDepth", ["x"], ["d"], blocksize=2,
                          mode=mode),
         helper.make_node("DepthToSpace", ["d"], ["y"], blocksize=2,
                          mode=mode)],
        [("x", np.float32, [2, 3, 4, 6])], ["d", "y"], opset=28)
    got = run_ingot(tmp_path, model, {"x": x})
    t = x.reshape(2, 3, 2, 2, 3, 2)
    perm = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
    np.testing.assert_array_equal(got["d"],
                                  t.transpose(perm).reshape(2, 12, 2, 3))
    np.testing.assert_array_equal(got["y"], x)
