"""GroupNormalization and LRN (docs/kernels-math.md), compiled by ingot and
compared with onnxruntime; the LRN window sizes and ranks onnxruntime
refuses are compared with a float64 numpy reference. Same conventions as
test_ops_norm.py; shared helpers in ops_case_lib.py.
"""
import numpy as np
import pytest

from ingot_testlib import (Model, assert_close, compile_model, make_model,
                           node, ort_run, run_model, save_model)
from ops_case_lib import F32, compile_error, one, results_fixture, sym2, uniform

CASES = []


def case(model):
    CASES.append(pytest.param(model, None, id=model.key))


def chan(c, lo=-1.0, hi=1.0, seed=0):
    return np.random.default_rng(seed + c).uniform(lo, hi, c).astype(F32)


# GroupNormalization (21): per-channel scale and bias. The output is typed
# here: onnx cannot infer this function op's.
for key, shape, groups, sizes in [("nchw", [2, 6, 4, 5], 3, ({},)),
                                  ("ncl_sym", ["n", 4, 9], 2, sym2(1, 3)),
                                  ("one_group", [2, 5, 3], 1, ({},)),
                                  ("nc", [3, 12], 2, ({},))]:
    c = shape[1]
    case(Model(f"groupnorm_{key}",
               [node("GroupNormalization", ["x", "s", "b"], ["y"],
                     num_groups=groups, epsilon=1e-4)],
               [("x", F32, shape)], [("y", F32, shape)],
               {"s": chan(c, 0.5, 1.5), "b": chan(c, seed=1)}, 21, sizes))
# LRN: windows inside and wider than the channels. onnxruntime runs only
# odd sizes on 4-D inputs; even sizes and rank 3 are checked against numpy
# below.
for key, shape, size, attrs, sizes in [
        ("nchw_3", [2, 5, 4, 3], 3, {}, ({},)),
        ("nchw_5_alpha", [1, 6, 3, 3], 5, {"alpha": 0.01, "beta": 0.5,
                                           "bias": 2.0}, ({},)),
        ("wide_sym", ["n", 3, 5, 4], 7, {"alpha": 0.1}, sym2(1, 2))]:
    case(one(f"lrn_{key}", "LRN", [("x", F32, shape)], opset=13,
             sizes=sizes, gen={"x": uniform(-2, 2)}, size=size, **attrs))

results = results_fixture()


@pytest.mark.parametrize("model,outputs", CASES)
def test_norm_op(model, outputs, results):
    for label, got, expected in results(model):
        assert sorted(got) == sorted(expected)
        for name in expected:
            assert_close(got[name], expected[name], what=f"{name} ({label})")


@pytest.mark.parametrize("shape,size", [([2, 6, 5], 4), ([1, 4, 3, 2], 2)])
def test_lrn_even_size_and_rank3_against_numpy(tmp_path, shape, size):
    """The spec's window, c - floor((size-1)/2) .. c + ceil((size-1)/2),
    in float64; f32 rounding of the sum and the power stays below 1e-5."""
    x = np.random.default_rng(size).uniform(-2, 2, shape).astype(F32)
    alpha, beta, bias = 0.05, 0.6, 1.5
    model = make_model([node("LRN", ["x"], ["y"], size=size, alpha=alpha,
                             beta=beta, bias=bias)],
                       [("x", F32, shape)], [("y", F32, shape)], opset=13)
    artifact = tmp_path / "lrn.ingot"
    compile_model(save_model(model, tmp_path / "lrn.onnx"), artifact)
    got = run_model(artifact, {"x": x}, tmp_path)["y"]
    x64, c = x.astype(np.float64), shape[1]
    lo, hi = (size - 1) // 2, size // 2
    sq = np.zeros_like(x64)
    for ch in range(c):
        sq[:, ch] = (x64[:, max(0, ch - lo):min(c, ch + hi + 1)] ** 2).sum(1)
    want = x64 / (bias + alpha / size * sq) ** beta
    assert np.abs(got - want).max() / np.abs(want).max() < 1e-5


def test_groupnorm_groups_not_dividing_channels_rejected(tmp_path):
    c = np.ones(6, F32)
    model = make_model([node("GroupNormalization", ["x", "s", "b"], ["y"],
                             name="gn", num_groups=4)],
                       [("x", F32, [2, 6, 3])], [("y", F32, [2, 6, 3])],
                       {"s": c, "b": c}, opset=21, check=False)
    err = compile_error(tmp_path, model)
    for part in ("node 'gn'", "GroupNormalization", "opset 21",
                 "num_groups 4 for 6 channels", "positive divisor"):
        assert part in err, err


def groupnorm_run_time_channels_model():
    """C a symbol, scale and bias fed as inputs: the importer cannot check
    that num_groups divides C, the run does."""
    return make_model([node("GroupNormalization", ["x", "s", "b"], ["y"],
                            num_groups=2, epsilon=1e-4)],
                      [("x", F32, ["n", "c", 5, 3]), ("s", F32, ["c"]),
                       ("b", F32, ["c"])],
                      [("y", F32, ["n", "c", 5, 3])], opset=21, check=False)


@pytest.mark.parametrize("n,c", [(1, 6), (2, 4)])
def test_groupnorm_run_time_channels(tmp_path, n, c):
    model = groupnorm_run_time_channels_model()
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact,
                  "--max-dim", "n=2", "--max-dim", "c=8")
    rng = np.random.default_rng(100 * n + c)
    feed = {"x": rng.uniform(-2, 2, (n, c, 5, 3)).astype(F32),
            "s": chan(c, 0.5, 1.5), "b": chan(c, seed=1)}
    got = run_model(artifact, feed, tmp_path)["y"]
    assert_close(got, ort_run(model, feed)["y"], what=f"y [{n},{c}]")


def test_groupnorm_run_time_channels_not_divisible_fails_the_run(tmp_path):
    model = groupnorm_run_time_channels_model()
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact,
                  "--max-dim", "n=2", "--max-dim", "c=8")
    feed = {"x": np.ones((1, 3, 5, 3), F32), "s": chan(3), "b": chan(3)}
    proc = run_model(artifact, feed, tmp_path, check=False)
    assert proc.returncode == 1 and "reshape" in proc.stderr, proc.stderr
