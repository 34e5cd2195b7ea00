"""Fusion and weight packing change how a step runs, never what it computes.

Every tiny HF model (test/fixtures/hf_models.py) is compiled twice: with
every fusion pass and packed weights (`--pack-weights=on`; fusion is the
default) and with `--fusion=off --pack-weights=off`. Both must match the float64 reference (test_llm.py's
tolerance) and each other to 1e-5; the fused kernels are designed to repeat
the unfused arithmetic exactly, so in practice the logits are identical.
The fused plan must also really be smaller and hold the fused kernels.
"""
import collections
import json
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]
UNFUSED = ["--fusion=off", "--pack-weights=off"]
NAMES = ["llama", "llama_tied_bf16", "llama3_scaling", "qwen2", "mistral",
         "phi3", "gpt2", "sharded"]
# What the fused plan of each family must contain instead of the parts.
FUSED_KERNELS = {"gpt2": {"add_layer_norm", "paged_attention"}}
LLAMA_FUSED = {"add_rms_norm", "rope_paged_attention"}
GONE = {"rope", "add"}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return hf_models.make_all(tmp_path_factory.mktemp("hf"))


@pytest.fixture(scope="module")
def artifacts(models, tmp_path_factory):
    out = tmp_path_factory.mktemp("artifacts")
    built = {}
    for name in NAMES:
        for mode, flags in (("fused", ["--pack-weights=on"]),
                            ("unfused", UNFUSED)):
            art = out / f"{name}-{mode}.ingot"
            proc = ingot("compile", models[name], "-o", art, *COMPILE_FLAGS,
                         *flags, timeout=300)
            assert proc.returncode == 0, describe(proc)
            built[name, mode] = art
    return built


def kernels(art):
    proc = ingot("inspect", art, "--json")
    assert proc.returncode == 0, describe(proc)
    return collections.Counter(s["kernel"] for s in json.loads(proc.stdout)["steps"])


def logits(art, prompt, path):
    proc = ingot("generate", art, "--json", "--prompt-tokens",
                 ",".join(map(str, prompt)), "--max-new-tokens", "1",
                 "--temperature", "0", "--logits-out", path, timeout=300)
    assert proc.returncode == 0, describe(proc)
    return np.load(path).astype(np.float64)


def greedy(art, prompt, n):
    proc = ingot("generate", art, "--json", "--prompt-tokens",
                 ",".join(map(str, prompt)), "--max-new-tokens", str(n),
                 "--temperature", "0", timeout=300)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)["tokens"]


def rel(a, b):
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


@pytest.mark.parametrize("name", NAMES)
def test_fused_plan_is_smaller(name, artifacts):
    fused, unfused = kernels(artifacts[name, "fused"]), kernels(artifacts[name, "unfused"])
    assert sum(fused.values()) < sum(unfused.values()), (fused, unfused)
    want = FUSED_KERNELS.get(name, LLAMA_FUSED)
    assert want <= set(fused), f"{name}: {dict(fused)}"
    assert not GONE & set(fused), f"{name}: unfused kernels left: {dict(fused)}"
    # Q/K/V merge into one linear per layer, gate/up (or GPT-2's c_attn
    # parts) into one: fewer linears than before.
    assert fused["linear"] < unfused["linear"], (fused, unfused)


@pytest.mark.parametrize("name", NAMES)
def test_fused_and_unfused_logits_agree(name, models, artifacts, tmp_path):
    ref = hf_reference.load(models[name])
    vocab = json.loads((models[name] / "config.json").read_text())["vocab_size"]
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    prompt = [int(t) for t in rng.integers(3, vocab, size=21)]
    fused = logits(artifacts[name, "fused"], prompt, tmp_path / "f.npy")
    unfused = logits(artifacts[name, "unfused"], prompt, tmp_path / "u.npy")
    expected = ref.logits(prompt)[-1]
    assert rel(fused, unfused) < 1e-5
    assert rel(fused, expected) < 1e-4
    assert rel(unfused, expected) < 1e-4


@pytest.mark.parametrize("name", ["llama", "phi3", "gpt2"])
def test_fused_and_unfused_decode_the_same_tokens(name, artifacts):
    prompt = [5, 17, 42, 9, 77, 31, 8, 12, 64, 3, 21]
    assert greedy(artifacts[name, "fused"], prompt, 24) == \
        greedy(artifacts[name, "unfused"], prompt, 24)


def test_compile_to_fused_shows_the_fused_ops(models, tmp_path):
    proc = ingot("compile", models["llama"], "-o", tmp_path / "x.ingot",
                 "--compile-to=fused", *COMPILE_FLAGS)
    assert proc.returncode == 0, describe(proc)
    for op in ("ingot.add_rms_norm", "ingot.rope_paged_attention",
               'parts = ["model.layers.0.self_attn.q_proj.weight"'):
        assert op in proc.stdout, op
    assert "ingot.rope " not in proc.stdout
    off = ingot("compile", models["llama"], "-o", tmp_path / "x.ingot",
                "--compile-to=fused", "--fusion=off", *COMPILE_FLAGS)
    assert off.returncode == 0, describe(off)
    assert "ingot.add_rms_norm" not in off.stdout and "ingot.rope " in off.stdout


def test_packed_weights_are_recorded_in_the_tensor_table(artifacts):
    """16-bit linear weights are packed (measured faster); f32 ones and the
    tied embedding (also read by the gather) stay row-major."""
    proc = ingot("inspect", artifacts["llama_tied_bf16", "fused"], "--json")
    tensors = json.loads(proc.stdout)["tensors"]
    packed = [t["name"] for t in tensors if t["layout"] == "nk16"]
    assert packed and all(n.endswith("@nk16") for n in packed), packed
    assert not any("embed_tokens" in n for n in packed), packed
    for name in ("llama", "llama_tied_bf16"):
        proc = ingot("inspect", artifacts[name, "unfused"], "--json")
        assert {t["layout"] for t in json.loads(proc.stdout)["tensors"]} == {"row-major"}
    proc = ingot("inspect", artifacts["llama", "fused"], "--json")
    assert {t["layout"] for t in json.loads(proc.stdout)["tensors"]} == {"row-major"}


@pytest.mark.parametrize("value", ["maybe", ""])
def test_bad_fusion_flag(value, models, tmp_path):
    proc = ingot("compile", models["llama"], "-o", tmp_path / "x.ingot",
                 f"--fusion={value}")
    assert proc.returncode == 2
    assert "--fusion takes on or off" in proc.stderr
