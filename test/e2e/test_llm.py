"""Decoder LLMs from Hugging Face directories: compile once, generate, and
compare with an independent float64 numpy forward pass (hf_reference.py).

Tolerance: the artifact computes in f32 (weights as stored, f32 accumulate)
over a few layers of O(1) activations; its logits differ from the float64
reference by a few f32 roundings per op, around 1e-6 relative. 1e-4 leaves
room for the longer reductions (vocab-sized lm_head, attention over the
prompt) while any semantic slip (a wrong rope pair, a missing bias, a
mis-sliced fused weight) moves the logits by O(1).
"""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from ingot_testlib import (SOURCE_DIR, assert_clean_failure, compile_hf_models,
                           describe, ingot)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

LOGITS_RTOL = 1e-4
# Small step limits so the tests exercise chunked prefill and several blocks.
COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return hf_models.make_all(tmp_path_factory.mktemp("hf"))


@pytest.fixture(scope="module")
def artifacts(models, tmp_path_factory):
    return compile_hf_models(models, tmp_path_factory.mktemp("artifacts"),
                             *COMPILE_FLAGS)


def generate(art, *args):
    proc = ingot("generate", art, "--json", *args, timeout=300)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


def relative_error(a, b):
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


NAMES = ["llama", "llama_tied_bf16", "llama3_scaling", "llama_linear_scaling",
         "qwen2", "qwen3", "gemma2", "gemma3", "mistral",
         "phi3", "gpt2", "sharded"]


@pytest.mark.parametrize("name", NAMES)
def test_logits_match_reference(name, models, artifacts, tmp_path):
    """Logits at the last prompt position, with a prompt longer than one
    prefill chunk (8) and than the block size (4)."""
    ref = hf_reference.load(models[name])
    rng = np.random.default_rng(sum(map(ord, name)))
    vocab = json.loads((Path(models[name]) / "config.json").read_text())["vocab_size"]
    prompt = [int(t) for t in rng.integers(3, vocab, size=19)]
    logits_file = tmp_path / "logits.npy"
    generate(artifacts[name], "--prompt-tokens", ",".join(map(str, prompt)),
             "--max-new-tokens", "1", "--temperature", "0",
             "--logits-out", logits_file)
    actual = np.load(logits_file)
    expected = ref.logits(prompt)[-1]
    assert actual.shape == expected.shape
    err = relative_error(actual.astype(np.float64), expected)
    assert err < LOGITS_RTOL, f"{name}: logits relative error {err:.3g}"


def check_greedy(ref, prompt, tokens, top2_gap=1e-3):
    """Each generated token is the reference's argmax given the same prefix
    (one teacher-forced pass over prompt + tokens). Where the reference's
    top-2 gap is below `top2_gap` an f32 engine may legitimately pick
    either, so that token need only be in the top 2; the reference reads
    the engine's own tokens, so the tokens after it are checked all the
    same. Returns how many tokens had a clear argmax (were checked exactly),
    so that callers can tell a test of a few ties from a test of the model."""
    logits = ref.logits(list(prompt) + list(tokens))
    exact = 0
    for i, tok in enumerate(tokens):
        row = logits[len(prompt) - 1 + i]
        first, second = np.argsort(row)[::-1][:2]
        gap = row[first] - row[second]
        if gap < top2_gap:
            assert tok in (first, second), (
                f"token {i}: {tok} not in the reference's top 2 "
                f"({first}, {second}; gap {gap:.3g})")
            continue
        assert tok == first, (f"token {i}: got {tok}, reference argmax "
                              f"{first} (gap {gap:.3g})")
        exact += 1
    return exact


@pytest.mark.parametrize("name", NAMES)
def test_greedy_tokens_match_reference(name, models, artifacts):
    """32 greedy tokens: decode steps read the paged cache the chunked
    prefill wrote, across block boundaries."""
    ref = hf_reference.load(models[name])
    prompt = [5, 17, 42, 9, 77, 31, 8, 12, 64, 3, 21]
    out = generate(artifacts[name], "--prompt-tokens", ",".join(map(str, prompt)),
                   "--max-new-tokens", "32", "--temperature", "0")
    assert out["prompt_tokens"] == prompt
    if out["finish_reason"] == "length":
        assert len(out["tokens"]) == 32
    else:
        assert out["finish_reason"] == "stop"
    assert out["tokens"], out
    exact = check_greedy(ref, prompt, out["tokens"])
    # Near ties only need the top 2; a fixture made mostly of them would
    # test nothing (on these fixtures at most 1 of 32 is one).
    assert exact >= 3 * len(out["tokens"]) // 4, (
        f"{name}: only {exact} of {len(out['tokens'])} tokens had a clear "
        "reference argmax")


def test_json_output_shape(artifacts):
    out = generate(artifacts["llama"], "--prompt", "hello world",
                   "--max-new-tokens", "5", "--temperature", "0")
    assert set(out) >= {"prompt_tokens", "tokens", "text", "finish_reason",
                        "ttft_ms", "tpot_ms"}
    assert out["ttft_ms"] > 0 and out["tpot_ms"] >= 0
    assert isinstance(out["text"], str)


def test_seeded_sampling_is_reproducible(artifacts):
    args = ["--prompt-tokens", "5,6,7,8", "--max-new-tokens", "10",
            "--temperature", "0.9", "--top-k", "50", "--top-p", "0.95"]
    a = generate(artifacts["llama"], *args, "--seed", "7")
    b = generate(artifacts["llama"], *args, "--seed", "7")
    assert a["tokens"] == b["tokens"]


def test_streaming_text_equals_json_text(artifacts):
    args = ["--prompt", "the cat", "--max-new-tokens", "8", "--temperature", "0"]
    streamed = ingot("generate", artifacts["llama"], *args)
    assert streamed.returncode == 0, describe(streamed)
    js = generate(artifacts["llama"], *args)
    assert streamed.stdout.rstrip("\n") == js["text"]


@pytest.mark.parametrize("args, message", [
    (["--prompt", "x", "--prompt-tokens", "1"], "exactly one"),
    (["--prompt-tokens", "1,2,999999"], "outside the vocabulary"),
    (["--prompt-tokens", "1", "--temperature", "-1"], "--temperature"),
])
def test_bad_requests(artifacts, args, message):
    proc = ingot("generate", artifacts["llama"], *args)
    assert proc.returncode in (1, 2), describe(proc)
    assert message in proc.stderr, describe(proc)


def test_prompt_longer_than_context_is_an_error(artifacts):
    proc = ingot("generate", artifacts["llama"], "--prompt-tokens",
                 ",".join(["5"] * 80))
    assert_clean_failure(proc)
    assert "context" in proc.stderr


def test_onnx_artifact_is_not_an_llm(tmp_path):
    import transformer_block
    model = transformer_block.save(transformer_block.build(0),
                                   tmp_path / "block.onnx", None)
    art = tmp_path / "block.ingot"
    proc = ingot("compile", model, "-o", art, "--max-dim", "batch=2",
                 "--max-dim", "seq=8")
    assert proc.returncode == 0, describe(proc)
    proc = ingot("generate", art, "--prompt-tokens", "1")
    assert_clean_failure(proc)
    assert "not an LLM artifact" in proc.stderr


def test_chat_without_a_recognised_template_is_an_error(artifacts):
    """The phi3 fixture's <|user|> template is none ingot renders."""
    proc = ingot("generate", artifacts["phi3"], "--chat", "--prompt", "hi")
    assert_clean_failure(proc)
    assert "no chat template that ingot recognises" in proc.stderr


def test_chat_applies_the_mistral_template(models, artifacts):
    """Mistral-7B-Instruct's [INST] template: BOS once (the template's),
    the user turn wrapped, nothing after [/INST]."""
    from tokenizers import Tokenizer
    out = generate(artifacts["mistral"], "--chat", "--prompt", "hi",
                   "--max-new-tokens", "1", "--temperature", "0")
    tok = Tokenizer.from_file(str(Path(models["mistral"]) / "tokenizer.json"))
    want = tok.encode("<s>[INST] hi [/INST]", add_special_tokens=False).ids
    assert out["prompt_tokens"] == want


def test_chat_applies_the_llama3_template(artifacts):
    out = generate(artifacts["llama3_scaling"], "--chat", "--prompt", "hi",
                   "--max-new-tokens", "2", "--temperature", "0")
    plain = generate(artifacts["llama3_scaling"], "--prompt", "hi",
                     "--max-new-tokens", "2", "--temperature", "0")
    assert len(out["prompt_tokens"]) > len(plain["prompt_tokens"]) + 4


@pytest.mark.parametrize("name", ["qwen2", "mistral", "phi3"])
def test_bias_keys_only_llama_reads_are_ignored(name, models, tmp_path):
    """transformers' Qwen2, Mistral and Phi-3 fix their biases in code and
    never read attention_bias/mlp_bias: a config that carries them (as
    exported Qwen2 configs do) must compile to the same model, not demand
    an o_proj.bias the checkpoint never has."""
    import shutil
    model = shutil.copytree(models[name], tmp_path / name)
    config = json.loads((model / "config.json").read_text())
    config.update(attention_bias=True, mlp_bias=True)
    (model / "config.json").write_text(json.dumps(config))
    art = tmp_path / "m.ingot"
    proc = ingot("compile", model, "-o", art, *COMPILE_FLAGS)
    assert proc.returncode == 0, describe(proc)
    prompt = "5,9,14,3,22,7"
    logits = tmp_path / "logits.npy"
    generate(art, "--prompt-tokens", prompt, "--max-new-tokens", "1",
             "--logits-out", logits)
    expected = hf_reference.load(models[name]).logits([5, 9, 14, 3, 22, 7])[-1]
    err = relative_error(np.load(logits).astype(np.float64), expected)
    assert err < LOGITS_RTOL, err


@pytest.mark.parametrize("key, value", [("attn_logit_softcapping", -1.0),
                                        ("hidden_activation", "silu"),
                                        ("rope_scaling", {"rope_type": "yarn", "factor": 2.0})])
def test_gemma3_settings_ingot_cannot_compute_are_refused(key, value, models, tmp_path):
    """A negative soft-cap, another activation or a rope scaling ingot does
    not implement would change the model: refused by key."""
    import shutil
    model = shutil.copytree(models["gemma3"], tmp_path / "gemma3")
    config = json.loads((model / "config.json").read_text())
    config[key] = value
    (model / "config.json").write_text(json.dumps(config))
    proc = ingot("compile", model, "-o", tmp_path / "m.ingot")
    assert_clean_failure(proc)
    assert "config.json" in proc.stderr and key in proc.stderr, describe(proc)


# Gemma 3's chat template as it ships (system text folded into the first
# user turn, roles user/model, contents trimmed).
GEMMA3_TEMPLATE = (
    "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}"
    "{%- set loop_messages = messages[1:] -%}{%- else -%}"
    "{%- set first_user_prefix = \"\" -%}{%- set loop_messages = messages -%}"
    "{%- endif -%}{%- for message in loop_messages -%}"
    "{%- if (message['role'] == 'assistant') -%}{%- set role = \"model\" -%}"
    "{%- else -%}{%- set role = message['role'] -%}{%- endif -%}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{'<start_of_turn>model\\n'}}{%- endif -%}")


def test_chat_recognises_the_gemma_template(models, tmp_path):
    """A tokenizer_config.json with Gemma's template renders Gemma turns:
    the prompt is the tokenizer's encoding of the rendered text."""
    import shutil
    from tokenizers import Tokenizer
    model = shutil.copytree(models["gemma3"], tmp_path / "gemma3")
    tc = json.loads((model / "tokenizer_config.json").read_text())
    tc["chat_template"] = GEMMA3_TEMPLATE
    (model / "tokenizer_config.json").write_text(json.dumps(tc))
    art = tmp_path / "m.ingot"
    proc = ingot("compile", model, "-o", art, *COMPILE_FLAGS)
    assert proc.returncode == 0, describe(proc)
    out = generate(art, "--chat", "--prompt", " What is 2+2? ",
                   "--max-new-tokens", "1", "--temperature", "0")
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    bos = tc.get("bos_token")
    text = (bos or "") + "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n"
    assert out["prompt_tokens"] == tok.encode(text, add_special_tokens=False).ids
