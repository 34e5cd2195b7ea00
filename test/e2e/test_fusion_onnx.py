"""Generic elementwise fusion (ingot-fuse-elementwise) on ONNX graphs that
spell their activations and normalisations out op by op: each graph is
compiled with fusion on and off, both artifacts run, and both must match
onnxruntime and each other, with fewer steps when fused (GELU and the
layer norm written out become the `gelu` and `layer_norm` kernels, see
RAISED).

Tolerance: F32_RTOL (1e-5, justified in ingot_testlib) against
onnxruntime. Fused and unfused artifacts must agree bitwise: the fused
kernel runs each op's own per-element function on the same floats."""
import math
import sys

import numpy as np
import pytest

from ingot_testlib import (SOURCE_DIR, assert_close, compile_both,
                           kernels_of, make_model, node, ort_run, run_model,
                           save_model, seed_for)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import transformer_block  # noqa: E402

F32 = np.float32
D = 48


def gelu_model():
    """GELU (erf form) as exporters write it: Div, Erf, Add, Mul, Mul."""
    inits = {"sqrt2": np.array(math.sqrt(2), F32), "one": np.array(1, F32),
             "half": np.array(0.5, F32)}
    nodes = [node("Div", ["x", "sqrt2"], ["d"]), node("Erf", ["d"], ["e"]),
             node("Add", ["e", "one"], ["a"]), node("Mul", ["x", "a"], ["m"]),
             node("Mul", ["m", "half"], ["y"])]
    return make_model(nodes, [("x", F32, ["batch", "seq", D])], ["y"], inits)


def scale_bias_act_model():
    """x·scale + bias (per feature), then a swish and a clamp-like tail:
    broadcast operands of rank 1 and 2 against a rank-3 activation."""
    rng = np.random.default_rng(3)
    inits = {"scale": rng.uniform(0.5, 1.5, D).astype(F32),
             "bias": (0.1 * rng.standard_normal((1, D))).astype(F32),
             "lo": np.array(-3, F32), "k": np.array(0.75, F32)}
    nodes = [node("Mul", ["x", "scale"], ["s"]),
             node("Add", ["s", "bias"], ["b"]),
             node("Sigmoid", ["b"], ["g"]), node("Mul", ["b", "g"], ["sw"]),
             node("Max", ["sw", "lo"], ["c"]), node("Tanh", ["c"], ["t"]),
             node("Mul", ["t", "k"], ["y"])]
    return make_model(nodes, [("x", F32, ["batch", "seq", D])], ["y"], inits)


def layer_norm_model():
    """LayerNorm written out: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt,
    Div, Mul, Add (the shared centred value splits the chain)."""
    rng = np.random.default_rng(4)
    inits = {"two": np.array(2, F32), "eps": np.array(1e-5, F32),
             "gamma": rng.uniform(0.5, 1.5, D).astype(F32),
             "beta": (0.1 * rng.standard_normal(D)).astype(F32)}
    nodes = [node("ReduceMean", ["x"], ["mu"], axes=[-1]),
             node("Sub", ["x", "mu"], ["d"]), node("Pow", ["d", "two"], ["p"]),
             node("ReduceMean", ["p"], ["var"], axes=[-1]),
             node("Add", ["var", "eps"], ["ve"]), node("Sqrt", ["ve"], ["sd"]),
             node("Div", ["d", "sd"], ["n"]), node("Mul", ["n", "gamma"], ["g"]),
             node("Add", ["g", "beta"], ["y"])]
    return make_model(nodes, [("x", F32, ["batch", "seq", D])], ["y"], inits,
                      opset=17)


MODELS = {"gelu": gelu_model, "scale_bias_act": scale_bias_act_model,
          "layer_norm": layer_norm_model}
# Chains the fusion replaces by a named kernel (ingot-raise-gelu,
# ingot-raise-layer-norm), whose own function, not the chain's ops,
# computes the result: fused and unfused then differ by a few ulp, and
# both are checked against onnxruntime only.
RAISED = {"gelu": "gelu", "layer_norm": "layer_norm"}
BOUNDS = ["--max-dim", "batch=4", "--max-dim", "seq=64"]


@pytest.mark.parametrize("name", MODELS)
def test_fused_matches_unfused_and_onnxruntime(name, tmp_path, request):
    model = MODELS[name]()
    fused, unfused = compile_both(save_model(model, tmp_path / "m.onnx"),
                                  tmp_path, *BOUNDS)
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    for batch, seq in ((1, 1), (2, 7), (4, 64)):
        # 4 x 64 x 48 spans many tiles of the fused kernel.
        feed = {"x": rng.standard_normal((batch, seq, D)).astype(F32)}
        want = ort_run(model, feed)["y"]
        got = run_model(fused, feed, tmp_path)["y"]
        plain = run_model(unfused, feed, tmp_path)["y"]
        assert_close(got, want, what=f"fused y [{batch},{seq}]")
        assert_close(plain, want, what=f"unfused y [{batch},{seq}]")
        if name not in RAISED:
            assert np.array_equal(got.view(np.uint32),
                                  plain.view(np.uint32)), (
                f"fused and unfused differ at [{batch},{seq}]")
    fused_kernels, plain_kernels = kernels_of(fused), kernels_of(unfused)
    assert RAISED.get(name, "fused_elementwise") in fused_kernels
    assert len(fused_kernels) < len(plain_kernels), (
        f"fused {fused_kernels} vs unfused {plain_kernels}")


def test_transformer_block_has_fewer_steps(tmp_path, request):
    model = transformer_block.build(seed=0)
    path = transformer_block.save(model, tmp_path / "block.onnx")
    fused, unfused = compile_both(path, tmp_path, "--max-dim", "batch=2",
                                  "--max-dim", "seq=16")
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    feed = {"x": rng.standard_normal((2, 16, transformer_block.D_MODEL))
            .astype(F32)}
    want = ort_run(model, feed)
    for artifact in (fused, unfused):
        got = run_model(artifact, feed, tmp_path)
        for name, value in want.items():
            assert_close(got[name], value, what=f"{artifact.stem} {name}")
    assert len(kernels_of(fused)) <= len(kernels_of(unfused))


def gelu_mlp_model(hidden=96):
    """An exported MLP: MatMul + bias then the erf GELU in BERT's op order,
    Gemm (transB) then the tanh GELU with Pow, as PyTorch writes them."""
    rng = np.random.default_rng(5)
    c = {"sqrt2": math.sqrt(2), "one": 1, "half": 0.5, "three": 3,
         "k": 0.044715, "s": math.sqrt(2 / math.pi)}
    inits = {name: np.array(v, F32) for name, v in c.items()}
    inits.update({
        "w1": (rng.standard_normal((D, hidden)) / math.sqrt(D)).astype(F32),
        "b1": (0.1 * rng.standard_normal(hidden)).astype(F32),
        "w2": (rng.standard_normal((D, hidden)) / math.sqrt(hidden))
        .astype(F32),
        "b2": (0.1 * rng.standard_normal(D)).astype(F32)})
    nodes = [node("MatMul", ["x", "w1"], ["m"]), node("Add", ["b1", "m"], ["h"]),
             node("Div", ["h", "sqrt2"], ["d"]), node("Erf", ["d"], ["e"]),
             node("Add", ["e", "one"], ["a"]), node("Mul", ["h", "a"], ["p"]),
             node("Mul", ["p", "half"], ["g"]),
             node("Gemm", ["g", "w2", "b2"], ["o"], transB=1),
             node("Pow", ["o", "three"], ["o3"]), node("Mul", ["o3", "k"], ["ok"]),
             node("Add", ["o", "ok"], ["u"]), node("Mul", ["u", "s"], ["us"]),
             node("Tanh", ["us"], ["t"]), node("Add", ["t", "one"], ["t1"]),
             node("Mul", ["o", "half"], ["oh"]), node("Mul", ["oh", "t1"], ["y"])]
    return make_model(nodes, [("x", F32, ["rows", D])], ["y"], inits)


def test_decomposed_gelu_fuses_into_the_linear(tmp_path, request):
    """Both GELU forms become the linears' epilogues (no elementwise step
    left) and match onnxruntime, whose Erf/Tanh differ from ingot's GELU
    by a few ulp per value, well inside F32_RTOL."""
    model = gelu_mlp_model()
    fused, unfused = compile_both(save_model(model, tmp_path / "m.onnx"),
                                  tmp_path, "--max-dim", "rows=64")
    assert kernels_of(fused) == ["linear", "linear"], kernels_of(fused)
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    for rows in (1, 13, 64):
        feed = {"x": rng.standard_normal((rows, D)).astype(F32)}
        want = ort_run(model, feed)["y"]
        for artifact in (fused, unfused):
            got = run_model(artifact, feed, tmp_path)["y"]
            assert_close(got, want, what=f"{artifact.stem} y [{rows}]")
