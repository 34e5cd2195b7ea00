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
    with the original weights, within the format's own error;
  - --quant-exclude, bad flags and inspect's byte accounting behave.
"""
import json
import re
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot
from test_quant_format import dequantize, quantize, row_bytes

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

MODELS = ["llama", "llama_tied_bf16", "qwen2"]
# setting -> (compile flags, stored format, group; 0 = K, per channel)
QUANTS = {
    "int8": (["--quant", "int8"], "q8", 32),
    # int4 keeps its lm_head at int8 by default (test_int4_lm_head_is_int8);
    # `same` puts it in the setting's format, which the checks below expect.
    "int4": (["--quant", "int4", "--quant-scheme", "sym", "--quant-lm-head", "same"],
             "q4", 32),
    "int4-asym": (["--quant", "int4", "--quant-lm-head", "same"], "q4m", 32),
    "int4-g48": (["--quant", "int4", "--quant-scheme", "sym", "--group-size", "48",
                  "--quant-lm-head", "same"], "q4", 48),  # K=64: 48+16
    "int8-channel": (["--quant", "int8", "--group-size", "0"], "q8", 0),
    "fp8": (["--quant", "fp8"], "f8e4m3", 0),
}
COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]
LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

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
# Fixtures: models, artifacts (compiled once per model and setting)
# -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf")
    return {name: hf_models.make_model(name, out) for name in MODELS}


@pytest.fixture(scope="module")
def source(models):
    """Source weights as float32 (exact: every stored F32/F16/BF16 value is
    one), keyed by safetensors name."""
    return {name: {n: w.astype(np.float32) for n, w in
                   hf_reference.load_weights(path).items()}
            for name, path in models.items()}


class Artifact:
    def __init__(self, path):
        self.path = path
        self.data = path.read_bytes()
        proc = ingot("inspect", path, "--json")
        assert proc.returncode == 0, describe(proc)
        self.info = json.loads(proc.stdout)
        self.weights_offset = next(s["offset"] for s in self.info["sections"]
                                   if s["name"] == "weights")

    def tensor_bytes(self, t):
        at = self.weights_offset + t["offset"]
        return np.frombuffer(self.data[at:at + t["bytes"]], dtype=np.uint8)

    def quantised(self):
        """(tensor entry, source parts, format, group) of each quantised tensor."""
        for t in self.info["tensors"]:
            if "@" in t["name"]:
                base, suffix = t["name"].rsplit("@", 1)
                fmt, group = re.fullmatch(r"(q8|q4m|q4|f8e4m3)g(\d+)", suffix).groups()
                yield t, base.split("+"), fmt, int(group)


@pytest.fixture(scope="module")
def compiled(models, tmp_path_factory):
    out, cache = tmp_path_factory.mktemp("artifacts"), {}

    def get(name, *flags):
        key = (name,) + flags
        if key not in cache:
            path = out / f"{name}-{len(cache)}.ingot"
            proc = ingot("compile", models[name], "-o", path, *COMPILE_FLAGS, *flags,
                         timeout=300)
            assert proc.returncode == 0, describe(proc)
            cache[key] = Artifact(path)
        return cache[key]
    return get


def expected_quantised(weights):
    """Source names that must be quantised: every linear weight, and the
    lm_head (the tied embedding's copy when there is no lm_head.weight)."""
    names = {n for n in weights if n.split(".")[-2] in LINEARS and n.endswith(".weight")}
    return names | {"lm_head.weight" if "lm_head.weight" in weights
                    else "model.embed_tokens.weight"}


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

def dequantised_reference(model_dir, art):
    """The float64 reference with every quantised weight replaced by what its
    artifact bytes stand for (merged tensors split back by source rows). A
    tied model's embedding stays original: were the gather reading the
    quantised copy, its logits would miss DEQUANT_RTOL by far."""
    ref = hf_reference.load(model_dir)
    for t, parts, fmt, group in art.quantised():
        n, k = t["shape"]
        w = dequantize(fmt, art.tensor_bytes(t).reshape(n, -1), k, group)
        rows = np.cumsum([ref.w[p].shape[0] for p in parts])[:-1]
        for p, piece in zip(parts, np.split(w, rows)):
            if len(parts) == 1 and p == "model.embed_tokens.weight":
                ref.lm_head = piece          # tied: the gather keeps the original
            else:
                ref.w[p] = piece
                if p == "lm_head.weight":
                    ref.lm_head = piece
    return ref


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


# -----------------------------------------------------------------------------
# Flags and inspect
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["llama", "llama_tied_bf16"])
def test_exclude_lm_head(name, compiled):
    art = compiled(name, "--quant", "int8", "--quant-exclude", "lm_head")
    tensor, plain = {"llama": ("lm_head.weight", "float32"),
                     "llama_tied_bf16": ("model.embed_tokens.weight", "bfloat16")}[name]
    assert art.info["lm_head"] == {"tensor": tensor, "format": plain}
    quantised = {p for _, parts, _, _ in art.quantised() for p in parts}
    assert len(quantised) == 2 * len(LINEARS)
    assert not quantised & {"lm_head.weight", "model.embed_tokens.weight"}


def test_exclude_mlp(compiled, source):
    art = compiled("llama", "--quant", "int4", "--quant-exclude", "*mlp*")
    quantised = {p for _, parts, _, _ in art.quantised() for p in parts}
    assert quantised == {n for n in expected_quantised(source["llama"]) if ".mlp." not in n}
    names = {t["name"] for t in art.info["tensors"]}
    assert "model.layers.0.mlp.down_proj.weight" in names


@pytest.mark.parametrize("args, flag", [
    (["--quant", "int3"], "--quant"),
    (["--quant", "int4", "--quant-scheme", "foo"], "--quant-scheme"),
    (["--quant", "int4", "--quant-lm-head", "int3"], "--quant-lm-head"),
    (["--quant", "int8", "--group-size", "-1"], "--group-size"),
    (["--quant", "int8", "--quant-scheme", "asym"], "--quant-scheme"),
])
def test_bad_quant_flags(args, flag, models, tmp_path):
    out = tmp_path / "bad.ingot"
    proc = ingot("compile", models["llama"], "-o", out, *args)
    assert proc.returncode != 0, describe(proc)
    assert flag in proc.stderr, describe(proc)
    assert not out.exists()


WEIGHT_ALIGNMENT = 64  # bytes; each tensor of the weights section starts on one


@pytest.mark.parametrize("quant, fmt, bpw", [("int8", "q8", 8.5), ("int4", "q4", 4.5),
                                             ("int4-asym", "q4m", 5.0)])
@pytest.mark.parametrize("name", MODELS)
def test_weight_formats_account_for_every_byte(name, quant, fmt, bpw, compiled):
    """weight_formats sums the tensors' bytes; the weights section is those
    tensors in order, each starting on the alignment (so the section also
    holds padding: 8..32 bytes after the tied model's quantised embedding
    copy, whose size is no multiple of 64)."""
    info = compiled(name, *QUANTS[quant][0]).info
    section = next(s for s in info["sections"] if s["name"] == "weights")
    tensors = sorted(info["tensors"], key=lambda t: t["offset"])
    end = 0
    for t in tensors:
        assert t["offset"] == -(-end // WEIGHT_ALIGNMENT) * WEIGHT_ALIGNMENT, t["name"]
        end = t["offset"] + t["bytes"]
    assert end == section["size"]
    formats = info["weight_formats"]
    assert sum(f["bytes"] for f in formats) == sum(t["bytes"] for t in tensors)
    for f in formats:
        mine = [t for t in tensors if t["dtype"] == f["format"]]
        assert f["tensors"] == len(mine)
        assert f["bytes"] == sum(t["bytes"] for t in mine)
        assert f["elements"] == sum(int(np.prod(t["shape"])) for t in mine)
    q = next(f for f in formats if f["format"] == fmt)
    assert (q["group_size"], q["bits_per_weight"]) == (32, bpw)
    assert all(t["bits_per_weight"] == bpw for t in tensors if t["dtype"] == fmt)


@pytest.mark.parametrize("quant, fmt", [("int8-channel", "q8"), ("fp8", "f8e4m3")])
def test_weight_formats_say_per_channel(quant, fmt, compiled):
    """A format whose every tensor is one group per row (K = 64 and 128
    here) is "channel" in weight_formats, not "mixed"."""
    info = compiled("llama", *QUANTS[quant][0]).info
    q = next(f for f in info["weight_formats"] if f["format"] == fmt)
    assert q["group_size"] == "channel"
    assert {t["group_size"] for t in info["tensors"] if t["dtype"] == fmt} == {64, 128}
    text = ingot("inspect", compiled("llama", *QUANTS[quant][0]).path).stdout
    assert any(line.split()[:2] == [fmt, "channel"] for line in text.splitlines()), text


def test_quant_on_a_graph_without_hf_linears_warns(tmp_path):
    """An ONNX MatMul by a weight becomes a "kn" linear, which --quant does
    not touch yet: the compile says so instead of staying silent."""
    from ingot_testlib import make_model, node, save_model
    w = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float32)
    model = make_model([node("MatMul", ["x", "w"], ["y"])],
                       [("x", np.float32, [4, 64])], ["y"], {"w": w})
    path = save_model(model, tmp_path / "matmul.onnx")
    proc = ingot("compile", path, "-o", tmp_path / "m.ingot", "--quant", "int8")
    assert proc.returncode == 0, describe(proc)
    assert "--quant int8 found no weight to quantise" in proc.stderr, describe(proc)


@pytest.mark.parametrize("name", MODELS)
def test_int4_lm_head_is_int8(name, compiled, source):
    """By default --quant int4 stores the lm_head as q8 g32 (as llama.cpp's
    4-bit files keep their output matrix at higher precision), byte for
    byte numpy's q8 of the source; the other linears stay q4m."""
    art = compiled(name, "--quant", "int4")
    tied = hf_models.CASES[name].get("config", {}).get("tie_word_embeddings", False)
    head = "model.embed_tokens.weight" if tied else "lm_head.weight"
    assert art.info["lm_head"] == {"tensor": head + "@q8g32", "format": "q8",
                                   "group_size": 32}
    formats = {t["dtype"] for t in art.info["tensors"] if "@" in t["name"]}
    assert formats == {"q4m", "q8"}
    for t, parts, fmt, group in art.quantised():
        if fmt != "q8":
            continue
        assert parts == [head]
        src = source[name][head]
        want = quantize("q8", src, 32)
        assert np.array_equal(art.tensor_bytes(t).reshape(want.shape), want)
