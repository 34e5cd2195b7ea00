"""`ingot perplexity`: sliding-window perplexity against a float64 reference.

The expected figure is computed here from test/fixtures/hf_reference.py's
float64 logits with the same windowing (Hugging Face's "Perplexity of
fixed-length models"): windows of `context` tokens every `stride` tokens,
each run from position 0 and scoring only the tokens the previous window did
not score (never its own first token). The text's ids come from the
`tokenizers` package, independently of ingot's tokenizer.

The artifacts are compiled with a small step (8 tokens, 4 sequences, blocks
of 4) so that a window takes several steps, its unscored context spans
several blocks and steps, and its scored rows come 3-4 to a step: every way
the command splits a window is exercised.

Tolerance: ingot's logits are within ~1e-6 relative of the reference (f32
arithmetic, see test_llm.py); an NLL is a log-sum-exp minus one logit, so
each token's NLL is off by ~1e-6 absolute, and the perplexity's relative
error is the mean NLL's absolute error, where those errors partly cancel
(about 2e-8 is what these models show). 1e-5 leaves a wide margin; one
stale K/V slot per window, a wrong position or a mis-scored row moves the
mean NLL by 1e-3 or more (the overlap test below shows how much a different
windowing alone moves it).
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from ingot_testlib import (SOURCE_DIR, assert_clean_failure, compile_hf_models,
                           describe, ingot)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

PPL_RTOL = 1e-5
COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]
# GQA + untied (llama), a sliding window of 8 inside the 32-token windows
# (mistral), learned positions and LayerNorm (gpt2).
NAMES = ["llama", "mistral", "gpt2"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf")
    return {name: hf_models.make_model(name, out) for name in NAMES}


@pytest.fixture(scope="module")
def artifacts(models, tmp_path_factory):
    return compile_hf_models(models, tmp_path_factory.mktemp("artifacts"),
                             *COMPILE_FLAGS)


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    """Seeded random words: a text no tokenizer has a shortcut for."""
    rng = np.random.default_rng(20240611)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=rng.integers(1, 8)))
             for _ in range(90)]
    path = tmp_path_factory.mktemp("text") / "random.txt"
    path.write_text(" ".join(words) + "\n")
    return path


def text_ids(model_dir, path):
    tok = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    return tok.encode(Path(path).read_text()).ids


def log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def reference_nlls(ref, ids, context, stride):
    """The NLL of every scored token, window by window, as HF's loop."""
    nlls, prev_end = [], 0
    for begin in range(0, len(ids), stride):
        end = min(begin + context, len(ids))
        window = ids[begin:end]
        logp = log_softmax(ref.logits(window))
        for i in range(max(prev_end, begin + 1), end):
            nlls.append(-logp[i - 1 - begin, ids[i]])
        prev_end = end
        if end == len(ids):
            break
    return np.array(nlls)


def perplexity(art, text, *args):
    proc = ingot("perplexity", art, "--text", text, "--json", *args, timeout=300)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", NAMES)
def test_sliding_window_matches_reference(name, models, artifacts, text_file):
    ids = text_ids(models[name], text_file)
    assert len(ids) > 100, "the text must need many windows"
    ref = hf_reference.load(models[name])
    expected = reference_nlls(ref, ids, 32, 12)
    out = perplexity(artifacts[name], text_file, "--context", "32",
                     "--stride", "12")
    assert out["tokens_scored"] == len(ids) - 1 == len(expected)
    assert (out["context"], out["stride"]) == (32, 12)
    assert out["windows"] == -(-(len(ids) - 32) // 12) + 1
    err = abs(out["perplexity"] / np.exp(expected.mean()) - 1)
    assert err < PPL_RTOL, f"{name}: perplexity relative error {err:.3g}"
    assert abs(out["nll_mean"] - expected.mean()) < PPL_RTOL
    assert out["seconds"] > 0 and out["tokens_per_second"] > 0


def test_context_equal_to_stride_is_non_overlapping(models, artifacts, text_file):
    """Disjoint chunks of 16, each scoring its tokens but the first. The
    overlapping windowing's mean NLL differs by ~6e-3 here (a tiny random
    model leans little on context); it must be well over the tolerance, or
    this test could not tell the two apart."""
    ids = text_ids(models["llama"], text_file)
    ref = hf_reference.load(models["llama"])
    chunks = [ids[b:b + 16] for b in range(0, len(ids), 16)]
    nlls = np.concatenate([-log_softmax(ref.logits(c))[np.arange(len(c) - 1), c[1:]]
                           for c in chunks if len(c) > 1])
    assert np.allclose(nlls, reference_nlls(ref, ids, 16, 16), rtol=0, atol=1e-12)
    overlapping = reference_nlls(ref, ids, 16, 4)
    assert abs(overlapping.mean() - nlls.mean()) > 100 * PPL_RTOL

    out = perplexity(artifacts["llama"], text_file, "--context", "16",
                     "--stride", "16")
    assert out["tokens_scored"] == len(nlls)
    assert out["windows"] == len([c for c in chunks if len(c) > 1])
    err = abs(out["perplexity"] / np.exp(nlls.mean()) - 1)
    assert err < PPL_RTOL, f"non-overlapping perplexity relative error {err:.3g}"


def test_defaults_and_text_output(models, artifacts, text_file):
    """Default context min(512, compiled 64), stride 32; --max-tokens cuts
    the text; the plain output is one line."""
    ids = text_ids(models["gpt2"], text_file)[:80]
    ref = hf_reference.load(models["gpt2"])
    expected = np.exp(reference_nlls(ref, ids, 64, 32).mean())
    out = perplexity(artifacts["gpt2"], text_file, "--max-tokens", "80")
    assert (out["context"], out["stride"], out["tokens_scored"]) == (64, 32, 79)
    assert abs(out["perplexity"] / expected - 1) < PPL_RTOL
    proc = ingot("perplexity", artifacts["gpt2"], "--text", text_file,
                 "--max-tokens", "80", "--threads", "1")
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.startswith(f"perplexity {out['perplexity']:.3f} over 79 "
                                  "tokens (context 64, stride 32), ")
    assert "windows" in proc.stderr  # progress, never on stdout


@pytest.fixture(scope="module")
def onnx_artifact(tmp_path_factory):
    import transformer_block
    tmp = tmp_path_factory.mktemp("onnx")
    model = transformer_block.save(transformer_block.build(0),
                                   tmp / "block.onnx", None)
    art = tmp / "block.ingot"
    proc = ingot("compile", model, "-o", art, "--max-dim", "batch=2",
                 "--max-dim", "seq=8")
    assert proc.returncode == 0, describe(proc)
    return art


@pytest.mark.parametrize("case, args, message", [
    ("missing", [], "cannot open it"),
    ("directory", [], "is a directory"),
    ("empty", [], "is empty"),
    ("one_token", [], "at least 2 tokens"),
    ("text", ["--context", "65"], "--context 65 exceeds the context of 64"),
    ("text", ["--context", "1"], "--context 1; expected a context of at least 2"),
    ("text", ["--stride", "0"], "--stride 0: expected 1 to the context (64"),
    ("text", ["--context", "16", "--stride", "17"],
     "--stride 17: expected 1 to the context (16"),
    ("onnx", [], "not an LLM artifact"),
])
def test_bad_input_is_a_clean_error(case, args, message, models, artifacts,
                                    text_file, onnx_artifact, tmp_path):
    art = onnx_artifact if case == "onnx" else artifacts["gpt2"]
    text = {"missing": tmp_path / "no_such.txt", "directory": tmp_path,
            "empty": tmp_path / "empty.txt",
            "one_token": tmp_path / "one.txt"}.get(case, text_file)
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "one.txt").write_text("a")
    if case == "one_token":
        assert len(text_ids(models["gpt2"], text)) == 1
    proc = ingot("perplexity", art, "--text", text, *args)
    assert_clean_failure(proc)
    assert message in proc.stderr, describe(proc)
    if case in ("missing", "directory", "empty", "one_token"):
        assert str(text) in proc.stderr
