"""Output tokens/s of `ingot generate --batch-file` at several concurrency
levels in one run, on one artifact: N requests submitted at once, each a
distinct prompt with 64 new tokens (ignore_eos, greedy), so every level does
the same work per request. Also reports peak KV blocks with and without
prefix sharing for requests that share a system prompt.

    python bench/serve_concurrency.py ARTIFACT [--levels 1,8,32] [--threads N]

A benchmark, not a test: it prints figures and asserts nothing.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ["the sea", "a mountain", "a city at night", "an old library",
          "a robot", "the desert", "a garden", "winter", "a train journey",
          "the moon", "a market", "a storm"]


def run_batch(ingot, artifact, requests, threads, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "in.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in requests))
        cmd = [str(ingot), "generate", str(artifact), "--batch-file",
               str(tmp / "in.jsonl"), "--output", str(tmp / "out.jsonl"),
               "--stats-json", str(tmp / "stats.json"), "--threads",
               str(threads), *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
        return json.loads((tmp / "stats.json").read_text())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifact")
    ap.add_argument("--levels", default="1,8,32")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--ingot", default=str(ROOT / "build" / "bin" / "ingot"))
    args = ap.parse_args()

    print(f"artifact {args.artifact}; {args.new_tokens} new tokens per "
          f"request, greedy, ignore_eos")
    print(f"{'requests':>8} {'output tok/s':>13} {'steps':>6} {'duration s':>11}")
    for n in [int(x) for x in args.levels.split(",")]:
        reqs = [{"prompt": f"Write a short story about {TOPICS[i % len(TOPICS)]}"
                           f" (number {i}).",
                 "max_new_tokens": args.new_tokens, "temperature": 0,
                 "ignore_eos": True} for i in range(n)]
        s = run_batch(args.ingot, args.artifact, reqs, args.threads)
        print(f"{n:>8} {s['output_tokens_per_s']:>13.1f} {s['steps']:>6} "
              f"{s['duration_s']:>11.2f}")

    system = ("You are a meticulous assistant. Answer in one sentence, cite no "
              "sources, avoid lists, and keep a friendly tone. ") * 4
    shared = [{"prompt": system + f"Question {i}: what is {i} plus {i}?",
               "max_new_tokens": 16, "temperature": 0} for i in range(16)]
    on = run_batch(args.ingot, args.artifact, shared, args.threads)
    off = run_batch(args.ingot, args.artifact, shared, args.threads,
                    ["--no-prefix-caching"])
    print(f"shared system prompt, 16 requests: peak KV blocks "
          f"{on['peak_kv_blocks_used']} with prefix sharing (hit rate "
          f"{on['prefix_cache_hit_rate']:.2f}), {off['peak_kv_blocks_used']} "
          f"without")


if __name__ == "__main__":
    main()
