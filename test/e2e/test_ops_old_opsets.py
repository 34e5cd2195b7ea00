"""Opsets 7–12, as older exporters (PaddleOCR's paddle2onnx, TensorFlow's
tf2onnx, PyTorch before 1.8) write them, compiled by ingot and compared with
onnxruntime at the same opset: operands that later opsets take as inputs
(axes, split sizes, Clip bounds, pads, k, starts/ends) given as attributes,
Softmax/LogSoftmax over the input coerced to 2-D, and the refusals where
the old form means something ingot does not compute. Also GlobalMaxPool,
and "?" dims, which are unknown, not equal to one another.
"""
import numpy as np
import pytest

from ingot_testlib import (assert_clean_failure, compile_model, make_model,
                           node, ort_run, run_model, save_model)
from ops_case_lib import F32, I64, one, results_fixture, signed, sym2

CASES = []


def case(model):
    CASES.append(pytest.param(model, id=model.key))


# Axes, sizes and bounds as attributes.
case(one("squeeze_attr_op11", "Squeeze", [("x", F32, [2, 1, 3, 1])],
         opset=11, axes=[1, -1]))
case(one("squeeze_all_op7", "Squeeze", [("x", F32, [1, 3, 1])], opset=7))
case(one("unsqueeze_attr_op11", "Unsqueeze", [("x", F32, ["n", 3])],
         opset=11, sizes=sym2(2, 5), axes=[0, 3]))
case(one("split_attr_op11", "Split", [("x", F32, [2, 7])], opset=11,
         outputs=("a", "b"), axis=1, split=[3, 4]))
case(one("split_equal_op7", "Split", [("x", F32, [6, 2])], opset=7,
         outputs=("a", "b", "c")))
case(one("clip_attrs_op10", "Clip", [("x", F32, [4, 5])], opset=10,
         gen={"x": signed}, min=-0.5, max=0.75))
case(one("clip_min_only_op7", "Clip", [("x", F32, [4, 5])], opset=7,
         gen={"x": signed}, min=0.0))
case(one("pad_attrs_op10", "Pad", [("x", F32, [2, 3])], opset=10,
         pads=[0, 1, 2, 0], value=1.5))
case(one("pad_reflect_op10", "Pad", [("x", F32, [3, 4])], opset=10,
         pads=[1, 2, 1, 0], mode="reflect"))
case(one("topk_attr_op9", "TopK", [("x", F32, [3, 8])], opset=9,
         outputs=("v", "i"), k=3))
case(one("slice_attrs_op9", "Slice", [("x", F32, [5, 6, 4])], opset=9,
         starts=[1, -3], ends=[4, 100], axes=[0, 1]))
case(one("slice_no_axes_op7", "Slice", [("x", F32, [5, 6])], opset=7,
         starts=[1, 0], ends=[3, 4]))
# Before 13, softmax over the dims from `axis` on (default 1), flattened.
case(one("softmax_default_op11", "Softmax", [("x", F32, [2, 3, 4])],
         opset=11, gen={"x": signed}))
case(one("softmax_axis0_op11", "Softmax", [("x", F32, [2, 3])], opset=11,
         gen={"x": signed}, axis=0))
case(one("softmax_last_op12", "Softmax", [("x", F32, [2, 3, 5])], opset=12,
         gen={"x": signed}, axis=-1))
case(one("softmax_sym_op11", "Softmax", [("x", F32, ["n", 3, 4])],
         opset=11, sizes=sym2(1, 3), gen={"x": signed}, axis=1))
case(one("logsoftmax_default_op11", "LogSoftmax", [("x", F32, [2, 3, 4])],
         opset=11, gen={"x": signed}))
case(one("reduce_sum_attr_op11", "ReduceSum", [("x", F32, [2, 3, 4])],
         opset=11, axes=[-1], keepdims=0))
case(one("global_max_pool", "GlobalMaxPool", [("x", F32, [2, 3, 5, 4])],
         opset=12, gen={"x": signed}))
case(one("global_max_pool_1d_sym", "GlobalMaxPool", [("x", F32, [1, 4, "n"])],
         opset=13, sizes=sym2(3, 9), gen={"x": signed}))

results = results_fixture()


@pytest.mark.parametrize("model", CASES)
def test_op(model, results):
    for label, got, want in results(model):
        assert sorted(got) == sorted(want), label
        for name, expected in want.items():
            actual = got[name]
            assert actual.shape == expected.shape, (label, name)
            assert actual.dtype == expected.dtype, (label, name)
            if np.issubdtype(expected.dtype, np.floating):
                scale = max(float(np.abs(expected).max()), 1e-30)
                # One f32 rounding per op plus exp/log: a few ulps.
                assert float(np.abs(actual - expected).max()) / scale < 1e-5, \
                    (label, name)
            else:
                np.testing.assert_array_equal(actual, expected, err_msg=label)


def test_batch_norm_non_spatial_is_refused(tmp_path):
    """spatial = 0 (opsets 7–8) keeps statistics per position, which ingot
    does not compute: refused, naming the attribute."""
    c = np.ones(3, np.float32)
    model = make_model(
        [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
              spatial=0)],
        [("x", F32, [2, 3, 4])], [("y", F32, [2, 3, 4])],
        {"s": c, "b": c, "m": c, "v": c}, 7, check=False)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert "spatial = 0" in proc.stderr, proc.stderr


def test_axes_input_before_opset_13_is_refused(tmp_path):
    """Squeeze at opset 11 takes axes as an attribute; an axes input is a
    malformed model, refused rather than silently ignored."""
    model = make_model([node("Squeeze", ["x", "a"], ["y"])],
                       [("x", F32, [1, 3])], [("y", F32, [3])],
                       {"a": np.array([0], I64)}, 11, check=False)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert "'axes' given as input 1" in proc.stderr, proc.stderr


def test_question_mark_dims_are_independent(tmp_path):
    """PaddleOCR writes "?" for every unknown dim: two "?" dims of one
    input may differ (48×192), so each is a symbol of its own."""
    model = make_model([node("Relu", ["x"], ["y"])],
                       [("x", F32, [1, 3, "?", "?"])], ["y"], opset=11)
    path = save_model(model, tmp_path / "m.onnx")
    compile_model(path, tmp_path / "m.ingot", "--max-dim", "x_dim2=64")
    x = np.random.default_rng(3).standard_normal((1, 3, 48, 192))
    feed = {"x": x.astype(np.float32)}
    got = run_model(tmp_path / "m.ingot", feed, tmp_path)
    np.testing.assert_array_equal(got["y"], ort_run(model, feed)["y"])


def test_impossible_bound_names_symbols_and_flag(tmp_path):
    """A reshape that only works at some sizes cannot be planned at the
    default bound: the compile warns, naming the symbols' bounds and the
    flags, and leaves the check to the run, which passes at the one valid
    size and fails cleanly at others. With --max-dim there is no warning."""
    model = make_model([node("Reshape", ["x", "s"], ["y"])],
                       [("x", F32, [1, "?", 8])], ["y"],
                       {"s": np.array([1, 4, 16], I64)}, opset=12,
                       check=False)
    path = save_model(model, tmp_path / "m.onnx")
    proc = compile_model(path, tmp_path / "m.ingot")
    assert "x_dim1=512" in proc.stderr, proc.stderr
    assert "--max-dim SYMBOL=N" in proc.stderr, proc.stderr
    x = np.random.default_rng(7).standard_normal((1, 8, 8)).astype(F32)
    got = run_model(tmp_path / "m.ingot", {"x": x}, tmp_path)
    np.testing.assert_array_equal(got["y"], ort_run(model, {"x": x})["y"])
    bad = run_model(tmp_path / "m.ingot", {"x": np.ones((1, 5, 8), F32)},
                    tmp_path, check=False)
    assert_clean_failure(bad)
    proc = compile_model(path, tmp_path / "m.ingot", "--max-dim", "x_dim1=8")
    assert "warning" not in proc.stderr, proc.stderr


def test_dropout_mask_before_opset_10_is_refused(tmp_path):
    """Before opset 10 Dropout's mask has no defined value at inference
    (onnxruntime writes zeros, the ONNX reference implementation ones):
    a used mask is refused; an unused one is fine."""
    model = make_model([node("Dropout", ["x"], ["y", "mask"])],
                       [("x", F32, [2, 3])],
                       [("y", F32, [2, 3]), ("mask", F32, [2, 3])], opset=9,
                       check=False)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert "mask (undefined at inference before opset 10)" in proc.stderr
