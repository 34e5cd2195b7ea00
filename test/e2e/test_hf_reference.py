"""Checks of the float64 reference that ingot's LLM tests compare against.

test/fixtures/hf_reference.py is the yardstick for the Hugging Face import,
so it gets checked before it is trusted:
  - the full-prompt forward (one masked attention matrix) and an
    incremental decode (one token at a time against an explicit KV cache,
    sliced windows, per-head loops) agree to 1e-10 on every tiny model;
  - greedy decoding of every tiny model depends on its context (not one
    repeated token), so logit comparisons are meaningful;
  - Mistral's sliding window changes exactly the positions it should,
    Phi3's fused projections split as unfused Llama ones, shards load.
The same checks on the real SmolLM2 weights live in test_smollm2.py, which
prepares the model.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

PROMPT = "The capital of France is Paris, and 2718 numbers run to the sea."


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return hf_models.make_all(tmp_path_factory.mktemp("hf_models"))


def _prompt_ids(path, text=PROMPT):
    return Tokenizer.from_file(str(Path(path) / "tokenizer.json")).encode(text).ids


@pytest.mark.parametrize("name", list(hf_models.CASES))
def test_incremental_decode_matches_full_forward(models, name):
    ids = _prompt_ids(models[name])
    assert len(ids) > 16, "prompt must outrun mistral's window of 8"
    model = hf_reference.load(models[name])
    full = model.logits(ids)
    step = model.logits_incremental(ids)
    assert full.shape == (len(ids), model.lm_head.shape[0])
    np.testing.assert_allclose(step, full, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", list(hf_models.CASES))
def test_greedy_depends_on_context(models, name):
    model = hf_reference.load(models[name])
    out = model.greedy(_prompt_ids(models[name]), 16)
    assert len(out) == 16
    assert len(set(out)) >= 4, f"{name} greedy output is degenerate: {out}"


def test_mistral_sliding_window_masks_old_positions(models):
    """Positions < window see the whole prefix either way; later ones differ."""
    model = hf_reference.load(models["mistral"])
    ids = _prompt_ids(models["mistral"])
    windowed = model.logits(ids)
    model.windows = [0] * model.num_layers
    full = model.logits(ids)
    np.testing.assert_allclose(windowed[:8], full[:8], rtol=0, atol=1e-12)
    assert np.abs(windowed[8:] - full[8:]).max(axis=-1).min() > 1e-6


def test_phi3_fused_projections_split_like_llama(models):
    """Phi3's qkv_proj rows are [q; k; v] and gate_up_proj rows [gate; up]:
    the same weights, unfused, as a Llama give the same logits."""
    phi3 = hf_reference.load(models["phi3"])
    weights = {}
    q, kv = phi3.heads * phi3.head_dim, phi3.kv_heads * phi3.head_dim
    for name, w in phi3.w.items():
        if name.endswith("qkv_proj.weight"):
            parts = np.split(w, [q, q + kv])
            weights.update({name.replace("qkv_proj", p): m
                            for p, m in zip(("q_proj", "k_proj", "v_proj"), parts)})
        elif name.endswith("gate_up_proj.weight"):
            gate, up = np.split(w, 2)
            weights[name.replace("gate_up_proj", "gate_proj")] = gate
            weights[name.replace("gate_up_proj", "up_proj")] = up
        else:
            weights[name] = w
    config = dict(hf_models.llama_like_config(hf_models.CASES["llama"],
                                              phi3.lm_head.shape[0],
                                              {"bos_token_id": 0, "eos_token_id": 0}))
    llama = hf_reference.LlamaFamily(config, weights)
    ids = _prompt_ids(models["phi3"])
    np.testing.assert_allclose(llama.logits(ids), phi3.logits(ids), rtol=0, atol=1e-12)


def test_sharded_model_loads_every_tensor(models):
    files = hf_reference.weight_files(models["sharded"])
    assert [f.name for f in files] == ["model-00001-of-00002.safetensors",
                                       "model-00002-of-00002.safetensors"]
    sharded = hf_reference.load_weights(models["sharded"])
    assert set(sharded) == set(hf_reference.load_weights(models["llama"]))


def test_bf16_and_f16_weights_are_widened_exactly(models):
    """Every stored value must survive as a float64 it exactly equals."""
    for name, dtype in (("llama_tied_bf16", np.float32), ("qwen2", np.float16)):
        w = hf_reference.load_weights(models[name])["model.embed_tokens.weight"]
        assert np.array_equal(w.astype(dtype).astype(np.float64), w)
    bf16 = hf_reference.load_weights(models["llama_tied_bf16"])["model.norm.weight"]
    assert not np.any(bf16.astype(np.float32).view(np.uint32) & 0xFFFF)


# -----------------------------------------------------------------------------
# SmolLM2-135M-Instruct (only when prepared)
# -----------------------------------------------------------------------------

# 139 tokens of encyclopedic English. Mean next-token NLL: 2.44 with the
# converter's Q/K rows in HF order, 4.42 with llama.cpp's order left in.
