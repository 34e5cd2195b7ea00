"""`ingot serve` under bad and heavy use: every refusal gets its status and
an OpenAI-style error body naming the field, and leaves the server
serving; API keys; the queue bound (503 + Retry-After); the body limit
(413); a bounded load test with flat memory; shutdown by signal.
"""
import json
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from ingot_testlib import describe, ingot
from serve_testlib import ServeProcess
from test_serve import COMPILE_FLAGS, CONTEXT, NAME, model  # noqa: F401

# Under ASan (scripts/fuzz.sh test), RSS holds shadow memory and up to
# 256 MiB of quarantined frees: the RSS bounds below do not apply there.
SANITIZED = os.environ.get("INGOT_SANITIZED") == "1"

KEY = "sk-test-7f3a"
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(model):  # noqa: F811
    with ServeProcess(model["art"], "--served-model-name", NAME,
                      "--max-body-bytes", 65536) as s:
        yield s
        assert s.stop() == 0, s.stderr()


def long_prompt():
    return list(range(3, 3 + CONTEXT))


# (endpoint, body, status, param, code)
BAD = [
    ("completions", '{"prompt": "a", "max_tokens": 4', 400, None, None),
    ("completions", '[1, 2]', 400, None, None),
    ("completions", '{"prompt": "a", "temperature": "hot"}', 400,
     "temperature", None),
    ("completions", '{"prompt": "a", "temperature": 2.5}', 400,
     "temperature", None),
    ("completions", '{"prompt": "a", "top_p": 0}', 400, "top_p", None),
    ("completions", '{"prompt": "a", "top_k": -2}', 400, "top_k", None),
    ("completions", '{"prompt": "a", "max_tokens": 0}', 400, "max_tokens",
     None),
    ("completions", '{"prompt": "a", "max_tokens": 1.5}', 400, "max_tokens",
     None),
    ("completions", '{"prompt": "a", "max_tokens": 99999999999999999999}',
     400, "max_tokens", None),
    ("completions", '{"prompt": "a", "n": 2}', 400, "n", None),
    ("completions", '{"prompt": "a", "echo": true}', 400, "echo", None),
    ("completions", '{"prompt": "a", "logprobs": 6}', 400, "logprobs", None),
    ("completions", '{"prompt": "a", "stop": [1]}', 400, "stop", None),
    ("completions", '{"prompt": "a", "stop": ""}', 400, "stop", None),
    ("completions", '{"prompt": "a", "seed": "x"}', 400, "seed", None),
    ("completions", '{"prompt": "a", "stream": "yes"}', 400, "stream", None),
    ("completions", '{"prompt": "a", "stream_options": {}}', 400,
     "stream_options", None),
    ("completions", '{"prompt": "a", "model": "gpt-4"}', 400, "model",
     "model_not_found"),
    ("completions", '{"prompt": "a", "model": 7}', 400, "model", None),
    ("completions", '{"max_tokens": 3}', 400, "prompt", None),
    ("completions", '{"prompt": []}', 400, "prompt", None),
    ("completions", '{"prompt": [5, 99999999]}', 400, "prompt", None),
    ("completions", '{"prompt": [[1, 2], {"a": 1}]}', 400, "prompt", None),
    ("completions", json.dumps({"prompt": long_prompt()}), 400, "prompt",
     "context_length_exceeded"),
    ("completions", '{"prompt": [5, 6], "max_tokens": %d}' % CONTEXT, 400,
     "max_tokens", "context_length_exceeded"),
    ("completions", '{"prompt": "a", "logit_bias": {"5": 1}}', 400,
     "logit_bias", None),
    ("completions", '{"prompt": "a", "x": ' + "[" * 100 + "]" * 100 + "}",
     400, None, None),
    ("chat/completions", '{"messages": []}', 400, "messages", None),
    ("chat/completions", '{"messages": [{"content": "hi"}]}', 400,
     "messages[0].role", None),
    ("chat/completions", '{"messages": [{"role": "robot", "content": "x"}]}',
     400, "messages[0].role", None),
    ("chat/completions",
     '{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}',
     400, "messages[0].content", None),
    ("chat/completions",
     '{"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2}',
     400, "top_logprobs", None),
    ("chat/completions",
     '{"messages": [{"role": "user", "content": "x"}], "tools": [{}]}',
     400, "tools", None),
]


@pytest.mark.parametrize("endpoint,body,status,param,code", BAD,
                         ids=[f"{i}-{b[2]}-{b[3]}" for i, b in enumerate(BAD)])
def test_bad_request_is_refused_with_its_field(server, endpoint, body, status,
                                               param, code):
    got, _, text = server.post("/v1/" + endpoint, body.encode(), JSON)
    assert got == status, text
    err = json.loads(text)["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["message"] and err["type"] == "invalid_request_error"
    assert err["param"] == param and err["code"] == code, err
    # Nothing else is disturbed.
    ok, _, text = server.post("/v1/completions",
                              b'{"prompt": [5, 6], "max_tokens": 2}', JSON)
    assert ok == 200, text


def test_openai_client_raises_with_the_message(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="x",
                           max_retries=0)
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=NAME, prompt="a", top_p=7)
    assert "top_p" in str(e.value)


def test_body_over_the_limit_gets_413(server):
    got, _, text = server.post("/v1/completions",
                               b'{"prompt": "' + b"a" * 70000 + b'"}', JSON)
    assert got == 413, text
    assert json.loads(text)["error"]["message"]


def test_unknown_endpoint_gets_404(server):
    status, text = server.get("/v1/nope")
    assert status == 404 and json.loads(text)["error"]


def test_api_key(model):  # noqa: F811
    with ServeProcess(model["art"], "--api-key", KEY) as s:
        body = b'{"prompt": [5, 6], "max_tokens": 2}'
        assert s.post("/v1/completions", body, JSON)[0] == 401
        status, _, text = s.post("/v1/completions", body,
                                 {**JSON, "Authorization": "Bearer wrong"})
        assert status == 401
        assert json.loads(text)["error"]["code"] == "invalid_api_key"
        assert s.get("/v1/models")[0] == 401
        assert s.get("/health")[0] == 200  # stays open for probes
        client = openai.OpenAI(base_url=s.url + "/v1", api_key=KEY,
                               max_retries=0)
        r = client.completions.create(model="llama", prompt="a", max_tokens=2)
        assert r.usage.completion_tokens >= 1
        assert s.stop() == 0, s.stderr()
    env = dict(os.environ, INGOT_API_KEY=KEY)
    with ServeProcess(model["art"], env=env) as s:
        assert s.get("/v1/models")[0] == 401
        assert s.get("/v1/models", {"Authorization": "Bearer " + KEY})[0] == 200
        assert s.stop() == 0, s.stderr()


def test_full_queue_gets_503_with_retry_after(model):  # noqa: F811
    # Capacity = max-seqs + max-queue = 1 request; two prompts exceed it.
    with ServeProcess(model["art"], "--max-seqs", 1, "--max-queue", 0) as s:
        status, headers, text = s.post(
            "/v1/completions", b'{"prompt": [[5, 6], [7, 8]], "max_tokens": 2}',
            JSON)
        assert status == 503, text
        assert headers.get("Retry-After") == "1"
        assert json.loads(text)["error"]["code"] == "queue_full"
        status, _, text = s.post("/v1/completions",
                                 b'{"prompt": [5, 6], "max_tokens": 2}', JSON)
        assert status == 200, text
        # Counted by the access hook, just after the response was sent.
        s.wait_metric(
            'ingot_http_requests_total{path="/v1/completions",status="503"}',
            lambda v: v == 1)
        assert s.stop() == 0, s.stderr()


def test_load_500_requests_at_32(model):  # noqa: F811
    """500 requests, 32 at a time, streamed and not: no errors, the metrics
    add up, and resident memory after the last 100 is within 10% of
    after the first 100 (no per-request leak)."""
    with ServeProcess(model["art"], "--served-model-name", NAME) as s:
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="x",
                               max_retries=0, timeout=120)

        def one(i):
            kw = dict(model=NAME, prompt=[3 + i % 50, 7, 11 + i % 13],
                      max_tokens=8 + i % 9, temperature=0.7, seed=i,
                      extra_body={"ignore_eos": True})
            if i % 2:
                return sum(1 for c in client.completions.create(stream=True, **kw)
                           if c.choices and c.choices[0].text is not None)
            return client.completions.create(**kw).usage.completion_tokens

        with ThreadPoolExecutor(max_workers=32) as pool:
            first = list(pool.map(one, range(100)))
            rss_first = s.rss_kib()
            middle = list(pool.map(one, range(100, 400)))
            last = list(pool.map(one, range(400, 500)))
            rss_last = s.rss_kib()
        print(f"\nRSS after 100: {rss_first} KiB, after 500: {rss_last} KiB")
        counts = first + middle + last
        assert counts == [8 + i % 9 for i in range(500)]
        if SANITIZED:
            return
        assert abs(rss_last - rss_first) <= 0.10 * rss_first, (
            f"RSS {rss_first} KiB after 100 requests, {rss_last} after 500")
        m = s.metrics()
        assert m['ingot_requests_finished_total{finish_reason="length"}'] == 500
        assert m["ingot_generation_tokens_total"] == sum(counts)
        assert m["ingot_time_to_first_token_seconds_count"] == 500
        assert m["ingot_kv_cache_blocks_used"] == 0
        s.wait_metric(
            'ingot_http_requests_total{path="/v1/completions",status="200"}',
            lambda v: v == 500)
        assert s.stop() == 0, s.stderr()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_with_exit_0(model, sig):  # noqa: F811
    with ServeProcess(model["art"]) as s:
        assert s.get("/health")[0] == 200
        start = time.time()
        assert s.stop(sig) == 0, s.stderr()
        assert time.time() - start < 10
        assert "draining" in s.stderr()


def test_bad_flags_are_usage_errors(model):  # noqa: F811
    for flags in (["--port", "70000"], ["--threads", "100000"],
                  ["--max-queue", "-1"], ["--kv-blocks", "1", "--kv-cache-mb", "1"],
                  ["--drain-timeout", "x"], ["--bogus"]):
        proc = ingot("serve", model["art"], *flags)
        assert proc.returncode == 2, describe(proc)
        assert "error" in proc.stderr
    proc = ingot("serve", model["art"].parent / "missing.ingot", "--port", "0")
    assert proc.returncode == 1 and "missing.ingot" in proc.stderr, describe(proc)


@pytest.mark.skipif(SANITIZED, reason="ASan's shadow memory and quarantine "
                    "make RSS say nothing about the KV cache")
def test_kv_budget_is_committed_at_start_unless_told_not_to(model):  # noqa: F811
    # The weights' pages count in both (the model alone is ~95 MiB), so
    # the committed budget shows as the difference between the two.
    with ServeProcess(model["art"], "--kv-cache-mb", 96) as s:
        committed = s.rss_kib()  # flat from the first request on
        assert s.stop() == 0, s.stderr()
    with ServeProcess(model["art"], "--kv-cache-mb", 96, "--no-kv-prefault") as s:
        lazy = s.rss_kib()
        assert s.stop() == 0, s.stderr()
    assert committed - lazy >= 90 * 1024, (committed, lazy)
