"""SmolLM2-135M compiled straight from its Q4_1 GGUF (label `slow`).

The bundled GGUF is the model; scripts/prepare_smollm2.py's directory holds
the same values dequantised to f32. Compiled from the GGUF, the Q4_1 and
Q8_0 blocks are kept, so the artifact is about a quarter of the f32 one and
must compute the same function with the weight-only kernels (the
default, --act-quant none):
- greedy continuations equal the directory artifact's token for token
  (both compute on identical weight values; only f32 summation order
  differs, far below SmolLM2's logit gaps);
- the prompt's logits match the float64 reference of the dequantised
  weights to 1e-4 (the bound test_smollm2.py holds the f32 artifact to);
- the tokenizer read from the GGUF metadata gives the ids of `tokenizers`
  on the converted tokenizer.json over the varied corpus, and chat works.
Compiled with --act-quant int8 (llama.cpp's arithmetic), its perplexity
stays within 1% of the weight-only artifact's (measured +0.44% on GPL-3).
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot
from test_smollm2 import (PROMPTS, artifact, generate,  # noqa: F401 (fixtures)
                          model_dir, reference)
from test_smollm2_quant import GPL3, perplexity


@pytest.fixture(scope="module")
def gguf_path():
    proc = subprocess.run(
        [sys.executable, str(SOURCE_DIR / "scripts" / "prepare_smollm2.py"),
         "--gguf", str(SOURCE_DIR / ".cache" / "models")],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def gguf_artifact(gguf_path, tmp_path_factory):
    art = tmp_path_factory.mktemp("smollm2_gguf") / "q4_1.ingot"
    proc = ingot("compile", gguf_path, "-o", art, timeout=900)
    assert proc.returncode == 0, describe(proc)
    # Q4_1 and Q8_0 are kept exactly: nothing to convert, nothing to note.
    assert "note:" not in proc.stderr, proc.stderr
    return art


def test_artifact_keeps_the_4_bit_blocks(gguf_artifact, artifact):  # noqa: F811
    size, f32_size = gguf_artifact.stat().st_size, artifact.stat().st_size
    assert size < 100 << 20, size
    assert size < f32_size / 4, (size, f32_size)
    proc = ingot("inspect", gguf_artifact)
    assert proc.returncode == 0, describe(proc)
    assert "model.embed_tokens.weight@q8g32" in proc.stdout
    assert "mlp.down_proj.weight@q4mg32" in proc.stdout


@pytest.mark.parametrize("prompt", PROMPTS, ids=["fact", "code", "story"])
def test_greedy_equals_the_directory_artifact(gguf_artifact, artifact, prompt):  # noqa: F811
    ref = generate(artifact, "--prompt", prompt, "--max-new-tokens", "48")
    out = generate(gguf_artifact, "--prompt", prompt, "--max-new-tokens", "48")
    assert out["prompt_tokens"] == ref["prompt_tokens"]
    assert out["tokens"] == ref["tokens"]


def test_prompt_logits_match_reference(gguf_artifact, reference, tmp_path):  # noqa: F811
    out_file = tmp_path / "logits.npy"
    out = generate(gguf_artifact, "--prompt", PROMPTS[1], "--max-new-tokens", "1",
                   "--logits-out", out_file)
    actual = np.load(out_file).astype(np.float64)
    expected = reference.logits(out["prompt_tokens"])[-1]
    err = np.linalg.norm(actual - expected) / np.linalg.norm(expected)
    assert err < 1e-4, err


def test_tokenizer_and_chat_from_the_metadata(gguf_artifact, model_dir, tmp_path):  # noqa: F811
    from tokenizers import Tokenizer
    from test_tokenizer import CASES, check_text
    hf = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    for text in CASES:
        check_text(hf, gguf_artifact, text, tmp_path)
    out = generate(gguf_artifact, "--chat", "--prompt",
                   "What is the capital of France?", "--max-new-tokens", "32")
    assert "Paris" in out["text"], out["text"]
    assert out["finish_reason"] == "stop"


@pytest.mark.skipif(not GPL3.is_file(), reason="no /usr/share/common-licenses/GPL-3")
def test_int8_activations_stay_close(gguf_path, gguf_artifact, tmp_path):
    art = tmp_path / "int8-activations.ingot"
    proc = ingot("compile", gguf_path, "-o", art, "--act-quant", "int8", timeout=900)
    assert proc.returncode == 0, describe(proc)
    proc = ingot("inspect", art, "--json")
    assert proc.returncode == 0, describe(proc)
    assert "q16" in proc.stdout
    base, ppl = perplexity(gguf_artifact), perplexity(art)
    assert base * 0.99 <= ppl <= base * 1.01, (ppl, base)
