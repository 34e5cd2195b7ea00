"""The KV cache in bfloat16, int8 and fp8 (`--kv-cache-dtype`), end to end on the
tiny random llama: logits against the float64 reference, the budget a
given number of MiB buys, every command that takes the flag, and refusals.

Tolerances: the f32 cache matches the reference to 1e-4 (test_llm.py).
bfloat16 rounds each K/V value to 8 significant bits (relative error at
most 2^-9, 0.2%). An 8-bit cache adds each K/V value's rounding (int8: under 0.4% of its row's
largest value; e4m3: under 6.25% of itself); on this model's random weights
that moves the logits by 0.9% (int8) and 4.4% (fp8) relative, measured, so
the bounds are 3e-2 and 1.2e-1. A real model's perplexity moves far less
(see the note in docs/kernels.md).
"""
import json
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot, relative_error
from serve_testlib import ServeProcess

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

TOLERANCE = {"float32": 1e-4, "bfloat16": 1e-2, "int8": 3e-2, "fp8": 1.2e-1}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("kvdtype")
    path = hf_models.make_model("llama", out)
    art = out / "llama.ingot"
    proc = ingot("compile", path, "-o", art, "--max-context", "96",
                 "--block-size", "4", timeout=300)
    assert proc.returncode == 0, describe(proc)
    config = json.loads((path / "config.json").read_text())
    return {"art": art, "dir": path, "work": out, "config": config}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8", "fp8"])
def test_logits_against_the_reference(model, dtype, tmp_path):
    ref = hf_reference.load(model["dir"])
    rng = np.random.default_rng(5)
    prompt = [int(t) for t in rng.integers(3, model["config"]["vocab_size"],
                                           size=41)]
    out = tmp_path / "logits.npy"
    proc = ingot("generate", model["art"], "--prompt-tokens",
                 ",".join(map(str, prompt)), "--max-new-tokens", "1",
                 "--temperature", "0", "--logits-out", out,
                 "--kv-cache-dtype", dtype)
    assert proc.returncode == 0, describe(proc)
    err = relative_error(np.load(out).astype(np.float64),
                         ref.logits(prompt)[-1])
    assert err < TOLERANCE[dtype], f"{dtype}: logits relative error {err:.3g}"
    if dtype != "float32":
        assert err > 1e-6  # the cache really was not f32


def batch(model, tag, *flags):
    src, dst, stats = (model["work"] / f"{tag}.jsonl", model["work"] /
                       f"{tag}.out", model["work"] / f"{tag}.json")
    src.write_text("".join(json.dumps(
        {"prompt_tokens": [5 + i, 6, 7], "max_new_tokens": 20,
         "ignore_eos": True}) + "\n" for i in range(8)))
    proc = ingot("generate", model["art"], "--batch-file", src, "--output",
                 dst, "--stats-json", stats, *flags)
    assert proc.returncode == 0, describe(proc)
    outs = [json.loads(line) for line in dst.read_text().splitlines()]
    return outs, json.loads(stats.read_text())


def test_a_budget_in_mib_buys_more_blocks_of_int8_and_bfloat16(model):
    _, f32 = batch(model, "f32", "--kv-cache-mb", "1")
    outs, i8 = batch(model, "i8", "--kv-cache-mb", "1",
                     "--kv-cache-dtype", "int8")
    assert all(o["finish_reason"] == "length" and len(o["tokens"]) == 20
               for o in outs)
    outs, b16 = batch(model, "b16", "--kv-cache-mb", "1",
                      "--kv-cache-dtype", "bf16")
    assert all(o["finish_reason"] == "length" and len(o["tokens"]) == 20
               for o in outs)
    # A row is 4d bytes in f32 and 2d in bfloat16.
    ratio = b16["kv_blocks_total"] / f32["kv_blocks_total"]
    assert abs(ratio - 2) < 0.05, ratio
    cfg = model["config"]
    d = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    # A row is 4d bytes in f32 and d + 4 (values and an f32 scale) in int8.
    expected = 4 * d / (d + 4)
    assert abs(i8["kv_blocks_total"] / f32["kv_blocks_total"] - expected) < 0.05


def test_serve_and_perplexity_take_the_flag(model, tmp_path):
    with ServeProcess(model["art"], "--kv-cache-dtype", "fp8") as s:
        status, _, body = s.post("/v1/completions",
                                 b'{"prompt": [5, 6, 7], "max_tokens": 4}',
                                 {"Content-Type": "application/json"})
        assert status == 200, body
        assert json.loads(body)["usage"]["completion_tokens"] == 4
        assert s.stop() == 0, s.stderr()
    text = tmp_path / "text.txt"
    text.write_text("the quick brown fox jumps over the lazy dog. " * 20)
    ppl = {}
    for dtype in ("float32", "int8"):
        proc = ingot("perplexity", model["art"], "--text", text, "--context",
                     "64", "--stride", "32", "--json", "--kv-cache-dtype",
                     dtype)
        assert proc.returncode == 0, describe(proc)
        ppl[dtype] = json.loads(proc.stdout)["perplexity"]
    assert abs(ppl["int8"] / ppl["float32"] - 1) < 0.02, ppl


def test_compiled_kv_dtype_is_the_engines_default(model, tmp_path):
    """`compile --kv-cache-dtype int8` records int8 in the artifact: the
    engine's "auto" then runs the int8 cache, giving the very logits of a
    float32-compiled artifact told --kv-cache-dtype int8 at run time, and
    the run-time flag still overrides it."""
    art = tmp_path / "i8.ingot"
    proc = ingot("compile", model["dir"], "-o", art, "--max-context", "96",
                 "--block-size", "4", "--kv-dtype", "int8", timeout=300)
    assert proc.returncode == 0, describe(proc)
    info = json.loads(ingot("inspect", art, "--json").stdout)
    assert info["llm"]["kv_dtype"] == "int8", info["llm"]
    prompt = "5,17,42,9,3,31,8,11,12"

    def logits(artifact, *flags):
        out = tmp_path / f"l{len(list(tmp_path.glob('l*.npy')))}.npy"
        proc = ingot("generate", artifact, "--prompt-tokens", prompt,
                     "--max-new-tokens", "1", "--temperature", "0",
                     "--logits-out", out, *flags)
        assert proc.returncode == 0, describe(proc)
        return np.load(out)

    compiled_int8 = logits(art)
    assert np.array_equal(compiled_int8,
                          logits(model["art"], "--kv-cache-dtype", "int8"))
    overridden = logits(art, "--kv-cache-dtype", "float32")
    assert np.array_equal(overridden, logits(model["art"]))
    assert not np.array_equal(compiled_int8, overridden)
    for bad in ("int4", "auto"):
        proc = ingot("compile", model["dir"], "-o", tmp_path / "x.ingot",
                     "--kv-cache-dtype", bad)
        assert proc.returncode == 2, describe(proc)
        assert f"--kv-cache-dtype '{bad}'" in proc.stderr, describe(proc)


def test_unknown_dtype_is_refused(model):
    for cmd in (["generate", model["art"], "--prompt", "hi"],
                ["bench", model["art"], "--num-prompts", "1", "--no-probe"]):
        proc = ingot(*cmd, "--kv-cache-dtype", "int4")
        assert proc.returncode == 1, describe(proc)
        assert "int4" in proc.stderr and "int8" in proc.stderr, describe(proc)
