"""Encoder self-attention as BERT exports write it (q, k, v projections
reshaped into heads and transposed, scores divided by √d, the padding
mask added, softmax, the weighted sum transposed back) fuses into one
`attention` step (ingot-fuse-attention) and matches onnxruntime.

Inputs are fresh random activations and random amounts of padding per
sequence (at least one real token). Tolerance: F32_RTOL (1e-5,
ingot_testlib) against onnxruntime, whose softmax and matmul order their
sums differently from ingot's fused kernel."""
import math

import numpy as np
import pytest

from ingot_testlib import (assert_close, compile_model, kernels_of,
                           make_model, node, ort_run, run_model, save_model,
                           seed_for)

F32 = np.float32
E, H = 48, 4
D = E // H


def encoder_attention_model(mask=True):
    rng = np.random.default_rng(7)
    inits = {"heads": np.array([0, 0, H, D], np.int64),
             "merged": np.array([0, 0, E], np.int64),
             "sqrtd": np.array(math.sqrt(D), F32),
             "one": np.array(1, F32), "big": np.array(-10000, F32),
             "axes12": np.array([1, 2], np.int64)}
    nodes = []
    for p in "qkv":
        inits[f"w{p}"] = (rng.standard_normal((E, E)) / math.sqrt(E)).astype(F32)
        inits[f"b{p}"] = (0.1 * rng.standard_normal(E)).astype(F32)
        nodes += [node("MatMul", ["x", f"w{p}"], [f"{p}m"]),
                  node("Add", [f"{p}m", f"b{p}"], [f"{p}l"]),
                  node("Reshape", [f"{p}l", "heads"], [f"{p}r"])]
    nodes += [node("Transpose", ["qr"], ["qt"], perm=[0, 2, 1, 3]),
              node("Transpose", ["kr"], ["kt"], perm=[0, 2, 3, 1]),
              node("Transpose", ["vr"], ["vt"], perm=[0, 2, 1, 3]),
              node("MatMul", ["qt", "kt"], ["s"]),
              node("Div", ["s", "sqrtd"], ["sd"])]
    inputs = [("x", F32, ["batch", "seq", E])]
    scores = "sd"
    if mask:
        inputs.append(("attention_mask", np.int64, ["batch", "seq"]))
        nodes += [node("Unsqueeze", ["attention_mask", "axes12"], ["mu"]),
                  node("Cast", ["mu"], ["mf"], to=1),
                  node("Sub", ["one", "mf"], ["inv"]),
                  node("Mul", ["inv", "big"], ["additive"]),
                  node("Add", ["sd", "additive"], ["sm"])]
        scores = "sm"
    nodes += [node("Softmax", [scores], ["p"], axis=-1),
              node("MatMul", ["p", "vt"], ["o"]),
              node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
              node("Reshape", ["ot", "merged"], ["y"])]
    return make_model(nodes, inputs, ["y"], inits)


@pytest.mark.parametrize("mask", [True, False], ids=["mask", "no_mask"])
def test_encoder_attention_fuses_and_matches(mask, tmp_path, request):
    model = encoder_attention_model(mask)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact,
                  "--max-dim", "batch=3", "--max-dim", "seq=40")
    kernels = kernels_of(artifact)
    assert "attention" in kernels, kernels
    assert not {"softmax", "transpose", "matmul"} & set(kernels), kernels
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    for batch, seq in ((1, 1), (2, 7), (3, 40)):
        feed = {"x": rng.standard_normal((batch, seq, E)).astype(F32)}
        if mask:
            keep = rng.integers(1, seq + 1, size=batch)
            feed["attention_mask"] = (np.arange(seq)[None, :] <
                                      keep[:, None]).astype(np.int64)
        want = ort_run(model, feed)["y"]
        got = run_model(artifact, feed, tmp_path)["y"]
        assert_close(got, want, what=f"y [{batch},{seq}]")
