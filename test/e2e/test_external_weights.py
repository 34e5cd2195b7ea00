"""`ingot compile DIR --weights=external` and `--weights DIR` at load.

An artifact compiled this way holds no weight bytes: it names the tensors of
the model directory's safetensors files and how each weight is made from
them (merged Q/K/V and gate/up rows, GPT-2's column slices, Gemma's 1 + w,
quantisation, int8-activation panels). The loader makes the same bytes, so
the logits must equal the embedded artifact's bit for bit: a difference of
one ulp means a transform was applied differently, which is why the
comparison is exact rather than within a tolerance. The embedded artifacts
themselves are checked against the float64 reference in test_llm.py.

Each way the weights can differ from what was compiled (missing file or
tensor, another dtype or shape, a damaged header, a NaN) must be refused at
load with exit 1 and a message naming the file and tensor.
"""
import json
import shutil
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, assert_clean_failure, describe, ingot
from test_hf_errors import edit_header, read_st, write_st

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import quantized_checkpoints  # noqa: E402
from hf_reference_weights import load_weights  # noqa: E402

PROMPT = "5,9,14,3,22,7,11,30,40,2,17,8,19"
Q_PROJ = "model.layers.0.self_attn.q_proj.weight"

# Each case exercises a transform: plain F32 weights and merged projections
# (llama), rows of fused qkv/gate_up (phi3), column slices of a Conv1D
# weight (gpt2), 1 + w in f32 from BF16 (gemma3), F16 with biases (qwen2),
# two shard files (sharded); then quantising (embedding tables too) and
# packing on top.
CASES = [
    ("llama", ()),
    ("phi3", ()),
    ("gpt2", ()),
    ("gemma3", ()),
    ("qwen2", ()),
    ("sharded", ()),
    ("llama", ("--quant", "int4")),
    ("gemma3", ("--quant", "int8", "--group-size", "32")),
    ("phi3", ("--quant", "fp8")),
    ("llama", ("--quant", "int4", "--act-quant", "int8")),
    ("qwen2", ("--quant", "int8", "--group-size", "0", "--act-quant", "int8")),
    ("qwen2", ("--pack-weights=on",)),
    # Quantised embedding tables (--quant-embed): gemma3's tied BF16 table.
    ("gemma3", ("--quant", "int8", "--quant-embed", "same")),
    ("qwen2", ("--quant", "int4", "--quant-embed", "int8", "--act-quant", "int8")),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("ext_models")
    names = sorted({name for name, _ in CASES})
    return {name: hf_models.make_model(name, root) for name in names}


def compile_ok(model, out, *flags):
    proc = ingot("compile", model, "-o", out, *flags)
    assert proc.returncode == 0, describe(proc)
    return out


def logits(art, tmp_path, *flags):
    out = tmp_path / f"{art.stem}-logits.npy"
    proc = ingot("generate", art, "--prompt-tokens", PROMPT,
                 "--max-new-tokens", "1", "--temperature", "0",
                 "--logits-out", out, *flags)
    assert proc.returncode == 0, describe(proc)
    return np.load(out)


@pytest.mark.parametrize("name,flags", CASES,
                         ids=[f"{n}{''.join(f)}" for n, f in CASES])
def test_logits_equal_embedded(models, tmp_path, name, flags):
    embedded = compile_ok(models[name], tmp_path / "e.ingot", *flags)
    external = compile_ok(models[name], tmp_path / "x.ingot",
                          "--weights=external", *flags)
    assert external.stat().st_size < embedded.stat().st_size / 4
    want = logits(embedded, tmp_path)
    got = logits(external, tmp_path, "--weights", models[name])
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want), (
        f"max |diff| {np.abs(got - want).max():.3g}: a transform differs")


def test_artifact_is_deterministic_and_lists_its_sources(models, tmp_path):
    a = compile_ok(models["sharded"], tmp_path / "a.ingot", "--weights=external")
    b = compile_ok(models["sharded"], tmp_path / "b.ingot", "--weights=external")
    assert a.read_bytes() == b.read_bytes()
    proc = ingot("inspect", a, "--json")
    assert proc.returncode == 0, describe(proc)
    ext = json.loads(proc.stdout)["external_weights"]
    index = json.loads((models["sharded"] / "model.safetensors.index.json")
                       .read_text())["weight_map"]
    assert ext["files"] == sorted(set(index.values()))
    assert {t["name"] for t in ext["source_tensors"]} == set(index)
    for t in ext["source_tensors"]:
        assert t["file"] == index[t["name"]]
    text = ingot("inspect", a).stdout
    assert "external weights" in text and "(external)" in text


def test_compile_reads_headers_only(models, tmp_path):
    """A NaN in the data is not seen by an external compile (it reads no
    weight bytes) but is refused at load, naming the file and tensor."""
    model = shutil.copytree(models["llama"], tmp_path / "llama")
    st = model / "model.safetensors"
    header, data = read_st(st)
    begin = header[Q_PROJ]["data_offsets"][0]
    data = bytearray(data)
    data[begin + 40:begin + 44] = np.float32(np.nan).tobytes()
    write_st(st, header, bytes(data))
    proc = ingot("compile", model, "-o", tmp_path / "e.ingot")
    assert_clean_failure(proc)
    assert "NaN" in proc.stderr
    art = compile_ok(model, tmp_path / "x.ingot", "--weights=external")
    proc = ingot("generate", art, "--weights", model, "--prompt-tokens", "5,9",
                 "--max-new-tokens", "1")
    assert_clean_failure(proc)
    for needle in ("model.safetensors", Q_PROJ, "NaN at element 10"):
        assert needle in proc.stderr, describe(proc)


@pytest.fixture
def external(models, tmp_path):
    """(a private copy of llama, its external artifact)."""
    model = shutil.copytree(models["llama"], tmp_path / "llama")
    return model, compile_ok(model, tmp_path / "x.ingot", "--weights=external")


def expect_load_error(art, weights, *needles):
    args = ["generate", art, "--prompt-tokens", "5,9", "--max-new-tokens", "1"]
    if weights is not None:
        args += ["--weights", weights]
    proc = ingot(*args)
    assert_clean_failure(proc)
    for needle in needles:
        assert needle in proc.stderr, f"missing {needle!r}\n" + describe(proc)


def test_refused_without_weights_dir(external):
    _, art = external
    expect_load_error(art, None, "--weights=external", "--weights DIR",
                      "model.safetensors")


def test_refused_on_embedded_artifact(models, tmp_path):
    art = compile_ok(models["llama"], tmp_path / "e.ingot")
    expect_load_error(art, models["llama"], "holds its own weights")


def test_refused_missing_file(external, tmp_path):
    _, art = external
    empty = tmp_path / "empty"
    empty.mkdir()
    expect_load_error(art, empty, f"{empty}/model.safetensors",
                      "cannot open")


def test_refused_missing_tensor(external):
    model, art = external
    edit_header(model / "model.safetensors",
                lambda h: h.update({Q_PROJ + ".renamed": h.pop(Q_PROJ)}))
    expect_load_error(art, model, "model.safetensors", f"no tensor '{Q_PROJ}'")


def test_refused_other_shape(external):
    """k_proj [32, 64] stored as [64, 32]: same bytes, another shape."""
    model, art = external
    k_proj = Q_PROJ.replace("q_proj", "k_proj")
    def transpose(h):
        h[k_proj]["shape"] = h[k_proj]["shape"][::-1]
    edit_header(model / "model.safetensors", transpose)
    expect_load_error(art, model, k_proj, "is F32 [64, 32]",
                      "compiled from F32 [32, 64]", "not the weights")


def test_refused_other_dtype(external):
    """The same values saved as F16: the artifact was compiled for F32."""
    model, art = external
    tensors = load_weights(model)
    (model / "model.safetensors").unlink()
    hf_models.save_weights(tensors, model, "F16")
    expect_load_error(art, model, "model.safetensors", "is F16",
                      "compiled from F32")


def test_refused_damaged_header(external):
    model, art = external
    st = model / "model.safetensors"
    raw = st.read_bytes()
    st.write_bytes(raw[:8] + b"{not json" + raw[17:])
    expect_load_error(art, model, "model.safetensors", "not a JSON object")


def test_refused_truncated_data(external):
    model, art = external
    st = model / "model.safetensors"
    st.write_bytes(st.read_bytes()[:-100])
    expect_load_error(art, model, "model.safetensors", "data_offsets")


def test_compile_refuses_non_safetensors_sources(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    proc = ingot("compile", gguf, "-o", tmp_path / "g.ingot",
                 "--weights=external")
    assert_clean_failure(proc)
    assert "this GGUF file's weights must be embedded" in proc.stderr
    case = quantized_checkpoints.make_case("gptq_sym4", tmp_path / "q")
    proc = ingot("compile", case.model, "-o", tmp_path / "q.ingot",
                 "--weights=external")
    assert_clean_failure(proc)
    assert "cannot be kept outside the artifact" in proc.stderr
    assert not (tmp_path / "q.ingot").exists()
