"""`ingot serve` through the official `openai` Python client and raw HTTP:
completions and chat, streamed and not, the same tokens as
`generate --batch-file`, log-probabilities against the float64 reference,
stops, seeds, every refusal with its status and error body, auth, the
queue bound, metrics, a bounded load test and shutdown.

The model is the tiny random llama of test/fixtures/hf_models.py with the
engine tests' small limits (16 tokens per step, 4-token blocks, context 96)
so that 64 streams need many steps and blocks. Token ids are compared
exactly (vLLM's return_tokens_as_token_ids names them in the logprobs):
a request's tokens may not depend on what shares its steps.
"""
import json
import os
import socket
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import openai
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot
from serve_testlib import ServeProcess

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

CONTEXT = 96
COMPILE_FLAGS = ["--max-tokens-per-step", "16", "--max-seqs", "64",
                 "--max-context", str(CONTEXT), "--block-size", "4"]
NAME = "tiny-llama"
KEY = "sk-test-7f3a"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("serve")
    path = hf_models.make_model("llama", out)
    art = out / "llama.ingot"
    proc = ingot("compile", path, "-o", art, *COMPILE_FLAGS, timeout=300)
    assert proc.returncode == 0, describe(proc)
    vocab = json.loads((path / "config.json").read_text())["vocab_size"]
    return {"art": art, "dir": path, "work": out, "vocab": vocab}


@pytest.fixture(scope="module")
def server(model):
    with ServeProcess(model["art"], "--served-model-name", NAME) as s:
        yield s
        assert s.stop() == 0, s.stderr()


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="unused",
                         max_retries=0, timeout=60)


def prompts_for(model, n, seed):
    rng = np.random.default_rng(seed)
    return [[int(t) for t in rng.integers(3, model["vocab"],
                                          size=int(rng.integers(3, 30)))]
            for _ in range(n)]


def params_for(i):
    """Greedy for even requests, seeded sampling with cuts for odd ones."""
    if i % 2 == 0:
        return {"temperature": 0.0}
    return {"temperature": 0.9, "top_p": 0.9, "top_k": 20, "seed": 1000 + i}


def token_ids(logprob_tokens):
    assert all(t.startswith("token_id:") for t in logprob_tokens)
    return [int(t.split(":", 1)[1]) for t in logprob_tokens]


def batch_tokens(model, prompts, params, max_tokens, tag):
    """The same requests through `generate --batch-file`."""
    src, dst = model["work"] / f"{tag}.jsonl", model["work"] / f"{tag}.out"
    lines = []
    for p, extra in zip(prompts, params):
        req = {"prompt_tokens": p, "max_new_tokens": max_tokens,
               "ignore_eos": True, **extra}
        lines.append(json.dumps(req))
    src.write_text("\n".join(lines) + "\n")
    proc = ingot("generate", model["art"], "--batch-file", src,
                 "--output", dst, timeout=300)
    assert proc.returncode == 0, describe(proc)
    return [json.loads(line)["tokens"] for line in dst.read_text().splitlines()]


def complete_ids(client, prompt, extra, max_tokens, stream=False):
    kwargs = {k: v for k, v in extra.items() if k != "top_k"}
    body = {"return_tokens_as_token_ids": True, "ignore_eos": True}
    if "top_k" in extra:
        body["top_k"] = extra["top_k"]
    r = client.completions.create(model=NAME, prompt=prompt,
                                  max_tokens=max_tokens, logprobs=0,
                                  stream=stream, extra_body=body, **kwargs)
    if not stream:
        return token_ids(r.choices[0].logprobs.tokens)
    ids = []
    for chunk in r:
        for c in chunk.choices:
            if c.logprobs:
                ids += token_ids(c.logprobs.tokens)
    return ids


def test_models_and_health(server, client):
    assert [m.id for m in client.models.list().data] == [NAME]
    assert server.get("/health") == (200, '{"status":"ok"}')


def test_completions_match_batch_file(model, client):
    prompts = prompts_for(model, 8, 1)
    params = [params_for(i) for i in range(8)]
    expected = batch_tokens(model, prompts, params, 20, "match")
    for p, extra, want in zip(prompts, params, expected):
        r = client.completions.create(
            model=NAME, prompt=p, max_tokens=20, logprobs=0,
            extra_body={"return_tokens_as_token_ids": True,
                        "ignore_eos": True,
                        **({"top_k": extra["top_k"]} if "top_k" in extra
                           else {})},
            **{k: v for k, v in extra.items() if k != "top_k"})
        assert token_ids(r.choices[0].logprobs.tokens) == want
        assert r.usage.prompt_tokens == len(p)
        assert r.usage.completion_tokens == 20
        assert r.choices[0].finish_reason == "length"
        assert r.object == "text_completion" and r.model == NAME


def test_64_concurrent_streams_match_batch_file(model, client):
    prompts = prompts_for(model, 64, 2)
    params = [params_for(i) for i in range(64)]
    expected = batch_tokens(model, prompts, params, 24, "streams64")
    with ThreadPoolExecutor(max_workers=64) as pool:
        got = list(pool.map(
            lambda a: complete_ids(client, a[0], a[1], 24, stream=True),
            zip(prompts, params)))
    assert got == expected


def test_stream_matches_non_stream(model, client):
    prompt = "the quick brown fox"
    whole = client.completions.create(model=NAME, prompt=prompt, max_tokens=12,
                                      temperature=0)
    chunks = list(client.completions.create(
        model=NAME, prompt=prompt, max_tokens=12, temperature=0, stream=True,
        stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 12
    token_chunks = chunks[:-1]
    assert len(token_chunks) == 12  # one event per token
    assert "".join(c.choices[0].text for c in token_chunks) == \
        whole.choices[0].text
    assert [c.choices[0].finish_reason for c in token_chunks] == \
        [None] * 11 + ["length"]
    assert all(c.usage is None for c in token_chunks)


def test_chat_streamed_and_not(client):
    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Name a colour."}]
    whole = client.chat.completions.create(model=NAME, messages=messages,
                                           max_tokens=10, temperature=0)
    assert whole.object == "chat.completion"
    assert whole.choices[0].message.role == "assistant"
    chunks = list(client.chat.completions.create(
        model=NAME, messages=messages, max_tokens=10, temperature=0,
        stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == \
        whole.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == whole.choices[0].finish_reason
    assert whole.usage.total_tokens == \
        whole.usage.prompt_tokens + whole.usage.completion_tokens


def test_prompt_list_gives_one_choice_each(model, client):
    prompts = prompts_for(model, 3, 3)
    r = client.completions.create(model=NAME, prompt=prompts, max_tokens=5,
                                  temperature=0, logprobs=0,
                                  extra_body={"return_tokens_as_token_ids":
                                              True, "ignore_eos": True})
    assert [c.index for c in r.choices] == [0, 1, 2]
    alone = [complete_ids(client, p, {"temperature": 0.0}, 5) for p in prompts]
    assert [token_ids(c.logprobs.tokens) for c in r.choices] == alone
    assert r.usage.prompt_tokens == sum(map(len, prompts))


def test_stop_string_ends_the_text(client):
    prompt = "once upon a time"
    full = client.completions.create(model=NAME, prompt=prompt, max_tokens=40,
                                     temperature=0,
                                     extra_body={"ignore_eos": True})
    text = full.choices[0].text
    # A stop made of two printable ASCII characters past the start.
    starts = [i for i in range(3, len(text) - 2)
              if text[i:i + 2].isascii() and text[i:i + 2].isprintable()]
    assert starts, f"no ASCII pair in {text!r}"
    stop = text[starts[0]:starts[0] + 2]
    r = client.completions.create(model=NAME, prompt=prompt, max_tokens=40,
                                  temperature=0, stop=[stop],
                                  extra_body={"ignore_eos": True})
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].text == text[:text.index(stop)]


def test_seeded_sampling_is_reproducible(model, client):
    prompt = prompts_for(model, 1, 4)[0]
    extra = {"temperature": 1.0, "seed": 77}
    first = complete_ids(client, prompt, extra, 16)
    assert complete_ids(client, prompt, extra, 16) == first
    assert complete_ids(client, prompt, extra, 16, stream=True) == first
    others = [complete_ids(client, prompt, {"temperature": 1.0, "seed": s}, 16)
              for s in (78, 79, 80)]
    assert any(o != first for o in others)


def log_softmax(x):
    x = x - x.max()
    return x - np.log(np.exp(x).sum())


def test_logprobs_match_float64_reference(model, client):
    """Greedy logprobs of each token and the top 5 against log-softmax of
    the reference logits (tolerance: the logits match to 1e-4 relative,
    see test_llm.py; log-probabilities of O(5) magnitude then agree to
    well within 1e-3 absolute)."""
    ref = hf_reference.load(model["dir"])
    prompt = prompts_for(model, 1, 5)[0]
    r = client.completions.create(model=NAME, prompt=prompt, max_tokens=6,
                                  temperature=0, logprobs=5,
                                  extra_body={"return_tokens_as_token_ids":
                                              True, "ignore_eos": True})
    lp = r.choices[0].logprobs
    ids = token_ids(lp.tokens)
    expected = ref.logits(prompt + ids)[len(prompt) - 1:-1]
    for i, tok in enumerate(ids):
        want = log_softmax(expected[i].astype(np.float64))
        assert abs(lp.token_logprobs[i] - want[tok]) < 1e-3
        top = sorted(lp.top_logprobs[i].items(), key=lambda kv: -kv[1])
        assert len(top) == 5
        assert token_ids([top[0][0]]) == [tok]  # greedy takes the top one
        for name, value in top:
            assert abs(value - want[token_ids([name])[0]]) < 1e-3
        assert np.allclose([v for _, v in top],
                           np.sort(want)[::-1][:5], atol=1e-3)


def test_chat_logprobs_carry_bytes(client):
    r = client.chat.completions.create(
        model=NAME, messages=[{"role": "user", "content": "hi"}],
        max_tokens=4, temperature=0, logprobs=True, top_logprobs=2)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    for entry in content:
        assert entry.logprob <= 0 and len(entry.top_logprobs) == 2
        assert entry.top_logprobs[0].logprob >= entry.top_logprobs[1].logprob
        assert isinstance(entry.bytes, list)


def test_bench_over_http_reports_like_in_process(model, server, tmp_path):
    workload = ["--num-prompts", "16", "--input-len", "12", "--output-len",
                "8", "--max-concurrency", "1,4", "--no-probe"]
    over_http, in_process = tmp_path / "http.json", tmp_path / "local.json"
    proc = ingot("bench", model["art"], "--endpoint", server.url, *workload,
                 "--json", over_http, timeout=300)
    assert proc.returncode == 0, describe(proc)
    proc = ingot("bench", model["art"], *workload, "--json", in_process,
                 timeout=300)
    assert proc.returncode == 0, describe(proc)
    remote, local = (json.loads(p.read_text()) for p in (over_http, in_process))
    assert set(remote) == set(local)
    for run in remote["sweep"]:
        assert run["completed"] == 16 and run["failed"] == 0
        assert run["total_output_tokens"] == 16 * 8
        assert 0 < run["ttft_ms"]["mean"] <= run["e2e_ms"]["mean"]
        assert run["itl_ms"]["mean"] > 0
    proc = ingot("bench", model["art"], "--endpoint", "http://127.0.0.1:1",
                 *workload)
    assert proc.returncode == 1 and "127.0.0.1:1" in proc.stderr, describe(proc)
