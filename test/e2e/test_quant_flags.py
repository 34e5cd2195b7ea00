"""`ingot compile --quant` flags and `inspect`'s account of quantised
weights: --quant-exclude, refused flags, the weights section's byte
accounting and per-channel formats, the int4 lm_head at int8, and a graph
with nothing to quantise.
"""
import numpy as np
import pytest

from ingot_testlib import describe, ingot
from quant_testlib import (LINEARS, MODELS, QUANTS, compiled,  # noqa: F401
                           expected_quantised, hf_models, models, source)
from test_quant_format import quantize

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
