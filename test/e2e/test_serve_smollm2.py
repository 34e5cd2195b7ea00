"""`ingot serve` on the bundled SmolLM2-135M-Instruct with the official
`openai` client: a factual chat answer, a client that leaves mid-stream
(its request is cancelled and its KV blocks freed, seen in /metrics), and
SIGTERM with requests in flight (they finish, newcomers get 503, exit 0;
past --drain-timeout the rest are cancelled). The real model decodes at
tens of milliseconds per token, which gives these timing-dependent checks
a wide margin; slow (label `slow`).
"""
import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot
from serve_testlib import ServeProcess

# The server commits its whole KV budget at start; the default (a quarter
# of free memory) would be gigabytes per test here.
BUDGET = ("--kv-cache-mb", 512)


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    proc = subprocess.run(
        [sys.executable, str(SOURCE_DIR / "scripts" / "prepare_smollm2.py"),
         str(SOURCE_DIR / ".cache" / "models")],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    model_dir = proc.stdout.strip().splitlines()[-1]
    art = tmp_path_factory.mktemp("serve-smollm2") / "smollm2.ingot"
    proc = ingot("compile", model_dir, "-o", art, "--quant", "int8",
                 timeout=900)
    assert proc.returncode == 0, describe(proc)
    return art


def client_for(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="x",
                         max_retries=0, timeout=300)


def test_chat_answers_the_capital_of_france(artifact):
    with ServeProcess(artifact, *BUDGET) as s:
        r = client_for(s).chat.completions.create(
            model="smollm2", temperature=0, max_tokens=24,
            messages=[{"role": "user",
                       "content": "What is the capital of France?"}])
        assert "Paris" in r.choices[0].message.content
        assert r.choices[0].finish_reason in ("stop", "length")
        assert s.stop() == 0, s.stderr()


def open_stream(server, max_tokens):
    """A raw streaming request; returns the connection after its first
    token event has arrived."""
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    body = json.dumps({"prompt": "Tell me a long story.", "stream": True,
                       "max_tokens": max_tokens, "ignore_eos": True})
    conn.request("POST", "/v1/completions", body,
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    while not resp.fp.readline().startswith(b"data: {"):
        pass
    return conn, resp


def test_client_leaving_mid_stream_frees_its_blocks(artifact):
    with ServeProcess(artifact, *BUDGET) as s:
        conn, resp = open_stream(s, 400)
        # The engine publishes its counters at the end of the step that
        # delivered the first token, a moment after the client has it.
        s.wait_metric("ingot_kv_cache_blocks_used", lambda v: v > 0)
        conn.sock.shutdown(socket.SHUT_RDWR)  # the client goes away
        resp.close()
        conn.close()
        s.wait_metric('ingot_requests_finished_total{finish_reason="abort"}',
                      lambda v: v == 1)
        m = s.wait_metric("ingot_kv_cache_blocks_used", lambda v: v == 0)
        assert s.metrics()["ingot_generation_tokens_total"] < 200, m
        assert s.stop() == 0, s.stderr()


def test_sigterm_lets_running_requests_finish(artifact):
    with ServeProcess(artifact, "--drain-timeout", 120, *BUDGET) as s:
        client = client_for(s)
        started = threading.Barrier(5)

        def one(i):
            stream = client.completions.create(
                model="smollm2", prompt=f"Count to {i + 10}:", max_tokens=40,
                temperature=0, stream=True, extra_body={"ignore_eos": True})
            chunks = iter(stream)
            first = next(chunks)
            started.wait()
            rest = list(chunks)
            return [first] + rest

        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(one, i) for i in range(4)]
            started.wait()
            s.proc.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            status, headers, _ = s.post("/v1/completions",
                                        b'{"prompt": "hi"}',
                                        {"Content-Type": "application/json"})
            assert status == 503 and headers.get("Retry-After")
            results = [f.result() for f in futures]
        for chunks in results:
            assert len(chunks) == 40
            assert chunks[-1].choices[0].finish_reason == "length"
        assert s.proc.wait(60) == 0, s.stderr()


def test_drain_timeout_cancels_the_rest(artifact):
    with ServeProcess(artifact, "--drain-timeout", 1, *BUDGET) as s:
        conn, resp = open_stream(s, 2000)
        start = time.time()
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(60) == 0, s.stderr()
        assert time.time() - start < 30
        assert "still running after the drain timeout" in s.stderr()
        conn.close()


def test_client_leaving_a_plain_request_cancels_it(artifact):
    with ServeProcess(artifact, *BUDGET) as s:
        host, port = s.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.request("POST", "/v1/completions",
                     json.dumps({"prompt": "Tell me a long story.",
                                 "max_tokens": 400, "ignore_eos": True}),
                     {"Content-Type": "application/json"})
        s.wait_metric("ingot_generation_tokens_total", lambda v: v > 0)
        conn.sock.shutdown(socket.SHUT_RDWR)  # gone before any byte came back
        conn.close()
        s.wait_metric('ingot_requests_finished_total{finish_reason="abort"}',
                      lambda v: v == 1)
        s.wait_metric("ingot_kv_cache_blocks_used", lambda v: v == 0)
        assert s.metrics()["ingot_generation_tokens_total"] < 200
        s.wait_metric(
            'ingot_http_requests_total{path="/v1/completions",status="499"}',
            lambda v: v == 1)
        assert s.stop() == 0, s.stderr()
