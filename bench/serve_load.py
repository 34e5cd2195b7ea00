"""A bounded load test of `ingot serve` with the official `openai` client:
N requests at concurrency C (every other one streamed), then the errors,
the request rate, the server's resident memory after the first and the
last 100 requests, and the latency histograms' means from /metrics.

    .venv/bin/python bench/serve_load.py ARTIFACT [--requests 500]
        [--concurrency 32] [--max-tokens 16] [--serve "FLAGS"]

--serve passes flags to `ingot serve` (e.g. "--kv-cache-mb 1024": the
server commits its KV budget at start, so it is part of the RSS).

A benchmark, not a test: it prints figures and asserts nothing.
"""
import argparse
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "e2e"))
from serve_testlib import ServeProcess  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifact", type=Path)
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--serve", default="")
    args = ap.parse_args()
    with ServeProcess(args.artifact, *shlex.split(args.serve)) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x",
                               max_retries=0, timeout=600)
        model = client.models.list().data[0].id
        errors = []

        def one(i):
            kw = dict(model=model, prompt=f"Request {i}: tell me about "
                      f"topic number {i % 37}.", max_tokens=args.max_tokens,
                      temperature=0.7, seed=i, extra_body={"ignore_eos": True})
            try:
                if i % 2:
                    return sum(1 for c in client.completions.create(
                        stream=True, **kw) if c.choices)
                return client.completions.create(**kw).usage.completion_tokens
            except Exception as e:  # noqa: BLE001 - counted and reported
                errors.append(repr(e))
                return 0

        start = time.time()
        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            first = list(pool.map(one, range(100)))
            rss_first = server.rss_kib()
            rest = list(pool.map(one, range(100, args.requests - 100)))
            last = list(pool.map(one, range(args.requests - 100,
                                            args.requests)))
            rss_last = server.rss_kib()
        seconds = time.time() - start
        m = server.metrics()
        server.stop()
    tokens = sum(first + rest + last)

    def mean_ms(name):
        n = m.get(f"{name}_count", 0)
        return 1000 * m[f"{name}_sum"] / n if n else float("nan")

    print(f"{args.requests} requests at concurrency {args.concurrency}, "
          f"{args.max_tokens} tokens each, half streamed: {len(errors)} errors"
          + (f" (first: {errors[0]})" if errors else ""))
    print(f"duration {seconds:.1f} s, {args.requests / seconds:.2f} req/s, "
          f"{tokens / seconds:.1f} output tok/s")
    print(f"server RSS {rss_first / 1024:.1f} MiB after 100 requests, "
          f"{rss_last / 1024:.1f} MiB after {args.requests} "
          f"({100 * (rss_last - rss_first) / rss_first:+.1f}%)")
    finished = m.get('ingot_requests_finished_total{finish_reason="length"}')
    print(f"server means: TTFT {mean_ms('ingot_time_to_first_token_seconds'):.1f}"
          f" ms, TPOT {mean_ms('ingot_time_per_output_token_seconds'):.2f} ms, "
          f"E2E {mean_ms('ingot_e2e_request_latency_seconds'):.1f} ms; "
          f"finished: {finished} length, preemptions "
          f"{m.get('ingot_preemptions_total')}")


if __name__ == "__main__":
    main()
