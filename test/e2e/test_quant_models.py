"""`ingot compile --quant`: the artifact's bytes and the logits they give.

Tiny random Hugging Face models (test/fixtures/hf_models.py; F32, tied
BF16 and F16 with biases) are compiled with each quantisation setting, and

  - every quantised tensor's bytes equal test_quant_format.py's numpy
    quantiser applied to the source weights (widened to f32; merged Q/K/V
    and gate/up concatenated along dim 0), bit for bit;
  - exactly the linear weights are quantised (q/k/v/o, gate/up/down and
    lm_head; for tied embeddings a quantised copy for lm_head while the
    gather keeps the original); norms, embeddings and biases never are;
  - ingot's logits match the float64 reference (hf_reference.py) run with
    the weights dequantised from those bytes, tightly, and the reference
    with the original weights, within the format's own error.

Flags and inspect: test_quant_flags.py.
"""
import re

import numpy as np
import pytest

from ingot_testlib import describe, ingot
from quant_testlib import (COMPILE_FLAGS, MODELS, QUANTS, Artifact, compiled,  # noqa: F401
                           dequantised_reference,
                           expected_quantised, hf_models, hf_reference, models, source)
from test_quant_format import dequantize, quantize, row_bytes

# Logit tolerances (norm-wise relative error, as in test_llm.py).
#
# The quantised linear kernels are weight-only (runtime/src/cpu/
# LinearQuant.h): each block is widened to f32 in registers and multiplied
# with f32 activations, so against the float64 reference run with the
# dequantised weights ingot differs only by f32 rounding, as an F32 model
# does: test_llm.py's bound 1e-4 applies. Measured 2.5e-7 .. 1.5e-6 (q4m
# highest: its m * sum(x) term cancels against the d * q part). A kernel
# that decodes blocks wrongly (nibble order, scale, minimum) by even 0.6%
# per weight, q8's whole rounding error, moves these logits by 2e-2.
DEQUANT_RTOL = 1e-4
# Against the original weights the format's own error shows. Per weight it
# is ~step/sqrt(12): 0.6% of a row's rms for q8 g32, ~9% for int4 g32,
# ~2.5% for e4m3; these random 2-layer models amplify a perturbation 4-6x
# on the logits. Measured: q8 2.1e-2..3.8e-2 (per channel 2.1e-2..2.4e-2),
# fp8 (per channel) 7.2e-2..0.15, q4 0.37..0.44 (g48 0.31..0.38), q4m
# 0.27..0.36. Bounds are ~1.6x the largest: they catch a format that
# degrades (a scale off by a factor, a lost level) without flaking.
ORIGINAL_RTOL = {"q8": 0.07, "f8e4m3": 0.25, "q4": 0.7, "q4m": 0.6}


# -----------------------------------------------------------------------------
# Bytes
# -----------------------------------------------------------------------------

def describe_mismatch(fmt, group, k, want, got):
    """Which rows/blocks differ, and the values there, for a failure message."""
    rows = np.argwhere(np.any(want != got, axis=1)).ravel()
    r = rows[0]
    col = np.argmax(want[r] != got[r])
    a, b = dequantize(fmt, want[r:r + 1], k, group), dequantize(fmt, got[r:r + 1], k, group)
    diff = np.argwhere(a[0] != b[0]).ravel()[:4]
    return (f"{len(rows)} of {len(want)} rows differ; row {r} from byte {col}: "
            f"values at {diff.tolist()}: numpy {a[0][diff].tolist()} "
            f"artifact {b[0][diff].tolist()}")


@pytest.mark.parametrize("quant", list(QUANTS))
@pytest.mark.parametrize("name", MODELS)
def test_quantised_bytes_match_numpy(name, quant, compiled, source):
    flags, fmt, group = QUANTS[quant]
    check_bytes(compiled(name, *flags), source[name], fmt, group)


def check_bytes(art, weights, fmt, group):
    """Every quantised tensor of art is numpy's quantiser applied to its
    source weights; exactly the expected weights are quantised."""
    seen = set()
    for t, parts, got_fmt, got_group in art.quantised():
        src = np.concatenate([weights[p] for p in parts])
        n, k = src.shape
        assert (t["dtype"], t["group_size"], t["shape"]) == (fmt, group or k, [n, k]), t
        assert got_fmt == fmt and got_group == (group or k), t["name"]
        assert t["bytes"] == n * row_bytes(fmt, k, group or k), t["name"]
        assert t["bits_per_weight"] == pytest.approx(8 * row_bytes(fmt, k, group or k) / k)
        want = quantize(fmt, src, group or k)
        got = art.tensor_bytes(t).reshape(want.shape)
        assert np.array_equal(want, got), (
            f"{t['name']}: " + describe_mismatch(fmt, group or k, k, want, got))
        seen.update(parts)
    assert seen == expected_quantised(weights)


# Rows of period 16, so that every group (16, 32, 48, 64 or 128 values)
# holds the row's extreme and with it a scale of exactly 1: the other values
# then sit halfway between two levels, and round-half-even decides.
TIE_ROWS = [
    [127, .5, 1.5, 2.5, -.5, -1.5, -2.5, 126.5, -126.5, 3.5, 64.5, -64.5, 0, 1, -1, 100.5],
    [-8, .5, 1.5, 2.5, -.5, -1.5, -2.5, 7.5, -7.5, 3.5, 6.5, -6.5, 0, 1, -1, 5.5],    # q4
    [0, 15, .5, 1.5, 2.5, 3.5, 4.5, 14.5, 13.5, 7.5, 8.5, 6.5, 1, 2, 9.5, 10.5],      # q4m
    [448, 1.0625, 1.1875, 232, 1.5 * 2**-9, -.5 * 2**-9, -1.0625, 2.5 * 2**-9,      # e4m3
     3.5 * 2**-9, 8.5, 9.5, -17, 19, 304, 440, 0.01],
]


@pytest.fixture(scope="module")
def edge_model(models, source, tmp_path_factory):
    """The llama with crafted rows in a K=64 and a K=128 weight: ties for
    each format, zeros (whole rows and one group), +-65000, 1e-7 values,
    one large value among small ones."""
    rng = np.random.default_rng(11)
    w = {n: a.copy() for n, a in source["llama"].items()}
    for name, k in (("model.layers.0.self_attn.q_proj.weight", 64),
                    ("model.layers.0.mlp.down_proj.weight", 128)):
        rows = [np.tile(np.float32(r), k // 16) for r in TIE_ROWS]
        rows += [np.zeros(k), np.concatenate([np.zeros(32), rng.standard_normal(k - 32)]),
                 rng.choice([-65000.0, 65000.0], k), rng.standard_normal(k) * 1e-7,
                 np.where(np.arange(k) == 5, 300.0, rng.standard_normal(k) * 1e-3)]
        w[name][:len(rows)] = np.stack(rows)
    path = tmp_path_factory.mktemp("edge") / "llama"
    path.mkdir()
    for f in models["llama"].iterdir():
        if f.name != "model.safetensors":
            (path / f.name).write_bytes(f.read_bytes())
    hf_models.save_safetensors(w, path / "model.safetensors", "F32")
    return path, w


@pytest.mark.parametrize("quant", list(QUANTS))
def test_edge_values_quantise_like_numpy(quant, edge_model, tmp_path):
    path, weights = edge_model
    art_path = tmp_path / "edge.ingot"
    proc = ingot("compile", path, "-o", art_path, *COMPILE_FLAGS, *QUANTS[quant][0])
    assert proc.returncode == 0, describe(proc)
    check_bytes(Artifact(art_path), weights, *QUANTS[quant][1:])


@pytest.mark.parametrize("name", MODELS)
def test_norms_embeddings_and_biases_keep_their_dtype(name, compiled, models):
    art = compiled(name, *QUANTS["int4"][0])
    dtype = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[
        hf_models.CASES[name]["dtype"]]
    plain = [t for t in art.info["tensors"] if "@" not in t["name"]]
    assert {t["dtype"] for t in plain} == {dtype}
    assert "model.embed_tokens.weight" in {t["name"] for t in plain}
    assert all(not re.search(r"proj\.weight", t["name"]) for t in plain)
    tied = hf_models.CASES[name].get("config", {}).get("tie_word_embeddings", False)
    lm_head = art.info["lm_head"]
    assert lm_head == {"tensor": ("model.embed_tokens.weight" if tied else "lm_head.weight")
                       + "@q4g32", "format": "q4", "group_size": 32}


# -----------------------------------------------------------------------------
# Logits
# -----------------------------------------------------------------------------

def ingot_logits(art, prompt, tmp_path):
    out = tmp_path / "logits.npy"
    proc = ingot("generate", art.path, "--prompt-tokens", ",".join(map(str, prompt)),
                 "--max-new-tokens", "1", "--temperature", "0", "--logits-out", out,
                 timeout=300)
    assert proc.returncode == 0, describe(proc)
    return np.load(out).astype(np.float64)


def relative_error(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def random_prompt(art, key):
    rng = np.random.default_rng(sum(map(ord, key)))
    vocab = art.info["outputs"][0]["shape"][-1]
    return [int(t) for t in rng.integers(3, vocab, size=19)]


@pytest.mark.parametrize("quant", list(QUANTS))
@pytest.mark.parametrize("name", MODELS)
def test_logits_match_the_dequantised_reference(name, quant, compiled, models, tmp_path):
    flags, fmt, _ = QUANTS[quant]
    art = compiled(name, *flags)
    prompt = random_prompt(art, name + quant)
    actual = ingot_logits(art, prompt, tmp_path)
    exact = dequantised_reference(models[name], art).logits(prompt)[-1]
    original = hf_reference.load(models[name]).logits(prompt)[-1]
    err, err_orig = relative_error(actual, exact), relative_error(actual, original)
    print(f"{name} {quant}: dequantised {err:.3g}, original {err_orig:.3g}")
    assert err < DEQUANT_RTOL, f"{name} {quant}: vs dequantised weights {err:.3g}"
    assert err_orig < ORIGINAL_RTOL[fmt], f"{name} {quant}: vs original {err_orig:.3g}"
